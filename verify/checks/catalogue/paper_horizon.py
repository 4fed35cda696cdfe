r"""Checks at the paper's horizon (1000 GD steps): the paper's own accuracies, which token
groups the training samples select, the regime, and the stage-2 flow's test accuracy.
The regime and the stage-2 accuracy are measured the same way on the long flows
(:mod:`verify.checks.catalogue.long_horizon` declares those)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from theory.stage2.predictions import SelectionMetrics, late_test_metrics
from verify.checks.catalogue.declare import GD_RUNS, PAPER, CheckKind, Context
from verify.checks.catalogue.estimators import draw_check, final_rows, selection_measurement
from verify.checks.evidence import Evidence, stack
from verify.checks.registry import Measurement, PaperResult, compare
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
    """The predicted share of clean (or noisy) samples selecting ``group``."""

    preset: str
    group: str
    predicted: float
    noisy: bool


def predicted_selection(context: Context, noisy: bool, group: str = "") -> Selection:
    """The stage-1 selection model's share for ``group``, or (empty ``group``) for the group
    it predicts most samples select."""
    p = context.prediction
    shares = p.noisy_selection if noisy else p.clean_selection
    chosen = group or max(shares, key=shares.__getitem__)
    return Selection(context.preset, chosen, shares[chosen], noisy)


def measure_selection(target: Selection, ev: Evidence, claim: float | None = None) -> Measurement:
    """The share of the GD seeds' samples selecting the group after 1000 steps."""
    predicted = target.predicted if claim is None else claim
    return selection_measurement(ev(target.preset, "gd"), target.group, predicted, target.noisy)


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
    )


@dataclass(frozen=True)
class LateAccuracy:
    """The stage-2 flow's test metrics after ``steps``, for the runs of kind ``run``."""

    preset: str
    run: str
    steps: float
    metrics: SelectionMetrics


def stage2_accuracy(context: Context, run: str, steps: float) -> LateAccuracy:
    """The test accuracy from the stage-2 flow's learned query (signal logit and query
    norm, :func:`theory.stage2.predictions.late_test_metrics`) after ``steps``."""
    p = context.prediction
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
        f"stage-2 flow: signal logit {metrics.beta:.3f}, |q| {metrics.query_norm:.3f}, "
        f"z {metrics.z:.3f}; argmax limit at this z {metrics.argmax_accuracy:.3f}",
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
STAGE2_ACCURACY_GD = CheckKind(
    id="{preset}.stage2-accuracy-gd",
    name="test accuracy at {steps:.0e} steps from the stage-2 flow [{preset}]",
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
    "TEST_ACCURACY",
    "CLEAN_SELECTION",
    "NOISY_SELECTION",
    "REGIME_GD",
    "STAGE2_ACCURACY_GD",
]
