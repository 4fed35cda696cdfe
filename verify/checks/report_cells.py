"""What every rendering of the check report shares: the verdict groups, the summary line,
and each measurement's cells as a reader sees them (a one-sided check's prediction in
words, an interval clipped to the estimate's possible range and marked so)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from verify.checks.registry import CheckResult, Measurement, Verdict

GROUPS = (
    (
        "Unexpected (a new failure, or a registered disagreement that now agrees)",
        (Verdict.NEW_FAILURE, Verdict.NOW_AGREES),
    ),
    ("Disagreements, as registered", (Verdict.DISAGREES_AS_REGISTERED,)),
    ("Agreements", (Verdict.AGREES,)),
)


def number(value: float) -> str:
    if not math.isfinite(value):
        return str(value)
    return f"{value:.4g}"


def shown_interval(m: Measurement) -> tuple[float, float, bool]:
    """The interval as a report shows it: clipped to the estimate's possible range
    (``support``), and whether it was (a prediction interval of an accuracy can run past
    1; the estimate itself cannot)."""
    low, high = m.interval
    if m.support is None:
        return low, high, False
    least, most = m.support
    clipped = low < least or high > most
    return (
        (max(low, least) if low < least else low),
        (min(high, most) if high > most else high),
        clipped,
    )


def predicted_cell(m: Measurement) -> str:
    """The prediction: a number, or for a one-sided check what it tests (a threshold, a
    bound and its direction)."""
    return m.bound if m.at_least and m.bound else number(m.predicted)


def measured_cell(m: Measurement) -> str:
    """The estimate and its interval, clipped to the possible range (and saying so)."""
    low, high, clipped = shown_interval(m)
    return f"{number(m.measured)} [{number(low)}, {number(high)}]" + (" clipped" if clipped else "")


def tolerance_cell(m: Measurement) -> str:
    """The two-sided tolerance, or ``one-sided`` (the interval must lie above the bound)."""
    return "one-sided" if m.at_least else f"±{number(m.tolerance)}"


def grouped(results: Sequence[CheckResult]) -> list[tuple[str, list[CheckResult]]]:
    return [(title, [r for r in results if r.verdict in verdicts]) for title, verdicts in GROUPS]


def summary_line(results: Sequence[CheckResult]) -> str:
    """The last line of ``verify check``: counts, and whether anything is unexpected."""
    count = {verdict: sum(r.verdict is verdict for r in results) for verdict in Verdict}
    unexpected = count[Verdict.NEW_FAILURE] + count[Verdict.NOW_AGREES]
    head = (
        f"{len(results)} checks: {count[Verdict.AGREES]} agree, "
        f"{count[Verdict.DISAGREES_AS_REGISTERED]} disagree as registered, "
        f"{unexpected} unexpected"
    )
    return head + (
        " -- nothing unexpected" if unexpected == 0 else " -- UNEXPECTED results, see above"
    )


__all__ = [
    "GROUPS",
    "number",
    "shown_interval",
    "predicted_cell",
    "measured_cell",
    "tolerance_cell",
    "grouped",
    "summary_line",
]
