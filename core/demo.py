"""A realistic demo store: six weeks of a developer working with Claude Code.

:func:`create_demo_store` writes, in the real file formats, what memkeeper would have
produced for a small invoicing service ("ledgerline") built by a developer in Seoul:
``memory.md`` with dated ``## YYYY-MM-DD_HHMM (local MM-DD_HHMM)`` sections of
``- [topic]: fact`` bullets (English, some Korean), five rotated archives with their
index entries (three with L3 summaries, one pending, one whose generation failed), L1
session files with tool calls, tool results and a subagent, and the project /
architecture / conventions notes. Everything is derived from ``seed`` and fixed dates,
so one seed always gives the same bytes; nothing depends on the clock.
"""

from __future__ import annotations

import json
import os
import random
import uuid
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from .basics.timestamps import iso, section_header, utc_day
from .basics.tokens import tokens_for_bytes
from .store.atomic import atomic_write_json, atomic_write_text, dumps_js
from .store.index_entries import mark_failed, mark_generated
from .store.names import archive_name_for, l1_name, summary_name
from .store.paths import StorePaths, ensure_store

#: The developer's local time zone (Seoul) relative to UTC, for the ``(local …)`` part.
LOCAL_OFFSET = timedelta(hours=9)
FIRST_DAY = date(2026, 10, 5)
LAST_DAY = date(2026, 11, 21)

TOPIC_NAMES = {
    "setup": "Project setup and tooling",
    "auth": "Authentication and sessions",
    "db": "Database schema and migrations",
    "billing": "Invoice and billing logic",
    "webhooks": "Payment webhooks",
    "ci": "Continuous integration",
    "perf": "Performance and caching",
    "i18n": "Localization (Korean)",
    "deploy": "Deployment",
    "api": "Public API",
    "tests": "Testing",
}

# (topic, text, kind, reason). kind: n = note, d = decision, i = open issue, r = resolved issue.
Fact = tuple[str, str, str, str]

