"""Run every registered check: plan the evidence, collect it in parallel, measure, judge.

The plans are derived from the checks' needs (:func:`verify.checks.catalogue.plan_for`):
``quick`` checks the benign preset alone with fewer seeds (the selection checks still rest
on at least 100 noisy samples) and no boundary scans; the full set checks the three presets.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from theory.stage1.predictions import Stage1Predictions, stage1_predictions
from verify.checks.catalogue import Claims, Selection, answerable, bind_checks, plan_for
from verify.checks.collection import EvidenceStore, collect_evidence
from verify.checks.evidence import Evidence, EvidencePlan, untrained
from verify.checks.registry import Check, CheckResult, can_fail
from verify.sim.config import PRESETS, preset

#: Which checks run: every preset's; or the benign preset's with 25 GD seeds (100 noisy
#: samples), 6 flows and no boundary scans.
FULL_SELECTION = Selection(tuple(PRESETS))
QUICK_SELECTION = Selection(("benign",), caps={"gd": 25, "flow": 6, "scan": 0})
#: The evidence plans they need.
FULL = plan_for(FULL_SELECTION)
QUICK = plan_for(QUICK_SELECTION)


def predictions_for(plan: EvidencePlan) -> dict[str, Stage1Predictions]:
    """The theory's predictions for each preset of the plan (seed-free)."""
    out = {}
    for name in plan.presets:
        config = preset(name)
        out[name] = stage1_predictions(config.model, config.training)
    return out


def collect(
    plan: EvidencePlan,
    executor: Any = None,
    progress: Callable[[str, int, int], None] | None = None,
    store: EvidenceStore | None = None,
) -> Evidence:
    """The plan's runs, on ``executor`` (a process pool of two by default), each point
    kept in ``store`` as it finishes (and read from it when a rerun finds it there)."""
    from verify.runtime.executors import make_executor

    owned = executor is None
    executor = executor or make_executor(workers=2)
    try:
        return collect_evidence(
            plan,
            executor,
            store,
            None if progress is None else lambda done, total: progress("runs", done, total),
        )
    finally:
        if owned:
            executor.close()


def checks_for(plan: EvidencePlan) -> list[Check]:
    """The registered checks the plan's evidence can answer, bound to the predictions."""
    return bind_checks(answerable(plan), Claims(predictions_for(plan)))


def judge(
    checks: list[Check],
    evidence: Evidence,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[CheckResult]:
    """Every check measured on ``evidence`` and given its verdict."""
    results = []
    for check in checks:
        results.append(check.run(evidence))
        if progress:
            progress("checks", len(results), len(checks))
    return results


def run_checks(
    quick: bool = False,
    executor: Any = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[CheckResult]:
    """Collect the evidence and run every registered check. ``progress(stage, done,
    total)`` follows the runs, then the checks."""
    plan = QUICK if quick else FULL
    return judge(checks_for(plan), collect(plan, executor, progress), progress)


def mutations(checks: list[Check], evidence: Any, blank: Any = None) -> list[dict[str, Any]]:
    """Each check on wrong inputs: a wrong prediction (:func:`can_fail`: the measured value
    accepted, a value beyond the tolerance rejected), and an untrained simulation
    (``blank``; by default :func:`untrained` of ``evidence``), which every check of what
    training does must reject."""
    blank = untrained(evidence) if blank is None else blank
    rows = []
    for check in checks:
        row = can_fail(check, evidence)
        row["untrained_rejected"] = not check.measure(blank, None).within
        row["untrained_applies"] = not check.holds_untrained
        rows.append(row)
    return rows


def mutations_ok(row: dict[str, Any]) -> bool:
    """A check fails on each wrong input it applies to."""
    return row["ok"] and (row["untrained_rejected"] or not row["untrained_applies"])


__all__ = [
    "run_checks",
    "collect",
    "checks_for",
    "judge",
    "mutations",
    "mutations_ok",
    "FULL",
    "QUICK",
    "FULL_SELECTION",
    "QUICK_SELECTION",
    "predictions_for",
]
