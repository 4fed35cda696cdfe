r"""Where the benign | not-overfitting boundary lies, from the boundary scans at the benign
preset's (d, n).

In :math:`n\,\mathrm{SNR}^2`: by the stage-1 velocity sign, and by the training outcome
after 1000 steps against the stage-1 threshold and against the stage-2 mean field
(:func:`theory.stage2.horizon.gd_horizon`, the GD map: the scans are GD runs; its
relative error in :math:`\|\mu\|` squared into :math:`n\,\mathrm{SNR}^2`)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from theory.foundation.data_model import DataModel
from theory.stage1.moments import VelocityError, velocity_error
from theory.stage1.predictions import Stage1Predictions
from verify.checks.catalogue.declare import PAPER, STAGE1, CheckKind, Context
from verify.checks.catalogue.estimators import n_snr_sq, scan_crossings, seed_mean_check
from verify.checks.evidence import Evidence, Need
from verify.checks.registry import Measurement, PaperResult, compare
from verify.measures.intervals import ratio_interval

#: The boundary scans: 16 seeds, each a grid of the signal at the benign preset's (d, n)
#: (sized a priori: at 8 the geometric mean's interval, about +-15%, let the stage-2
#: boundary move 26% down and 32% up before the verdict flipped; 16 narrow it by sqrt 2).
SCAN_RUNS = Need("scan", 16)


def crossing_shift(p: Stage1Predictions) -> float:
    r"""How far the dropped terms' mean :math:`b` moves the sign change of the noisy gap
    velocity :math:`v(\theta)` in :math:`\theta = n\,\mathrm{SNR}^2`: :math:`|b| / |v'|`
    at the predicted threshold (central difference over :math:`\pm 1\%` of
    :math:`\|\mu\|`)."""
    model, theta = p.model, p.overfitting_threshold
    mu = model.sigma_eps * math.sqrt(theta * model.d / model.n)

    def at(factor: float) -> VelocityError:
        changed = dataclasses.replace(model, mu_norm=mu * factor)
        return velocity_error(changed, p.training, "R", noisy=True)

    slope = (at(1.01).kept - at(0.99).kept) / (theta * (1.01**2 - 0.99**2))
    return abs(at(1.0).bias / slope)


@dataclass(frozen=True)
class Boundary:
    """A predicted boundary in n SNR^2 and its model error, absolute (``shift``) or
    relative (``relative_error``), and where the error came from."""

    model: DataModel
    predicted: float
    shift: float = 0.0
    relative_error: float = 0.0
    source: str = ""


def velocity_sign_threshold(context: Context) -> Boundary:
    """The stage-1 threshold within :func:`crossing_shift`."""
    p = context.prediction
    shift = crossing_shift(p)
    source = (
        "derived: the dropped terms' mean b moves the noisy velocity's sign change by |b| / "
        f"|dv/d(n SNR^2)| = {shift:.3g}"
    )
    return Boundary(p.model, p.overfitting_threshold, shift=shift, source=source)


def stage1_threshold(context: Context) -> Boundary:
    """The stage-1 threshold, no model error of its own."""
    p = context.prediction
    return Boundary(p.model, p.overfitting_threshold, source="none: stage 1 states no error")


def stage2_boundary(context: Context) -> Boundary:
    """The mean-field GD map's boundary after 1000 steps (the scans are GD runs,
    :func:`theory.stage2.horizon.gd_horizon`), its relative error in ||mu|| squared into
    n SNR^2."""
    from theory.stage2.horizon import gd_horizon

    p = context.prediction
    late = gd_horizon(p.model, p.training, 1000).benign_not
    theta, error = n_snr_sq(p.model, late.value), (1 + late.model_error) ** 2 - 1
    source = f"{late.error_source or late.validity} (in ||mu||, squared into n SNR^2)"
    return Boundary(p.model, theta, relative_error=error, source=source)


def measure_velocity_sign(
    target: Boundary, ev: Evidence, claim: float | None = None
) -> Measurement:
    """The seed mean of the n SNR^2 where the mean initial noisy gap velocity changes sign,
    against the stage-1 threshold within the shift."""
    values = scan_crossings(target.model, ev, "noisy_velocity", 0.0)
    return seed_mean_check(
        target.predicted if claim is None else claim,
        values,
        target.shift,
        "mean over seeds of the n SNR^2 where the "
        "mean initial noisy gap velocity changes sign (log-interpolated scan)",
        target.source,
        support=(0.0, math.inf),
    )


def measure_training_outcome(
    target: Boundary, ev: Evidence, claim: float | None = None
) -> Measurement:
    """The seeds' geometric mean of the n SNR^2 where half of the noisy samples are fitted
    after 1000 steps, against the prediction within its relative error."""
    values = scan_crossings(target.model, ev, "noisy_fitted", 0.5)
    ratio, interval = ratio_interval(values)
    return compare(
        target.predicted if claim is None else claim,
        ratio,
        interval,
        f"{values.size} seeds",
        target.predicted * target.relative_error,
        "geometric mean over seeds of the n SNR^2 where the fraction of noisy "
        "samples fitted after 1000 steps drops below 1/2",
        model_error_source=target.source,
        support=(0.0, math.inf),
    )


VELOCITY_SIGN = CheckKind(
    id="boundary.velocity-sign",
    name="stage-1 noisy velocity changes sign at the threshold",
    paper=PaperResult(("Lemma 4.6", "Theorem 4.1"), "stage 1; Theorem 4.1's criterion"),
    horizon=STAGE1,
    needs=(SCAN_RUNS,),
    prepare=velocity_sign_threshold,
    measure=measure_velocity_sign,
)
OUTCOME_STAGE1 = CheckKind(
    id="boundary.outcome-stage1",
    name="benign | not-overfitting boundary after 1000 steps (stage-1 threshold)",
    paper=PaperResult(("Theorem 4.1",)),
    horizon=PAPER,
    needs=(SCAN_RUNS,),
    prepare=stage1_threshold,
    measure=measure_training_outcome,
)
OUTCOME_STAGE2 = CheckKind(
    id="boundary.outcome-stage2",
    name="benign | not-overfitting boundary after 1000 steps (stage-2 GD map)",
    paper=PaperResult(("Theorem 4.1",), "stage 2, this package's mean field"),
    horizon=PAPER,
    needs=(SCAN_RUNS,),
    prepare=stage2_boundary,
    measure=measure_training_outcome,
)

__all__ = [
    "SCAN_RUNS",
    "crossing_shift",
    "Boundary",
    "velocity_sign_threshold",
    "stage1_threshold",
    "stage2_boundary",
    "measure_velocity_sign",
    "measure_training_outcome",
    "VELOCITY_SIGN",
    "OUTCOME_STAGE1",
    "OUTCOME_STAGE2",
]
