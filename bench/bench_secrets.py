"""Secret filter figures: recall per kind, ours against detect-secrets, and false positives.

Recall: every kind of ``tests/secret_corpus.py`` (fake values, generated deterministically),
bare and in its usual context. A sample counts as caught when its secret part no longer
appears in the text after redaction:

- ``ours``: :func:`memkeeper.core.redaction.redact.redact`, as every store writer applies it in a
  job or the CLI (our rules, then detect-secrets' precise plugin patterns);
- ``lean``: the same without detect-secrets' patterns, as in a hook process;
- ``ds-str``: detect-secrets with all its plugins and default filters, in its ad-hoc string
  mode (``scan_line``, eager search: its most generous mode), each line scanned; every
  value it reports is cut from the text. A ``Private Key`` report counts as the whole key
  block (detect-secrets reports the header line only);
- ``ds-file``: ``detect-secrets scan`` of the sample saved as a file (its normal mode).

False positives: every ``*.py`` file of this Python's standard library (found with
``sysconfig``), which holds no real secret (a few test passwords such as ``PASSWD =
'testPass'`` count as false positives all the same): ours counts the redaction markers
``redact`` adds; detect-secrets counts the secrets ``detect-secrets scan`` would report
for the file (``SecretsCollection.scan_file``, default plugins and filters). Both as
reports per million characters. The assignment rules were tuned on the standard library,
so every 4th file of the environment's site-packages (textual, pydantic, rich, ...;
detect-secrets' own files left out) is scanned too as a held-out set.

Usage: python bench/bench_secrets.py [--every N] [--show-misses] [--no-fp]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling modules, also under python -P
import _checkout  # noqa: F401  (the tests package: the corpus)

from memkeeper.core.redaction.redact import redact, use_maintained_rules
from tests.secret_corpus import samples

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"\[REDACTED:[a-z0-9_]+\]|\[PRIVATE\]")


@contextmanager
def ds_settings() -> Iterator[None]:
    from detect_secrets.settings import default_settings

    with default_settings():
        yield


def ds_redact(text: str) -> str:
    """``text`` with every value detect-secrets reports cut out (its string mode)."""
    from detect_secrets.core.scan import scan_line

    out = text
    for line in text.splitlines():
        for found in scan_line(line):
            value = found.secret_value or ""
            if found.type == "Private Key":
                start = text.find("-----BEGIN")
                end = text.find("-----", text.find("-----END") + 8)
                if start >= 0 and end >= 0:
                    out = out.replace(text[start : end + 5], "[DS]")
            elif value:
                out = out.replace(value, "[DS]")
    return out


def ds_file_redact(text: str, folder: Path) -> str:
    """``text`` with every value ``detect-secrets scan`` reports for it as a file cut out."""
    from detect_secrets.core.secrets_collection import SecretsCollection

    path = folder / "notes.txt"
    path.write_text(text, "utf-8")
    collection = SecretsCollection()
    collection.scan_file(os.fspath(path))
    out = text
    for _name, found in collection.data.items():
        for secret in found:
            if secret.type == "Private Key" and "-----BEGIN" in text:
                return "[DS]"
            if secret.secret_value:
                out = out.replace(secret.secret_value, "[DS]")
    return out


COLUMNS = ("ours", "lean", "ds-str", "ds-file")


def recall(show_misses: bool) -> None:
    rows: dict[str, dict[str, tuple[bool, ...]]] = {}
    with ds_settings(), tempfile.TemporaryDirectory() as tmp:
        for sample in samples():
            ours = sample.secret not in redact(sample.text)
            use_maintained_rules(False)
            lean = sample.secret not in redact(sample.text)
            use_maintained_rules(True)
            theirs = sample.secret not in ds_redact(sample.text)
            theirs_file = sample.secret not in ds_file_redact(sample.text, Path(tmp))
            rows.setdefault(sample.kind, {})[sample.variant] = (ours, lean, theirs, theirs_file)
            if show_misses and not ours:
                print(f"  MISS {sample.kind}/{sample.variant}: {redact(sample.text)[:160]!r}")
    mark = {True: "yes", False: "-"}
    head = " ".join(f"{c:>7}" for c in COLUMNS)
    print(f"{'':<24} {'bare':^31} | {'in context':^31}")
    print(f"{'kind':<24} {head} | {head}")
    totals = [0] * 8
    for kind, variants in rows.items():
        flags = (*variants["bare"], *variants["context"])
        for i, flag in enumerate(flags):
            totals[i] += flag
        cells = [f"{mark[f]:>7}" for f in flags]
        print(f"{kind:<24} {' '.join(cells[:4])} | {' '.join(cells[4:])}")
    cells = [f"{t:>7}" for t in totals]
    print(f"{'TOTAL of ' + str(len(rows)) + ' kinds':<24} {' '.join(cells[:4])} | {' '.join(cells[4:])}")
    worse = [
        kind
        for kind, v in rows.items()
        if any(v[variant][0] < max(v[variant][2], v[variant][3]) for variant in ("bare", "context"))
    ]
    print(f"kinds where detect-secrets catches a sample ours misses: {worse or 'none'}")


def python_files(folder: str, every: int = 1) -> list[Path]:
    """Every ``every``-th ``*.py`` under ``folder`` (sorted), without detect-secrets' own."""
    files = sorted(p for p in Path(folder).rglob("*.py") if "detect_secrets" not in p.parts)
    files = [f for f in files if "site-packages" not in f.relative_to(folder).parts]
    return files[::every]


