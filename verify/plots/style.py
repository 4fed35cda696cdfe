"""The figures' common ground: matplotlib without a display, and how a figure is saved.

Every figure module (here and in :mod:`verify.realworld`) draws with :func:`pyplot` and
writes with :func:`save_figure`. matplotlib is imported on the first figure, so that
importing a figure module costs no matplotlib.
"""

from __future__ import annotations

import io
import sys
import warnings
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
    temporary name and renamed into place) and close it; the checks of
    :func:`figure_problems` run on the PNG's drawing and warn before anything is written. A
    figure with nothing drawn in any of its panels is not written (an empty figure is not a
    result): a note says so on stderr and nothing is returned."""
    if not any(has_data(axis) for axis in figure.axes):
        pyplot().close(figure)
        print(f"note: figure {name} has no data to draw; not written", file=sys.stderr)
        return []
    rendered = {}
    for suffix in (".png", ".pdf"):
        buffer = io.BytesIO()
        figure.savefig(buffer, dpi=DPI, format=suffix[1:])
        rendered[suffix] = buffer.getvalue()
        if suffix == ".png":  # the checks read the layout this drawing left
            for problem in figure_problems(figure, drawn=True):
                warnings.warn(FigureWarning(f"figure {name}: {problem}"), stacklevel=2)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for suffix, content in rendered.items():
        path = directory / f"{name}{suffix}"
        atomic_write_bytes(path, content)
        written.append(path)
    pyplot().close(figure)
    return written


class FigureWarning(UserWarning):
    """A figure that a reader may misread: an axis without a label or tick labels, a mark
    or text cut at a panel's or the figure's edge, white drawn on white (the test suite
    turns it into an error)."""


def figure_problems(figure: Any, drawn: bool = False) -> list[str]:
    """What would make ``figure`` hard to read (see :class:`FigureWarning`), per panel;
    ``drawn``: the figure was drawn since its last change (its ticks are current), so it is
    not drawn again."""
    if not drawn:
        figure.canvas.draw()
    box = figure.bbox
    problems = []
    for index, axis in enumerate(figure.axes):
        if not axis.axison or not has_data(axis):
            continue
        where = f"panel {index} ({axis.get_title() or 'untitled'})"
        problems += [f"{where}: {p}" for p in _axis_problems(axis, box)]
    return problems


def _axis_problems(axis: Any, box: Any) -> list[str]:
    problems = []
    for which in ("x", "y"):
        if not _labelled(axis, which):
            problems.append(f"no {which} label")
        if not _readable_ticks(axis, which):
            problems.append(f"fewer than two {which} tick labels")
    for text in axis.texts:
        extent = text.get_window_extent()
        if text.get_visible() and text.get_text() and not _inside(extent, box):
            problems.append(f"text {text.get_text()!r} cut at the figure's edge")
        if _white(text.get_color()) and not text.get_path_effects() and not text.get_bbox_patch():
            problems.append(f"white text {text.get_text()!r} without an outline")
    for line in axis.lines:
        if _white(line.get_color()) and not line.get_path_effects() and line.get_label()[:1] != "_":
            problems.append(f"white line {line.get_label()!r} without an outline (white legend)")
        if line.get_marker() not in ("None", None, "", " ") and line.get_clip_on():
            problems += _edge_markers(axis, line)
    return problems


def _readable_ticks(axis: Any, which: str) -> bool:
    """Two tick labels at least (one where the axis has one tick, a single category), on
    this axis or on a panel sharing it (a row of panels labelled once, at the left)."""
    shared = axis.get_shared_x_axes() if which == "x" else axis.get_shared_y_axes()
    for panel in shared.get_siblings(axis):
        labels = _tick_labels(panel, which)
        if labels and len(labels) >= min(2, _ticks_in_view(panel, which)):
            return True
    return False


def _ticks_in_view(axis: Any, which: str) -> int:
    target = axis.xaxis if which == "x" else axis.yaxis
    low, high = sorted(axis.get_xlim() if which == "x" else axis.get_ylim())
    return sum(low <= location <= high for location in target.get_majorticklocs())


def _labelled(axis: Any, which: str) -> bool:
    """A label on this axis, or on a panel sharing it (a column labelled once, below)."""
    shared = axis.get_shared_x_axes() if which == "x" else axis.get_shared_y_axes()
    panels = shared.get_siblings(axis)
    return any((p.get_xlabel() if which == "x" else p.get_ylabel()).strip() for p in panels)


def _tick_labels(axis: Any, which: str) -> list[str]:
    """The visible, non-empty tick labels of one axis (major and minor) inside its view."""
    target = axis.xaxis if which == "x" else axis.yaxis
    low, high = sorted(axis.get_xlim() if which == "x" else axis.get_ylim())
    labels = []
    for tick in [*target.get_major_ticks(), *target.get_minor_ticks()]:
        text = tick.label1 if tick.label1.get_visible() else tick.label2
        if text.get_visible() and text.get_text().strip() and low <= tick.get_loc() <= high:
            labels.append(text.get_text())
    return labels


def _edge_markers(axis: Any, line: Any) -> list[str]:
    """A marker centred on the panel's edge is cut in half when the line is clipped."""
    x, y = (float(v) for v in (line.get_xdata()[0], line.get_ydata()[0]))
    (x0, x1), (y0, y1) = sorted(axis.get_xlim()), sorted(axis.get_ylim())
    on_edge = any(
        abs(a - b) <= 1e-9 * max(abs(b), 1.0) for a, b in ((x, x0), (x, x1), (y, y0), (y, y1))
    )
    return [f"marker of {line.get_label()!r} cut at the panel's edge"] if on_edge else []


def _inside(extent: Any, box: Any) -> bool:
    return (
        extent.x0 >= box.x0 - 1
        and extent.y0 >= box.y0 - 1
        and extent.x1 <= box.x1 + 1
        and extent.y1 <= box.y1 + 1
    )


def _white(colour: Any) -> bool:
    import matplotlib.colors as colors

    return colors.to_rgb(colour) == (1.0, 1.0, 1.0)


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


__all__ = [
    "DPI",
    "pyplot",
    "save_figure",
    "has_data",
    "readable_log_axis",
    "outlined",
    "figure_problems",
    "FigureWarning",
]
