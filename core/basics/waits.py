"""The one bounded-wait helper: a blocking call run in a daemon thread, waited for until a deadline.

No signal (SIGALRM exists on POSIX only and only in the main thread), no ``select`` on
pipes (POSIX only): a thread blocked in a read, a lock or a pipe works the same on every
system and in every thread. At the deadline the caller goes on; the thread is left to
finish on its own (a daemon: it never keeps the process alive), so what it holds must be
its own (the lock wait blocks on a duplicate descriptor, the stdin read on the raw fd).

Used for the hook's stdin read, the store lock's queued wait and a summarizer's pipes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    T = TypeVar("T")


class Bounded:
    """``work()`` running in a daemon thread; :meth:`wait` for it with a timeout."""

    __slots__ = ("_error", "_thread", "_value")

    def __init__(self, work: Callable[[], Any], name: str = "memkeeper-wait") -> None:
        import threading  # (only when something must be waited for)

        self._value: Any = None
        self._error: BaseException | None = None

        def run() -> None:
            try:
                self._value = work()
            except BaseException as exc:  # handed to the waiter by result()
                self._error = exc

        self._thread = threading.Thread(target=run, name=name, daemon=True)
        self._thread.start()

    def wait(self, timeout: float | None) -> bool:
        """True once ``work`` has ended (returned or raised); False if ``timeout`` came first."""
        self._thread.join(None if timeout is None else max(0.0, timeout))
        return not self._thread.is_alive()

    def result(self) -> Any:
        """What ``work`` returned (after :meth:`wait` said True); what it raised is raised here."""
        if self._error is not None:
            raise self._error
        return self._value


def run_bounded(work: Callable[[], T], timeout: float) -> tuple[bool, T | None]:
    """``(True, work())`` if it ends within ``timeout`` seconds (its exception raised here);
    ``(False, None)`` at the deadline, ``work`` going on in its thread."""
    job = Bounded(work)
    if not job.wait(timeout):
        return False, None
    value: T = job.result()
    return True, value