# The six phases of the project: a "first-day last-day" line, then one fact a line,
# "<kind> <topic> | <text>", with " | <reason>" after a decision.
_PHASE_TABLE = """
2026-10-05 2026-10-11
n setup | Created the ledgerline repo: FastAPI + SQLAlchemy 2.0 + Alembic, Python 3.12, uv for dependencies
d setup | Chose ruff + mypy --strict from day one | cheaper than retrofitting types once the models grow
n db | First Alembic migration creates customers, invoices and invoice_lines tables
d auth | Use short-lived JWT access tokens (15 min) with rotating refresh tokens stored hashed in Postgres | revocation must work without a token blacklist in Redis
r auth | Login returned 500 when the email had trailing spaces; normalise emails with strip().lower() at the schema layer
n tests | Set up pytest with a per-test transactional Postgres fixture (SAVEPOINT rollback), suite runs in 4 s
d auth | Refresh token reuse detection: a reused token revokes the whole token family | this is what OAuth 2.1 recommends and it catches stolen tokens
n ci | GitHub Actions workflow runs ruff, mypy and pytest against a postgres:16 service container
r auth | Clock skew between app and DB made fresh refresh tokens look expired; compare with DB now() instead of Python time
d db | Money columns are NUMERIC(12,2), never float | float rounding already produced a 0.01 difference in a test
n setup | pre-commit hooks added (ruff format, end-of-file-fixer); Claude keeps the hooks green before committing
i auth | Password reset emails are not sent yet: SMTP settings missing in staging
2026-10-12 2026-10-18
d billing | Invoice numbers are per-customer sequences INV-<customer>-<n>, allocated with SELECT … FOR UPDATE | gapless numbering is a legal requirement for the Korean tax invoice export
d billing | Prorated monthly plans: charge = price × remaining_days / days_in_month, rounded with ROUND_HALF_EVEN | matches the accounting team's spreadsheet to the won
r billing | Decimal context leaked between requests in a thread pool; use decimal.localcontext() inside the calculator
n db | Added index invoices(customer_id, issued_at DESC); the customer invoice list went from 310 ms to 9 ms
n tests | Property tests with hypothesis for proration: sum of prorated parts never exceeds the full price
d billing | Credit notes reference the original invoice and can never exceed its open amount | refunds above the paid amount were possible in the old system
d api | Cursor pagination on /invoices using (issued_at, id) as the cursor key | offset pagination skipped rows while invoices were being issued
i billing | PDF rendering with WeasyPrint is slow (1.8 s per invoice); render in a background worker
n db | Alembic autogenerate missed a CHECK constraint; review every generated migration by hand
d billing | Tax lines: 10% VAT computed per line then summed, not on the total | the tax office validates per-line amounts
r tests | Flaky test_issue_invoice_concurrently: two transactions got the same invoice number under READ COMMITTED
n billing | Currency stored per customer (KRW, USD, JPY); KRW and JPY have zero minor units
2026-10-19 2026-10-27
n webhooks | Stripe webhooks verified with the signing secret and a 5-minute tolerance window
d webhooks | Every webhook handler is idempotent by event id, stored in processed_events with a unique constraint | Stripe retries deliveries and we saw duplicate payments in staging
r webhooks | invoice.payment_failed arrived before invoice.created in a replay; handlers now upsert instead of assuming order
n ci | CI takes 6 min; split mypy and pytest into parallel jobs and cache the uv environment
n ci | Actions cache key includes uv.lock hash; CI is down to 2 min 10 s
d webhooks | Background worker is arq on Redis rather than Celery | async-native, tiny, and we already run Redis for rate limits
r billing | PDF rendering moved to the arq worker; API responds in 40 ms and links the PDF when ready
n webhooks | Dead-letter table for events that fail 5 times, with a retry button in the admin
r ci | test_webhook_signature fails on Mondays only: the fixture used a hard-coded timestamp older than the tolerance
d api | Public API keys are prefixed ll_live_ / ll_test_ and only a SHA-256 hash is stored | keys must be revocable and never recoverable from a DB dump
i webhooks | Outgoing webhooks to customers are not signed yet
n tests | Contract tests replay 40 recorded Stripe events from tests/fixtures/stripe/
2026-10-28 2026-11-05
r perf | Dashboard summary endpoint takes 1.2 s: an N+1 over invoice_lines; fixed with selectinload
d perf | Cache per-customer dashboard totals in Redis for 60 s, invalidated on invoice changes | totals are read 50× more often than invoices change
n perf | p95 of GET /invoices dropped from 420 ms to 85 ms after the selectinload and cursor fixes
r db | Connection pool exhausted under load test (pool_size=5); raised to 20 and added pool_pre_ping
n perf | Load test with locust: 300 rps sustained on 2 workers, CPU bound on JSON encoding
d perf | Switched responses to orjson via ORJSONResponse | JSON encoding was 35% of CPU in the profile
n db | Partial index on invoices(status) WHERE status = 'open' for the dunning job
r perf | Cache stampede when totals expire together; add jitter of ±10 s to the TTL
d api | Rate limit: 600 requests/min per API key, sliding window in Redis | one customer's sync script saturated the API
i perf | Memory grows 30 MB/hour in the worker; suspect WeasyPrint font cache
n tests | Benchmarks live in bench/ and run nightly, not in CI
2026-11-06 2026-11-12
n i18n | 한국어 로케일 추가: 메시지 카탈로그를 babel로 관리하고 ko.po 번역 완료
d i18n | 원화(KRW)는 소수점 없이 표시하고 천 단위 구분 기호를 쓴다 (예: ₩1,250,000) | 회계팀 요청, 세금계산서 양식과 맞춰야 함
n i18n | Invoice PDFs need a Korean font; bundled Noto Sans KR in the worker image
r i18n | PDF에서 한글이 네모로 깨지는 문제: WeasyPrint가 시스템 폰트를 못 찾음, fontconfig 경로 설정으로 해결
d i18n | Date formats follow the customer's locale; stored values stay UTC | mixing local times in the DB caused off-by-one-day invoices
n billing | Korean tax invoice (세금계산서) export as XML for the national tax service, validated against their XSD
n i18n | Accept-Language negotiation falls back to en when ko-KR is not in the catalog
n billing | 사업자등록번호 검증 로직 추가 (체크섬 포함), 잘못된 번호는 422 반환
r perf | Worker memory growth was the WeasyPrint font cache: recycle the worker process after 500 jobs
i i18n | Some email templates still English only (password reset, dunning)
2026-11-13 2026-11-21
d deploy | Production on Fly.io: two app machines in nrt, one worker, managed Postgres with daily snapshots | closest region to Seoul customers and no Kubernetes to run
n deploy | Docker image slimmed from 1.1 GB to 310 MB with a multi-stage build and uv sync --no-dev
n deploy | Migrations run as a release command before new machines start
r deploy | Release failed: migration 0019 locked invoices for 40 s; rewrote it to add the column without a default, then backfill in batches
n api | OpenAPI schema published at /docs with examples for every endpoint
r webhooks | Outgoing customer webhooks now signed with HMAC-SHA256 (header X-Ledgerline-Signature)
r auth | SMTP via AWS SES is configured; password reset emails work in staging and production
d deploy | Sentry for errors and OpenTelemetry traces to Honeycomb | we need request traces across the API and the arq worker
d api | Search endpoint /invoices/search uses Postgres full-text search with a GIN index | good enough for 2M invoices; no Elasticsearch to operate
r i18n | 비밀번호 재설정/독촉 메일 템플릿 한국어 번역 완료
n deploy | Health check hits /healthz which checks DB and Redis; Fly restarts a machine after 3 failures
i api | Customers ask for CSV export of invoices; design a streaming endpoint next week
n tests | Coverage at 91%; the remaining gaps are the admin views
n deploy | Staging deploys on every merge to main, production on tags
"""


