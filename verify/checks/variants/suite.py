"""Run the variants' checks: plan the runs from the checks' needs, collect them in
parallel, measure, judge; and each check on wrong inputs (a shifted prediction, an
untrained simulation)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from theory.stage1.predictions import stage1_predictions
from verify.checks.catalogue.declare import Claims
from verify.checks.registry import Check, CheckResult
from verify.checks.suite import mutations as on_wrong_inputs
from verify.checks.variants.catalogue import FULL, PRESET, QUICK, checks_for
from verify.checks.variants.runs import VariantEvidence, VariantPlan, untrained
from verify.sim.config import preset


def claims() -> Claims:
    """The theory's predictions for the checks' preset."""
    config = preset(PRESET)
    return Claims({PRESET: stage1_predictions(config.model, config.training)})


def collect(
    plan: VariantPlan, executor: Any = None, progress: Callable[[int, int], None] | None = None
) -> VariantEvidence:
    """The plan's runs on ``executor`` (a process pool of two by default)."""
    from verify.runtime.executors import make_executor

    owned = executor is None
    executor = executor or make_executor(workers=2)
    try:
        return VariantEvidence.collect(plan, executor, progress)
    finally:
        if owned:
            executor.close()


def judge(checks: list[Check], evidence: VariantEvidence) -> list[CheckResult]:
    """Every check measured on ``evidence`` and given its verdict."""
    return [check.run(evidence) for check in checks]


def run_variants(
    quick: bool = False,
    executor: Any = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[list[CheckResult], list[Check], VariantEvidence]:
    """Collect the runs and run every variant check: the results, the checks and the
    evidence (``progress(done, total)`` follows the runs)."""
    checks = checks_for(claims())
    evidence = collect(QUICK if quick else FULL, executor, progress)
    return judge(checks, evidence), checks, evidence


def mutations(checks: list[Check], evidence: VariantEvidence) -> list[dict[str, Any]]:
    """Each check on wrong inputs (:func:`verify.checks.suite.mutations`), the untrained
    simulation being :func:`~verify.checks.variants.runs.untrained`'s."""
    return on_wrong_inputs(checks, evidence, untrained(evidence))


__all__ = ["claims", "collect", "judge", "run_variants", "mutations"]
