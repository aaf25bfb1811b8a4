"""Checks of single files: leftovers of killed writers, L1 lines, counters, encoding, modes."""

from __future__ import annotations

import gzip
import json
import os
import stat
import zlib
from pathlib import Path

from ..basics.platform import HAS_FILE_MODES
from ..store import jobs
from ..store.atomic import append_bytes, atomic_write_bytes, atomic_write_json
from ..store.layout import GITIGNORE
from ..store.lock import file_lock
from ..store.names import is_l1
from ..store.paths import DIR_MODE, FILE_MODE
from .base import (
    ERROR,
    NOTE,
    WARNING,
    Check,
    Context,
    Finding,
    load_json,
    lock_held,
    rel,
    store_files,
)

#: A JS ``.rotation.lock`` older than this is stale (the JS plugin's LOCK_STALE_MS).
JS_LOCK_STALE_SECONDS = 60.0
JS_ROTATION_LOCK = ".rotation.lock"


class LeftoversCheck(Check):
    """No stale JS rotation lock, no rerun request no job will see, no temp file of a dead writer."""

    codes = ("stale-js-lock", "stale-rerun-flag", "leftover-temp")

    def diagnose(self, ctx: Context) -> list[Finding]:
        paths = ctx.paths
        out: list[Finding] = []
        js_lock = paths.root / JS_ROTATION_LOCK
        if js_lock.exists() and ctx.age(js_lock) > JS_LOCK_STALE_SECONDS:
            out.append(
                Finding(
                    WARNING,
                    "stale-js-lock",
                    "a rotation lock left by the JS plugin is older than 60 seconds",
                    JS_ROTATION_LOCK,
                )
            )
        flags = sorted(paths.state.glob("job-*.rerun")) if paths.state.is_dir() else []
        for flag in flags:
            kind = flag.name[len("job-") : -len(".rerun")]
            if not lock_held(paths.state / f"job-{kind}.lock") and ctx.age(flag) > ctx.stale_seconds:
                out.append(
                    Finding(
                        WARNING,
                        "stale-rerun-flag",
                        f"a request to run the {kind} job again was left with no job running",
                        rel(paths, flag),
                    )
                )
        out += [
            Finding(WARNING, "leftover-temp", "a temp file left by an interrupted write", rel(paths, path))
            for path in store_files(paths)
            if path.name.startswith(".")
            and path.name.endswith(".tmp")
            and path.is_file()
            and ctx.age(path) > ctx.stale_seconds
        ]
        return out

    def repair(self, ctx: Context, findings: list[Finding]) -> None:
        for finding in findings:
            path = ctx.paths.root / str(finding.path)
            if finding.code == "stale-js-lock":
                path.unlink(missing_ok=True)  # holds only a pid, as the JS plugin's own cleanup
            elif finding.code == "stale-rerun-flag":
                kind = path.name[len("job-") : -len(".rerun")]
                path.unlink(missing_ok=True)

                jobs.start_job(ctx.paths, kind)  # the request that was left behind is honoured now
            elif path.exists():
                ctx.backed_up().move(path)


def _l1_files(ctx: Context) -> list[Path]:
    sessions = ctx.paths.sessions
    if not sessions.is_dir():
        return []
    return sorted(p for p in sessions.iterdir() if p.is_file() and is_l1(p.name))


def split_l1(data: bytes) -> tuple[list[bytes], list[bytes]]:
    """(good, bad) non-blank lines of an L1 file: good ones are JSON objects."""
    good: list[bytes] = []
    bad: list[bytes] = []
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            ok = isinstance(json.loads(line.decode("utf-8")), dict)
        except (ValueError, UnicodeDecodeError, RecursionError):
            ok = False
        (good if ok else bad).append(line)
    return good, bad


def _read_l1_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.name.endswith(".gz") else data


