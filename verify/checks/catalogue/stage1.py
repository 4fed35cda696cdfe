r"""Stage-1 checks (:math:`\tau = 0` and the stage-1 end): the exact initial gap velocities
against the kept velocity and the dropped terms' spread, and when every noisy sample is
fitted against the stage-1 prediction."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from theory.stage1.moments import VelocityError, velocity_error
from verify.checks.catalogue.declare import GD_RUNS, STAGE1, CheckKind, Context
from verify.checks.evidence import Evidence, Need
from verify.checks.registry import Measurement, PaperResult, compare
from verify.measures.intervals import mean_interval, median_interval, sd_interval


@dataclass(frozen=True)
class GapVelocity:
    r"""The stage-1 gap velocity of the ``leader`` (R for clean samples, W- for noisy ones)
    over ``other``, with its dropped terms (:class:`theory.stage1.moments.VelocityError`)."""

    preset: str
    leader: str
    other: str
    noisy: bool
    error: VelocityError

    @property
    def samples(self) -> str:
        return "noisy" if self.noisy else "clean"


def gap_velocity(context: Context, noisy: bool, other: str) -> GapVelocity:
    """The kept velocity and the dropped terms of the gap the checks measure."""
    p = context.prediction
    error = velocity_error(p.model, p.training, other, noisy)
    return GapVelocity(context.preset, "W-" if noisy else "R", other, noisy, error)


def draw_means(target: GapVelocity, ev: Evidence) -> np.ndarray:
    r"""Per GD seed, the mean over its clean (or noisy) samples of the gap velocity at
    :math:`\tau = 0`, exact from the logits after one step."""
    key = ("draw means", target.preset, target.leader, target.other, target.noisy)
    return ev.derived(
        key,
        lambda: [
            run.initial_gap_velocities(target.leader, target.other, target.noisy).mean()
            for run in ev(target.preset, "gd")
        ],
    )


def measure_mean_velocity(
    target: GapVelocity, ev: Evidence, claim: float | None = None
) -> Measurement:
    """The seeds' mean gap velocity against the kept velocity (model error: the dropped
    terms' mean)."""
    values, error = draw_means(target, ev), target.error
    mean, interval = mean_interval(values)
    return compare(
        error.kept if claim is None else claim,
        mean,
        interval,
        f"{values.size} seeds",
        abs(error.bias),
        f"seed mean of the {target.samples} samples' mean gap velocity {target.leader} - "
        f"{target.other} (logits after one step / alpha)",
        f"dropped terms: mean {error.bias:.3g}, sd of a draw's mean {error.mean_sd:.3g}",
        model_error_source="derived: the dropped terms' mean (exact moments of the "
        "linearised velocity, theory.stage1.moments) at this setting",
    )


def measure_velocity_spread(
    target: GapVelocity, ev: Evidence, claim: float | None = None
) -> Measurement:
    """The spread over seeds of a draw's mean gap velocity against the dropped terms'
    derived standard deviation."""
    values = draw_means(target, ev)
    sd, interval = sd_interval(values)
    return compare(
        target.error.mean_sd if claim is None else claim,
        sd,
        interval,
        f"{values.size} seeds",
        0.0,
        f"standard deviation over seeds of a draw's mean {target.samples} gap velocity "
        f"{target.leader} - {target.other} (chi-square interval)",
        model_error_source="none: the derived standard deviation is the prediction itself",
        support=(0.0, math.inf),
    )


@dataclass(frozen=True)
class Stage1End:
    """The predicted step at which every noisy sample is fitted (stage-1 end / alpha), and
    the relative size of what its derivation drops (``model_error``): the fit time of the
    mean-field flow, which keeps the saturating softmax and the growing preconditioner
    (``flow_step``), against the linear-logit estimate."""

    preset: str
    predicted: float
    flow_step: float

    @property
    def model_error(self) -> float:
        return abs(self.flow_step / self.predicted - 1)


def stage1_end(context: Context) -> Stage1End:
    """The stage-1 end in GD steps; ``ValueError`` when the theory predicts none (a preset
    whose noisy samples are never fitted cannot carry this check)."""
    from theory.stage2.predictions import stage2_noisy_fitting_time

    p = context.prediction
    if not p.noisy_fitting_time < math.inf:
        raise ValueError(
            f"preset={context.preset!r} is invalid for the stage-1 end check: allowed a preset "
            "whose noisy samples the theory predicts fitted"
        )
    alpha = p.training.alpha
    flow_tau = stage2_noisy_fitting_time(p.model, p.training, 1e3 * p.noisy_fitting_time)
    return Stage1End(context.preset, p.noisy_fitting_time / alpha, flow_tau / alpha)


