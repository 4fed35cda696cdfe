r"""Checks at the paper's horizon (1000 GD steps): the paper's own accuracies, which token
groups the training samples select, the regime, and the stage-2 flow's test accuracy.
The regime and the stage-2 accuracy are measured the same way on the long flows
(:mod:`verify.checks.catalogue.long_horizon` declares those)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass

from theory.stage1.predictions import selection_error
from theory.stage2.predictions import SelectionMetrics, late_test_metrics
from verify.checks.catalogue.declare import GD_RUNS, PAPER, CheckKind, Context
from verify.checks.catalogue.estimators import draw_check, final_rows, selection_measurement
from verify.checks.evidence import Evidence, stack
from verify.checks.registry import PROBABILITY, Measurement, PaperResult, compare
from verify.measures.intervals import mean_interval, proportion_interval
from verify.measures.regimes import regimes_of


@dataclass(frozen=True)
class PaperDraw:
    """The paper's reported value of a history ``column`` (one run) for ``preset``."""

    preset: str
    value: float
    column: str
    what: str


def paper_value(context: Context, index: int, column: str, what: str) -> PaperDraw:
    """The paper's reported accuracy (``index`` 0: train, 1: test) for the preset."""
    value = context.claims.paper_accuracy[context.preset][index]
    return PaperDraw(context.preset, value, column, what)


def measure_paper_draw(target: PaperDraw, ev: Evidence, claim: float | None = None) -> Measurement:
    """The paper's value as a draw from the GD seeds (:func:`draw_check`)."""
    runs = ev(target.preset, "gd")
    return draw_check(
        target.value if claim is None else claim,
        stack(runs, target.column),
        f"{len(runs)} seeds",
        target.what,
    )


@dataclass(frozen=True)
class Selection:
    """The predicted share of clean (or noisy) samples selecting ``group``, its model
    error and where that came from."""

    preset: str
    group: str
    predicted: float
    noisy: bool
    model_error: float
    source: str


def predicted_selection(context: Context, noisy: bool, group: str = "") -> Selection:
    """The stage-1 selection model's share for ``group``, or (empty ``group``) for the group
    it predicts most samples select, with its error
    (:func:`theory.stage1.predictions.selection_error`; none for the noisy samples of a
    setting predicted not to overfit, whose share of R is the regime's, not the race's)."""
    p = context.prediction
    shares = p.noisy_selection if noisy else p.clean_selection
    chosen = group or max(shares, key=shares.__getitem__)
    if noisy and p.overfitting_ratio <= 1:
        error, source = 0.0, "none: not overfitting, the noisy samples keep R (Theorem 4.1)"
    else:
        found = selection_error(p.model, p.training, noisy, chosen)
        error, source = found.model_error, found.source()
    return Selection(context.preset, chosen, shares[chosen], noisy, error, source)


def measure_selection(target: Selection, ev: Evidence, claim: float | None = None) -> Measurement:
    """The share of the GD seeds' samples selecting the group after 1000 steps."""
    predicted = target.predicted if claim is None else claim
    runs = ev(target.preset, "gd")
    return selection_measurement(
        runs, target.group, predicted, target.noisy, target.model_error, target.source
    )


@dataclass(frozen=True)
class Regime:
    """Theorem 4.1's regime for ``preset``, measured on the runs of kind ``run``."""

    preset: str
    run: str
    regime: str
    label: str


def predicted_regime(context: Context, run: str, label: str) -> Regime:
    """The predicted regime; ``label`` names the horizon in the check's name."""
    return Regime(context.preset, run, context.prediction.regime, label)


def measure_regime(target: Regime, ev: Evidence, claim: float | None = None) -> Measurement:
    """The regime by the mechanism (:func:`verify.measures.regimes.classify_regime`: noisy
    labels fitted, test sequences selecting R) of most seeds is Theorem 4.1's."""
    runs = ev(target.preset, target.run)
    regimes = [regimes_of(row)["regime"] for row in final_rows(runs)]
    agreeing = sum(regime == target.regime for regime in regimes)
    share, interval = proportion_interval(agreeing, len(runs))
    least = 0.5 if claim is None else claim
    return Measurement(
        predicted=least,
        measured=share,
        interval=interval,
        samples=f"{len(runs)} seeds",
        model_error=0.0,
        tolerance=0.0,
        estimator=f"share of seeds whose final state is {target.regime} (Wilson interval)",
        within=interval[0] >= least,
        detail=f"regimes {dict(Counter(regimes))}; one-sided: agrees when the "
        "interval lies above 1/2 (most seeds)",
        at_least=True,
        bound="threshold: most seeds (> 1/2)"
        if claim is None
        else f"threshold: share of seeds > {least:.4g}",
        support=PROBABILITY,
        tolerance_source="none: a one-sided count (the interval's low end at least 1/2)",
    )


@dataclass(frozen=True)
class LateAccuracy:
    """The stage-2 flow's test metrics after ``steps``, for the runs of kind ``run``."""

    preset: str
    run: str
    steps: float
    metrics: SelectionMetrics


def stage2_accuracy(context: Context, run: str, steps: float) -> LateAccuracy:
    """The test accuracy from the stage-2 learned query (signal logit and query norm)
    after ``steps``: the GD map's for GD runs (:func:`theory.stage2.horizon.gd_horizon`),
    the flow's for flow runs (:func:`theory.stage2.predictions.late_test_metrics`)."""
    p = context.prediction
    if run == "gd":
        from theory.stage2.horizon import gd_horizon

        metrics = gd_horizon(p.model, p.training, steps).metrics
    else:
        metrics = late_test_metrics(p.model, p.training, [steps])[0]
    return LateAccuracy(context.preset, run, steps, metrics)


