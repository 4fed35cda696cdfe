r"""The stage-2 mean field's predictions of the regime boundaries of a boundary sweep.

At each swept :math:`(d, n)` and the sweep's horizon k (GD steps; flow time
:math:`\alpha k`), with the other parameters of the sweep's runs:

* harmful | benign by selection: the :math:`\|\mu\|` at which the test signal-to-noise
  ratio :math:`z` of the mean-field flow reaches :math:`z_{1/2}`, where half of the test
  sequences select their relevant token (:func:`theory.stage2.predictions.harmful_benign_boundary`);
* benign | not-overfitting: the :math:`\|\mu\|` above which fewer than half of the noisy
  samples are fitted after k steps (:func:`theory.stage2.predictions.benign_not_boundary`).

The practical view (test accuracy :math:`\ge A^*`) has no prediction: its boundary moves with
the head's score noise as much as with the attention.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from theory.foundation.data_model import DataModel, Training
from verify.experiments.settings import BoundarySettings

HARMFUL_BENIGN = "harmful|benign"
BENIGN_NOT = "benign|not-overfitting"


@dataclass(frozen=True)
class Prediction:
    """A predicted boundary ``value`` with its relative ``model_error`` (NaN: none)."""

    value: float
    model_error: float
    note: str = ""


NO_PREDICTION = Prediction(math.nan, math.nan, "no prediction for the practical view")


def predicted_boundary(kind: str, settings: BoundarySettings, d: int, n: int) -> Prediction:
    """The stage-2 prediction of boundary ``kind`` at (d, n) and the sweep's horizon."""
    if kind == HARMFUL_BENIGN and settings.rule != "selection":
        return NO_PREDICTION
    config = settings.config(d, n, 1.0, 0)
    return stage2_boundary(kind, config.model, config.training, settings.steps)


@functools.lru_cache(maxsize=1024)
def stage2_boundary(kind: str, model: DataModel, training: Training, steps: int) -> Prediction:
    """The stage-2 boundary ``kind`` of ``model`` after ``steps`` (cached: sweeps under
    both rules share their benign|not predictions)."""
    from theory.stage2.predictions import benign_not_boundary, harmful_benign_boundary

    predict = harmful_benign_boundary if kind == HARMFUL_BENIGN else benign_not_boundary
    estimate = predict(model, training, steps)
    return Prediction(estimate.value, estimate.model_error, estimate.description)


def relative_error(measured: float, predicted: float) -> float:
    r"""Measured over predicted minus one, :math:`\mu^*_{\rm sim}/\mu^*_{\rm theory} - 1`."""
    if not (predicted > 0 and math.isfinite(predicted)):
        return math.nan
    return measured / predicted - 1.0


__all__ = [
    "HARMFUL_BENIGN",
    "BENIGN_NOT",
    "Prediction",
    "NO_PREDICTION",
    "predicted_boundary",
    "relative_error",
]
