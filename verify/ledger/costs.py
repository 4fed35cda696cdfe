"""Predicted costs of what has not been run, computed (never typed): from the committed
measurements, or from operation counts at the engines' stated rates
(:mod:`verify.sim.engines.traits`: assumptions of the order of what the engines reach,
not measurements)."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from verify.sim.config import RunConfig
from verify.sim.engines.registry import engine_traits
from verify.sim.engines.traits import FLOAT64_RATE, Operations
from verify.sim.resources import duration

#: The rebuttal's heat map: eta from 0 to 0.2 in steps of 0.01, at n = 200.
HEATMAP_ETAS = 21
HEATMAP_N = 200
HEATMAP_SEEDS = 3
HEATMAP_PROTOCOL = "fullbatch-adam"

#: The appendix's one-layer encoder as the authors' code runs it: width d = m = 2000, n = 20
#: sequences of T = 8 data tokens and a [CLS] token, 1000 full-batch steps.
ENCODER = {"d": 2000, "m": 2000, "n": 20, "tokens": 9, "steps": 1000}


def heatmap_cost(root: Path) -> str:
    """The heat map over eta: for each data set, the measured seconds per member of the
    full-batch protocol's n = 200 groups (``results/realworld/realworld.json``) times
    21 noise levels and 3 seeds."""
    record = json.loads((root / "results/realworld/realworld.json").read_text(encoding="utf-8"))
    per_member: dict[str, float] = {}
    for group in record["group_seconds"]:
        if group["protocol"] == HEATMAP_PROTOCOL and group["n"] == HEATMAP_N:
            per_member[group["dataset"]] = group["seconds"] / group["members"]
    seconds = sum(per_member.values()) * HEATMAP_ETAS * HEATMAP_SEEDS
    return (
        f"about {duration(seconds)} on one shared core: {HEATMAP_ETAS} noise levels x "
        f"{HEATMAP_SEEDS} seeds on each of {len(per_member)} data sets at n = {HEATMAP_N} "
        f"under {HEATMAP_PROTOCOL}, at the seconds per member its n = {HEATMAP_N} groups "
        "took (results/realworld/realworld.json)"
    )


def encoder_multiply_adds(d: int, m: int, n: int, tokens: int, steps: int) -> float:
    r"""Multiply-adds of full-batch training of a one-layer encoder: per token the
    :math:`d \times 3d` projection and the :math:`d \times m` and :math:`m \times d`
    feed-forward maps, per sequence the attention's two :math:`T \times T \times d`
    products; the backward pass counted as twice the forward one."""
    per_token = 3 * d * d + 2 * d * m
    per_sequence = tokens * per_token + 2 * tokens * tokens * d
    return 3.0 * n * per_sequence * steps


def encoder_cost(root: Path) -> str:
    """The encoder at the authors' settings, at the stated float64 rate."""
    work = encoder_multiply_adds(**ENCODER)
    seconds = Operations(float64=work).seconds
    return (
        f"about {duration(seconds)} a run on one core ({work:.2g} multiply-adds at the stated "
        f"{FLOAT64_RATE:.0e} a second) at d = m = {ENCODER['d']}, n = {ENCODER['n']}, "
        f"{ENCODER['steps']} steps; a model this package does not have yet"
    )


def plan_seconds(points: Iterable[Mapping[str, Any]]) -> tuple[float, int]:
    """The runs of an evidence plan's points (``verify.checks.evidence.EvidencePlan``):
    their predicted seconds on one core at the engines' stated rates, and their number
    (boundary scans not counted)."""
    seconds, runs = 0.0, 0
    for point in points:
        for kind in ("gd", "flow", "event"):
            for values in point.get(kind, []):
                config = RunConfig.from_dict(dict(values))
                seconds += engine_traits(config.solver.engine).cost(config).seconds
                runs += 1
    return seconds, runs


def check_plan_cost(root: Path) -> str:
    """The evidence of the full ``verify check`` plan, at the engines' stated rates: the
    cost of deciding a claim on a model variant by the same checks."""
    return _check_plan_cost()


@functools.cache
def _check_plan_cost() -> str:
    from verify.checks.suite import FULL

    seconds, runs = plan_seconds(FULL.points())
    return (
        f"the base checks' evidence once per variant setting: {runs} runs and "
        f"{FULL.scan_seeds} boundary scans, about {duration(seconds)} of one core at the "
        "engines' stated rates (scans not counted)"
    )


__all__ = [
    "HEATMAP_ETAS",
    "ENCODER",
    "heatmap_cost",
    "encoder_multiply_adds",
    "encoder_cost",
    "plan_seconds",
    "check_plan_cost",
]
