r"""Checks on the long flows (gradient flow to :math:`10^{12}` steps): the regime, the test
accuracy from the learned query, its argmax limit and the stage-2 flow's, how fast the
clean gaps grow, and how long after the fit generalisation arrives."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from theory.baselines import argmax_loss, uniform_attention_loss
from theory.foundation.data_model import DataModel
from theory.stage1.predictions import soft_test_accuracy
from theory.stage2.predictions import gap_slope
from verify.checks.catalogue.declare import FLOW_RUNS, GD_RUNS, LONG, CheckKind, Context
from verify.checks.catalogue.estimators import final_rows
from verify.checks.catalogue.paper_horizon import (
    UNTRAINED_NOT_OVERFITTING,
    measure_late_accuracy,
    measure_regime,
    predicted_regime,
    stage2_accuracy,
)
from verify.checks.evidence import Evidence, Need, Run, stack
from verify.checks.registry import PROBABILITY, Measurement, PaperResult, compare
from verify.measures.intervals import mean_interval, ratio_interval

#: theory.stage1.predictions.soft_test_accuracy is a Monte Carlo of 20,000 draws: standard error
#: at most 0.5/sqrt(20000) = 0.0035; three of them.
SOFT_MODEL_ERROR = 3 * 0.5 / math.sqrt(20000)

#: The g^-1 law's slope is exactly ln 10 per decade for a constant rate; its o(1) terms,
#: (1 + 4L - 2L^2)/y^2 at y = g(x) > 1e6, change the slope by less than 1%.
SLOPE_MODEL_ERROR = 0.01

#: The clean gaps' slope is fitted from this step on (where the g^-1 asymptotics hold).
SLOPE_FROM_STEP = 1e6


@dataclass(frozen=True)
class Preset:
    """A check whose theory side is evaluated on the evidence (the preset's model)."""

    preset: str
    model: DataModel


def preset_model(context: Context) -> Preset:
    return Preset(context.preset, context.prediction.model)


@lru_cache(maxsize=1024)
def soft_accuracy(model: DataModel, signal_logit: float, query_norm: float, seed: int) -> float:
    """:func:`theory.stage1.predictions.soft_test_accuracy` (a Monte Carlo from a fixed
    seed, so a function of its arguments), remembered: the power of a check moves only
    its claim, and measures the same learned queries again at every trial claim."""
    return soft_test_accuracy(model, signal_logit, query_norm, seed=seed)


def learned_query_accuracies(model: DataModel, runs: list[Run], scale: float = 1.0) -> list[float]:
    r"""Per flow seed, Lemma 4.8's test accuracy (theory's finite-temperature model,
    :func:`theory.stage1.predictions.soft_test_accuracy`) at the learned query's final split into
    signal :math:`\beta = \tfrac12(q_+ + q_-)\|\mu\|` and norm :math:`\|q\|`, both times
    ``scale``."""
    out = []
    for seed, last in enumerate(final_rows(runs)):
        beta = 0.5 * (last["q_signal_plus"] + last["q_signal_minus"]) * model.mu_norm
        out.append(soft_accuracy(model, scale * beta, scale * last["q_norm"], seed))
    return out


def measure_conditional_accuracy(
    target: Preset, ev: Evidence, claim: float | None = None
) -> Measurement:
    """Lemma 4.8's mechanism: the test accuracy from the learned split of q into signal and
    noise (theory's finite-temperature model) against the population test accuracy."""
    runs = ev(target.preset, "flow")
    predicted = learned_query_accuracies(target.model, runs)
    measured = [row["population_test_accuracy"] for row in final_rows(runs)]
    difference, interval = mean_interval(np.array(measured) - np.array(predicted))
    return compare(
        0.0 if claim is None else claim,
        difference,
        interval,
        f"{len(runs)} seeds",
        SOFT_MODEL_ERROR,
        "mean over seeds of population accuracy - theory's accuracy",
        f"theory {np.mean(predicted):.4f}, population {np.mean(measured):.4f}",
        model_error_source="derived: 3 standard errors of the 20,000-draw Monte Carlo "
        "accuracy (at most 0.5 / sqrt(20000) each)",
        support=(-1.0, 1.0),
    )


@dataclass(frozen=True)
class ArgmaxLimit:
    """The argmax limit of the test accuracy at the stage-1 test z."""

    preset: str
    accuracy: float
    z: float


def argmax_limit(context: Context) -> ArgmaxLimit:
    p = context.prediction
    return ArgmaxLimit(context.preset, p.test_accuracy, p.test_z)


def measure_argmax_limit(
    target: ArgmaxLimit, ev: Evidence, claim: float | None = None
) -> Measurement:
    """The infinite-time (argmax) limit of the test accuracy, stated as the limit it is:
    compared with the population test accuracy at the longest horizon."""
    runs = ev(target.preset, "flow")
    accuracy, interval = mean_interval(stack(runs, "population_test_accuracy"))
    at_paper = np.mean(stack(ev(target.preset, "gd"), "population_test_accuracy"))
    return compare(
        target.accuracy if claim is None else claim,
        accuracy,
        interval,
        f"{len(runs)} seeds",
        0.0,
        f"population test accuracy at {runs[0].steps[-1]:.0e} steps (seed mean)",
        f"argmax limit of the stage-1 test z = {target.z:.3g}; at 1000 steps {at_paper:.3f}",
        support=PROBABILITY,
        model_error_source="none: a t -> infinity limit states no error at a finite horizon",
    )


@dataclass(frozen=True)
class GapGrowth:
    """The clean gaps' predicted slope per decade of steps, by ``law``, its model error and
    where that came from."""

    preset: str
    slope: float
    model_error: float
    law: str
    source: str


def constant_rate_slope(context: Context) -> GapGrowth:
    """Late on, clean gaps grow by ln 10 a decade of time by the g^-1 asymptotics with a
    constant rate (:attr:`Claims.slope_per_decade`)."""
    slope = context.claims.slope_per_decade
    source = (
        "bound: the g^-1 law's o(1) terms (1 + 4L - 2L^2) / y^2 at y = g(x) > 1e6 change the "
        "slope by less than 1%"
    )
    return GapGrowth(context.preset, slope, slope * SLOPE_MODEL_ERROR, "g^-1 law", source)


def preconditioned_slope(context: Context) -> GapGrowth:
    r"""The slope with the preconditioner's growth supplied by the stage-2 flow
    (:func:`theory.stage2.predictions.gap_slope`, :math:`\ln 10\,(1 + d\log\kappa/d\log\tau)`)."""
    p = context.prediction
    predicted = gap_slope(p.model, p.training)
    return GapGrowth(
        context.preset,
        predicted.value,
        predicted.value * predicted.model_error,
        "with the preconditioner",
        "derived: the slope's excess over ln 10 times the preconditioner spread n/d + sqrt(2/d)",
    )


def gap_slopes(preset: str, ev: Evidence, kind: str = "flow") -> np.ndarray:
    """Per seed of the runs of ``kind``, the least-squares slope of the mean clean gap
    against log10 step, steps from :data:`SLOPE_FROM_STEP` on."""
    slopes = []
    for run in ev(preset, kind):
        keep = run.steps >= SLOPE_FROM_STEP
        slopes.append(
            np.polyfit(np.log10(run.steps[keep]), run.history["clean_gap_mean"][keep], 1)[0]
        )
    return np.array(slopes)


def measure_gap_growth(target: GapGrowth, ev: Evidence, claim: float | None = None) -> Measurement:
    """The seeds' mean slope of the clean gap per decade against the law's."""
    slopes = gap_slopes(target.preset, ev)
    slope, interval = mean_interval(slopes)
    return compare(
        target.slope if claim is None else claim,
        slope,
        interval,
        f"{len(slopes)} seeds",
        target.model_error,
        "least-squares slope of the mean clean gap against log10 step, steps >= 1e6, seed mean",
        model_error_source=target.source,
    )


@dataclass(frozen=True)
class Delay:
    r"""Generalisation levels: the test loss of uniform attention :math:`L_0` (``start``),
    the argmax limit :math:`L_\infty` (``limit``), the level :math:`L_\infty + 0.01 (L_0 -
    L_\infty)` and the least ratio of the steps that counts as "long after"."""

    preset: str
    factor: float
    start: float
    limit: float
    level: float


def generalisation_levels(context: Context) -> Delay:
    r"""Both levels are set by theory, not by the horizon: the model has generalised once
    its population test loss has closed 99% of the way from :math:`L_0` to
    :math:`L_\infty`; "long after" is :attr:`Claims.delay_factor` (two decades)."""
    p = context.prediction
    start, limit = uniform_attention_loss(p.model), argmax_loss(p.model, p.test_selection)
    level = limit + 0.01 * (start - limit)
    return Delay(context.preset, context.claims.delay_factor, start, limit, level)


def measure_delay(target: Delay, ev: Evidence, claim: float | None = None) -> Measurement:
    """Remark 4.3: generalisation arrives long after the fit; the geometric mean over seeds
    of the first logged step at the level over the step every noisy sample is fitted."""
    least = target.factor if claim is None else claim
    ratios, never = [], 0
    for run in ev(target.preset, "flow"):
        reached = np.flatnonzero(run.history["population_test_loss"] <= target.level)
        if not reached.size:
            never += 1
            continue
        ratios.append(run.steps[reached[0]] / run.noisy_fitted_at)
    ratio, interval = ratio_interval(np.array(ratios)) if ratios else (math.nan, (math.nan,) * 2)
    return Measurement(
        predicted=least,
        measured=ratio,
        interval=interval,
        samples=f"{len(ratios)} seeds ({never} never within the horizon)",
        model_error=0.0,
        tolerance=0.0,
        estimator="geometric mean of (first logged step with the test loss "
        f"<= {target.level:.5f}) / (step every noisy sample is fitted)",
        within=bool(ratios) and interval[0] >= least,
        detail=f"L_0 = {target.start:.5f} (uniform attention), L_inf = {target.limit:.5f} "
        "(argmax limit); one-sided: agrees when the interval lies above "
        "the factor; the step is the first logged point (log-spaced)",
        at_least=True,
        bound=f"bound: at least {least:.4g}x after fitting",
        tolerance_source="none: a one-sided claim (the interval's low end at least the "
        "factor, two decades)",
    )


REGIME_FLOW = CheckKind(
    id="{preset}.regime-flow",
    name="regime is {regime} ({label}) [{preset}]",
    paper=PaperResult(("Theorem 4.1",)),
    horizon=LONG,
    needs=(FLOW_RUNS,),
    prepare=predicted_regime,
    measure=measure_regime,
    params={"run": "flow", "label": "1e12 steps"},
)
REGIME_FLOW_CLEAN_SHARE = dataclasses.replace(
    REGIME_FLOW, holds_untrained=UNTRAINED_NOT_OVERFITTING
)
CONDITIONAL_ACCURACY = CheckKind(
    id="{preset}.conditional-accuracy",
    name="test accuracy from the learned query [{preset}]",
    paper=PaperResult(("Lemma 4.8",), "conditional"),
    horizon=LONG,
    needs=(FLOW_RUNS,),
    prepare=preset_model,
    measure=measure_conditional_accuracy,
    holds_untrained="Lemma 4.8's accuracy given the query's split into signal and noise holds "
    "at any query, q = 0 included",
)
ARGMAX_LIMIT = CheckKind(
    id="{preset}.argmax-limit",
    name="test accuracy reaches the argmax limit [{preset}]",
    paper=PaperResult(("Remark 4.2", "Lemma 4.8")),
    horizon=LONG,
    needs=(FLOW_RUNS, GD_RUNS),
    prepare=argmax_limit,
    measure=measure_argmax_limit,
)
STAGE2_ACCURACY_FLOW = CheckKind(
    id="{preset}.stage2-accuracy-flow",
    name="test accuracy at {steps:.0e} steps from the stage-2 flow [{preset}]",
    paper=PaperResult(("Lemma 4.8",), "stage 2, this package's mean field"),
    horizon=LONG,
    needs=(FLOW_RUNS,),
    prepare=stage2_accuracy,
    measure=measure_late_accuracy,
    params={"run": "flow", "steps": 1e12},
)
GAP_GROWTH = CheckKind(
    id="{preset}.gap-growth",
    name="clean gaps grow by {slope:.4g} per decade ({law}) [{preset}]",
    paper=PaperResult(("Lemma 4.5", "Lemma 4.7"), "g^-1 asymptotics"),
    horizon=LONG,
    needs=(FLOW_RUNS,),
    prepare=constant_rate_slope,
    measure=measure_gap_growth,
)
GAP_GROWTH_PRECONDITIONED = CheckKind(
    id="{preset}.gap-growth-preconditioned",
    name="clean gaps grow by {slope:.4g} per decade ({law}) [{preset}]",
    paper=PaperResult(("Lemma 4.5", "Lemma 4.7"), "g^-1 asymptotics"),
    horizon=LONG,
    needs=(FLOW_RUNS,),
    prepare=preconditioned_slope,
    measure=measure_gap_growth,
)
DELAYED_GENERALISATION = CheckKind(
    id="{preset}.delayed-generalisation",
    name="generalisation arrives long after fitting [{preset}]",
    paper=PaperResult(("Remark 4.3",)),
    horizon=LONG,
    needs=(Need("flow", FLOW_RUNS.seeds, path=True),),
    prepare=generalisation_levels,
    measure=measure_delay,
)

__all__ = [
    "SOFT_MODEL_ERROR",
    "SLOPE_MODEL_ERROR",
    "SLOPE_FROM_STEP",
    "Preset",
    "preset_model",
    "soft_accuracy",
    "learned_query_accuracies",
    "measure_conditional_accuracy",
    "ArgmaxLimit",
    "argmax_limit",
    "measure_argmax_limit",
    "GapGrowth",
    "constant_rate_slope",
    "preconditioned_slope",
    "gap_slopes",
    "measure_gap_growth",
    "Delay",
    "generalisation_levels",
    "measure_delay",
    "REGIME_FLOW",
    "REGIME_FLOW_CLEAN_SHARE",
    "CONDITIONAL_ACCURACY",
    "ARGMAX_LIMIT",
    "STAGE2_ACCURACY_FLOW",
    "GAP_GROWTH",
    "GAP_GROWTH_PRECONDITIONED",
    "DELAYED_GENERALISATION",
]
