"""Fixtures of the checks' tests: check results made by hand for the report's tests
(``hand_results``): a two-sided agreement, an accuracy whose prediction interval runs past
1, a threshold on the share of seeds, a one-sided bound, a registered disagreement with its
numbers, and a check without a finite estimate."""

from __future__ import annotations

import math

import pytest

from verify.checks.registry import (
    AGREE,
    PROBABILITY,
    Check,
    CheckResult,
    Expected,
    Measurement,
    PaperResult,
    Verdict,
    compare,
)


def result(
    id: str, name: str, m: Measurement, verdict: Verdict = Verdict.AGREES, reason: str = ""
) -> CheckResult:
    registered = verdict in (Verdict.DISAGREES_AS_REGISTERED, Verdict.NOW_AGREES)
    expected = Expected.disagreement(reason) if registered else AGREE
    check = Check(
        id=id,
        name=name,
        paper=PaperResult(("Theorem 4.1",)),
        horizon="1000 GD steps",
        expected=expected,
        measure=lambda evidence, claim=None: m,
    )
    numbers = {"measured": m.measured, "predicted": m.predicted} if reason else {}
    return CheckResult(check, m, verdict, reason, numbers)


def one_sided(predicted: float, measured: float, interval, bound: str, support=None):
    return Measurement(
        predicted=predicted,
        measured=measured,
        interval=interval,
        samples="25 seeds",
        model_error=0.0,
        tolerance=0.0,
        estimator="one-sided estimator",
        within=interval[0] >= predicted,
        at_least=True,
        bound=bound,
        support=support,
    )


def results() -> list[CheckResult]:
    accuracy = Measurement(
        predicted=1.0,
        measured=0.9969,
        interval=(0.9714, 1.022),
        samples="32 seeds",
        model_error=0.0,
        tolerance=0.0255,
        estimator="train accuracy: seed mean; interval: 95% prediction interval of one run",
        within=True,
        support=PROBABILITY,
    )
    return [
        result(
            "benign.clean-gap-velocity",
            "initial clean gap velocity R - I [benign]",
            compare(2.84, 2.79, (2.70, 2.88), "32 seeds", 0.05, "seed mean"),
        ),
        result("benign.train-accuracy", "train accuracy matches the paper [benign]", accuracy),
        result(
            "benign.regime-gd",
            "regime is benign (1000 steps) [benign]",
            one_sided(0.5, 1.0, (0.8668, 1.0), "threshold: most seeds (> 1/2)", PROBABILITY),
        ),
        result(
            "benign.delayed-generalisation",
            "generalisation arrives long after fitting [benign]",
            one_sided(100.0, 1.462e4, (5522.0, 3.868e4), "bound: at least 100x after fitting"),
        ),
        result(
            "benign.stage1-end",
            "stage-1 end: every noisy sample fitted [benign]",
            compare(1.0, 0.41, (0.33, 0.52), "64 seeds", 0.25, "median ratio"),
            Verdict.DISAGREES_AS_REGISTERED,
            "the preconditioner grows along the run",
        ),
        result(
            "harmful.gap-growth",
            "a check without a finite estimate [harmful]",
            compare(2.3, math.nan, (math.nan, math.nan), "0 seeds", 0.1, "slope"),
            Verdict.NEW_FAILURE,
        ),
    ]


@pytest.fixture
def hand_results() -> list[CheckResult]:
    return results()
