"""The extractive backend's reading rules, one small input each."""

from __future__ import annotations

from memkeeper.core.summarizers.extractive import extract_summary, parse_sections


def test_sections_dates_topics_and_flush_headers() -> None:
    text = """# Project Memory
intro line that is not a section

## 2026-01-05_0910 (local 01-05_1810)
- [api]: first fact
  continued on an indented line
### Database
- plain bullet under a sub-header
## 12:03 — Memory Flush #42
- [api]: a flush entry without a date belongs to the last day
## Known issues
- login is broken on Safari
"""
    sections = parse_sections(text)
    assert [s.header for s in sections][1:] == [
        "2026-01-05_0910 (local 01-05_1810)",
        "12:03 — Memory Flush #42",
        "Known issues",
    ]
    first = sections[1].items
    assert first[0].topic == "api" and first[0].text == "first fact continued on an indented line"
    assert first[1].topic == "Database"
    assert sections[2].date == "2026-01-05" and sections[2].items[0].topic == "api"
    assert sections[3].items[0].topic == "Known issues"  # a non-date header names its bullets' topic
    summary = extract_summary(text)
    assert summary["sectionCount"] == 3
    assert summary["issues"][0]["issue"].startswith("Known issues: login is broken")


def test_decision_shapes() -> None:
    text = """## 2026-02-01
- [cache]: Cache totals in Redis for 60 s, because totals are read 50× more often than written
- [style]: Never commit generated files
- [db]: switched to WAL mode to avoid writer stalls
- [infra]: 배포는 fly.io 대신 자체 서버로 하기로 결정 (비용 때문)
- [misc]: the CI run was green
"""
    decisions = extract_summary(text)["keyDecisions"]
    assert [d["decision"] for d in decisions] == [
        "Cache totals in Redis for 60 s",  # the text names its topic: no "cache:" prefix
        "style: Never commit generated files",
        "db: switched to WAL mode",
        "infra: 배포는 fly.io 대신 자체 서버로 하기로 결정",
    ]
    assert [d["reason"] for d in decisions] == [
        "totals are read 50× more often than written",
        "",
        "to avoid writer stalls",
        "비용 때문",
    ]
    assert all(d["date"] == "2026-02-01" for d in decisions)


def test_issue_status_and_linking() -> None:
    text = """## 2026-02-01
- [auth]: refresh token bug: tokens are not rotated
- [pool]: connection pool exhausted under load; raised to 20
- [ui]: TODO the dark mode toggle still resets on reload
- [worker]: 로그인 버그 발견, 아직 원인 모름
## 2026-02-03
- [auth]: fixed the rotation, tests pass
- [billing]: failed payments now retry three times
"""
    issues = extract_summary(text)["issues"]
    by_topic = {i["issue"].split(":")[0].split()[0]: i for i in issues}
    assert by_topic["auth"]["status"] == "resolved" and "→ fixed the rotation" in by_topic["auth"]["issue"]
    assert by_topic["auth"]["date"] == "2026-02-01"  # when the problem was found
    assert by_topic["connection"]["status"] == "resolved"  # "; raised to 20" is the fix
    assert by_topic["ui"]["status"] == "open"
    assert by_topic["worker"]["status"] == "open"
    assert "billing" not in by_topic  # new behaviour, not a problem
    assert len(issues) == 4


def test_empty_and_unstructured_text() -> None:
    assert extract_summary("")["overallSummary"] == "The archive has no notes."
    loose = extract_summary("Some notes without any headers.\nWe decided to ship on Friday.")
    assert loose["dateRange"] is None and loose["sectionCount"] == 0
    assert loose["keyDecisions"][0]["decision"] == "We decided to ship on Friday."
    assert loose["themes"][0]["name"] == "General notes"


def test_lists_are_capped_at_ten_and_keep_open_issues() -> None:
    things = "parser lexer cache router mailer billing search upload export import auth session queue cron ui".split()
    lines = [f"- [t{i}]: {w} crashed in {w}_module; fixed" for i, w in enumerate(things)]
    lines.append("- [late]: crash on startup still open")
    issues = extract_summary("## 2026-03-01\n" + "\n".join(lines))["issues"]
    assert len(issues) == 10 and any(i["status"] == "open" for i in issues)
