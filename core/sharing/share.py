"""Team memory through git: ``memkeeper share`` and the pre-commit check of what is staged.

Sharing is opt-in and lives in files git itself reads, in the store folder:

- ``.gitignore`` (its text and its one writer: :mod:`memkeeper.core.store.gitignore`):
  everything is ignored but the shared memory: ``memory.md``, the archives, their L3
  summaries, ``memory-index.json`` and the project notes (``project.md`` …); the L1 sessions
  (raw prompts and tool output) only when the team chose to share them. Runtime state
  (``.state/``, locks, sockets, the search index, logs, model calls, the trash, jobs) is
  never shared: a whitelist, so a runtime file added later is not shared by accident.
- ``.gitattributes``: memory.md, the archives, the summaries and the index are merged by the
  ``memkeeper`` merge driver (:mod:`memkeeper.core.sharing.merge`); no end-of-line conversion, so a
  file's bytes (and the token count that rotates it) are the same on every machine.

and in the repository's own settings, which git never shares: ``merge.memkeeper.driver``
in its config, and a pre-commit hook that runs :func:`check_staged`. The hook is a Python
script (no shell); an existing hook that is not ours is never replaced.
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..store.gitignore import GITATTRIBUTES, SHARE_MARKER, is_committed, write_gitignore
from ..store.layout import INDEX_FILE, MEMORY_FILE
from ..store.names import is_l1
from ..store.paths import StorePaths
from .marks import sessions_shared

HOOK_MARKER = "# memkeeper share pre-commit check"
DRIVER = "memkeeper"
STORE_PREFIX = ".claude/memory/"
_MERGED = (MEMORY_FILE, "memory_*.md", "memory_*.summary.json", INDEX_FILE)


class ShareError(ValueError):
    """Sharing cannot be turned on or off here (one line that says why)."""


# --- the store's files -----------------------------------------------------------------


def store_gitattributes_text() -> str:
    lines = [
        f"{SHARE_MARKER} how git merges the shared memory (the driver is registered per repository).",
        "* -text",
        *(f"/{name} merge={DRIVER}" for name in _MERGED),
    ]
    return "\n".join(lines) + "\n"


def _ours(path: Path) -> bool:
    """True for a file ``memkeeper share`` wrote (its first line is the marker); a person's otherwise."""
    try:
        return path.read_text("utf-8").startswith(SHARE_MARKER)
    except (OSError, UnicodeDecodeError):
        return False


# --- git --------------------------------------------------------------------------------


def git(
    cwd: Path | str, *args: str, check: bool = True, timeout: float = 60
) -> subprocess.CompletedProcess[bytes]:
    """``git ARGS`` in ``cwd`` (no shell); ShareError with git's message when it fails and ``check``."""
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=timeout)  # noqa: S603 - argv list, no shell
    except FileNotFoundError:
        raise ShareError("git is not installed (or not on PATH)") from None
    if check and done.returncode:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ShareError(f"git {args[0]} failed: {message[-1] if message else done.returncode}")
    return done


def repo_root(project: Path) -> Path:
    done = git(project, "rev-parse", "--show-toplevel", check=False)
    if done.returncode:
        raise ShareError(f"{project} is not in a git repository: sharing memory needs one (git init)")
    return Path(done.stdout.decode("utf-8").strip())


def driver_command() -> str:
    """The merge driver's command line for git: the installed ``memkeeper`` console script,
    quoted (git runs it through its own shell on every system), with git's placeholders."""
    script = shutil.which(DRIVER, path=os.path.dirname(sys.executable)) or shutil.which(DRIVER) or DRIVER
    script = script.replace("\\", "/")
    if script != DRIVER:
        script = f'"{script}"'
    return f"{script} merge-driver %O %A %B %P"


def register_driver(repo: Path) -> None:
    """The ``memkeeper`` merge driver in the repository's own config (git never shares it)."""
    git(repo, "config", f"merge.{DRIVER}.name", "memkeeper: union of memory sections, merged index")
    git(repo, "config", f"merge.{DRIVER}.driver", driver_command())


def ensure_driver(project: Path) -> bool:
    """Register the merge driver in a clone whose store is shared but which never ran
    ``memkeeper share`` (a fresh clone); True when it was registered now."""
    try:
        repo = repo_root(project)
        if git(repo, "config", "--get", f"merge.{DRIVER}.driver", check=False).returncode == 0:
            return False
        register_driver(repo)
    except ShareError:
        return False
    return True


def hook_path(repo: Path) -> Path:
    """Where git looks for the pre-commit hook (``core.hooksPath`` and worktrees included)."""
    found = git(repo, "rev-parse", "--git-path", "hooks/pre-commit").stdout.decode("utf-8").strip()
    return (repo / found).resolve()


def hook_text() -> str:
    python = sys.executable.replace("\\", "/")
    return (
        f"#!{python} -P\n"
        f"{HOOK_MARKER}: refuses a commit that would put a secret or runtime state of the memory store\n"
        "# into git (installed by `memkeeper share`, removed by `memkeeper share --off`).\n"
        "import sys\n\n"
        "from memkeeper.cli.main import main\n\n"
        'sys.exit(main(["share", "check-staged"]))\n'
    )


def _hook_is_ours(path: Path) -> bool:
    try:
        return HOOK_MARKER in path.read_text("utf-8", "replace")
    except OSError:
        return False


