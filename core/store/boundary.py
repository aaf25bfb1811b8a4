"""The store's boundary: it never follows a symbolic link, and it never lives where it must not.

A cloned repository can ship links inside ``.claude/memory`` (``memory.md`` pointing at
``~/.bashrc``, ``sessions/`` at a folder elsewhere). The store never reads, writes,
moves, chmods or deletes through one:

- :func:`check_path` refuses a path when the store root or any component below it is a
  link (``lstat`` on each; a missing component is fine). :mod:`memkeeper.core.store.atomic`,
  :mod:`memkeeper.core.store.lock` and :func:`memkeeper.core.store.layout.ensure_dirs` call it before
  every write, and open files refusing a link at the path itself besides (:func:`open_no_follow`,
  both in one);
- :func:`store_links` lists every link in a store (not following any), for ``doctor`` and
  for :func:`refuse_links`, which hooks, jobs, the CLI and the TUI call before they use a
  store: a store holding a link is refused whole, with one line naming the link.

The boundary starts at the project's ``.claude``: it and ``.claude/memory`` must be real
folders of the current user (:func:`check_claude`, which both of the above call), or a
link there would move the whole store (``.claude -> ~/.claude``).

No store is made for the file-system root, the home folder or a folder inside
``~/.claude`` (:func:`refused_project`): a hook there does nothing, the CLI says so.

Stdlib ``os`` only: the hook path imports this module.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator

from ..basics import platform
from ..basics.platform import StrPath

MEMORY_SUBDIR = (".claude", "memory")
SET_ASIDE_DIR = ".set-aside"  # (as memkeeper.core.store.layout's)
_STORE_MARK = os.sep + os.path.join(*MEMORY_SUBDIR)


class StoreLinkError(OSError):
    """A symbolic link inside the memory store, or on the way to it from the project (its
    ``.claude`` folder): the store refuses to go through it. Also a ``.claude`` or store folder
    that is not the user's own (``why`` says so)."""

    def __init__(self, link: str, why: str = "") -> None:
        if why:
            message = f"refusing the memory store: {link} {why}"
        elif _is_claude_folder(link):
            message = (
                f"refusing a symbolic link on the way to the memory store: {link} (make it a real folder)"
            )
        else:
            message = f"refusing a symbolic link inside the memory store: {link} (remove it; the store never follows links)"
        super().__init__(message)
        self.link = link


def _is_claude_folder(path: str) -> bool:
    return os.path.basename(path) == MEMORY_SUBDIR[0]


def check_claude(root: str) -> None:
    """Raise :class:`StoreLinkError` unless the project's ``.claude`` folder and the store folder
    ``root`` (``<project>/.claude/memory``) are each missing or a real folder of the current user:
    a link there would move the whole store (``.claude -> ~/.claude``). Two ``lstat``."""
    for path in (os.path.dirname(root), root):
        try:
            info = os.lstat(path)
        except OSError:
            return  # missing (made as a real folder when needed), or unreadable: nothing below is used
        if stat.S_ISLNK(info.st_mode):
            raise StoreLinkError(path)
        if not stat.S_ISDIR(info.st_mode):
            raise StoreLinkError(path, "is not a folder")
        if not platform.owned_by_me(info):
            raise StoreLinkError(path, "belongs to another user (memkeeper keeps only your own folders)")


def _store_root_of(path: str) -> str | None:
    """The ``…/.claude/memory`` folder that ``path`` lies in (or is), if any."""
    at = path.rfind(_STORE_MARK + os.sep)
    if at < 0:
        return path if path.endswith(_STORE_MARK) else None
    return path[: at + len(_STORE_MARK)]


def check_path(path: StrPath) -> None:
    """Raise :class:`StoreLinkError` if ``path`` or a folder above it, from the store root
    down, is a symbolic link. Paths outside any store are not checked."""
    full = os.path.abspath(os.fspath(path))
    root = _store_root_of(full)
    if root is None:
        return
    check_claude(root)
    current = root
    rest = full[len(root) :].strip(os.sep)
    for part in [""] + (rest.split(os.sep) if rest else []):
        if part:
            current = os.path.join(current, part)
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            return
        except NotADirectoryError:
            return
        if stat.S_ISLNK(info.st_mode):
            raise StoreLinkError(current)


