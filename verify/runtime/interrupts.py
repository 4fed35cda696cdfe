"""Stopping a long computation cleanly: SIGTERM is handled like Ctrl-C.

``timeout``, batch schedulers and containers stop a process with SIGTERM. Inside
:func:`sigterm_as_interrupt` that signal raises :class:`Terminated`, a
``KeyboardInterrupt``, so the code that keeps the finished part of a run or a sweep on
Ctrl-C keeps it on SIGTERM too.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


class Terminated(KeyboardInterrupt):
    """The process received SIGTERM."""


def reason(interrupt: BaseException) -> str:
    """Why a computation stopped early, in words."""
    return (
        "stopped by SIGTERM"
        if isinstance(interrupt, Terminated)
        else "stopped by the user (Ctrl-C)"
    )


def exit_status(interrupt: BaseException) -> int:
    """The conventional exit status: 128 + the signal number (143 SIGTERM, 130 SIGINT)."""
    return 128 + (signal.SIGTERM if isinstance(interrupt, Terminated) else signal.SIGINT)


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated` in the main thread (elsewhere,
    and outside the main thread, nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


__all__ = ["Terminated", "reason", "exit_status", "sigterm_as_interrupt"]
