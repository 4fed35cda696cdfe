"""Progress that fits where it goes: bars on a terminal, sparse whole lines in a log.

On a terminal (the stream is a TTY) a stage is a tqdm bar, redrawn every second by a
ticker so that the elapsed time moves from the first second and the estimate of what is
left appears with the first finished unit. Anywhere else (a file, a pipe, a CI log) there
are no carriage returns: one line when a stage starts, at most one line every
:data:`LOG_EVERY` seconds while it runs (done of total, elapsed, the estimate of what is
left), and one line when it finishes. ``BENIGN_ATTENTION_PROGRESS`` set to ``bar``,
``log`` or ``off`` overrides the choice.

:func:`progress` makes one stage (``update``, ``advance_to``, ``close``; a context
manager); :func:`progress_iter` wraps an iterable; :class:`Stages` follows a sequence of
stages reported as ``(stage, done, total)`` callbacks, as ``verify check`` does.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from typing import IO, Any, TypeVar

#: In a log, at most one line every this many seconds while a stage runs.
LOG_EVERY = 5.0
#: On a terminal, the bar is redrawn at least this often (seconds).
TICK = 1.0
#: The environment variable that overrides the mode: ``bar``, ``log`` or ``off``.
MODE_VARIABLE = "BENIGN_ATTENTION_PROGRESS"
MODES = ("bar", "log", "off")

Item = TypeVar("Item")


def clock(seconds: float) -> str:
    """``seconds`` as ``m:ss`` (or ``h:mm:ss``)."""
    whole = int(round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def mode_for(stream: IO[str], enabled: bool = True) -> str:
    """``off`` when disabled; else the environment's override; else ``bar`` on a terminal
    and ``log`` anywhere else."""
    if not enabled:
        return "off"
    chosen = os.environ.get(MODE_VARIABLE, "").strip().lower()
    if chosen in MODES:
        return chosen
    isatty = getattr(stream, "isatty", None)
    return "bar" if isatty is not None and isatty() else "log"


class Progress:
    """One stage: ``done`` of ``total`` units (``total`` may be unknown, None)."""

    def __init__(
        self,
        desc: str,
        total: int | None,
        unit: str = "it",
        stream: IO[str] | None = None,
        mode: str = "log",
        initial: int = 0,
        every: float = LOG_EVERY,
        leave: bool = True,
        scale: bool = False,
        expected: float | None = None,
    ) -> None:
        self.desc, self.total, self.unit, self.scale = desc, total, unit, scale
        self.expected = expected
        self.stream = sys.stderr if stream is None else stream
        self.mode, self.n, self.every, self.leave = mode, initial, every, leave
        self.initial = initial
        self.started = self.last_line = time.monotonic()
        self.closed = False
        self._bar: Any = None
        self._ticker: threading.Event | None = None
        if mode == "bar":
            self._open_bar()
        elif mode == "log":
            self._line(f"{self._count()} started{self.estimate()}")

    # -- the two renderings --------------------------------------------------------------

    def _open_bar(self) -> None:
        from tqdm.auto import tqdm

        self._bar = tqdm(
            total=self.total,
            initial=self.n,
            desc=self.desc,
            unit=self.unit,
            file=self.stream,
            dynamic_ncols=True,
            mininterval=0.2,
            smoothing=0.1,
            leave=self.leave,
            unit_scale=self.scale,
        )
        if self.expected is not None:
            self._bar.set_postfix_str(f"predicted {clock(self.expected)}", refresh=True)
        stop = self._ticker = threading.Event()
        bar = self._bar

        def tick() -> None:
            while not stop.wait(TICK):
                bar.refresh()

        threading.Thread(target=tick, name=f"progress {self.desc}", daemon=True).start()

    def _number(self, value: float) -> str:
        return f"{value:.4g}" if self.scale else str(value)

    def _count(self) -> str:
        total = "?" if self.total is None else self._number(self.total)
        share = f" ({100 * self.n / self.total:.0f}%)" if self.total else ""
        return f"{self.desc}: {self._number(self.n)}/{total} {self.unit}{share}"

    def _line(self, text: str) -> None:
        print(text, file=self.stream, flush=True)
        self.last_line = time.monotonic()

    def estimate(self) -> str:
        """What is left: from the rate so far, or before the first finished unit from the
        predicted duration (``expected``), or nothing."""
        done = self.n - self.initial
        elapsed = time.monotonic() - self.started
        if self.total is not None and done > 0:
            return f", about {clock((self.total - self.n) * elapsed / done)} left"
        if self.expected is not None:
            return f", about {clock(max(self.expected - elapsed, 0.0))} left (predicted)"
        return ""

    # -- what callers do -----------------------------------------------------------------

    def update(self, count: int = 1) -> None:
        """``count`` more units done."""
        self.advance_to(self.n + count)

    def advance_to(self, done: int, total: int | None = None) -> None:
        """``done`` units done (of ``total``, when it changes)."""
        if total is not None:
            self.total = total
            if self._bar is not None:
                self._bar.total = total
        step, self.n = done - self.n, done
        if self._bar is not None:
            if step > 0 and self.expected is not None:
                self.expected = None
                self._bar.set_postfix_str("", refresh=False)
            self._bar.update(step)
        elif self.mode == "log" and time.monotonic() - self.last_line >= self.every:
            if self.total is None or self.n < self.total:
                elapsed = clock(time.monotonic() - self.started)
                self._line(f"{self._count()}, {elapsed} elapsed{self.estimate()}")

    def close(self) -> None:
        """End the stage (a log gets its closing line)."""
        if self.closed:
            return
        self.closed = True
        if self._ticker is not None:
            self._ticker.set()
        if self._bar is not None:
            self._bar.close()
        elif self.mode == "log":
            self._line(f"{self._count()}, done in {clock(time.monotonic() - self.started)}")

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def progress(
    total: int | None,
    desc: str,
    unit: str = "it",
    *,
    enabled: bool = True,
    stream: IO[str] | None = None,
    initial: int = 0,
    leave: bool = True,
    scale: bool = False,
    expected: float | None = None,
) -> Progress:
    """One stage's progress on ``stream`` (standard error by default), as fits it;
    ``scale`` writes large counts as ``1e+12``; ``expected`` is the stage's predicted
    duration in seconds, shown until the first unit finishes."""
    stream = sys.stderr if stream is None else stream
    mode = mode_for(stream, enabled)
    return Progress(
        desc, total, unit, stream, mode, initial, leave=leave, scale=scale, expected=expected
    )


def progress_iter(
    items: Iterable[Item],
    desc: str,
    unit: str = "it",
    *,
    total: int | None = None,
    enabled: bool = True,
    leave: bool = True,
) -> Iterator[Item]:
    """``items``, one stage's progress advancing as each is consumed."""
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    with progress(total, desc, unit, enabled=enabled, leave=leave) as stage:
        for item in items:
            yield item
            stage.update()


class Stages:
    """Stages reported as ``(stage, done, total)`` callbacks: a new name closes the
    stage before it and opens the next."""

    def __init__(
        self, unit: dict[str, str] | None = None, *, enabled: bool = True, stream: Any = None
    ) -> None:
        self.units, self.enabled, self.stream = unit or {}, enabled, stream
        self.current: Progress | None = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self.current is None or self.current.desc != stage:
            self.start(stage, total)
        assert self.current is not None
        self.current.advance_to(done, total)

    def start(self, stage: str, total: int, expected: float | None = None) -> None:
        """Open ``stage`` before its first unit finishes (the first feedback comes at once),
        with its predicted duration if known."""
        self.close()
        unit = self.units.get(stage, "it")
        self.current = progress(
            total, stage, unit, enabled=self.enabled, stream=self.stream, expected=expected
        )

    def close(self) -> None:
        if self.current is not None:
            self.current.close()
            self.current = None


__all__ = [
    "LOG_EVERY",
    "MODE_VARIABLE",
    "MODES",
    "Progress",
    "progress",
    "progress_iter",
    "Stages",
    "clock",
    "mode_for",
]