def open_no_follow(path: StrPath, flags: int, mode: int = 0o600) -> int:
    """``os.open`` that refuses a link, at the path itself (:func:`memkeeper.core.basics.platform.open_no_follow`)
    or above it in the store (StoreLinkError either way)."""
    from ..basics.platform import open_no_follow as open_here

    target = os.fspath(path)
    check_path(target)
    try:
        return open_here(target, flags, mode)
    except OSError as exc:
        import errno  # (not at import: the hook path never meets a link)

        if exc.errno == errno.ELOOP:
            raise StoreLinkError(target) from None
        raise


def store_links(
    root: StrPath, folders: tuple[str, ...] | None = None, *, only: tuple[str, ...] | None = None
) -> list[str]:
    """Every symbolic link in the store at ``root`` (the root itself included), found
    without following any. With ``folders``, only the root's entries and those of the
    named folders are looked at (what a hook touches), not the rest of the tree; with
    ``only`` too, of the root's entries only those names (one ``lstat`` each) and the named
    folders (each one ``lstat``, then its entries): what a hook that reads and writes only
    those touches, at the same cost at any store size (the root of a 1 GB store holds 4,000
    entries)."""
    top = os.fspath(root)
    claude = os.path.dirname(top)
    try:
        if _is_claude_folder(claude) and stat.S_ISLNK(os.lstat(claude).st_mode):
            return [claude]
        if stat.S_ISLNK(os.lstat(top).st_mode):
            return [top]
    except OSError:
        return []
    found: list[str] = []
    pending = [top] if only is None or folders is None else _named_folders(top, folders, only, found)
    while pending:
        folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if folder == top and entry.name == SET_ASIDE_DIR:
                continue  # runtime state made elsewhere, moved out of the store's way (never read)
            if entry.is_symlink():
                found.append(entry.path)
            elif entry.is_dir(follow_symlinks=False) and (
                folders is None or (folder == top and entry.name in folders)
            ):
                pending.append(entry.path)
    return sorted(found)


def _named_folders(top: str, folders: tuple[str, ...], names: tuple[str, ...], links: list[str]) -> list[str]:
    """The real folders among ``folders`` of ``top`` (one ``lstat`` each, and each of ``names``);
    the links among them all go to ``links``."""
    real = []
    for name in (*folders, *names):
        path = os.path.join(top, name)
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            continue
        if stat.S_ISLNK(mode):
            links.append(path)
        elif stat.S_ISDIR(mode) and name in folders:
            real.append(path)
    return real


def lstat_entries(folder: str) -> Iterator[tuple[str, str, os.stat_result]]:
    """(name, path, ``lstat``) of each entry of ``folder``, no link followed; nothing when the
    folder cannot be listed, and an entry gone or unreadable meanwhile is passed over."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        path = os.path.join(folder, name)
        try:
            yield name, path, os.lstat(path)
        except OSError:
            continue


def refuse_links(
    root: StrPath, folders: tuple[str, ...] | None = None, *, only: tuple[str, ...] | None = None
) -> None:
    """Raise :class:`StoreLinkError` naming the first link in the store, if it holds any
    (what is looked at: :func:`store_links`)."""
    check_claude(os.fspath(root))
    links = store_links(root, folders, only=only)
    if links:
        raise StoreLinkError(links[0])


def refused_project(project: StrPath, home: str | None = None) -> str | None:
    """Why no store may be made for ``project`` (None when it may): the file-system root,
    the home folder, or a folder inside ``~/.claude``."""
    path = os.path.realpath(os.fspath(project))
    home = os.path.realpath(home if home is not None else os.path.expanduser("~"))
    if path == os.path.dirname(path):
        return "the file-system root"
    if path == home:
        return "the home folder"
    claude = os.path.join(home, ".claude")
    if path == claude or path.startswith(claude + os.sep):
        return "a folder inside ~/.claude"
    return None
