"""The figures' common ground: matplotlib without a display, and how a figure is saved.

Every figure module (here and in :mod:`verify.realworld`) draws with :func:`pyplot` and
writes with :func:`save_figure`. matplotlib is imported on the first figure, so that
importing a figure module costs no matplotlib.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

from verify.output.files import atomic_write_bytes

#: Resolution of the PNG files (the PDF files are vector).
DPI = 130


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the non-interactive Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(figure: Any, directory: Path, name: str) -> list[Path]:
    """Save ``figure`` as PNG and PDF (each rendered in memory, then written to a unique
    temporary name and renamed into place) and close it. A figure with nothing drawn in
    any of its panels is not written (an empty figure is not a result): a note says so
    on stderr and nothing is returned."""
    if not any(has_data(axis) for axis in figure.axes):
        pyplot().close(figure)
        print(f"note: figure {name} has no data to draw; not written", file=sys.stderr)
        return []
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for suffix in (".png", ".pdf"):
        path = directory / f"{name}{suffix}"
        buffer = io.BytesIO()
        figure.savefig(buffer, dpi=DPI, format=suffix[1:])
        atomic_write_bytes(path, buffer.getvalue())
        written.append(path)
    pyplot().close(figure)
    return written


def has_data(axis: Any) -> bool:
    """Whether a panel shows data: a line, an image, a collection (scatter, mesh) or a
    patch (a bar); a colour bar counts only with the image it belongs to."""
    return bool(axis.lines or axis.images or axis.collections or axis.patches) and not (
        hasattr(axis, "_colorbar")
    )


def readable_log_axis(axis: Any, which: str = "y") -> None:
    """Tick labels on a log axis that spans less than a decade (where matplotlib would
    label no tick at all): a few round values inside the range, labelled plainly."""
    import matplotlib.ticker as ticker

    low, high = axis.get_ylim() if which == "y" else axis.get_xlim()
    if not (0 < low < high) or high / low >= 10:
        return
    values = [v for v in ticker.MaxNLocator(5).tick_values(low, high) if low <= v <= high]
    target = axis.yaxis if which == "y" else axis.xaxis
    target.set_major_locator(ticker.FixedLocator(values))
    target.set_major_formatter(ticker.FixedFormatter([f"{v:g}" for v in values]))
    target.set_minor_formatter(ticker.NullFormatter())


def outlined(colour: str = "white", width: float = 2.5) -> dict[str, Any]:
    """Keyword arguments that draw a text or line in ``colour`` with a dark outline, so
    that it reads on pale and dark backgrounds alike (and in a legend's white box)."""
    import matplotlib.patheffects as effects

    return {
        "color": colour,
        "path_effects": [effects.withStroke(linewidth=width, foreground="black")],
    }


__all__ = ["DPI", "pyplot", "save_figure", "has_data", "readable_log_axis", "outlined"]
