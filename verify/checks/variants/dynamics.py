r"""Checks of the claims about the dynamics (R4, R5): the clean gaps' logarithmic growth
under each loss, and the noisy samples' share of the gradient over training.

R4's theory (:mod:`theory.variants.loss`): the loss enters only through the per-sample
weight, which cannot vanish while the scores are bounded, so a saturated gap grows by
:math:`\ln 10\,(1 + d\log\kappa/d\log\tau)` per decade under every loss
(:func:`theory.stage2.predictions.gap_slope` with the loss). R5's
(:mod:`theory.variants.noise_ratio`): :math:`\|G_N\|_F/\|G_C\|_F` at :math:`\tau = 0` in closed
form, and along the mean-field flow.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from theory.foundation.data_model import DataModel, Training
from theory.stage2.predictions import gap_slope
from theory.variants.noise_ratio import flow_ratio, initial_ratio
from verify.checks.catalogue.declare import LONG, STAGE1, CheckKind, Context
from verify.checks.catalogue.estimators import seed_mean_check
from verify.checks.catalogue.long_horizon import SLOPE_FROM_STEP, gap_slopes
from verify.checks.registry import Measurement, PaperResult, compare
from verify.checks.variants.heads import CROSS_TERMS, cross_terms, variant_kind
from verify.checks.variants.runs import KINDS, Need
from verify.measures.intervals import mean_interval, ratio_interval
from verify.sim.config import preset

R4 = PaperResult((), "rebuttal R4: exponential time from the softmax, not the loss")
R5 = PaperResult((), "rebuttal R5: noisy samples can dominate the updates")
RATIO = "noisy_gradient_ratio"


@dataclass(frozen=True)
class SlopeDifference:
    """The clean gaps' slope per decade under ``loss`` minus the logistic loss's, predicted
    by the stage-2 flow under each loss, and the sum of both slopes' stated errors."""

    preset: str
    loss: str
    predicted: float
    model_error: float
    source: str


def slope_difference(context: Context, loss: str) -> SlopeDifference:
    p = context.prediction
    other = gap_slope(p.model, p.training.replace(loss=loss))
    base = gap_slope(p.model, p.training.replace(loss="logistic"))
    return SlopeDifference(
        context.preset,
        loss,
        other.value - base.value,
        other.model_error * other.value + base.model_error * base.value,
        "the sum of both slopes' stated errors (stage-2 flow, each loss)",
    )


def measure_slope_difference(
    target: SlopeDifference, ev, claim: float | None = None
) -> Measurement:
    """Seed mean of the paired slope difference (same draws under both losses)."""
    other = gap_slopes(target.preset, ev, f"flow-{target.loss}")
    base = gap_slopes(target.preset, ev)
    mean, interval = mean_interval(other - base)
    return compare(
        target.predicted if claim is None else claim,
        mean,
        interval,
        f"{other.size} flow seeds (paired)",
        target.model_error,
        f"clean-gap slope per decade ({target.loss} - logistic), steps >= "
        f"{SLOPE_FROM_STEP:.0e}, seed mean of the paired difference",
        detail=f"slopes: logistic {base.mean():.4f}, {target.loss} {other.mean():.4f} per decade",
        model_error_source=target.source,
    )


@dataclass(frozen=True)
class RatioTarget:
    """The theory's noisy-gradient ratio for the runs of ``run``: at step 0, or its largest
    value along the mean-field flow over the run's log points."""

    preset: str
    run: str
    model: DataModel
    training: Training
    predicted: float
    model_error: float
    source: str


def run_model(context: Context, run: str) -> tuple[DataModel, Training]:
    """The preset's model and training with the run kind's changes (any field)."""
    config = preset(context.preset, **KINDS[run].changes)
    return config.model, config.training


def score_noise_share(model: DataModel, training: Training) -> float:
    """What the tokens' noise scores, which the mean-field flow drops, change in the ratio at
    step 0 (relative)."""
    full, flow = initial_ratio(model, training), initial_ratio(model, training, False)
    return abs(full / flow - 1)


