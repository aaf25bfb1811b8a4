"""Privacy end to end: secrets and ``<private>`` spans planted everywhere a session carries text.

Prompts, assistant text, tool inputs and outputs, a subagent, the hook payloads, a saved
note, and the summarizer's own answers (a model may repeat a secret it saw) all go through
the real commands (hooks, ``memkeeper job l1|flush|summary``, rotation); then every file in
the store, compressed or not, is scanned: no planted value may be found.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from memkeeper.core.store.atomic import append_bytes, atomic_write_json
from memkeeper.core.store.paths import StorePaths
from tests.planted import store_text, write_transcript
from tests.reliability import reliability_kit as kit

SESSION = "9e1d2c3b-aaaa-4bbb-8ccc-000000000001"

SECRETS = {
    "anthropic": "sk-ant-api03-Zq8vYw2LmN4pR6tU8xA0bC2dE4fG6hJ8",
    "github": "ghp_Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz1Xc3Vb5",
    "aws": "AKIAQWERTYUIOPASDFGH",
    "slack": "xoxb-1234567890-abcdefghijklmnop",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyMTIzIn0.c2lnbmF0dXJlMTIzNDU2",
    "password": "correct-horse-battery-staple-42",
    "bearer": "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2",
}
PRIVATE = [
    "PRIVATE-TRIAL-ONE-4471",
    "PRIVATE-TRIAL-TWO-9902",
    "PRIVATE-TRIAL-SUB-3318",
    "PRIVATE-TRIAL-OUT-7264",
]
INJECTED = "sk-ant-api03-InjectedByTheModel0000000000"  # a summarizer repeating a key


def ts(n: int) -> str:
    return f"2026-03-01T09:{n // 60:02d}:{n % 60:02d}.000Z"


def write_session(folder: Path) -> Path:
    s = SECRETS
    records: list[dict[str, Any]] = []

    def add(kind: str, content: Any, **extra: Any) -> None:
        role = "user" if kind == "user" else "assistant"
        records.append(
            {
                "type": kind,
                "timestamp": ts(len(records)),
                "sessionId": SESSION,
                "uuid": f"u{len(records)}",
                "message": {"role": role, "content": content},
                **extra,
            }
        )

    add("user", f"deploy with {s['anthropic']} please <private>{PRIVATE[0]}</private>")
    add("user", f"the db password={s['password']} and [private]{PRIVATE[1]}[/private]")
    add(
        "assistant",
        [
            {"type": "text", "text": f"I will use the token {s['github']}."},
            {
                "type": "tool_use",
                "id": "t1",
                "name": "Bash",
                "input": {"command": f"curl -H 'Authorization: Bearer {s['bearer']}' https://x.test"},
            },
            {
                "type": "tool_use",
                "id": "t2",
                "name": "Write",
                "input": {"file_path": "/p/.env", "content": f"AWS={s['aws']}"},
            },
            {
                "type": "tool_use",
                "id": "t3",
                "name": "Edit",
                "input": {
                    "file_path": "/p/a.py",
                    "old_string": "x = 1",
                    "new_string": f"SLACK = '{s['slack']}'",
                },
            },
        ],
    )
    add(
        "user",
        [
            {"type": "tool_result", "tool_use_id": "t1", "content": f"ok token={s['jwt']}"},
            {
                "type": "tool_result",
                "tool_use_id": "t2",
                "content": [{"type": "text", "text": f"wrote <private>{PRIVATE[3]}</private>"}],
            },
            {
                "type": "tool_result",
                "tool_use_id": "t3",
                "content": f"api_key: {s['password']}",
                "is_error": True,
            },
        ],
    )
    add("assistant", [{"type": "text", "text": "Done; the deployment works now."}])
    agent = {
        "timestamp": ts(50),
        "agentId": "trial1",
        "message": {
            "role": "user",
            "content": f"subagent: use {s['anthropic']} <private>{PRIVATE[2]}</private>",
        },
    }
    return write_transcript(folder, SESSION, records, "trial1", agent)


# The key the model "repeats" comes from a file outside the store (argv[1]), so that
# the only way for it to reach the store is through the model's answer.
ECHO_SUMMARIZER = r"""
import json, sys
injected = open(sys.argv[1]).read()
prompt = sys.stdin.read()
if "overallSummary" in prompt:
    print(json.dumps({"themes": [{"name": "echo", "summary": prompt[-3000:]}], "keyDecisions": [], "issues": [],
                      "overallSummary": "The model repeated a key: %s. " % injected + prompt[-2000:]}))
