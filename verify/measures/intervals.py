r"""Estimators with 95% confidence intervals, and how many samples a check needs.

* a mean over independent seeds: :math:`\bar x \pm t_{0.975,\,m-1}\, s/\sqrt m`;
* a proportion of :math:`k` successes in :math:`m` trials: the Wilson score interval
  :math:`\frac{\hat p + z^2/2m \pm z\sqrt{\hat p(1-\hat p)/m + z^2/4m^2}}{1 + z^2/m}`,
  :math:`z = 1.96` (it stays inside [0, 1] and is sound at :math:`\hat p` near 0 or 1);
* a geometric mean of positive ratios: the mean of their logarithms with its t-interval,
  exponentiated;
* a median, when some values may be infinite (an event that never happens within the
  horizon): the distribution-free interval between the order statistics
  :math:`x_{(l)}` and :math:`x_{(m-l+1)}`, :math:`l` the 0.025 quantile of
  Binomial(m, 1/2) (coverage at least 95%);
* a standard deviation of normal values: the chi-square interval.

Sizing before the run: a check whose tolerance is :math:`\tau` and whose per-sample
spread is :math:`s` needs :math:`m \ge (3 z s / \tau)^2` samples for the interval's
half-width to stay below :math:`\tau/3`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

Z95 = 1.959963984540054


@lru_cache(maxsize=256)
def t_quantile(dof: int) -> float:
    """The 0.975 quantile of Student's t with ``dof`` degrees of freedom (remembered: a
    check's power recomputes its interval at every trial claim)."""
    from scipy import stats

    return float(stats.t.ppf(0.975, dof))


@dataclass(frozen=True)
class MeanInterval:
    r"""A mean over ``count`` values, their standard deviation (ddof 1) and the half-width
    :math:`t_{0.975,m-1}\,s/\sqrt m` of its 95% t-interval; ``sd`` and ``half_width``
    are NaN below two values, whose interval is the mean itself. Unpacks as
    ``(mean, (low, high))``, like the other estimators here."""

    mean: float
    sd: float
    half_width: float
    count: int

    @property
    def interval(self) -> tuple[float, float]:
        if self.count < 2:
            return self.mean, self.mean
        return self.mean - self.half_width, self.mean + self.half_width

    def __iter__(self) -> Iterator:
        return iter((self.mean, self.interval))


def mean_interval(values: Sequence[float] | np.ndarray) -> MeanInterval:
    """The mean of ``values`` and its 95% t-interval (see :class:`MeanInterval`)."""
    array = np.asarray(values, dtype=float)
    if array.size < 2:
        mean = float(array[0]) if array.size else math.nan
        return MeanInterval(mean, math.nan, math.nan, int(array.size))
    sd = float(array.std(ddof=1))
    half = t_quantile(array.size - 1) * sd / math.sqrt(array.size)
    return MeanInterval(float(array.mean()), sd, half, int(array.size))


def proportion_interval(successes: int, trials: int) -> tuple[float, tuple[float, float]]:
    """The proportion and its 95% Wilson score interval."""
    if trials == 0:
        return math.nan, (math.nan, math.nan)
    p = successes / trials
    z2 = Z95**2
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = Z95 * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials**2)) / (1 + z2 / trials)
    low = 0.0 if successes == 0 else max(centre - half, 0.0)
    high = 1.0 if successes == trials else min(centre + half, 1.0)  # exact at the ends
    return p, (low, high)


def ratio_interval(ratios: Sequence[float] | np.ndarray) -> tuple[float, tuple[float, float]]:
    """The geometric mean of positive ratios and its 95% interval (t on the logarithms)."""
    mean, (low, high) = mean_interval(np.log(np.asarray(ratios, dtype=float)))
    return math.exp(mean), (math.exp(low), math.exp(high))


def sd_interval(values: Sequence[float] | np.ndarray) -> tuple[float, tuple[float, float]]:
    r"""The sample standard deviation and its 95% chi-square interval
    :math:`s\sqrt{(m-1)/\chi^2_{0.975,m-1}}` to :math:`s\sqrt{(m-1)/\chi^2_{0.025,m-1}}`
    (normal values)."""
    from scipy import stats

    array = np.asarray(values, dtype=float)
    dof = array.size - 1
    sd = float(array.std(ddof=1))
    return sd, (
        sd * math.sqrt(dof / stats.chi2.ppf(0.975, dof)),
        sd * math.sqrt(dof / stats.chi2.ppf(0.025, dof)),
    )


def median_interval(values: Sequence[float] | np.ndarray) -> tuple[float, tuple[float, float]]:
    """The median and its distribution-free 95% interval (infinite values allowed)."""
    from scipy import stats

    array = np.sort(np.asarray(values, dtype=float))
    m = array.size
    low = max(int(stats.binom.ppf(0.025, m, 0.5)), 1)
    return float(np.median(array)), (float(array[low - 1]), float(array[m - low]))


def samples_needed(spread: float, tolerance: float) -> int:
    """Samples for a 95% half-width of at most a third of ``tolerance``."""
    if tolerance <= 0 or not math.isfinite(spread):
        return 1
    return max(2, math.ceil((3 * Z95 * spread / tolerance) ** 2))


__all__ = [
    "MeanInterval",
    "mean_interval",
    "proportion_interval",
    "ratio_interval",
    "median_interval",
    "sd_interval",
    "samples_needed",
    "t_quantile",
    "Z95",
]