def _parse_phases(table: str) -> list[tuple[date, date, list[Fact]]]:
    phases: list[tuple[date, date, list[Fact]]] = []
    for line in table.strip().splitlines():
        head, *rest = line.split(" | ")
        if not rest:
            first, last = head.split()
            phases.append((date.fromisoformat(first), date.fromisoformat(last), []))
            continue
        kind, topic = head.split()
        phases[-1][2].append((topic, rest[0], kind, rest[1] if len(rest) > 1 else ""))
    return phases


PHASES = _parse_phases(_PHASE_TABLE)

# Phases 0-4 become archives; the last phase is the current memory.md.
ARCHIVE_PHASES = 5
PENDING_ARCHIVE = 3  # summaryGenerated false, never attempted yet
FAILED_ARCHIVE = 4  # summaryGenerated false with summaryError

PHASE_OVERVIEWS = [
    "The first week set up the ledgerline service (FastAPI, SQLAlchemy 2.0, Alembic) with strict typing, a "
    "transactional test fixture and CI on GitHub Actions. Most of the work went into authentication: short-lived "
    "JWT access tokens with rotating, hashed refresh tokens and reuse detection.",
    "The second week built the billing core: gapless per-customer invoice numbers, proration with "
    "ROUND_HALF_EVEN, per-line VAT, credit notes and cursor pagination. A concurrency bug in invoice numbering "
    "and a Decimal context leak were found and fixed.",
    "The third week added Stripe webhooks with idempotent handlers, an arq worker for PDFs and retries, "
    "hashed public API keys, and cut CI time from 6 minutes to about 2.",
]

FILES = [
    "app/billing/proration.py",
    "app/billing/numbering.py",
    "app/auth/tokens.py",
    "app/api/invoices.py",
    "app/webhooks/stripe.py",
    "app/worker/pdf.py",
    "app/db/models.py",
    "tests/test_billing.py",
    "tests/test_webhooks.py",
    "app/i18n/locale.py",
    "Dockerfile",
    "fly.toml",
]
#: The application's own modules: what a routine bullet about code (a refactor, tests, coverage, a lint
#: finding) names; a commit or a merge conflict may touch any file.
MODULES = [name for name in FILES if name.startswith("app/")]
BRANCHES = [
    "main",
    "feat/credit-notes",
    "fix/numbering-race",
    "feat/webhooks",
    "perf/dashboard",
    "feat/i18n-ko",
    "chore/deploy",
]


@dataclass
class _Section:
    moment: datetime
    bullets: list[str] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)


def _header(moment: datetime, legacy: bool) -> str:
    utc = moment.strftime("%Y-%m-%d_%H%M")
    if legacy:
        return f"## {utc}"
    return section_header(moment, moment + LOCAL_OFFSET)


def _bullet(fact: Fact) -> str:
    topic, text, kind, reason = fact
    if kind == "d":
        joiner = " — " if _is_korean(text) else ", because "
        return f"- [{topic}]: {text}{joiner}{reason}"
    return f"- [{topic}]: {text}"


