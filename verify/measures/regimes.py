r"""Regime of one finished run, from its measured final state (not from theory).

By the paper's mechanism (Theorem 4.1 and Remark 4.2), with :math:`\phi_N` the fraction of
noisy training samples fitted (:math:`y_i f_i > 0`, history column ``noisy_fitted``) and
:math:`\pi_R` the fraction of test sequences whose argmax token is relevant (the
population's ``population_test_selects_relevant``, or the test set's
``test_selects_relevant``):

* not overfitting: :math:`\phi_N < \phi^*` (default :math:`\phi^* = 1/2`: fewer than half
  of the noisy labels are fitted);
* harmful overfitting: :math:`\phi_N \ge \phi^*` and :math:`\pi_R < 1/2`: most test
  sequences select a noise token (Remark 4.2's mechanism);
* benign overfitting: :math:`\phi_N \ge \phi^*` and :math:`\pi_R \ge 1/2`.

The practical view (:func:`practical_regime`, labelled so wherever it is shown) calls an
overfitting run benign when its test accuracy reaches :math:`A^* = 0.95`. With the
paper's head every token score carries noise of sd :math:`\sigma_\epsilon/\|\mu\|`, so even
uniform attention reaches :math:`\Phi(\gamma_0\|\mu\|/\sqrt T)`
(:func:`theory.baselines.uniform_attention_accuracy`): that rule measures the head's score
noise as much as the attention.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

REGIMES = ("harmful", "benign", "not-overfitting")


@dataclass(frozen=True)
class RegimeThresholds:
    r""":math:`\phi^*` (``noisy_fitted``), the selection level (``selects_relevant``) and
    the practical view's :math:`A^*` (``test_accuracy``)."""

    noisy_fitted: float = 0.5
    selects_relevant: float = 0.5
    test_accuracy: float = 0.95

    def __post_init__(self) -> None:
        for name in ("noisy_fitted", "selects_relevant", "test_accuracy"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name}={value!r} is invalid: allowed a number in [0, 1]")


def classify_regime(
    noisy_fitted: float, selects_relevant: float, thresholds: RegimeThresholds | None = None
) -> str:
    """By the mechanism: ``harmful``, ``benign``, ``not-overfitting`` or ``unknown`` (a NaN
    input)."""
    thresholds = thresholds or RegimeThresholds()
    if math.isnan(noisy_fitted):
        return "unknown"
    if noisy_fitted < thresholds.noisy_fitted - 1e-12:
        return "not-overfitting"
    if math.isnan(selects_relevant):
        return "unknown"
    return "harmful" if selects_relevant < thresholds.selects_relevant else "benign"


def practical_regime(
    noisy_fitted: float, test_accuracy: float, thresholds: RegimeThresholds | None = None
) -> str:
    """The practical view: an overfitting run is benign when its test accuracy reaches
    ``thresholds.test_accuracy``."""
    thresholds = thresholds or RegimeThresholds()
    if math.isnan(noisy_fitted) or math.isnan(test_accuracy):
        return "unknown"
    if noisy_fitted < thresholds.noisy_fitted - 1e-12:
        return "not-overfitting"
    return "harmful" if test_accuracy < thresholds.test_accuracy else "benign"


def selects_relevant(row: Mapping[str, float]) -> float:
    """The population's fraction of test sequences selecting R, else the test set's."""
    value = row.get("population_test_selects_relevant", math.nan)
    return value if math.isfinite(value) else row.get("test_selects_relevant", math.nan)


def test_accuracy(row: Mapping[str, float]) -> float:
    """The population's test accuracy, else the test set's."""
    value = row.get("population_test_accuracy", math.nan)
    return value if math.isfinite(value) else row.get("test_accuracy", math.nan)


def measured_regime(result: Any, thresholds: RegimeThresholds | None = None) -> str:
    """The regime of a finished run (a :class:`~verify.sim.simulate.RunResult`) by the
    mechanism, from its final row."""
    return regimes_of(result.final, thresholds)["regime"]


def regimes_of(
    row: Mapping[str, float], thresholds: RegimeThresholds | None = None
) -> dict[str, str]:
    """A final history row's regime by the mechanism and by the practical view."""
    return {
        "regime": classify_regime(
            row.get("noisy_fitted", math.nan), selects_relevant(row), thresholds
        ),
        "regime_practical": practical_regime(
            row.get("noisy_fitted", math.nan), test_accuracy(row), thresholds
        ),
    }


__all__ = [
    "REGIMES",
    "RegimeThresholds",
    "classify_regime",
    "measured_regime",
    "practical_regime",
    "regimes_of",
    "selects_relevant",
    "test_accuracy",
]
