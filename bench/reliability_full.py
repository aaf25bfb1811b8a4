"""The full reliability run: crash trials, concurrency, faults, fuzzing, privacy and hostile content.

    python bench/reliability_full.py [--trials-per-op 50] [--processes 16] [--seconds 30]
                                     [--fuzz-examples 3000] [--atheris-seconds 120]

Prints one Markdown table (docs/reliability.md): trials, faults, inputs
tried and bytes lost (the goal is 0), followed by the details of anything that failed.
The same trials run in CI with small counts (``tests/reliability``).
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling modules, also under python -P
import _checkout  # noqa: F401  (the tests package: the trials' kit)

from tests.reliability import reliability_kit as kit

REPO = Path(__file__).resolve().parents[1]


def crash_trials(base: Path, per_op: int, seed0: int) -> list[dict[str, object]]:
    rows = []
    for name, (duration_of, trial) in kit.OPERATIONS.items():
        folder = base / f"crash-{name.replace(' ', '-')}"
        folder.mkdir()
        duration = duration_of(folder)
        results = []
        started = time.monotonic()
        for i in range(per_op):
            # Spread kills a little past the end too: a kill after the work must be harmless.
            results.append(trial(folder, seed0 + i, duration * 1.1))
        repaired: collections.Counter[str] = collections.Counter()
        for r in results:
            repaired.update(set(r.repaired))
        failures = [r for r in results if not r.ok]
        rows.append(
            {
                "what": f"crash: {name} (SIGKILL at seeded points over {duration * 1000:.0f} ms)",
                "trials": len(results),
                "mid": sum(1 for r in results if r.repaired),
                "repairs": ", ".join(f"{k} ×{v}" for k, v in repaired.most_common()),
                "lost": sum(r.bytes_lost for r in results),
                "dup": sum(r.duplicated_lines for r in results),
                "cut": sum(r.inflight_torn for r in results),
                "failed": len(failures),
                "details": [f"seed {r.killed_at:.4f}s: {r.problems[:3]}" for r in failures[:5]],
                "seconds": time.monotonic() - started,
            }
        )
    return rows


def concurrency(base: Path, processes: int, seconds: float) -> dict[str, object]:
    folder = base / "concurrency"
    folder.mkdir()
    result = kit.concurrency_run(folder, processes, seconds)
    return {
        "what": f"concurrency: {processes} processes × {seconds:.0f} s of checks + appends",
        "result": result,
    }


def run_pytest(args: list[str], env_extra: dict[str, str]) -> tuple[int, str]:
    env = dict(os.environ)
    env.update(env_extra)
    proc = subprocess.run(
        # one process (-n 0): the trials print their counts (-s), which xdist's workers would swallow
        [sys.executable, "-m", "pytest", "-q", "-rxs", "-n", "0", "-p", "no:cacheprovider", *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=3600,
    )
    return proc.returncode, proc.stdout + proc.stderr


def count(pattern: str, text: str) -> int:
    m = re.search(pattern, text)
    return int(m.group(1)) if m else 0


def outcomes(text: str, *words: str) -> list[int]:
    """pytest's count of each outcome in ``words`` (passed, failed, …) in its output ``text``; 0 if absent."""
    return [count(rf"(\d+) {word}", text) for word in words]


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials-per-op", type=int, default=50)
    parser.add_argument("--processes", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--fuzz-examples", type=int, default=3000)
    parser.add_argument("--atheris-seconds", type=int, default=120)
    parser.add_argument("--seed", type=int, default=1000)
    return parser.parse_args()


def pytest_runs(args: argparse.Namespace) -> dict[str, tuple[int, str]]:
    """The faults, privacy/hostile, hypothesis and atheris trials: each one pytest run's exit code and output."""
    return {
        "faults": run_pytest(["tests/reliability/test_fault_trials.py"], {}),
        "privacy/hostile": run_pytest(
            ["tests/reliability/test_privacy_trials.py", "tests/reliability/test_hostile_content.py"], {}
        ),
        "hypothesis": run_pytest(
            ["tests/reliability/test_fuzz_properties.py", "--hypothesis-show-statistics"],
            {"RELIABILITY_FUZZ_EXAMPLES": str(args.fuzz_examples)},
        ),
        "atheris": run_pytest(
            ["tests/reliability/test_atheris_transcript.py", "-s"],
            {"RELIABILITY_ATHERIS_SECONDS": str(args.atheris_seconds)},
        ),
    }


def crash_lines(crash: list[dict[str, object]]) -> list[str]:
    """A table row per crash operation."""
    lines = []
    for row in crash:
        ok = "ok" if not row["failed"] else f"{row['failed']} FAILED"
        dup = f", {row['dup']} duplicated lines" if row["dup"] else ""
        if row["cut"]:
            dup += f"; {row['cut']} unconfirmed line(s) cut short by the kill itself"
        lines.append(f"| {row['what']} | {row['trials']} | – | {row['mid']} | {row['lost']} | {ok}{dup} |")
    return lines


def concurrency_line(what: object, c: kit.ConcurrencyResult) -> str:
    return (
        f"| {what} | {c.checks} checks, {c.appends} appends | – | – | {c.bytes_lost} | "
        f"{'ok' if c.ok else 'FAILED'}: counter {c.counted}/{c.checks}, {c.archives} archives, "
        f"{c.torn} torn, {c.duplicated_lines} duplicated |"
    )


def pytest_lines(runs: dict[str, tuple[int, str]], atheris_seconds: int) -> tuple[list[str], int]:
    """The table rows of the pytest-run trials, and how many inputs the fuzzers tried."""
    faults_out = runs["faults"][1]
    fuzz_rc, fuzz_out = runs["hypothesis"]
    ath_rc, ath_out = runs["atheris"]
    privacy_out = runs["privacy/hostile"][1]
    passed, xfailed, failed, skipped = outcomes(faults_out, "passed", "xfailed", "failed", "skipped")
    hyp = sum(int(n) for n in re.findall(r"(\d+) passing,", fuzz_out))
    hyp_failed, hyp_passed = outcomes(fuzz_out, "failed", "passed")
    ath_runs = count(r"atheris tried (\d+) inputs", ath_out)
    if ath_rc == 0 and ath_runs:
        ath_state = "ok"
    else:
        ath_state = "skipped (atheris unavailable)" if "skipped" in ath_out else "FAILED"
    p_passed, p_xfailed, p_failed = outcomes(privacy_out, "passed", "xfailed", "failed")
    lines = [
        f"| faults: disk full (tmpfs + file-size limit), read-only, permission denied, summarizer "
        f"hangs/dies/fails/babbles | {passed + xfailed + failed} faults | – | – | 0 | "
        f"{passed} ok, {xfailed} known issue(s), {failed} failed, {skipped} skipped |",
        f"| fuzz (hypothesis): tail vs reference, transcript parser, privacy filter | "
        f"{hyp_passed + hyp_failed} properties | {hyp} | – | – | "
        f"{'ok' if fuzz_rc == 0 else 'FAILED'} |",
        f"| fuzz (atheris, coverage-guided, {atheris_seconds} s): transcript parser → L1 | 1 | "
        f"{ath_runs} | – | – | {ath_state} |",
        f"| privacy (planted secrets, `<private>`) + hostile content (markup, ANSI, NUL, huge lines) "
        f"| {p_passed + p_xfailed + p_failed} scenarios | – | – | – | {p_passed} ok, "
        f"{p_xfailed} known issue(s), {p_failed} failed |",
    ]
    return lines, hyp + ath_runs


def problems_of(
    crash: list[dict[str, object]], c: kit.ConcurrencyResult, runs: dict[str, tuple[int, str]]
) -> list[str]:
    """What failed, in a line each (the known issues printed on the way)."""
    problems = [d for row in crash for d in row["details"]]  # type: ignore[attr-defined]
    problems += c.problems
    for name, (rc, out) in runs.items():
        if rc != 0:
            problems.append(f"{name}: pytest exit {rc}\n{out[-2000:]}")
        for known in re.findall(r"^XFAIL .*$", out, re.MULTILINE):
            print(f"known issue: {known}")
    return problems


def main() -> int:
    args = _arguments()
    os.environ["MEMKEEPER_NO_JOBS"] = "1"
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="memkeeper-reliability-") as tmp:
        base = Path(tmp)
        os.environ["HOME"] = str(base / "home")
        (base / "home").mkdir()
        crash = crash_trials(base, args.trials_per_op, args.seed)
        conc = concurrency(base, args.processes, args.seconds)
    runs = pytest_runs(args)
    c = conc["result"]
    assert isinstance(c, kit.ConcurrencyResult)
    total_lost = sum(int(row["lost"]) for row in crash) + c.bytes_lost  # type: ignore[call-overload]
    lines = [
        "| trial | trials / faults | inputs tried | kills mid-operation | bytes lost | result |",
        "|---|---:|---:|---:|---:|---|",
        *crash_lines(crash),
        concurrency_line(conc["what"], c),
    ]
    fuzz_lines, inputs = pytest_lines(runs, args.atheris_seconds)
    lines += fuzz_lines
    lines.append(
        f"| **total** | {sum(int(r['trials']) for r in crash)} crash trials | "  # type: ignore[call-overload]
        f"{inputs} | – | **{total_lost}** | |"
    )
    print("\n".join(lines))
    print(
        f"\n(run took {time.monotonic() - started:.0f} s; python {sys.version.split()[0]}, {os.cpu_count()} CPUs)"
    )
    problems = problems_of(crash, c, runs)
    for problem in problems:
        print(f"PROBLEM: {problem}")
    return 0 if not problems and total_lost == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