def measure_late_accuracy(
    target: LateAccuracy, ev: Evidence, claim: float | None = None
) -> Measurement:
    """The seeds' population test accuracy against the stage-2 flow's."""
    metrics = target.metrics
    runs = ev(target.preset, target.run)
    accuracy, interval = mean_interval(stack(runs, "population_test_accuracy"))
    return compare(
        metrics.accuracy if claim is None else claim,
        accuracy,
        interval,
        f"{len(runs)} seeds",
        metrics.accuracy_error,
        f"population test accuracy at {target.steps:.0e} steps (seed mean)",
        f"stage 2 ({'GD map' if target.run == 'gd' else 'flow'}): signal logit "
        f"{metrics.beta:.3f}, |q| {metrics.query_norm:.3f}, z {metrics.z:.3f}; argmax limit "
        f"at this z {metrics.argmax_accuracy:.3f}",
        model_error_source="derived: the accuracy's change when beta moves by score noise + "
        "n/d relative, + 3 Monte Carlo standard errors",
        support=PROBABILITY,
    )


TRAIN_ACCURACY = CheckKind(
    id="{preset}.train-accuracy",
    name="train accuracy matches the paper [{preset}]",
    paper=PaperResult(("Figures 3-5",)),
    horizon=PAPER,
    needs=(GD_RUNS,),
    prepare=paper_value,
    measure=measure_paper_draw,
    params={"index": 0, "column": "train_accuracy", "what": "train accuracy"},
)
#: The train accuracy where the paper's value is the clean share, 1 - eta (not
#: overfitting): an untrained model has it too, so the check asks whether the trained
#: seeds still have it.
TRAIN_ACCURACY_CLEAN_SHARE = dataclasses.replace(
    TRAIN_ACCURACY,
    holds_untrained="the paper's value is the clean share, which an untrained model (no noisy "
    "label fitted) has too: the check asks whether trained seeds keep it",
)
#: An untrained model fits no noisy label: its regime is not overfitting, the prediction
#: for the not-overfitting preset; the check asks whether trained seeds keep it.
UNTRAINED_NOT_OVERFITTING = (
    "an untrained model fits no noisy label, so it is not overfitting, as predicted: the "
    "check asks whether trained seeds stay so"
)
TEST_ACCURACY = CheckKind(
    id="{preset}.test-accuracy",
    name="test accuracy matches the paper [{preset}]",
    paper=PaperResult(("Figure 3",)),
    horizon=PAPER,
    needs=(GD_RUNS,),
    prepare=paper_value,
    measure=measure_paper_draw,
    params={"index": 1, "column": "population_test_accuracy", "what": "population test accuracy"},
)
CLEAN_SELECTION = CheckKind(
    id="{preset}.clean-selection",
    name="clean samples select {group} [{preset}]",
    paper=PaperResult(("Theorem 4.1", "Lemma 4.5")),
    horizon=PAPER,
    needs=(GD_RUNS,),
    prepare=predicted_selection,
    measure=measure_selection,
    params={"noisy": False, "group": "R"},
)
NOISY_SELECTION = CheckKind(
    id="{preset}.noisy-selection",
    name="noisy samples select {group} [{preset}]",
    paper=PaperResult(("Theorem 4.1", "Lemma 4.6")),
    horizon=PAPER,
    needs=(GD_RUNS,),
    prepare=predicted_selection,
    measure=measure_selection,
    params={"noisy": True},
)
REGIME_GD = CheckKind(
    id="{preset}.regime-gd",
    name="regime is {regime} ({label}) [{preset}]",
    paper=PaperResult(("Theorem 4.1",)),
    horizon=PAPER,
    needs=(GD_RUNS,),
    prepare=predicted_regime,
    measure=measure_regime,
    params={"run": "gd", "label": "1000 steps"},
)
REGIME_GD_CLEAN_SHARE = dataclasses.replace(REGIME_GD, holds_untrained=UNTRAINED_NOT_OVERFITTING)
STAGE2_ACCURACY_GD = CheckKind(
    id="{preset}.stage2-accuracy-gd",
    name="test accuracy at {steps:.0e} steps from the stage-2 GD map [{preset}]",
    paper=PaperResult(("Lemma 4.8",), "stage 2, this package's mean field"),
    horizon=PAPER,
    needs=(GD_RUNS,),
    prepare=stage2_accuracy,
    measure=measure_late_accuracy,
    params={"run": "gd", "steps": 1000.0},
)

__all__ = [
    "PaperDraw",
    "paper_value",
    "measure_paper_draw",
    "Selection",
    "predicted_selection",
    "measure_selection",
    "Regime",
    "predicted_regime",
    "measure_regime",
    "LateAccuracy",
    "stage2_accuracy",
    "measure_late_accuracy",
    "TRAIN_ACCURACY",
    "TRAIN_ACCURACY_CLEAN_SHARE",
    "TEST_ACCURACY",
    "CLEAN_SELECTION",
    "NOISY_SELECTION",
    "REGIME_GD",
    "REGIME_GD_CLEAN_SHARE",
    "UNTRAINED_NOT_OVERFITTING",
    "STAGE2_ACCURACY_GD",
]
