r"""The theory's forecast for one run configuration at a horizon: regime, accuracies, boundaries.

:func:`predict` gathers, for a :class:`~verify.sim.config.RunConfig` and a horizon of k GD
steps, what the package's theory says without training anything:

* the regime and the train / test accuracy of Theorem 4.1 (stage 1,
  :func:`theory.stage1.predictions.outcome`; the test accuracy is its argmax limit);
* the test accuracy after k steps at the model's finite temperature and the fraction of
  test sequences that select their relevant token (stage-2 mean field,
  :func:`theory.stage2.predictions.late_test_metrics`), and uniform attention's accuracy
  :math:`\Phi(\gamma_0\bar k\sqrt T/(\sigma_\epsilon\|\nu\|))`
  (:func:`theory.baselines.uniform_attention_accuracy`);
* both regime boundaries in :math:`\|\mu\|` at the configuration's (d, n) and horizon
  k: harmful | benign, the :math:`\|\mu\|` below which fewer than half of the test
  sequences select their relevant token
  (:func:`theory.stage2.predictions.harmful_benign_boundary`), and benign |
  not-overfitting, the :math:`\|\mu\|` above which fewer than half of the noisy samples
  are fitted (:func:`theory.stage2.predictions.benign_not_boundary`); and the regime they
  give at the configuration's :math:`\|\mu\|`.

Each number carries the error its derivation states (relative for the boundaries,
absolute for the horizon accuracy); stage-1 numbers and the baseline state none. The
stage-2 predictions are the package's own reconstruction: the paper's stage-2 statements
are not available.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from theory.foundation.validation import Integer
from verify.sim.config import RunConfig

#: Horizons the stage-2 flow is asked for (GD steps).
HORIZON = Integer(1, 10**18)
RECONSTRUCTION_NOTE = (
    "the stage-2 predictions (accuracy at the horizon, both boundaries) are this package's "
    "own reconstruction (a mean-field flow), not the paper's statements"
)


@dataclass(frozen=True)
class Prediction:
    r"""What the theory predicts for ``config`` after ``steps`` GD steps.

    Stage 1 (Theorem 4.1, no stated error): ``regime``, ``train_accuracy``,
    ``test_accuracy_argmax``, ``n_snr_sq`` and the ``overfitting_threshold`` in
    :math:`n\,\mathrm{SNR}^2`. At the horizon (stage-2 mean field): ``test_accuracy``
    :math:`\pm` ``test_accuracy_error`` (absolute), ``selects_relevant``. Exact:
    ``uniform_test_accuracy``. Boundaries in :math:`\|\mu\|` with relative errors
    (``nan`` where the theory finds none), the benign | not-overfitting one also as the
    symmetric mean field's root; ``regime_at_horizon`` is where the configuration's
    :math:`\|\mu\|` lies between them."""

    config: RunConfig
    steps: int
    regime: str
    train_accuracy: float
    test_accuracy_argmax: float
    n_snr_sq: float
    overfitting_threshold: float
    test_accuracy: float
    test_accuracy_error: float
    selects_relevant: float
    uniform_test_accuracy: float
    boundary_harmful_benign_mu: float
    boundary_harmful_benign_error: float
    boundary_benign_not_mu: float
    boundary_benign_not_error: float
    boundary_benign_not_mean_field_mu: float
    regime_at_horizon: str
    note: str = RECONSTRUCTION_NOTE

    def as_dict(self) -> dict[str, Any]:
        """Every field, the configuration nested (:meth:`RunConfig.to_dict`); ``None`` for a
        number the theory does not give (strict JSON)."""
        out = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
        out["config"] = self.config.to_dict()
        return {key: _finite_or_none(value) for key, value in out.items()}


def _finite_or_none(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value


def check_inputs(config: RunConfig, steps: int) -> int:
    """The horizon ``steps`` as an integer, after checking it and that ``config`` flips at
    least one label (the benign | not-overfitting boundary is about noisy samples);
    :class:`~theory.foundation.validation.InvalidParameter` otherwise."""
    from theory.stage2.predictions import require_label_noise

    checked = HORIZON.check("steps", steps)
    require_label_noise(config.model)
    return int(checked)


def regime_between(mu: float, harmful_benign: float, benign_not: float) -> str:
    r"""The regime at :math:`\|\mu\|` = ``mu`` by the boundaries: not-overfitting at or
    above ``benign_not``, else harmful below ``harmful_benign``, else benign;
    ``undetermined`` when a boundary needed is missing (``nan``)."""
    if math.isnan(benign_not):
        return "undetermined"
    if mu >= benign_not:
        return "not-overfitting"
    if math.isnan(harmful_benign):
        return "undetermined"
    return "harmful" if mu < harmful_benign else "benign"


def predict(config: RunConfig, steps: int | None = None) -> Prediction:
    """The theory's :class:`Prediction` for ``config`` at ``steps`` GD steps (default: the
    configuration's own ``training.steps``); inputs are checked before any computation."""
    steps = check_inputs(config, config.training.steps if steps is None else steps)
    from theory.baselines import uniform_attention_accuracy
    from theory.stage1.predictions import outcome, overfitting_threshold
    from theory.stage2.predictions import (
        benign_not_boundary,
        harmful_benign_boundary,
        late_test_metrics,
    )

    model, training = config.model, config.training
    first = outcome(model, training)
    late = late_test_metrics(model, training, [steps])[0]
    harmful = harmful_benign_boundary(model, training, steps)
    benign = benign_not_boundary(model, training, steps)
    return Prediction(
        config=config,
        steps=steps,
        regime=first.regime,
        train_accuracy=first.train_accuracy,
        test_accuracy_argmax=first.test_accuracy,
        n_snr_sq=model.n * model.snr**2,
        overfitting_threshold=overfitting_threshold(model, training),
        test_accuracy=late.accuracy,
        test_accuracy_error=late.accuracy_error,
        selects_relevant=late.selects_relevant,
        uniform_test_accuracy=uniform_attention_accuracy(model),
        boundary_harmful_benign_mu=harmful.value,
        boundary_harmful_benign_error=harmful.model_error,
        boundary_benign_not_mu=benign.value,
        boundary_benign_not_error=benign.model_error,
        boundary_benign_not_mean_field_mu=benign.mean_field,
        regime_at_horizon=regime_between(model.mu_norm, harmful.value, benign.value),
    )


__all__ = ["Prediction", "predict", "check_inputs", "regime_between", "HORIZON"]
