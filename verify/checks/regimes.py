r"""Regime of one finished run, from its measured final state (not from theory).

With :math:`\phi_N` the fraction of noisy training samples fitted
(:math:`y_i f_i > 0`, history column ``noisy_fitted``) and :math:`A_{\text{test}}` the
test accuracy:

* not overfitting: :math:`\phi_N < \phi^*` (default :math:`\phi^* = 1`: some noisy
  label is not fitted, so train accuracy < 1);
* harmful overfitting: :math:`\phi_N \ge \phi^*` and :math:`A_{\text{test}} < A^*`;
* benign overfitting: :math:`\phi_N \ge \phi^*` and :math:`A_{\text{test}} \ge A^*`
  (default :math:`A^* = 0.95`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

REGIMES = ("harmful", "benign", "not-overfitting")


@dataclass(frozen=True)
class RegimeThresholds:
    r"""``test_accuracy`` :math:`A^*` and ``noisy_fitted`` :math:`\phi^*` of the rule above."""

    test_accuracy: float = 0.95
    noisy_fitted: float = 1.0

    def __post_init__(self) -> None:
        for name in ("test_accuracy", "noisy_fitted"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name}={value!r} is invalid: allowed a number in [0, 1]")


def classify_regime(
    noisy_fitted: float, test_accuracy: float, thresholds: RegimeThresholds | None = None
) -> str:
    """``harmful``, ``benign``, ``not-overfitting`` or ``unknown`` (a NaN input)."""
    thresholds = thresholds or RegimeThresholds()
    if math.isnan(noisy_fitted) or math.isnan(test_accuracy):
        return "unknown"
    if noisy_fitted < thresholds.noisy_fitted - 1e-12:
        return "not-overfitting"
    return "harmful" if test_accuracy < thresholds.test_accuracy else "benign"


__all__ = ["REGIMES", "RegimeThresholds", "classify_regime"]