def install_hook(repo: Path) -> str | None:
    """Install the pre-commit check; the warning to show when another hook is already there."""
    path = hook_path(repo)
    if path.exists() and not _hook_is_ours(path):
        return (
            f"a pre-commit hook is already installed ({path}); it was left alone: "
            "add the line `memkeeper share check-staged` to it to check the memory before each commit"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(hook_text(), encoding="utf-8")
    path.chmod(0o755)
    return None


# --- on, off, status --------------------------------------------------------------------


@dataclass
class ShareStatus:
    repository: str | None
    shared: bool
    sessions: bool
    driver: bool
    hook: bool
    ignored_by_repo: bool  # memory.md is ignored by a rule outside the store (.claude/ ignored?)
    warnings: list[str] = field(default_factory=list)


def share_on(paths: StorePaths, sessions: bool = False) -> ShareStatus:
    """Turn sharing on (again): the store's git files, the merge driver, the pre-commit check."""
    from ..store.atomic import atomic_write_text
    from ..store.paths import ensure_store

    repo = repo_root(paths.project)
    ensure_store(paths)
    write_gitignore(paths.root, "shared", sessions)
    atomic_write_text(paths.root / GITATTRIBUTES, store_gitattributes_text(), redact=False)
    register_driver(repo)
    warning = install_hook(repo)
    status = share_status(paths)
    if warning:
        status.warnings.insert(0, warning)
    return status


def share_off(paths: StorePaths) -> ShareStatus:
    """Stop sharing: nothing in the store is committed from now on; the driver and our hook go."""
    repo = repo_root(paths.project)
    if paths.exists():
        write_gitignore(paths.root, "off")
        attributes = paths.root / GITATTRIBUTES
        if _ours(attributes):
            attributes.unlink()
    git(repo, "config", "--remove-section", f"merge.{DRIVER}", check=False)
    hook = hook_path(repo)
    if _hook_is_ours(hook):
        hook.unlink()
    status = share_status(paths)
    tracked = git(repo, "ls-files", "--", str(paths.root), check=False).stdout.strip()
    if tracked:
        rel = os.path.relpath(paths.root, repo).replace("\\", "/")
        status.warnings.append(
            f"files of the store are still tracked by git; to stop tracking them (they stay on disk): "
            f"git rm -r --cached {rel}"
        )
    return status


def share_status(paths: StorePaths) -> ShareStatus:
    try:
        repo: Path | None = repo_root(paths.project)
    except ShareError:
        repo = None
    shared = _ours(paths.root / GITATTRIBUTES)
    status = ShareStatus(
        repository=str(repo) if repo else None,
        shared=shared,
        sessions=shared and sessions_shared(paths),
        driver=False,
        hook=False,
        ignored_by_repo=False,
    )
    if repo is None:
        return status
    driver = git(repo, "config", "--get", f"merge.{DRIVER}.driver", check=False)
    status.driver = driver.returncode == 0 and b"merge-driver" in driver.stdout
    status.hook = _hook_is_ours(hook_path(repo))
    if shared:
        ignored = git(repo, "check-ignore", "-q", "--no-index", str(paths.memory), check=False)
        status.ignored_by_repo = ignored.returncode == 0
        if status.ignored_by_repo:
            status.warnings.append(
                "memory.md is ignored by a rule outside the store (is .claude/ in the project's .gitignore?): "
                "nothing will be committed until that rule lets .claude/memory/ through"
            )
    return status


# --- the pre-commit check ---------------------------------------------------------------


@dataclass
class StagedFinding:
    path: str  # relative to the repository
    kind: str  # a secret's kind, "private", or why the file is not shared


def _store_rel(path: str) -> str | None:
    """The part of a repository path inside a memory store, or None for a path outside any."""
    at = path.find(STORE_PREFIX)
    if at < 0 or (at > 0 and path[at - 1] != "/"):
        return None
    return path[at + len(STORE_PREFIX) :]


def _store_of(repo: Path, path: str) -> Path:
    return repo / path[: path.find(STORE_PREFIX) + len(STORE_PREFIX)]


def secret_kinds(text: str) -> list[str]:
    """The kinds the writer's redaction (core/redaction/redact.py) would replace in ``text``, in order."""
    import re

    from ..redaction.redact import redact, use_maintained_rules

    use_maintained_rules(True)
    markers = re.compile(r"\[REDACTED:([a-z0-9_]+)\]|\[PRIVATE\]")
    before = [m[1] or "private" for m in markers.finditer(text)]
    after = [m[1] or "private" for m in markers.finditer(redact(text))]
    for kind in before:
        if kind in after:
            after.remove(kind)
    return list(dict.fromkeys(after))


def _staged_text(repo: Path, path: str) -> str:
    data = git(repo, "show", f":{path}").stdout
    if path.endswith(".gz"):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError):
            pass
    return data.decode("utf-8", "replace")


def check_staged(cwd: Path) -> list[StagedFinding]:
    """What the commit being made would put into git from any memory store of the repository
    that must not go there: a secret or private span (the writer's own rules), or a file that
    sharing does not commit (runtime state, or an L1 session while sessions are not shared)."""
    repo = repo_root(cwd)
    staged = git(repo, "diff", "--cached", "--name-only", "-z", "--diff-filter=ACMR").stdout
    findings: list[StagedFinding] = []
    for raw in staged.split(b"\0"):
        path = raw.decode("utf-8", "surrogateescape")
        rel = _store_rel(path) if path else None
        if rel is None:
            continue
        sessions = sessions_shared(StorePaths(_store_of(repo, path).parent.parent))
        if not is_committed(rel, sessions):
            why = (
                "an L1 session, and sessions are not shared" if is_l1(rel) else "runtime state, never shared"
            )
            findings.append(StagedFinding(path, why))
            continue
        for kind in secret_kinds(_staged_text(repo, path)):
            findings.append(StagedFinding(path, kind))
    return findings
