"""Predicted costs of what has not been run, computed (never typed): from the committed
measurements, or from operation counts at the engines' stated rates
(:mod:`verify.sim.engines.traits`: assumptions of the order of what the engines reach,
not measurements)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from verify.sim.config import RunConfig
from verify.sim.engines.registry import engine_traits
from verify.sim.resources import duration

#: The rebuttal's heat map: eta from 0 to 0.2 in steps of 0.01, at n = 200.
HEATMAP_ETAS = 21
HEATMAP_N = 200
HEATMAP_SEEDS = 2
HEATMAP_PROTOCOL = "fullbatch-adam"
HEATMAP_DATASETS = ("mnist", "rotten-tomatoes", "tweets")


def heatmap_cost(root: Path) -> str:
    """The heat map over eta: for each data set, the measured seconds per member of the
    full-batch protocol's n = 200 groups (``results/realworld/realworld.json``) times
    21 noise levels and 3 seeds; none where the record is not in this tree (an installed
    package without its repository's results)."""
    path = root / "results/realworld/realworld.json"
    if not path.is_file():
        return f"not computable here: {path.relative_to(root)} is not in this tree"
    record = json.loads(path.read_text(encoding="utf-8"))
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


__all__ = [
    "HEATMAP_DATASETS",
    "HEATMAP_ETAS",
    "HEATMAP_N",
    "HEATMAP_PROTOCOL",
    "HEATMAP_SEEDS",
    "heatmap_cost",
    "plan_seconds",
]
