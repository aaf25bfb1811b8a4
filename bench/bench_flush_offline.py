"""``memkeeper flush`` with the model backend unreachable or logged out, real Claude Code CLIs.

    .venv/bin/python bench/bench_flush_offline.py [CLAUDE_BINARY ...]

For each CLI (default: .e2e/ and .e2e-newest/ of this checkout), in a throwaway store
with a short session in L1 and ``summarizer.backend = claude``:

- refused: ANTHROPIC_BASE_URL points at a closed loopback port;
- logged out: no API key and an empty HOME (no credentials);

it times the first ``memkeeper flush`` (the model is tried, fails, extractive bullets are
written, the backend starts resting) and the second one (new entries; the model is not
tried during the rest), beside ``python3 -I -c pass``. Nothing leaves the machine.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def entries(start: int) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for i in range(start, start + 4):
        rows.append(
            {"ts": f"2026-11-20T10:{i:02d}:00.000Z", "role": "user", "text": f"fix test {i} in parser"}
        )
        rows.append({"ts": f"2026-11-20T10:{i:02d}:20.000Z", "role": "assistant", "text": f"Fixed test {i}."})
    return rows


def write_l1(project: Path, rows: list[dict[str, object]]) -> None:
    path = project / ".claude" / "memory" / "sessions" / "2026-11-20_100000_aaaaaaaa.l1.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in rows)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    started = time.monotonic()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    return time.monotonic() - started, done.stdout


def run(claude: Path, case: str) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        home, project = Path(tmp, "home"), Path(tmp, "proj")
        home.mkdir()
        (project / ".claude" / "memory").mkdir(parents=True)
        config = {"summarizer": {"backend": "claude", "minCallChars": 0}}
        (project / ".claude" / "memory" / "config.json").write_text(json.dumps(config))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "ANTHROPIC", "MEMKEEPER"))}
        env.update(HOME=str(home), DISABLE_AUTOUPDATER="1", PATH=f"{claude.parent}:/usr/bin:/bin")
        if case == "refused":
            env.update(
                ANTHROPIC_API_KEY="sk-ant-none", ANTHROPIC_BASE_URL=f"http://127.0.0.1:{closed_port()}"
            )
        argv = [
            sys.executable,
            "-P",
            "-m",
            "memkeeper.cli.main",
            "--project",
            str(project),
            "flush",
            "--json",
        ]
        write_l1(project, entries(0))
        first, out1 = timed(argv, env)
        write_l1(project, entries(10))
        second, out2 = timed(argv, env)
        log = project / ".claude" / "memory" / ".state" / "model-calls.jsonl"
        tried = (
            sum(1 for line in log.read_text().splitlines() if '"backend":"claude"' in line)
            if log.exists()
            else 0
        )
        assert json.loads(out1)["generators"] == ["extractive"] == json.loads(out2)["generators"]
        return first, second, tried


def main(args: list[str]) -> int:
    clis = [Path(a) for a in args] or [
        REPO / d / "node_modules" / ".bin" / "claude" for d in (".e2e", ".e2e-newest")
    ]
    started = time.monotonic()
    subprocess.run(["python3", "-I", "-c", "pass"], check=True)
    print(f"baseline python3 -I -c pass: {time.monotonic() - started:.3f} s")
    print(f"{'claude':28} {'case':10} {'1st flush':>9} {'2nd flush':>9} {'model tried':>11}")
    for claude in clis:
        if not claude.exists():
            print(f"{claude}: not installed (scripts/setup.sh --test)")
            continue
        version = subprocess.run([str(claude), "--version"], capture_output=True, text=True).stdout.split()[0]
        for case in ("refused", "logged-out"):
            first, second, tried = run(claude, case)
            print(f"{'Claude Code ' + version:28} {case:10} {first:8.2f}s {second:8.2f}s {tried:>8} time")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
