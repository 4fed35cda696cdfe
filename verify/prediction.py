r"""The theory's forecast for one run configuration at a horizon: regime, accuracies, boundaries.

:func:`predict` gathers, for a :class:`~verify.sim.config.RunConfig` and a horizon of k
steps, what the package's theory says without training anything, for the dynamics the
configuration runs:

* the regime and the train / test accuracy of Theorem 4.1 (stage 1,
  :func:`theory.stage1.predictions.outcome`; the test accuracy is its argmax limit);
* the test accuracy after k steps at the model's finite temperature and the fraction of
  test sequences that select their relevant token, and uniform attention's accuracy
  :math:`\Phi(\gamma_0\bar k\sqrt T/(\sigma_\epsilon\|\nu\|))`
  (:func:`theory.baselines.uniform_attention_accuracy`);
* both regime boundaries in :math:`\|\mu\|` at the configuration's (d, n) and horizon
  k: harmful | benign, the :math:`\|\mu\|` below which fewer than half of the test
  sequences select their relevant token, and benign | not-overfitting, the
  :math:`\|\mu\|` above which fewer than half of the noisy samples are fitted; and the
  regime they give at the configuration's :math:`\|\mu\|`.

**Which dynamics.** A GD engine's configuration is predicted by the mean-field GD map at
its own step :math:`\alpha` (:mod:`theory.stage2.horizon`): GD leaves the gradient flow
once :math:`\alpha\|\mu\|^2 \gg 1` (the clean samples saturate within the first steps). A
flow engine's is predicted by the mean-field flow (:mod:`theory.stage2.predictions`).

**Domain.** Each stage-2 number carries its derived error (relative for the boundaries,
absolute for the accuracy) and where it came from, or no number (``None`` in JSON) and a
``validity`` reason: the GD map is chaotic around the benign | not-overfitting boundary
(its outcome flips with :math:`\|\mu\|` over a band wider than 25%; the band is given);
GD has not settled after :data:`theory.stage2.discrete.MAP_STEPS` steps and the horizon
lies beyond; no crossing on the grid. The errors are first order in the dropped terms
(:math:`\sqrt{nT/d}`-sized cross terms); at :math:`d \lesssim 10\,nT` the runs' two classes
split further than first order says (``benchmarks/predict_gd_sweep.py`` measures how far
against the package's GD sweeps). Stage-1 numbers and the baseline state no
error. The stage-2 predictions are the package's own reconstruction: the paper's stage-2
statements are not available.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from theory.foundation.validation import Integer
from verify.sim.config import RunConfig

#: Horizons the stage-2 predictions are asked for (steps).
HORIZON = Integer(1, 10**18)
RECONSTRUCTION_NOTE = (
    "the stage-2 predictions (accuracy at the horizon, both boundaries) are this package's "
    "own reconstruction (a mean-field GD map or flow), not the paper's statements"
)


@dataclass(frozen=True)
class Prediction:
    r"""What the theory predicts for ``config`` after ``steps`` steps of its dynamics
    (``dynamics``: the GD map at the configuration's step, or the gradient flow).

    Stage 1 (Theorem 4.1, no stated error): ``regime``, ``train_accuracy``,
    ``test_accuracy_argmax``, ``n_snr_sq`` and the ``overfitting_threshold`` in
    :math:`n\,\mathrm{SNR}^2`. At the horizon: ``test_accuracy`` :math:`\pm`
    ``test_accuracy_error`` (absolute), ``selects_relevant``. Exact:
    ``uniform_test_accuracy``. Boundaries in :math:`\|\mu\|` with relative errors and
    their sources; a number the theory does not give is ``nan`` with its ``*_validity``
    reason (a chaotic band's ends in ``boundary_benign_not_band``);
    ``regime_at_horizon`` is where the configuration's :math:`\|\mu\|` lies between them."""

    config: RunConfig
    steps: int
    dynamics: str
    regime: str
    train_accuracy: float
    test_accuracy_argmax: float
    n_snr_sq: float
    overfitting_threshold: float
    test_accuracy: float
    test_accuracy_error: float
    selects_relevant: float
    test_validity: str
    uniform_test_accuracy: float
    boundary_harmful_benign_mu: float
    boundary_harmful_benign_error: float
    boundary_harmful_benign_error_source: str
    boundary_harmful_benign_validity: str
    boundary_benign_not_mu: float
    boundary_benign_not_error: float
    boundary_benign_not_error_source: str
    boundary_benign_not_validity: str
    boundary_benign_not_band: tuple[float, float] | None
    regime_at_horizon: str
    note: str = RECONSTRUCTION_NOTE

    def as_dict(self) -> dict[str, Any]:
        """Every field, the configuration nested (:meth:`RunConfig.to_dict`); ``None`` for a
        number the theory does not give (strict JSON)."""
        out = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
        out["config"] = self.config.to_dict()
        band = self.boundary_benign_not_band
        out["boundary_benign_not_band"] = None if band is None else list(band)
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


@dataclass(frozen=True)
class StageTwo:
    """The stage-2 side in one form for both dynamics: two boundaries (value, error,
    source, validity, band) and the test metrics (or ``None`` with a reason)."""

    dynamics: str
    harmful: Any
    benign: Any
    metrics: Any
    test_validity: str = ""


def gd_side(config: RunConfig, steps: int) -> StageTwo:
    """The mean-field GD map at the configuration's step (:mod:`theory.stage2.horizon`)."""
    from theory.stage2.horizon import gd_horizon

    model, training = config.model, config.training
    result = gd_horizon(model, training, steps)
    reason = "" if result.metrics else "the GD map does not reach the horizon (not settled)"
    return StageTwo(
        f"mean-field GD map at alpha = {training.alpha:g}",
        result.harmful_benign,
        result.benign_not,
        result.metrics,
        reason,
    )


def flow_side(config: RunConfig, steps: int) -> StageTwo:
    """The mean-field gradient flow to the time alpha k (:mod:`theory.stage2.predictions`)."""
    from theory.stage2.predictions import (
        benign_not_boundary,
        harmful_benign_boundary,
        late_test_metrics,
    )

    model, training = config.model, config.training
    return StageTwo(
        "mean-field gradient flow",
        harmful_benign_boundary(model, training, steps),
        benign_not_boundary(model, training, steps),
        late_test_metrics(model, training, [steps])[0],
    )


def _boundary(prefix: str, estimate: Any) -> dict[str, Any]:
    return {
        f"{prefix}_mu": estimate.value,
        f"{prefix}_error": estimate.model_error,
        f"{prefix}_error_source": estimate.error_source,
        f"{prefix}_validity": getattr(estimate, "validity", "")
        or ("" if math.isfinite(estimate.value) else estimate.description),
    }


def predict(config: RunConfig, steps: int | None = None) -> Prediction:
    """The theory's :class:`Prediction` for ``config`` at ``steps`` steps (default: the
    configuration's own ``training.steps``), by the GD map for a GD engine and by the flow
    for a flow engine (under one BLAS thread); inputs are checked before any computation."""
    steps = check_inputs(config, config.training.steps if steps is None else steps)
    from theory.baselines import uniform_attention_accuracy
    from theory.stage1.predictions import outcome, overfitting_threshold
    from verify.runtime.threads import single_blas_thread
    from verify.sim.engines.registry import engine_traits

    model, training = config.model, config.training
    first = outcome(model, training)
    gd = engine_traits(config.solver.engine).integrates == "gd"
    with single_blas_thread():  # the map's products are small: threads only wait
        side = gd_side(config, steps) if gd else flow_side(config, steps)
    metrics = side.metrics
    harmful, benign = side.harmful, side.benign
    return Prediction(
        config=config,
        steps=steps,
        dynamics=side.dynamics,
        regime=first.regime,
        train_accuracy=first.train_accuracy,
        test_accuracy_argmax=first.test_accuracy,
        n_snr_sq=model.n * model.snr**2,
        overfitting_threshold=overfitting_threshold(model, training),
        test_accuracy=metrics.accuracy if metrics else math.nan,
        test_accuracy_error=metrics.accuracy_error if metrics else math.nan,
        selects_relevant=metrics.selects_relevant if metrics else math.nan,
        test_validity=side.test_validity,
        uniform_test_accuracy=uniform_attention_accuracy(model),
        **_boundary("boundary_harmful_benign", harmful),
        **_boundary("boundary_benign_not", benign),
        boundary_benign_not_band=getattr(benign, "band", None),
        regime_at_horizon=regime_between(model.mu_norm, harmful.value, benign.value),
    )


__all__ = [
    "Prediction",
    "StageTwo",
    "predict",
    "gd_side",
    "flow_side",
    "check_inputs",
    "regime_between",
    "HORIZON",
]
