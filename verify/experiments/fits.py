r"""Small statistics for sweeps: power-law exponents, log-time slopes, settling times.

Power law: :math:`y = c\,x^{b}` is fitted as :math:`\log y = \log c + b \log x` by least
squares (:func:`scipy.stats.linregress`); the interval is
:math:`b \pm t_{(1+\gamma)/2,\,m-2}\,\mathrm{se}(b)` for confidence :math:`\gamma` and
:math:`m` points. :func:`bootstrap_exponent` resamples the replicates (seeds) within
each :math:`x` and refits, giving a percentile interval that does not assume normal,
equal-variance residuals.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np


@dataclass(frozen=True)
class PowerLawFit:
    r""":math:`y = \text{prefactor} \cdot x^{\text{exponent}}` with a t-interval on the exponent."""

    exponent: float
    prefactor: float
    stderr: float
    ci_low: float
    ci_high: float
    n_points: int
    r_squared: float
    confidence: float

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


def fit_power_law(x: Sequence[float], y: Sequence[float], confidence: float = 0.95) -> PowerLawFit:
    """Least squares of log y on log x (finite, positive pairs only)."""
    from scipy import stats

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    x, y = np.log(x[keep]), np.log(y[keep])
    m = int(x.size)
    if m < 2 or np.ptp(x) == 0:
        return PowerLawFit(
            math.nan, math.nan, math.nan, math.nan, math.nan, m, math.nan, confidence
        )
    fit = stats.linregress(x, y)
    stderr = float(fit.stderr) if m > 2 else math.nan
    half = float(stats.t.ppf((1 + confidence) / 2, m - 2)) * stderr if m > 2 else math.nan
    return PowerLawFit(
        exponent=float(fit.slope),
        prefactor=float(np.exp(fit.intercept)),
        stderr=stderr,
        ci_low=float(fit.slope) - half,
        ci_high=float(fit.slope) + half,
        n_points=m,
        r_squared=float(fit.rvalue**2),
        confidence=confidence,
    )


def bootstrap_exponent(
    replicates: Mapping[float, Sequence[float]],
    repetitions: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile interval of the exponent fitted to the per-``x`` means of resampled
    replicates (each ``x``'s replicates drawn with replacement, independently); NaN when
    fewer than two values of ``x`` have replicates or no ``x`` has two (one seed per value:
    resampling would return the fit itself, a zero-width interval that means nothing)."""
    rng = np.random.default_rng(seed)
    groups = [
        (float(x), np.asarray([v for v in values if np.isfinite(v) and v > 0]))
        for x, values in replicates.items()
    ]
    groups = [(x, v) for x, v in groups if v.size]
    if len(groups) < 2 or all(v.size < 2 for _, v in groups):
        return math.nan, math.nan
    xs = np.log([x for x, _ in groups])
    slopes = np.empty(repetitions)
    for r in range(repetitions):
        means = [np.mean(np.log(rng.choice(v, size=v.size, replace=True))) for _, v in groups]
        slopes[r] = np.polyfit(xs, means, 1)[0]
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(slopes, [tail, 100 - tail])
    return float(low), float(high)


def slope_per_decade(
    steps: Sequence[float], values: Sequence[float], start: float, stop: float = math.inf
) -> tuple[float, float, int]:
    r"""Slope of ``values`` against :math:`\log_{10}(\text{step})` over
    ``start <= step <= stop``: (slope, its standard error, number of points)."""
    from scipy import stats

    steps, values = np.asarray(steps, dtype=float), np.asarray(values, dtype=float)
    keep = (steps >= start) & (steps <= stop) & np.isfinite(values) & (steps > 0)
    if keep.sum() < 3:
        return math.nan, math.nan, int(keep.sum())
    fit = stats.linregress(np.log10(steps[keep]), values[keep])
    return float(fit.slope), float(fit.stderr), int(keep.sum())


def settle_step(
    steps: Sequence[float], values: Sequence[float], tolerance: float, relative: bool = False
) -> float:
    """First logged step from which every later value stays within ``tolerance`` of the
    final value (``relative``: within ``tolerance * |final|``)."""
    steps, values = np.asarray(steps, dtype=float), np.asarray(values, dtype=float)
    if steps.size == 0:
        return math.nan
    final = values[-1]
    allowed = tolerance * abs(final) if relative else tolerance
    outside = np.flatnonzero(np.abs(values - final) > allowed)
    return float(steps[0] if outside.size == 0 else steps[min(outside[-1] + 1, steps.size - 1)])


def first_step_always(steps: Sequence[float], condition: Sequence[bool]) -> float:
    """First logged step from which ``condition`` holds at every later point (NaN if it
    does not hold at the end)."""
    steps, condition = np.asarray(steps, dtype=float), np.asarray(condition, dtype=bool)
    if steps.size == 0 or not condition[-1]:
        return math.nan
    failing = np.flatnonzero(~condition)
    return float(steps[0] if failing.size == 0 else steps[failing[-1] + 1])


__all__ = [
    "PowerLawFit",
    "fit_power_law",
    "bootstrap_exponent",
    "slope_per_decade",
    "settle_step",
    "first_step_always",
]
