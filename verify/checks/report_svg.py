"""A check's measurement drawn as a small inline SVG: the prediction with its model-error
band (or, for a one-sided check, the bound and its direction), the estimate and its 95%
interval (clipped to the possible range, and marked so), on a linear or a log axis.

Pure string building: no plotting library, nothing fetched; the report embeds the result.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from html import escape

from verify.checks.registry import CheckResult, Verdict
from verify.checks.report_cells import shown_interval

WIDTH, HEIGHT = 420, 64
LEFT, RIGHT, AXIS_Y, MARK_Y = 16, 16, 44, 24
COLOURS = {
    Verdict.AGREES: "#1b7f3b",
    Verdict.DISAGREES_AS_REGISTERED: "#b36b00",
    Verdict.NEW_FAILURE: "#c0162b",
    Verdict.NOW_AGREES: "#c0162b",
}


def tick_labels(positions: Sequence[float], log: bool) -> list[str]:
    """Tick labels that tell neighbours apart: powers of ten on a log axis; on a linear one
    as many decimals as the spacing needs."""
    if log:
        return [f"{10**p:.0e}".replace("e+0", "e").replace("e-0", "e-") for p in positions]
    step = positions[1] - positions[0] if len(positions) > 1 else abs(positions[0]) or 1.0
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    return [f"{p:.{decimals}f}" for p in positions]


def span(values: Sequence[float], log: bool) -> tuple[float, float]:
    """The axis range: the values with 8% padding (in log space on a log axis)."""
    points = [math.log10(v) for v in values] if log else list(values)
    low, high = min(points), max(points)
    pad = 0.08 * (high - low) if high > low else (abs(low) * 0.1 or 1.0)
    return low - pad, high + pad


def ticks(low: float, high: float, log: bool) -> list[float]:
    """About four round tick positions in axis units."""
    if log:
        first, last = math.ceil(low), math.floor(high)
        every = max(1, (last - first) // 4 + 1)
        found = [float(e) for e in range(first, last + 1, every)]
        return found or [0.5 * (low + high)]
    raw = (high - low) / 4
    magnitude = 10.0 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    step: float = min((m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw), default=raw)
    start = math.ceil(low / step) * step
    return [start + k * step for k in range(int((high - start) / step + 1e-9) + 1)]


def interval_svg(result: CheckResult) -> str:
    """The check's drawing (see the module docstring)."""
    m = result.measurement
    low, high, clipped = shown_interval(m)
    band = (m.predicted - m.model_error, m.predicted + m.model_error)
    values = [v for v in (m.predicted, m.measured, low, high, *band) if math.isfinite(v)]
    label = escape(f"{result.name}: {m.estimator}", quote=True)
    head = (
        f'<svg class="check-figure" role="img" aria-label="{label}" width="{WIDTH}" '
        f'height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}">'
    )
    if not values or not all(math.isfinite(v) for v in (m.measured, low, high)):
        text = "no finite estimate in this run"
        return f'{head}<text x="{LEFT}" y="{MARK_Y}" font-size="12">{text}</text></svg>'
    log = min(values) > 0 and max(values) / min(values) > 50
    axis = span(values, log)

    def x(value: float) -> float:
        position = math.log10(value) if log else value
        return LEFT + (position - axis[0]) / (axis[1] - axis[0]) * (WIDTH - LEFT - RIGHT)

    colour = COLOURS[result.verdict]
    parts = [head, *axis_parts(axis, log, x)]
    parts += prediction_parts(m.at_least, m.predicted, band, x)
    parts += [
        f'<line x1="{x(low):.1f}" y1="{MARK_Y}" x2="{x(high):.1f}" y2="{MARK_Y}" '
        f'stroke="{colour}" stroke-width="3"/>',
        *(
            f'<line x1="{x(v):.1f}" y1="{MARK_Y - 6}" x2="{x(v):.1f}" y2="{MARK_Y + 6}" '
            f'stroke="{colour}" stroke-width="2"/>'
            for v in (low, high)
        ),
        f'<circle cx="{x(m.measured):.1f}" cy="{MARK_Y}" r="4.5" fill="{colour}"/>',
    ]
    if clipped:
        parts.append(
            f'<text x="{x(high):.1f}" y="{MARK_Y - 9}" font-size="10" text-anchor="end">'
            "clipped to the possible range</text>"
        )
    return "".join(parts) + "</svg>"


def axis_parts(axis: tuple[float, float], log: bool, place: Callable[[float], float]) -> list[str]:
    """The axis line and its labelled ticks (``place``: value to pixel)."""
    parts = [f'<line x1="{LEFT}" y1="{AXIS_Y}" x2="{WIDTH - RIGHT}" y2="{AXIS_Y}" stroke="#888"/>']
    positions = ticks(*axis, log)
    for tick, label in zip(positions, tick_labels(positions, log), strict=True):
        px = place(10**tick if log else tick)
        parts.append(
            f'<line x1="{px:.1f}" y1="{AXIS_Y}" x2="{px:.1f}" y2="{AXIS_Y + 4}" stroke="#888"/>'
            f'<text x="{px:.1f}" y="{AXIS_Y + 15}" font-size="10" text-anchor="middle">'
            f"{label}</text>"
        )
    return parts


def prediction_parts(
    at_least: bool, predicted: float, band: tuple[float, float], place: Callable[[float], float]
) -> list[str]:
    """The prediction: a diamond with its model-error band, or a one-sided bound (a dashed
    line with an arrow pointing the way the interval must lie)."""
    px = place(predicted)
    if at_least:
        return [
            f'<line x1="{px:.1f}" y1="6" x2="{px:.1f}" y2="{AXIS_Y}" stroke="#333" '
            'stroke-dasharray="4 3"/>',
            f'<path d="M{px:.1f} 8 l14 0 l-5 -4 m5 4 l-5 4" stroke="#333" fill="none"/>',
        ]
    left, right = place(band[0]), place(band[1])
    return [
        f'<rect x="{left:.1f}" y="{MARK_Y - 9}" width="{max(right - left, 1.0):.1f}" '
        'height="18" fill="#d9e2f3"/>',
        f'<path d="M{px:.1f} {MARK_Y - 8} l6 8 l-6 8 l-6 -8 z" fill="#2f4f8f"/>',
    ]


__all__ = ["interval_svg", "ticks", "tick_labels", "span"]
