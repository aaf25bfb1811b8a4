"""A simulated foreign platform: the POSIX-only facilities a Windows Python lacks, taken away.

Put on ``PYTHONPATH`` only for that run (``scripts/foreign-tests.sh``); every Python the
tests start inherits it. Removed:

- modules ``fcntl``, ``termios``, ``pwd``, ``grp``, ``resource`` (unimportable);
- ``os.fork``, ``os.pread``, ``os.killpg``, ``os.setsid``, ``os.fchmod``, ``os.O_NOFOLLOW``;
- ``signal.SIGALRM``, ``signal.SIGHUP``, ``signal.SIGKILL``; ``socket.AF_UNIX``.

``memkeeper.core.basics.platform`` decides from these capabilities, so it takes the branches a
Windows Python takes wherever they can run on Linux: file locks through ``msvcrt`` (``msvcrt.locking``
emulated with the host's ``flock``, taken before ``fcntl`` goes: ``foreign_msvcrt.py`` here,
found as ``msvcrt``), polled lock waits, seek + read, link checks by lstat + compare,
``terminate()`` for a kill. ``os.name`` stays ``posix``: the standard library itself branches
on it, and the two decisions memkeeper takes on it (Popen's ``creationflags``, permission
modes) cannot run on Linux the Windows way.

``subprocess`` is imported first (it takes an importable ``msvcrt`` to mean Windows). Kept
working, as they work on Windows by other means: ``socket.socketpair`` (asyncio's self-pipe;
Windows emulates it over TCP), and the third-party packages in :data:`OWN_BUILD` that branch
on ``sys.platform`` themselves (``psutil``, the ``mcp`` SDK the tests talk to the server
with): they import with the host's facilities, which are then taken away again.
"""

from __future__ import annotations

import importlib.machinery
import os
import signal
import socket
import sys

TYPE_CHECKING = False  # (no typing import: the simulation must not load what memkeeper does not)
if TYPE_CHECKING:
    from types import ModuleType
    from typing import Any

HIDDEN = frozenset({"fcntl", "termios", "pwd", "grp", "resource"})
#: Third-party packages with a build or branch of their own per system (``sys.platform``): on
#: Windows they need none of what is taken away here, so they import with the host's.
OWN_BUILD = frozenset({"psutil", "mcp"})

os.environ["MEMKEEPER_FOREIGN_SIMULATION"] = "1"  # (tests name their inherent POSIX-only gaps by it)

# The emulated msvcrt locks with the host's flock: taken before fcntl is hidden.
import fcntl as _host_fcntl  # noqa: E402

# subprocess decides it runs on Windows when msvcrt imports: it is loaded (as the host's)
# before the emulated msvcrt can be found.
import subprocess  # noqa: E402, F401

HOST_FLOCK = _host_fcntl.flock
HOST_LOCK_EX, HOST_LOCK_NB, HOST_LOCK_UN = _host_fcntl.LOCK_EX, _host_fcntl.LOCK_NB, _host_fcntl.LOCK_UN


class _Unhiding:
    """Runs an OWN_BUILD package's import with HIDDEN and REMOVED there, then takes them away again."""

    def __init__(self, inner: Any, finder: _Foreign) -> None:
        self.inner, self.finder = inner, finder

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        created: ModuleType | None = self.inner.create_module(spec)
        return created

    def exec_module(self, module: ModuleType) -> None:
        self.finder.allowing += 1
        give_back()
        try:
            self.inner.exec_module(module)
        finally:
            self.finder.allowing -= 1
            if not self.finder.allowing:
                take_away()
                for name in HIDDEN:
                    sys.modules.pop(name, None)


class _Foreign:
    allowing = 0

    def find_spec(
        self, name: str, path: Any = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        top = name.partition(".")[0]
        if top in HIDDEN and not self.allowing:
            raise ModuleNotFoundError(f"No module named {name!r} (simulated foreign platform)", name=name)
        if name == "msvcrt":
            here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "foreign_msvcrt.py")
            return importlib.machinery.ModuleSpec(
                name, importlib.machinery.SourceFileLoader(name, here), origin=here
            )
        if name in OWN_BUILD:
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is not None and spec.loader is not None:
                spec.loader = _Unhiding(spec.loader, self)  # type: ignore[assignment]
            return spec
        return None


for _name in HIDDEN:
    sys.modules.pop(_name, None)
sys.meta_path.insert(0, _Foreign())

#: (module, attribute) -> the host's value, taken away (given back while an OWN_BUILD package imports).
REMOVED: dict[tuple[ModuleType, str], Any] = {
    (module, attr): getattr(module, attr)
    for module, attrs in (
        (os, ("fork", "pread", "killpg", "setsid", "fchmod", "O_NOFOLLOW")),
        (signal, ("SIGALRM", "SIGHUP", "SIGKILL")),
        (socket, ("AF_UNIX",)),
    )
    for attr in attrs
    if hasattr(module, attr)
}


def take_away() -> None:
    for module, attr in REMOVED:
        if hasattr(module, attr):
            delattr(module, attr)


def give_back() -> None:
    for (module, attr), value in REMOVED.items():
        setattr(module, attr, value)


_host_socketpair = socket.socketpair
_AF_UNIX = REMOVED[(socket, "AF_UNIX")]


def _socketpair(family: Any = None, type: Any = socket.SOCK_STREAM, proto: int = 0) -> Any:
    return _host_socketpair(_AF_UNIX if family is None else family, type, proto)


socket.socketpair = _socketpair
take_away()