def _is_korean(text: str) -> bool:
    return any("\uac00" <= ch <= "\ud7a3" for ch in text)


ROUTINE = [
    ("tests", "Full suite green: {passed} passed, {small} skipped in {secs} s"),
    ("git", "Committed {sha} on {branch} touching {file}"),
    ("review", "Addressed review comments on PR #{pr} (naming, one missing test)"),
    ("refactor", "Split {module} into smaller functions; no behaviour change, mypy clean"),
    ("docs", "Updated the README section on {doc}"),
    ("tests", "Added {small2} tests for {module} edge cases"),
    ("debug", "Reproduced the failure in {module} with a minimal test before touching the code"),
    ("git", "Rebased {feature} on main; resolved a conflict in {file}"),
    ("ci", "CI run #{run} green in {mins} min {secs2} s"),
    ("deps", "Bumped {dep} to the latest patch release; lock file regenerated with uv lock"),
    ("tests", "Coverage of {module} is now {pct}%"),
    ("review", "Claude suggested extracting a helper in {module}; accepted after reading the diff"),
    ("debug", "ruff flagged an unused import in {module}; removed"),
    ("db", "Ran the migrations against a copy of the staging DB: {mins} min, no locks over 1 s"),
]
DOC_TOPICS = ["local setup", "running migrations", "webhook testing", "API keys", "deploys", "the worker"]
DEPENDENCIES = ["fastapi", "sqlalchemy", "pydantic", "alembic", "httpx", "arq", "weasyprint", "orjson"]


def _routine_bullet(rng: random.Random) -> str:
    topic, template = rng.choice(ROUTINE)
    named = rng.choice(MODULES if "{module}" in template else FILES)
    text = template.format(
        passed=rng.randrange(180, 420),
        small=rng.randrange(0, 4),
        secs=f"{rng.randrange(4, 19)}.{rng.randrange(10)}",
        sha=f"{rng.getrandbits(28):07x}",
        branch=rng.choice(BRANCHES),
        feature=rng.choice(BRANCHES[1:]),
        file=named,
        module=named,
        pr=rng.randrange(12, 140),
        doc=rng.choice(DOC_TOPICS),
        small2=rng.randrange(2, 9),
        run=rng.randrange(200, 900),
        mins=rng.randrange(1, 4),
        secs2=rng.randrange(60),
        dep=rng.choice(DEPENDENCIES),
        pct=rng.randrange(70, 99),
    )
    return f"- [{topic}]: {text}"


def _work_days(first: date, last: date, rng: random.Random) -> list[date]:
    days = []
    day = first
    while day <= last:
        if day.weekday() < 5 or rng.random() < 0.3:
            days.append(day)
        day += timedelta(days=1)
    return days