else:
    lines = [l.strip() for l in prompt.splitlines() if l.strip()][-8:]
    print("\n".join("- [echo]: " + l for l in lines))
    print("- [echo]: the model repeated %s" % injected)
"""


def use_echo_summarizer(paths: StorePaths, tmp_path: Path, config: dict[str, object]) -> None:
    """``config`` plus ECHO_SUMMARIZER as the store's summarizer, INJECTED kept outside the store."""
    script = tmp_path / "echo_summarizer.py"
    script.write_text(ECHO_SUMMARIZER)
    injected = tmp_path / "injected.txt"
    injected.write_text(INJECTED)
    command = [sys.executable, str(script), str(injected)]
    atomic_write_json(
        paths.config, {"summarizer": {"backend": "command", "command": command, "minCallChars": 0}, **config}
    )


def run(cmd: list[str], env: dict[str, str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env, timeout=120)


def test_nothing_planted_reaches_any_file(tmp_path: Path) -> None:
    paths = kit.new_project(tmp_path, "project")
    transcripts = tmp_path / "transcripts"
    transcripts.mkdir()
    transcript = write_session(transcripts)
    use_echo_summarizer(paths, tmp_path, {"memory": {"flushEvery": 2}})
    append_bytes(paths.memory, b"".join(kit.make_line(i) for i in range(2200)))  # rotation is due
    env = kit.child_env(tmp_path / "home")
    cli = [sys.executable, "-P", "-m", "memkeeper.cli.main"]
    base = {"session_id": SESSION, "cwd": str(paths.project), "transcript_path": str(transcript)}
    events: list[tuple[str, dict[str, object]]] = [
        ("SessionStart", {"source": "startup"}),
        ("UserPromptSubmit", {"prompt": f"key {SECRETS['anthropic']} <private>{PRIVATE[0]}</private>"}),
        (
            "PostToolUse",
            {
                "tool_name": "Bash",
                "tool_input": {"command": f"export TOKEN={SECRETS['github']}"},
                "tool_response": {"stdout": f"password={SECRETS['password']}"},
            },
        ),
        ("PreCompact", {"trigger": "auto"}),
        ("Stop", {}),
        ("SessionEnd", {"reason": "exit"}),
    ]
    for event, extra in events:
        done = run([*cli, "hook", event], env, json.dumps({**base, "hook_event_name": event, **extra}))
        assert done.returncode == 0, done.stderr
    options = json.dumps({"session_id": SESSION, "transcript_path": str(transcript)})
    for kind in ("l1", "flush", "summary"):
        done = run([*cli, "--project", str(paths.project), "job", kind, "--options", options], env)
        assert done.returncode == 0, done.stderr
    done = run(
        [
            *cli,
            "--project",
            str(paths.project),
            "save",
            f"remember {SECRETS['slack']} <private>{PRIVATE[1]}</private>",
        ],
        env,
    )
    # (``save`` may not exist in every build; when it does, it must redact)
    text = store_text(paths.root)
    assert "[REDACTED" in text and "[PRIVATE]" in text  # the pipeline really carried the planted text
    assert "- [echo]:" in text  # the flush really went through the summarizer
    leaks = [name for name, value in SECRETS.items() if value in text]
    leaks += [value for value in PRIVATE if value in text]
    assert leaks == []


def test_a_summarizer_repeating_a_secret_is_redacted_in_the_summary(tmp_path: Path) -> None:
    """The model's answer itself carries a key: the L3 summary file must not."""
    from memkeeper.core.log import rotation
    from memkeeper.core.summaries.summary import generate_summary

    paths = kit.new_project(tmp_path, "project")
    use_echo_summarizer(paths, tmp_path, {})
    append_bytes(paths.memory, b"".join(kit.make_line(i) for i in range(300)))
    result = rotation.rotate(paths, 100, 10)
    assert result is not None
    generate_summary(paths, result.archive, sleep=lambda _s: None)
    text = store_text(paths.root)
    assert "[REDACTED:anthropic]" in text  # the answer really carried the key
    assert INJECTED not in text
