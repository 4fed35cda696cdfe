"""Run every registered check: plan the evidence, collect it in parallel, measure, judge.

``quick`` checks the benign preset alone with fewer seeds (the selection checks still
rest on at least 100 noisy samples); the full set checks the three presets.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from theory.predictions import Predictions, predict
from verify.checks.catalogue import Claims, catalogue
from verify.checks.evidence import Evidence, EvidencePlan
from verify.checks.registry import CheckResult
from verify.sim.config import PRESETS, preset

#: Evidence plans: (presets, GD seeds, flow seeds). 25 GD seeds give 100 noisy samples.
FULL = EvidencePlan(presets=tuple(PRESETS), gd_seeds=32, flow_seeds=12, scan_seeds=8)
QUICK = EvidencePlan(presets=("benign",), gd_seeds=25, flow_seeds=6, scan_seeds=0)


def predictions_for(plan: EvidencePlan) -> dict[str, Predictions]:
    """The theory's predictions for each preset of the plan (seed-free)."""
    out = {}
    for name in plan.presets:
        config = preset(name)
        out[name] = predict(config.model, config.training)
    return out


def run_checks(
    quick: bool = False,
    executor: Any = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> list[CheckResult]:
    """Collect the evidence (on ``executor``: a process pool by default) and run every
    registered check. ``progress(stage, done, total)`` follows the runs, then the checks."""
    from verify.experiments.sweep import make_executor

    plan = QUICK if quick else FULL
    owned = executor is None
    executor = executor or make_executor(workers=2)
    try:
        evidence = Evidence.collect(
            plan,
            executor,
            None if progress is None else lambda done, total, _: progress("runs", done, total),
        )
    finally:
        if owned:
            executor.close()
    checks = catalogue(plan.presets, Claims(predictions_for(plan)), scans=plan.scan_seeds > 0)
    results = []
    for check in checks:
        results.append(check.run(evidence))
        if progress:
            progress("checks", len(results), len(checks))
    return results


__all__ = ["run_checks", "FULL", "QUICK", "predictions_for"]