def _phase_sections(first: date, last: date, facts: list[Fact], rng: random.Random) -> list[_Section]:
    sections: list[_Section] = []
    for day in _work_days(first, last, rng):
        count = rng.randrange(3, 7)
        # Seoul working hours 09:30-21:00 are 00:30-12:00 UTC.
        minutes = sorted(rng.sample(range(30, 720, 7), count))
        for minute in minutes:
            moment = datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(minutes=minute)
            sections.append(_Section(moment))
    for i, fact in enumerate(facts):
        section = sections[i * len(sections) // len(facts)]
        section.facts.append(fact)
        section.bullets.append(_bullet(fact))
    for section in sections:
        for _ in range(rng.randrange(1 if section.facts else 2, 5)):
            section.bullets.insert(rng.randrange(len(section.bullets) + 1), _routine_bullet(rng))
    return sections


def _render(sections: list[_Section], legacy: bool) -> str:
    return "".join(f"\n{_header(s.moment, legacy)}\n" + "\n".join(s.bullets) + "\n" for s in sections).lstrip(
        "\n"
    )


def _summary(
    archive: str, sections: list[_Section], overview: str, generated: datetime, generator: str
) -> dict[str, Any]:
    dates = [utc_day(s.moment) for s in sections]
    by_topic: dict[str, list[tuple[str, Fact]]] = {}
    decisions: list[dict[str, str]] = []
    issues: list[dict[str, str]] = []
    for section in sections:
        day = utc_day(section.moment)
        for fact in section.facts:
            topic, text, kind, reason = fact
            by_topic.setdefault(topic, []).append((day, fact))
            if kind == "d":
                decisions.append({"decision": text, "reason": reason, "date": day})
            elif kind in "ir":
                issues.append({"issue": text, "status": "open" if kind == "i" else "resolved", "date": day})
    themes = []
    for topic, items in sorted(by_topic.items(), key=lambda kv: -len(kv[1])):
        texts = [fact[1].rstrip(".") + "." for _, fact in items[:3]]
        themes.append(
            {
                "name": TOPIC_NAMES.get(topic, topic),
                "summary": " ".join(texts),
                "sessions": sorted({day for day, _ in items}),
            }
        )
    return {
        "dateRange": {"first": min(dates), "last": max(dates)},
        "sectionCount": len(sections),
        "themes": themes[:10],
        "keyDecisions": decisions[:10],
        "issues": issues[:10],
        "overallSummary": overview,
        "sourceFile": archive,
        "generatedAt": iso(generated),
        "generator": generator,
    }


# --- L1 sessions --------------------------------------------------------------------------

PROMPTS = [
    ("Run the test suite and fix whatever fails", "app/billing/proration.py"),
    (
        "The release failed on migration 0019, can you look at the logs?",
        "migrations/versions/0019_add_paid_at.py",
    ),
    ("Add HMAC signatures to outgoing customer webhooks", "app/webhooks/outgoing.py"),
    ("비밀번호 재설정 메일 템플릿을 한국어로 번역해줘", "app/templates/email/password_reset.ko.html"),
    ("Why is the Docker image so big? Make it smaller", "Dockerfile"),
    ("Set up Sentry and OpenTelemetry for the API and the worker", "app/observability.py"),
    ("Add a full-text search endpoint for invoices", "app/api/search.py"),
    ("Check the health check config for Fly", "fly.toml"),
    ("CSV 내보내기 엔드포인트 설계를 같이 고민해보자", "app/api/export.py"),
    ("Look at coverage and tell me what is untested", "app/admin/views.py"),
]


class _L1Writer:
    def __init__(self, rng: random.Random, session: str, start: datetime) -> None:
        self.rng = rng
        self.session = session
        self.clock = start
        self.entries: list[dict[str, Any]] = []
        self.tool_n = 0

    def _tick(self, low: int = 2, high: int = 40) -> str:
        self.clock += timedelta(seconds=self.rng.randrange(low, high), milliseconds=self.rng.randrange(1000))
        return iso(self.clock)

    def add(
        self, role: str, fields: dict[str, Any], agent: str | None = None, low: int = 2, high: int = 40
    ) -> None:
        entry: dict[str, Any] = {"ts": self._tick(low, high), "role": role, **fields}
        if agent:
            entry["sidechain"] = True
            entry["agentId"] = agent
        entry["session"] = self.session
        self.entries.append(entry)

    def tool(
        self, name: str, fields: dict[str, Any], output: str, agent: str | None = None, error: bool = False
    ) -> None:
        self.tool_n += 1
        tool_id = f"toolu_01{self.rng.getrandbits(80):020x}"
        self.add("tool", {"name": name, **fields, "tool_use_id": tool_id}, agent)
        result: dict[str, Any] = {"tool_use_id": tool_id, "result": "error" if error else "ok"}
        if output or error:
            result["output"] = output[:200]
        self.add("tool_result", result, agent, low=0, high=6)


def _session_entries(
    rng: random.Random, session: str, start: datetime, prompt_i: int, with_agent: bool
) -> list[dict[str, Any]]:
    prompt, target = PROMPTS[prompt_i % len(PROMPTS)]
    w = _L1Writer(rng, session, start)
    korean = _is_korean(prompt)
    w.add("user", {"text": prompt})
    w.add(
        "assistant",
        {"text": "먼저 관련 파일을 읽어보겠습니다." if korean else "Let me look at the relevant code first."},
    )
    w.tool("Read", {"target": target}, f"{rng.randrange(40, 320)} lines")
    w.tool(
        "Grep",
        {"pattern": target.rsplit("/", 1)[-1].split(".")[0], "path": "app"},
        f"Found {rng.randrange(2, 9)} files",
    )
    if with_agent:
        agent = f"a{rng.getrandbits(60):015x}"
        w.tool(
            "Task",
            {"params": "description,prompt,subagent_type", "detail": "Survey call sites"},
            "",
            error=False,
        )
        # The subagent's own work, recorded as sidechain entries before the Task result is used.
        w.entries.pop()  # the Task result comes after the subagent finished
        task_id = w.entries[-1]["tool_use_id"]
        w.add(
            "user",
            {"text": f"Survey how {target} is used across the codebase and report the call sites."},
            agent,
        )
        w.tool("Grep", {"pattern": "import", "path": "app"}, f"Found {rng.randrange(10, 40)} files", agent)
        w.tool("Read", {"target": "app/main.py"}, "88 lines", agent)
        w.add(
            "assistant",
            {
                # Answers are Markdown, as Claude writes them (the viewer renders it).
                "text": f"`{target}` is used by **3 modules**:\n\n"
                "- `app/main.py`\n- `app/worker/tasks.py`\n- `tests/conftest.py`"
            },
            agent,
        )
        w.add(
            "tool_result",
            {
                "tool_use_id": task_id,
                "result": "ok",
                "output": f"{target} is used by 3 modules: app/main.py, app/worker/tasks.py and tests/conftest.py.",
            },
        )
    w.tool(
        "Edit", {"target": target, "diff": "-    timeout = 30\n+    timeout = settings.request_timeout"}, ""
    )
    failing = rng.random() < 0.5
    w.tool(
        "Bash",
        {"cmd": "uv run pytest -q"},
        f"{rng.randrange(3, 7)} failed, {rng.randrange(200, 400)} passed"
        if failing
        else f"{rng.randrange(200, 400)} passed in {rng.randrange(4, 19)}.{rng.randrange(10)}s",
        error=failing,
    )
    if failing:
        w.add("assistant", {"text": "Two tests still assume the old default; updating the fixture."})
        w.tool("Edit", {"target": "tests/conftest.py", "diff": "-TIMEOUT = 30\n+TIMEOUT = 45"}, "")
        w.tool(
            "Bash",
            {"cmd": "uv run pytest -q"},
            f"{rng.randrange(200, 400)} passed in {rng.randrange(4, 19)}.{rng.randrange(10)}s",
        )
    w.tool("Bash", {"cmd": "git status --short"}, f" M {target}")
    done = (
        "완료했습니다. 테스트도 모두 통과합니다."
        if korean
        else f"Done: {target} is updated and the suite passes."
    )
    w.add("assistant", {"text": done})
    w.add("user", {"text": "좋아, 커밋해줘" if korean else "Great, commit it"}, low=20, high=300)
    w.tool(
        "Bash",
        {"cmd": f'git commit -am "{prompt[:50]}"'},
        f"[main {rng.getrandbits(28):07x}] 2 files changed",
    )
    w.add("assistant", {"text": "커밋했습니다." if korean else "Committed."})
    return w.entries


# --- named notes ------------------------------------------------------------------------

NAMED_NOTES = {
    "project": """# ledgerline

Invoicing and billing service for small Korean and Japanese SaaS companies: customers,
plans, prorated invoices, credit notes, Stripe payments, Korean tax invoice (세금계산서) export.

- Stack: Python 3.12, FastAPI, SQLAlchemy 2.0, Alembic, PostgreSQL 16, Redis, arq worker
- Hosting: Fly.io (nrt), managed Postgres, Sentry + Honeycomb
- Owner: solo developer working with Claude Code; staging deploys on merge to main
""",
    "architecture": """# Architecture

- `app/api/`: FastAPI routers (invoices, customers, search, export), cursor pagination
- `app/billing/`: pure functions for proration, tax and numbering (Decimal, ROUND_HALF_EVEN)
- `app/webhooks/`: Stripe in (idempotent by event id), customer webhooks out (HMAC-SHA256)
- `app/worker/`: arq jobs (PDF rendering with WeasyPrint, retries, dunning)
- `app/db/`: models and Alembic migrations; money is NUMERIC(12,2), times are UTC
- Redis: rate limits (600/min per key), dashboard totals cache (60 s ± 10 s jitter)
""",
    "conventions": """# Conventions

- ruff + mypy --strict must pass; run `uv run pytest -q` before every commit
- Money is Decimal end to end; never float. Store UTC, render in the customer's locale
- Every migration is reviewed by hand; no locking ALTERs on invoices (add column, then backfill)
- Webhook handlers must be idempotent; tests replay recorded events from tests/fixtures/stripe/
- 커밋 메시지는 영어로, 사용자에게 보이는 문구는 ko/en 둘 다 작성
""",
}


def _write(path: Path, text: str, moment: datetime) -> None:
    atomic_write_text(path, text)
    stamp = moment.timestamp()
    os.utime(path, (stamp, stamp))


def create_demo_store(project_dir: Path, seed: int = 0) -> StorePaths:
    """Write a complete demo store under ``project_dir/.claude/memory`` and return its paths.

    Refuses (FileExistsError) to write over an existing memory.md or index.
    """
    paths = StorePaths(Path(project_dir).expanduser().absolute())
    if paths.memory.exists() or paths.index.exists():
        raise FileExistsError(f"{paths.root} already holds a memory store; choose an empty folder")
    paths.project.mkdir(parents=True, exist_ok=True)
    ensure_store(paths)
    rng = random.Random(seed)

    phase_sections = [_phase_sections(first, last, facts, rng) for first, last, facts in PHASES]
    entries: list[dict[str, Any]] = []
    for i, sections in enumerate(phase_sections[:ARCHIVE_PHASES]):
        last = sections[-1].moment
        rotated = last + timedelta(minutes=rng.randrange(3, 50), seconds=rng.randrange(60))
        name = archive_name_for(rotated)
        text = _render(sections, legacy=i == 0)
        _write(paths.archive(name), text, rotated)
        data = text.encode("utf-8")
        entry: dict[str, Any] = {
            "file": name,
            "rotatedAt": iso(rotated),
            "tokens": tokens_for_bytes(len(data)),
            "bytes": len(data),
            "summary": summary_name(name),
            "summaryGenerated": False,
            "dateRange": {
                "first": utc_day(sections[0].moment),
                "last": utc_day(sections[-1].moment),
            },
        }
        if i < len(PHASE_OVERVIEWS):
            generated = rotated + timedelta(seconds=rng.randrange(20, 90))
            generator = "claude:haiku" if i < 2 else "extractive"
            summary = _summary(name, sections, PHASE_OVERVIEWS[i], generated, generator)
            _write(paths.archive(summary_name(name)), dumps_js(summary), generated)
            mark_generated(entry, generator, tries=1)
        elif i == FAILED_ARCHIVE:
            mark_failed(entry, "claude -p exited with status 1: API Error: 529 overloaded_error", tries=3)
        entries.append(entry)

    current = phase_sections[ARCHIVE_PHASES]
    _write(paths.memory, _render(current, legacy=False), current[-1].moment)
    for name, text in NAMED_NOTES.items():
        _write(paths.named(name), text, datetime(2026, 11, 14, 2, 10, tzinfo=UTC))

    # L1: one file per Claude Code session over the last two weeks; one session used a subagent.
    l1_days = _work_days(date(2026, 11, 10), LAST_DAY, rng)
    watermark = ""
    last_flush = ""
    for n, day in enumerate(l1_days):
        session = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        start = datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(minutes=rng.randrange(30, 600))
        lines = _session_entries(rng, session, start, n, with_agent=n == len(l1_days) - 3)
        name = l1_name(start, session)
        body = "".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n" for e in lines)
        last_ts = datetime.strptime(lines[-1]["ts"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
        _write(paths.sessions / name, body, last_ts)
        if n < len(l1_days) - 1:  # the newest session has not been flushed into memory.md yet
            watermark = lines[-1]["ts"]
            last_flush = iso(last_ts + timedelta(seconds=rng.randrange(5, 60)))

    last_rotation = entries[-1]["rotatedAt"]
    index: dict[str, Any] = {
        "version": 1,
        "current": "memory.md",
        "rotatedFiles": entries,
        "stats": {"totalRotations": len(entries), "lastRotation": last_rotation},
        "counter": rng.randrange(0, 20),
        "lastMemoryUpdateTs": watermark,
        "lastFlushAt": last_flush,
    }
    atomic_write_json(paths.index, index)
    return paths
