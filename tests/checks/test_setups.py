"""The cheaper ways the evidence is planned and set up give the numbers of the plain ones,
bit for bit: a seed whose only run is the fit time's reads the kernel alone, and the plan's
points are built once per (preset, kind)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from verify.checks.catalogue import Selection, plan_for
from verify.checks.evidence import EvidencePlan, fit_time
from verify.checks.setups import kernel_statistics
from verify.checks.suite import FULL, QUICK
from verify.sim.config import RunConfig, preset
from verify.sim.data import generate
from verify.sim.engines.base import reduced_setup


@pytest.mark.parametrize("d", [300, 1100])  # one row block of W0; three, the last short
def test_the_kernel_alone_is_the_full_set_ups_bit_for_bit(d):
    config = preset("benign", d=d, seed=3, test_size=0)
    data = generate(config)
    full = reduced_setup(config, data).statistics()
    kernel = kernel_statistics(config, data)
    assert np.array_equal(kernel.K, full.K) and np.array_equal(kernel.gram, full.gram)
    assert np.isnan(kernel.Q).all() and np.isnan(kernel.invariant_scale)


def test_a_fit_time_on_the_kernel_alone_is_the_full_set_ups():
    plan = plan_for(Selection(("benign",), caps={"gd": 1, "flow": 0, "event": 2, "scan": 0}))
    point = next(p for p in plan.points() if p["event"] and not p["gd"])
    draw, config = RunConfig.from_dict(point["draws"][0]), RunConfig.from_dict(point["event"][0])
    data = generate(draw)
    setup = reduced_setup(draw, data)
    at = fit_time(config, data, None, kernel_statistics(draw, data))
    assert at is not None and at == fit_time(config, data, setup, setup.statistics())


def built_one_by_one(plan: EvidencePlan) -> list[dict]:
    """The plan's points with every configuration built on its own."""
    points = []
    for name in plan.presets:
        total = max(plan.seeds(name, kind) for kind in ("gd", "flow", "event"))
        for first in range(0, total, plan.group_size):
            seeds = range(first, min(first + plan.group_size, total))
            runs = {
                kind: [plan.config(name, kind, s).to_dict() for s in seeds]
                for kind in ("gd", "flow", "event")
            }
            for kind, values in runs.items():  # each kind on its prefix of the seeds
                del values[max(plan.seeds(name, kind) - first, 0) :]
            points.append(
                {
                    "preset": name,
                    "kind": "seeds",
                    "fit_time": name in plan.path_presets,
                    "draws": [plan.config(name, "gd", s).to_dict() for s in seeds],
                    **runs,
                }
            )
    for seed in range(plan.scan_seeds):
        configs = [c.to_dict() for c in plan.scan_configs(seed)]
        points.append({"preset": "benign", "kind": "scan", "seed": seed, "configs": configs})
    return points


@pytest.mark.parametrize("plan", [FULL, QUICK, EvidencePlan(group_size=5, scan_seeds=2)])
def test_the_points_are_those_of_configurations_built_one_by_one(plan):
    points = plan.points()
    assert json.dumps(points, sort_keys=True) == json.dumps(built_one_by_one(plan), sort_keys=True)
    again = plan.points()
    assert again == points and all(a is b for a, b in zip(again, points, strict=True))