def initial_target(context: Context, run: str) -> RatioTarget:
    model, training = run_model(context, run)
    value = initial_ratio(model, training)
    return RatioTarget(
        context.preset,
        run,
        model,
        training,
        value,
        value * cross_terms(model),
        CROSS_TERMS + " (W0^T W0 = kappa0 I)",
    )


def largest_target(context: Context, run: str) -> RatioTarget:
    """The mean-field flow's largest ratio over the log points of the long flows
    (:data:`FLOW_POINTS`)."""
    model, training = run_model(context, run)
    value = float(flow_ratio(model, training, FLOW_POINTS).max())
    error = value * (cross_terms(model) + score_noise_share(model, training))
    return RatioTarget(
        context.preset,
        run,
        model,
        training,
        value,
        error,
        CROSS_TERMS + "; + the token noise scores the mean-field flow drops "
        "(their share at step 0)",
    )


#: The positive log points of a long flow (1 to 1e12 steps, 49 geometric points).
FLOW_POINTS = np.geomspace(1.0, 1e12, 49)


def largest_ratios(target: RatioTarget, ev) -> np.ndarray:
    """Per run, the largest noisy-gradient ratio over its log points from step 1 on."""
    return np.array(
        [np.nanmax(r.history[RATIO][r.steps >= 1]) for r in ev(target.preset, target.run)]
    )


def measure_initial_ratio(target: RatioTarget, ev, claim: float | None = None) -> Measurement:
    values = np.array([r.history[RATIO][0] for r in ev(target.preset, target.run)])
    return seed_mean_check(
        target.predicted if claim is None else claim,
        values,
        target.model_error,
        "||G_N||_F / ||G_C||_F at step 0, seed mean",
        target.source,
    )


def measure_largest_ratio(target: RatioTarget, ev, claim: float | None = None) -> Measurement:
    """The geometric mean over seeds of each run's largest ratio (a positive ratio whose
    seeds spread over decades with few noisy samples) against the flow's."""
    values = largest_ratios(target, ev)
    mean, interval = ratio_interval(values)
    return compare(
        target.predicted if claim is None else claim,
        mean,
        interval,
        f"{values.size} flow seeds",
        target.model_error,
        "largest ||G_N||_F / ||G_C||_F over the flow's log points, geometric mean over seeds",
        model_error_source=target.source,
    )


def measure_dominance(target: RatioTarget, ev, claim: float | None = None) -> Measurement:
    """R5 as stated: at some time the noisy samples carry more of the gradient than the clean
    ones; one-sided, within when the interval of the seeds' geometric mean of the largest
    ratio lies above 1 (or the claim)."""
    values = largest_ratios(target, ev)
    mean, interval = ratio_interval(values)
    least = 1.0 if claim is None else claim
    return Measurement(
        predicted=least,
        measured=mean,
        interval=interval,
        samples=f"{values.size} flow seeds",
        model_error=0.0,
        tolerance=0.0,
        estimator="largest ||G_N||_F / ||G_C||_F over the flow's log points, geometric mean "
        "over seeds",
        within=interval[0] >= least,
        detail=f"eta = {target.model.eta}: the mean-field flow's largest ratio "
        f"{target.predicted:.4g}; one-sided: agrees when the interval lies above 1",
        at_least=True,
        bound=f"threshold: ratio > {least:.4g} at some step",
        tolerance_source="none: a one-sided bound (the interval's low end at least 1)",
    )


#: Why a difference of slopes holds for an untrained model too (both are 0).
EQUAL_WHEN_STILL = (
    "a difference of two slopes is 0 when nothing moves; the slopes themselves are checked "
    "by r4.gap-slope-<loss>"
)