def false_positives(label: str, files: list[Path], examples: int) -> None:
    from detect_secrets.core.secrets_collection import SecretsCollection

    chars = ours = 0
    shown: list[str] = []
    start = time.perf_counter()
    for path in files:
        try:
            text = path.read_text("utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        chars += len(text)
        redacted = redact(text)
        found = len(MARKER.findall(redacted)) - len(MARKER.findall(text))
        if found > 0:
            ours += found
            for line, new in zip(text.splitlines(), redacted.splitlines(), strict=False):
                if line != new and len(shown) < examples:
                    shown.append(f"{path.name}: {line.strip()[:100]}")
    ours_s = time.perf_counter() - start
    start = time.perf_counter()
    theirs = 0
    with ds_settings():
        for path in files:
            collection = SecretsCollection()
            collection.scan_file(os.fspath(path))
            theirs += sum(len(found) for _name, found in collection.data.items())
    ds_s = time.perf_counter() - start
    per_m = 1_000_000 / max(chars, 1)
    print(f"\n{label}: {len(files)} files, {chars / 1e6:.1f} M characters")
    print(f"{'':<16} {'reports':>8} {'per M chars':>12} {'seconds':>8}")
    print(f"{'ours':<16} {ours:>8} {ours * per_m:>12.2f} {ours_s:>8.1f}")
    print(f"{'detect-secrets':<16} {theirs:>8} {theirs * per_m:>12.2f} {ds_s:>8.1f}")
    for example in shown:
        print(f"  ours: {example}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=1, help="scan every N-th file only (quick runs)")
    parser.add_argument("--show-misses", action="store_true")
    parser.add_argument("--no-fp", action="store_true", help="recall only")
    args = parser.parse_args()
    print(f"uptime: {os.popen('uptime').read().strip()}")  # noqa: S605 - fixed command, no input
    recall(args.show_misses)
    if not args.no_fp:
        paths = sysconfig.get_paths()
        stdlib = python_files(paths["stdlib"], args.every)
        false_positives(f"standard library {paths['stdlib']} (rules tuned on it)", stdlib, 25)
        held_out = python_files(paths["purelib"], 4 * args.every)
        false_positives(f"held out: every 4th file of {paths['purelib']}", held_out, 25)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
