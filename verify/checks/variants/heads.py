r"""Checks of the claims about the head (R2, R6): the one-step head's alignment and scale
and the attention's outcome with it; what a jointly trained head memorises and whether the
token selection still happens.

The theory (:mod:`theory.variants.head`) writes the one-step head as three nearly orthogonal
parts (signal, the head set's noise, the random start) and the trained head's first moves
as sums over the training tokens; both drop the cross products of independent Gaussian
vectors in dimension d. Their stated model error, fixed here before any run, is
:data:`CROSS_TERMS` relative: two such products, each of relative size
:math:`\sqrt{2/d}` (one standard deviation).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from theory.foundation.data_model import DataModel
from theory.variants.head import one_step_prediction, trained_head_rates
from verify.checks.catalogue.declare import PAPER, STAGE1, CheckKind, Context
from verify.checks.catalogue.estimators import seed_mean_check
from verify.checks.catalogue.paper_horizon import measure_regime, predicted_regime
from verify.checks.registry import PROBABILITY, Measurement, PaperResult, compare
from verify.checks.variants.runs import HEAD_SET, Need
from verify.checks.variants.selection import (
    measure_variant_selection,
    variant_selection,
)
from verify.measures.intervals import proportion_interval

R2 = PaperResult((), "rebuttal R2: a one-step head satisfies Assumption 3.3")
R6 = PaperResult((), "reviewers' R6: a trained head")
ONE_STEP = {"one-step-train": "the training set", "one-step-clean": f"{HEAD_SET} clean examples"}


def cross_terms(model: DataModel) -> float:
    r"""The relative model error :math:`2\sqrt{2/d}` (module docstring)."""
    return 2 * math.sqrt(2 / model.d)


CROSS_TERMS = "two dropped cross products of independent Gaussian vectors, sqrt(2/d) each"


@dataclass(frozen=True)
class HeadValue:
    """A predicted quantity of the head (``key`` in the runs' extras) on runs of ``run``,
    its value and its model error."""

    preset: str
    run: str
    key: str
    what: str
    predicted: float
    model_error: float


def one_step_value(context: Context, run: str, key: str) -> HeadValue:
    """The one-step head's predicted alignment or scale (``key``: head_alignment,
    head_scale) on the head set of ``run``."""
    p = context.prediction
    training = p.training.replace(
        head="one-step", head_n=HEAD_SET if run == "one-step-clean" else 0
    )
    predicted = one_step_prediction(p.model, training)
    value = predicted.alignment if key == "head_alignment" else predicted.scale
    what = "cos(nu, mu_+1 - mu_-1)" if key == "head_alignment" else "||nu|| ||mu||"
    return HeadValue(
        context.preset,
        run,
        key,
        f"{what}, head set {ONE_STEP[run]}",
        value,
        abs(value) * cross_terms(p.model),
    )


def trained_value(context: Context, key: str) -> HeadValue:
    r"""The trained head's first-step rate (``key``: ``head_across``, the head's velocity
    across :math:`\mu_{+1} - \mu_{-1}`, or ``head_noisy``, a noisy sample's margin velocity
    through the head), flow time."""
    p = context.prediction
    rates = trained_head_rates(p.model, p.training.replace(head="trained"))
    value = rates.noise_velocity if key == "head_across" else rates.head_noisy
    what = (
        "the head's velocity off mu_+1 - mu_-1 (its noise part)"
        if key == "head_across"
        else "a noisy sample's margin velocity through the head"
    )
    return HeadValue(context.preset, "trained", key, what, value, abs(value) * cross_terms(p.model))


def per_seed(target: HeadValue, ev) -> np.ndarray:
    """The key's value per seed (a per-sample velocity averaged over the noisy samples)."""
    runs, extras = ev(target.preset, target.run), ev.extra(target.preset, target.run)
    if target.key == "head_noisy":
        return np.array(
            [
                np.mean(np.asarray(x["head_velocity"])[r.noisy])
                for r, x in zip(runs, extras, strict=True)
            ]
        )
    return np.array([float(x[target.key]) for x in extras])


def measure_head_value(target: HeadValue, ev, claim: float | None = None) -> Measurement:
    """Seed mean of the head's quantity against the prediction within the cross terms."""
    return seed_mean_check(
        target.predicted if claim is None else claim,
        per_seed(target, ev),
        target.model_error,
        f"{target.what}: seed mean",
        CROSS_TERMS,
    )


@dataclass(frozen=True)
class FittedShare:
    """The predicted share of noisy samples fitted at a log point of the runs of ``run``."""

    preset: str
    run: str
    index: int
    predicted: float
    source: str


def one_step_fits_noise(context: Context) -> FittedShare:
    """The one-step head on the training set at uniform attention (step 0): the share of
    noisy samples with y f > 0, from the margins' normal law."""
    p = context.prediction
    predicted = one_step_prediction(p.model, p.training.replace(head="one-step"))
    return FittedShare(
        context.preset,
        "one-step-train",
        0,
        predicted.noisy_fitted,
        "the margins' normal law (its mean and sd derived)",
    )


def trained_head_fits_noise(context: Context) -> FittedShare:
    """The trained head after 1000 steps: all noisy samples fitted when n SNR^2 is below
    the head's threshold (the head alone fits them), none predicted otherwise."""
    p = context.prediction
    rates = trained_head_rates(p.model, p.training.replace(head="trained"))
    below = p.model.n * p.model.snr**2 < rates.head_threshold
    return FittedShare(
        context.preset,
        "trained",
        -1,
        1.0 if below else 0.0,
        "the head's threshold in n SNR^2 (a sharp statement)",
    )