class L1LinesCheck(Check):
    """Every line of every L1 session file parses (bad ones go to a ``.bad`` sidecar)."""

    codes = ("l1-unreadable", "l1-bad-lines")

    def diagnose(self, ctx: Context) -> list[Finding]:
        out: list[Finding] = []
        for path in _l1_files(ctx):
            where = rel(ctx.paths, path)
            try:
                data = _read_l1_bytes(path)
            except (OSError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
                message = f"the compressed session file cannot be read ({exc})"
                out.append(Finding(ERROR, "l1-unreadable", message, where, fixable=False))
                continue
            _good, bad = split_l1(data)
            if bad:
                message = f"{len(bad)} line(s) of a session file do not parse"
                out.append(
                    Finding(ERROR, "l1-bad-lines", message, where, fixable=not path.name.endswith(".gz"))
                )
        return out

    def repair(self, ctx: Context, findings: list[Finding]) -> None:
        for finding in findings:
            if finding.code != "l1-bad-lines" or not finding.fixable:
                continue
            path = ctx.paths.root / str(finding.path)
            data = path.read_bytes()
            good, bad = split_l1(data)
            if not bad:
                continue
            ctx.backed_up().copy(path)
            append_bytes(path.with_name(path.name + ".bad"), b"".join(line + b"\n" for line in bad))
            tail = b"\n" if data.endswith(b"\n") else b""
            atomic_write_bytes(path, b"\n".join(good) + tail if good else b"")


class CountersCheck(Check):
    """The hook counters file parses (a corrupt one is set aside; counting starts again)."""

    codes = ("counters-corrupt",)

    @staticmethod
    def _ok(ctx: Context) -> bool:
        try:
            data = load_json(ctx.paths.counters)
        except FileNotFoundError:
            return True
        except (OSError, ValueError, UnicodeDecodeError):
            return False
        return isinstance(data, dict) and isinstance(data.get("sessions"), dict)

    def diagnose(self, ctx: Context) -> list[Finding]:
        if self._ok(ctx):
            return []
        where = rel(ctx.paths, ctx.paths.counters)
        return [Finding(WARNING, "counters-corrupt", "the hook counters file does not parse", where)]

    def repair(self, ctx: Context, findings: list[Finding]) -> None:
        with file_lock(ctx.paths.state / "counters.lock", timeout=1.0):
            if self._ok(ctx):
                return
            if ctx.paths.counters.exists():
                ctx.backed_up().move(ctx.paths.counters)
            atomic_write_json(ctx.paths.counters, {"toolUses": 0, "sessions": {}})


class EncodingCheck(Check):
    """memory.md is UTF-8 (report only: the user fixes it in an editor)."""

    codes = ("memory-not-utf8",)

    def diagnose(self, ctx: Context) -> list[Finding]:
        try:
            ctx.paths.memory.read_bytes().decode("utf-8")
        except FileNotFoundError:
            return []
        except UnicodeDecodeError as exc:
            message = f"memory.md is not valid UTF-8 (at byte {exc.start}); it is kept as it is, fix it in an editor"
            return [Finding(WARNING, "memory-not-utf8", message, "memory.md", fixable=False)]
        return []


class PermissionsCheck(Check):
    """Files are 0600 and folders 0700 (a note: the JS plugin writes 0644, harmless but fixable).

    Only where files have permission modes (POSIX): on Windows every file would be reported."""

    codes = ("permissions",)

    def diagnose(self, ctx: Context) -> list[Finding]:
        out: list[Finding] = []
        if not HAS_FILE_MODES:
            return out
        for path in [ctx.paths.root, *store_files(ctx.paths, with_copies=True)]:
            try:
                info = path.lstat()
            except FileNotFoundError:
                continue
            if stat.S_ISLNK(info.st_mode):
                continue
            want = DIR_MODE if stat.S_ISDIR(info.st_mode) else FILE_MODE
            have = stat.S_IMODE(info.st_mode)
            if have != want:
                kind = "folder" if want == DIR_MODE else "file"
                message = f"the {kind} has mode {have:04o} instead of {want:04o}"
                out.append(Finding(NOTE, "permissions", message, rel(ctx.paths, path)))
        return out

    def repair(self, ctx: Context, findings: list[Finding]) -> None:
        for finding in findings:
            path = ctx.paths.root if finding.path in ("", ".") else ctx.paths.root / str(finding.path)
            try:
                os.chmod(path, DIR_MODE if path.is_dir() else FILE_MODE)
            except OSError:
                pass


class GitignoreCheck(Check):
    """The store's ``.gitignore`` is not the earlier private text memkeeper wrote (a list of runtime
    names that let a summarizer's raw answer and the JS plugin's delta be committed): repaired to
    today's whitelist (:mod:`memkeeper.core.store.gitignore`). A person's own file is left alone."""

    codes = ("gitignore-outdated",)

    def diagnose(self, ctx: Context) -> list[Finding]:
        from ..store.gitignore import EARLIER_PRIVATE_HEADER

        try:
            with open(ctx.paths.root / GITIGNORE, encoding="utf-8") as handle:
                first = handle.readline().rstrip("\n")
        except (OSError, UnicodeDecodeError):
            return []
        if first != EARLIER_PRIVATE_HEADER:
            return []
        message = (
            "the store's .gitignore is memkeeper's earlier one, which lets a summarizer's raw answer "
            "and the JS plugin's delta file be committed; repair writes today's (memory only)"
        )
        return [Finding(NOTE, "gitignore-outdated", message, GITIGNORE)]

    def repair(self, ctx: Context, findings: list[Finding]) -> None:
        from ..store.gitignore import write_gitignore

        if findings:
            ctx.backed_up().copy(ctx.paths.root / GITIGNORE)
            write_gitignore(ctx.paths.root, "private")


class AdoptedCheck(Check):
    """What the first use on this machine did to a store made elsewhere (set its runtime state aside,
    repaired modes: :mod:`memkeeper.core.store.state_stamp`), said once it is done; and runtime state not
    made here, which the next use sets aside."""

    codes = ("adopted", "state-not-made-here")

    def diagnose(self, ctx: Context) -> list[Finding]:
        from ..store.state_stamp import ADOPTED_FILE, trusted

        root = str(ctx.paths.root)
        if os.path.isdir(ctx.paths.state) and not trusted(root):
            message = (
                "the runtime state (.state, logs, index) was not made here by you: the next use sets it aside"
            )
            return [Finding(WARNING, "state-not-made-here", message, ".state", fixable=False)]
        try:
            done = json.loads((ctx.paths.state / ADOPTED_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        if not isinstance(done, dict):
            return []
        parts = []
        if done.get("setAside"):
            parts.append(
                f"set aside the runtime state made elsewhere ({', '.join(map(str, done['setAside']))}) in {done.get('folder')}"
            )
        if done.get("modesRepaired"):
            parts.append(f"narrowed {done['modesRepaired']} file modes to 0600/0700")
        if done.get("gitignore"):
            parts.append("added .gitignore for the runtime state")
        if not parts:
            return []
        message = f"repaired on first use here ({done.get('at')}): " + "; ".join(parts)
        return [Finding(NOTE, "adopted", message, ADOPTED_FILE, repaired=True, fixable=False)]