def measure_stage1_end(target: Stage1End, ev: Evidence, claim: float | None = None) -> Measurement:
    """When every noisy sample is fitted: the flow time of the event on each event seed's
    draws (root-finding on the solver's dense output), against the stage-1 prediction. A
    seed whose noisy samples are never all fitted within the horizon counts as later than
    every other (the median and its order-statistic interval take it as it is)."""
    times = np.array([math.inf if at is None else at for at in ev.events[target.preset]])
    ratio, interval = median_interval(times / target.predicted)
    never = int(np.sum(np.isinf(times)))
    return compare(
        1.0 if claim is None else claim,
        ratio,
        interval,
        f"{times.size} seeds ({never} never within the horizon)",
        target.model_error,
        "median over seeds of (event step) / (predicted step)",
        f"predicted step {target.predicted:.4g}; mean-field flow {target.flow_step:.4g}; "
        f"measured {', '.join(f'{t:.4g}' for t in times)}",
        model_error_source=f"derived: the mean-field flow's fit time ({target.flow_step:.4g} "
        "steps), which keeps what the linear-logit estimate drops (saturating softmax, "
        f"growing preconditioner), against the estimate's {target.predicted:.4g}",
        support=(0.0, math.inf),
    )


CLEAN_VELOCITY = CheckKind(
    id="{preset}.clean-gap-velocity",
    name="initial clean gap velocity {leader} - {other} [{preset}]",
    paper=PaperResult(("Lemma 4.5", "Lemma 4.6"), "stage-1 rates"),
    horizon=STAGE1,
    needs=(GD_RUNS,),
    prepare=gap_velocity,
    measure=measure_mean_velocity,
    params={"noisy": False, "other": "I"},
)
CLEAN_VELOCITY_SPREAD = CheckKind(
    id="{preset}.clean-gap-velocity-spread",
    name="spread of the initial clean gap velocity {leader} - {other} [{preset}]",
    paper=PaperResult(("Lemma 4.5", "Lemma 4.6"), "dropped terms of the stage-1 rates"),
    horizon=STAGE1,
    needs=(GD_RUNS,),
    prepare=gap_velocity,
    measure=measure_velocity_spread,
    params={"noisy": False, "other": "I"},
)
NOISY_VELOCITY = CheckKind(
    id="{preset}.noisy-gap-velocity",
    name="initial noisy gap velocity {leader} - {other} [{preset}]",
    paper=PaperResult(("Lemma 4.5", "Lemma 4.6"), "stage-1 rates"),
    horizon=STAGE1,
    needs=(GD_RUNS,),
    prepare=gap_velocity,
    measure=measure_mean_velocity,
    params={"noisy": True, "other": "R"},
)
NOISY_VELOCITY_SPREAD = CheckKind(
    id="{preset}.noisy-gap-velocity-spread",
    name="spread of the initial noisy gap velocity {leader} - {other} [{preset}]",
    paper=PaperResult(("Lemma 4.5", "Lemma 4.6"), "dropped terms of the stage-1 rates"),
    horizon=STAGE1,
    needs=(GD_RUNS,),
    prepare=gap_velocity,
    measure=measure_velocity_spread,
    params={"noisy": True, "other": "R"},
)
STAGE1_END = CheckKind(
    id="{preset}.stage1-end",
    name="stage-1 end: every noisy sample fitted [{preset}]",
    paper=PaperResult(("Lemma 4.6",)),
    horizon=STAGE1,
    needs=(Need("event", 32),),
    prepare=stage1_end,
    measure=measure_stage1_end,
)

__all__ = [
    "GapVelocity",
    "gap_velocity",
    "draw_means",
    "measure_mean_velocity",
    "measure_velocity_spread",
    "Stage1End",
    "stage1_end",
    "measure_stage1_end",
    "CLEAN_VELOCITY",
    "CLEAN_VELOCITY_SPREAD",
    "NOISY_VELOCITY",
    "NOISY_VELOCITY_SPREAD",
    "STAGE1_END",
]