def measure_fitted(target: FittedShare, ev, claim: float | None = None) -> Measurement:
    """The share of every seed's noisy samples with y f > 0 at the log point (Wilson)."""
    runs = ev(target.preset, target.run)
    counts = [int(r.noisy.sum()) for r in runs]
    shares = [float(r.history["noisy_fitted"][target.index]) for r in runs]
    fitted = sum(round(s * c) for s, c in zip(shares, counts, strict=True))
    share, interval = proportion_interval(fitted, sum(counts))
    return compare(
        target.predicted if claim is None else claim,
        share,
        interval,
        f"{sum(counts)} noisy samples, {len(runs)} seeds",
        0.0,
        "share of noisy training samples with y f > 0 (Wilson interval)",
        model_error_source=f"none stated: {target.source}",
        support=PROBABILITY,
    )


#: Why a check of the head before the attention trains holds for an untrained model.
FIXED_BEFORE = "the one-step head is drawn and fixed before the attention trains"


def variant_kind(
    id: str,
    name: str,
    paper: PaperResult,
    horizon: str,
    runs_of: str,
    seeds: int,
    prepare: Callable,
    measure: Callable,
    untrained: str = "",
    **params: object,
) -> CheckKind:
    """A check kind on ``seeds`` runs of the kind ``runs_of`` (``untrained``: why it holds for an
    untrained model too, or empty)."""
    return CheckKind(
        id=id,
        name=name,
        paper=paper,
        horizon=horizon,
        needs=(Need(runs_of, seeds),),
        prepare=prepare,
        measure=measure,
        params=params,
        holds_untrained=untrained,
    )


R2_ALIGNMENT_TRAIN = variant_kind(
    "r2.alignment-training-set",
    "R2: one-step head on the training set, cos(nu, mu+ - mu-) = {predicted:.3f}",
    R2,
    STAGE1,
    "one-step-train",
    24,
    one_step_value,
    measure_head_value,
    untrained=FIXED_BEFORE,
    run="one-step-train",
    key="head_alignment",
)
R2_ALIGNMENT_CLEAN = variant_kind(
    "r2.alignment-clean-set",
    "R2: one-step head on a clean head set, cos(nu, mu+ - mu-) = {predicted:.3f}",
    R2,
    STAGE1,
    "one-step-clean",
    24,
    one_step_value,
    measure_head_value,
    untrained=FIXED_BEFORE,
    run="one-step-clean",
    key="head_alignment",
)
R2_SCALE_CLEAN = variant_kind(
    "r2.scale-clean-set",
    "R2: one-step head on a clean head set, ||nu|| ||mu|| = {predicted:.3f}",
    R2,
    STAGE1,
    "one-step-clean",
    24,
    one_step_value,
    measure_head_value,
    untrained=FIXED_BEFORE,
    run="one-step-clean",
    key="head_scale",
)
R2_HEAD_FITS = variant_kind(
    "r2.head-fits-noise",
    "R2: the one-step head on the training set fits the noisy labels at uniform attention",
    R2,
    STAGE1,
    "one-step-train",
    24,
    one_step_fits_noise,
    measure_fitted,
    untrained=FIXED_BEFORE + "; it is read at step 0",
)
R2_REGIME = variant_kind(
    "r2.regime-clean-set",
    "R2: with the clean-set one-step head, the regime is {regime} ({label})",
    R2,
    PAPER,
    "one-step-clean",
    24,
    predicted_regime,
    measure_regime,
    run="one-step-clean",
    label="1000 steps",
)
R6_HEAD_NOISE = variant_kind(
    "r6.head-noise-velocity",
    "R6: the trained head first moves off mu+ - mu- at {predicted:.3g}",
    R6,
    STAGE1,
    "trained",
    24,
    trained_value,
    measure_head_value,
    key="head_across",
)
R6_HEAD_MEMORISES = variant_kind(
    "r6.head-memorisation",
    "R6: the trained head moves noisy margins at {predicted:.3g}",
    R6,
    STAGE1,
    "trained",
    24,
    trained_value,
    measure_head_value,
    key="head_noisy",
)
R6_FITS = variant_kind(
    "r6.noisy-fitted",
    "R6: with the trained head, noisy samples fitted (1000 steps)",
    R6,
    PAPER,
    "trained",
    24,
    trained_head_fits_noise,
    measure_fitted,
)
R6_SELECTION = variant_kind(
    "r6.clean-selection",
    "R6: with the trained head, clean samples still select R",
    R6,
    PAPER,
    "trained",
    24,
    variant_selection,
    measure_variant_selection,
    run="trained",
    noisy=False,
    group="R",
)

__all__ = [
    "R2_ALIGNMENT_TRAIN",
    "R2_ALIGNMENT_CLEAN",
    "R2_SCALE_CLEAN",
    "R2_HEAD_FITS",
    "R2_REGIME",
    "R6_HEAD_NOISE",
    "R6_HEAD_MEMORISES",
    "R6_FITS",
    "R6_SELECTION",
    "variant_kind",
    "cross_terms",
    "CROSS_TERMS",
]
