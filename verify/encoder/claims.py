r"""Measures of what the paper shows of its encoder experiment, over the grid's runs, for
checks to register: each returns a :class:`Measure` (estimate, 95% interval, samples).

The paper's appendix trains the encoder at the benign setting (d = 2000,
:math:`\|\mu\| = 20`) and reads off the [CLS] attention: clean samples select the
relevant token, the noisy ones are fitted, training accuracy is 1 and test accuracy
high. The measures (each over the runs ``rows`` of one setting, one value per seed):

* :func:`selection_share`: the share of a split's sequences whose [CLS] attention argmax
  is a given group (e.g. clean samples selecting R, noisy ones selecting W-);
* :func:`attention_mass`: the mean [CLS] attention mass on a group;
* :func:`accuracy`: training or test accuracy;
* :func:`regime_agreement`: the share of (setting, seed) pairs where the encoder's regime
  is the bare model's (a proportion with its Wilson interval, over all settings given).

Per-seed values are averaged with a t-interval (seeds are independent runs; the samples
within one run are not). :data:`ENCODER_CLAIMS` lists the claims with their thresholds; a claim
holds when its interval lies on the claimed side (:func:`claim_verdict`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from verify.measures.intervals import mean_interval, proportion_interval

Row = Mapping[str, Any]
BENIGN = {"d": 2000, "mu_norm": 20.0, "residual": True}


@dataclass(frozen=True)
class Measure:
    """An estimate, its 95% interval and the per-seed samples it comes from."""

    estimate: float
    interval: tuple[float, float]
    samples: tuple[float, ...]


def matching(rows: Sequence[Row], **setting: Any) -> list[Row]:
    """The rows whose columns equal ``setting`` (numbers compared as floats, the
    residual switch as a boolean)."""

    def same(value: Any, wanted: Any) -> bool:
        if isinstance(wanted, bool):
            return str(value) == str(wanted)
        if isinstance(wanted, (int, float)):
            return math.isclose(float(value), float(wanted))
        return value == wanted

    return [row for row in rows if all(same(row[k], v) for k, v in setting.items())]


def per_seed(rows: Sequence[Row], column: str, setting: Mapping[str, Any]) -> Measure:
    """Mean of ``column`` over the runs of ``setting`` (one per seed) with a t-interval;
    NaN when no run of the setting has a finite value."""
    values = [float(row[column]) for row in matching(rows, **setting)]
    values = [v for v in values if math.isfinite(v)]
    if not values:
        return Measure(math.nan, (math.nan, math.nan), ())
    estimate, interval = mean_interval(values)
    return Measure(estimate, interval, tuple(values))


def selection_share(
    rows: Sequence[Row], split: str, group: str, setting: Mapping[str, Any] = BENIGN
) -> Measure:
    """Share of ``split``'s (clean, noisy, test) sequences whose [CLS] argmax is ``group``."""
    return per_seed(rows, f"select_{split}_{group}", setting)


def attention_mass(
    rows: Sequence[Row], split: str, group: str, setting: Mapping[str, Any] = BENIGN
) -> Measure:
    """Mean [CLS] attention mass of ``split``'s sequences on ``group``."""
    return per_seed(rows, f"attention_{split}_{group}", setting)


def accuracy(rows: Sequence[Row], split: str, setting: Mapping[str, Any] = BENIGN) -> Measure:
    """Final ``split`` (train or test) accuracy."""
    return per_seed(rows, f"{split}_accuracy", setting)


def regime_agreement(rows: Sequence[Row], residual: bool = True) -> Measure:
    """Share of runs (every setting and seed given) whose encoder regime equals the bare
    model's, with the Wilson interval."""
    chosen = matching(rows, residual=residual)
    agree = [1.0 if str(row["regime"]) == str(row["bare_regime"]) else 0.0 for row in chosen]
    if not agree:
        return Measure(math.nan, (math.nan, math.nan), ())
    estimate, interval = proportion_interval(int(sum(agree)), len(agree))
    return Measure(estimate, interval, tuple(agree))


@dataclass(frozen=True)
class Claim:
    """A claimed inequality ``measure(rows) >= threshold`` (or ``<=``)."""

    text: str
    measure: Callable[[Sequence[Row]], Measure]
    side: str
    threshold: float


ENCODER_CLAIMS: dict[str, Claim] = {
    "encoder_clean_select_relevant": Claim(
        "at the benign setting, most clean samples' [CLS] attention selects R",
        lambda rows: selection_share(rows, "clean", "R"),
        ">=",
        0.5,
    ),
    "encoder_noisy_select_weak_opposite": Claim(
        "at the benign setting, most noisy samples' [CLS] attention selects W- (the bare "
        "model's mechanism)",
        lambda rows: selection_share(rows, "noisy", "W-"),
        ">=",
        0.5,
    ),
    "encoder_train_accuracy": Claim(
        "at the benign setting, the encoder fits every training label",
        lambda rows: accuracy(rows, "train"),
        ">=",
        1.0,
    ),
    "encoder_test_accuracy": Claim(
        "at the benign setting, test accuracy is high (>= 0.95)",
        lambda rows: accuracy(rows, "test"),
        ">=",
        0.95,
    ),
    "encoder_test_select_relevant": Claim(
        "at the benign setting, most test sequences' [CLS] attention selects R",
        lambda rows: selection_share(rows, "test", "R"),
        ">=",
        0.5,
    ),
}


def claim_verdict(claim: Claim, rows: Sequence[Row]) -> tuple[bool, Measure]:
    """Whether the claim holds: the whole interval on the claimed side of the threshold
    (an estimate equal to a threshold of 1 with no spread counts as reaching it)."""
    measure = claim.measure(rows)
    low, high = measure.interval
    if not measure.samples or not (math.isfinite(low) and math.isfinite(high)):
        return False, measure
    holds = low >= claim.threshold - 1e-12 if claim.side == ">=" else high <= claim.threshold
    return holds, measure


__all__ = [
    "Measure",
    "Claim",
    "ENCODER_CLAIMS",
    "BENIGN",
    "claim_verdict",
    "matching",
    "per_seed",
    "selection_share",
    "attention_mass",
    "accuracy",
    "regime_agreement",
]
