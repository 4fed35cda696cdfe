"""Stopping a long computation cleanly: SIGTERM and SIGHUP are handled like Ctrl-C.

``timeout``, batch schedulers and containers stop a process with SIGTERM; a closed
terminal or a dropped SSH session sends SIGHUP. Inside :func:`sigterm_as_interrupt`
either signal raises :class:`Terminated` (a ``KeyboardInterrupt``) carrying the signal,
so the code that keeps the finished part of a run or a sweep on Ctrl-C keeps it then too.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


class Terminated(KeyboardInterrupt):
    """The process received SIGTERM (or, with ``signum``, SIGHUP)."""

    def __init__(self, signum: int = signal.SIGTERM) -> None:
        super().__init__(signum)
        self.signum = int(signum)


def reason(interrupt: BaseException) -> str:
    """Why a computation stopped early, in words."""
    if isinstance(interrupt, Terminated):
        return f"stopped by {signal.Signals(interrupt.signum).name}"
    return "stopped by the user (Ctrl-C)"


def exit_status(interrupt: BaseException) -> int:
    """The conventional exit status: 128 + the signal number (143 SIGTERM, 129 SIGHUP,
    130 SIGINT)."""
    return 128 + (interrupt.signum if isinstance(interrupt, Terminated) else signal.SIGINT)


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise :class:`Terminated` in the main thread
    (elsewhere, and outside the main thread, nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: object) -> None:
        raise Terminated(signum)

    previous = {number: signal.signal(number, handler) for number in STOP_SIGNALS}
    try:
        yield
    finally:
        for number, action in previous.items():
            signal.signal(number, action)


#: The signals handled like Ctrl-C.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


__all__ = ["Terminated", "reason", "exit_status", "sigterm_as_interrupt"]