def slope_kind(loss: str) -> CheckKind:
    return CheckKind(
        id=f"r4.slope-{loss}",
        name=f"R4: the clean gaps grow per decade as fast under the {loss} loss as under the "
        "logistic (difference {predicted:.2g})",
        paper=R4,
        horizon=LONG,
        needs=(Need("flow", 12), Need(f"flow-{loss}", 12)),
        prepare=slope_difference,
        measure=measure_slope_difference,
        params={"loss": loss},
        holds_untrained=EQUAL_WHEN_STILL,
    )


@dataclass(frozen=True)
class SlopeLevel:
    """The clean gaps' slope per decade under ``loss`` (stage-2 flow) and its stated error."""

    preset: str
    loss: str
    predicted: float
    model_error: float


def slope_level(context: Context, loss: str) -> SlopeLevel:
    p = context.prediction
    slope = gap_slope(p.model, p.training.replace(loss=loss))
    return SlopeLevel(context.preset, loss, slope.value, slope.model_error * slope.value)


def measure_slope_level(target: SlopeLevel, ev, claim: float | None = None) -> Measurement:
    """Seed mean of the clean-gap slope per decade under the loss."""
    values = gap_slopes(target.preset, ev, f"flow-{target.loss}")
    mean, interval = mean_interval(values)
    return compare(
        target.predicted if claim is None else claim,
        mean,
        interval,
        f"{values.size} flow seeds",
        target.model_error,
        f"clean-gap slope per decade under the {target.loss} loss, steps >= "
        f"{SLOPE_FROM_STEP:.0e}, seed mean",
        model_error_source="the stage-2 flow's stated error of the slope under this loss",
    )


def level_kind(loss: str) -> CheckKind:
    return CheckKind(
        id=f"r4.gap-slope-{loss}",
        name=f"R4: under the {loss} loss the clean gaps grow by {{predicted:.4g}} per decade",
        paper=R4,
        horizon=LONG,
        needs=(Need(f"flow-{loss}", 12),),
        prepare=slope_level,
        measure=measure_slope_level,
        params={"loss": loss},
    )


R4_EXPONENTIAL, R4_SQUARED = slope_kind("exponential"), slope_kind("squared")
R4_LEVEL_EXPONENTIAL, R4_LEVEL_SQUARED = level_kind("exponential"), level_kind("squared")
R5_INITIAL = variant_kind(
    "r5.initial-ratio",
    "R5: noisy-gradient ratio at step 0 is {predicted:.3f}",
    R5,
    STAGE1,
    "base",
    24,
    initial_target,
    measure_initial_ratio,
    untrained="read at step 0, before any training",
    run="base",
)


def eta_kinds(eta: str) -> tuple[CheckKind, CheckKind]:
    """The largest ratio against the flow's, and against 1, at label noise ``eta`` (ids
    spell its point as ``p``: ``eta-0p1``)."""
    run, tag = f"flow-eta-{eta}", f"eta-{eta.replace('.', 'p')}"
    largest = variant_kind(
        f"r5.largest-ratio-{tag}",
        f"R5: largest noisy-gradient ratio at eta = {eta} is {{predicted:.3f}}",
        R5,
        LONG,
        run,
        12,
        largest_target,
        measure_largest_ratio,
        run=run,
    )
    dominance = variant_kind(
        f"r5.noisy-dominate-{tag}",
        f"R5: at eta = {eta} the noisy samples dominate the gradient at some step",
        R5,
        LONG,
        run,
        12,
        largest_target,
        measure_dominance,
        run=run,
    )
    return largest, dominance


R5_LARGEST_01, R5_DOMINANCE_01 = eta_kinds("0.1")
R5_LARGEST_005, R5_DOMINANCE_005 = eta_kinds("0.05")

__all__ = [
    "R4_EXPONENTIAL",
    "R4_SQUARED",
    "R4_LEVEL_EXPONENTIAL",
    "R4_LEVEL_SQUARED",
    "R5_INITIAL",
    "R5_LARGEST_01",
    "R5_DOMINANCE_01",
    "R5_LARGEST_005",
    "R5_DOMINANCE_005",
    "FLOW_POINTS",
    "largest_ratios",
    "largest_target",
]
