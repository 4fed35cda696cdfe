r"""Estimators several checks share: the paper's single run as a draw from the seeds, the
share of samples selecting a token group, and where a boundary scan crosses a level."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from verify.checks.evidence import Evidence, Run
from verify.checks.registry import PROBABILITY, Measurement, compare
from verify.measures.intervals import mean_interval, proportion_interval, t_quantile

#: The token groups a training sample can select, and ``tie`` (no single argmax).
SELECTED = ("R", "W+", "W-", "I", "tie")


def draw_check(paper_value: float, values: np.ndarray, samples: str, what: str) -> Measurement:
    r"""Is the paper's single run a plausible draw from the simulated runs? The paper reports
    one run; the simulation gives one value per seed. ``within`` when the paper's value lies
    in the 95% prediction interval of a single run, :math:`\bar x \pm t\,s\sqrt{1 + 1/m}`."""
    mean, _ = mean_interval(values)
    half = (
        t_quantile(values.size - 1) * float(values.std(ddof=1)) * math.sqrt(1 + 1 / values.size)
        if values.size > 1
        else 0.0
    )
    return Measurement(
        predicted=paper_value,
        measured=mean,
        interval=(mean - half, mean + half),
        samples=samples,
        model_error=0.0,
        tolerance=half,
        estimator=f"{what}: seed mean; interval: 95% prediction interval of one run",
        within=abs(paper_value - mean) <= half,
        support=PROBABILITY,
        tolerance_source="no model error (the paper reports one run): the 95% prediction "
        f"interval of one run from the seeds, t s sqrt(1 + 1/m) = {half:.3g}",
    )


def seed_mean_check(
    predicted: float,
    values: np.ndarray,
    model_error: float,
    estimator: str,
    source: str,
    support: tuple[float, float] | None = None,
) -> Measurement:
    """The seeds' mean of ``values`` (t interval) against ``predicted`` within
    ``model_error`` (from ``source``)."""
    mean, interval = mean_interval(values)
    return compare(
        predicted,
        mean,
        interval,
        f"{values.size} seeds",
        model_error,
        estimator,
        model_error_source=source,
        support=support,
    )


def selected_groups(runs: list[Run], noisy: bool, index: int = -1) -> np.ndarray:
    """The group each clean (or noisy) training sample selects at log point ``index``, over
    every seed's samples."""
    return np.concatenate([run.selected(index)[run.noisy if noisy else ~run.noisy] for run in runs])


def selection_counts(chosen: np.ndarray) -> dict[str, int]:
    """How many samples select each group (:data:`SELECTED`)."""
    return {group: int(np.sum(chosen == group)) for group in SELECTED}


def selection_measurement(
    runs: list[Run],
    group: str,
    predicted: float,
    noisy: bool,
    model_error: float = 0.0,
    source: str = "",
    index: int = -1,
) -> Measurement:
    """The fraction of clean (or noisy) training samples whose argmax token is in ``group``
    at log point ``index``, over every seed's samples (Wilson interval), against the
    predicted share within ``model_error`` (from ``source``)."""
    chosen = selected_groups(runs, noisy, index)
    share, interval = proportion_interval(int(np.sum(chosen == group)), chosen.size)
    return compare(
        predicted,
        share,
        interval,
        f"{chosen.size} samples, {len(runs)} seeds",
        model_error,
        "share of samples whose argmax token is in the group (Wilson interval)",
        f"selected groups {selection_counts(chosen)}",
        model_error_source=source,
        support=PROBABILITY,
    )


def final_rows(runs: list[Run]) -> list[dict[str, float]]:
    """Each run's last history row."""
    return [dict(run.final_row) for run in runs]


def crossing(mu: np.ndarray, values: np.ndarray, level: float) -> float:
    r"""The first :math:`\|\mu\|` at which ``values`` crosses ``level`` downwards,
    interpolated linearly in :math:`\log\|\mu\|` (NaN if it never does)."""
    below = np.flatnonzero((values[:-1] >= level) & (values[1:] < level))
    if not below.size:
        return math.nan
    i = below[0]
    fraction = (values[i] - level) / (values[i] - values[i + 1])
    return float(np.exp(np.log(mu[i]) + fraction * (np.log(mu[i + 1]) - np.log(mu[i]))))


def n_snr_sq(model: Any, mu: float) -> float:
    r""":math:`n\,\mathrm{SNR}^2 = n\|\mu\|^2 / (\sigma_\epsilon^2 d)` of ``model`` at
    :math:`\|\mu\| =` ``mu``."""
    return model.n * (mu / (model.sigma_eps * math.sqrt(model.d))) ** 2


def scan_crossings(model: Any, ev: Evidence, key: str, level: float) -> np.ndarray:
    """Per boundary scan, the n SNR^2 where ``key`` crosses ``level`` (log-interpolated)."""
    return np.array(
        [
            n_snr_sq(model, crossing(np.asarray(scan["mu"]), np.asarray(scan[key]), level))
            for scan in ev.scans
        ]
    )


__all__ = [
    "SELECTED",
    "draw_check",
    "selected_groups",
    "selection_counts",
    "selection_measurement",
    "seed_mean_check",
    "final_rows",
    "crossing",
    "n_snr_sq",
    "scan_crossings",
]
