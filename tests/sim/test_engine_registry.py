"""The engine registry is the one place engines are declared: every consumer derives from
it, every registered class binds its own entry, and the README's table is its rendering."""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys
from pathlib import Path

import pytest

from theory.foundation.data_model import INIT_KINDS
from theory.foundation.validation import InvalidParameter
from verify.experiments.settings import BOUNDARY_ENGINES, BoundarySettings
from verify.sim.config import RunConfig, Solver, preset
from verify.sim.engines import engine_class, engine_names, engine_traits, engines_where
from verify.sim.engines.base import Engine
from verify.sim.engines.registry import REGISTRY, engine_help
from verify.sim.resources import engine_table, estimated_bytes

ROOT = Path(__file__).resolve().parents[2]


def test_names_are_unique_and_the_solver_offers_exactly_them():
    assert len(set(engine_names())) == len(REGISTRY)
    engine = next(f for f in dataclasses.fields(Solver) if f.name == "engine")
    assert engine.metadata["constraint"].choices == engine_names()
    assert engine.metadata["help"] == engine_help()
    for name in engine_names():
        assert f"{name}: {engine_traits(name).description}" in engine_help()


@pytest.mark.parametrize("name", engine_names())
def test_each_registered_class_binds_its_own_entry(name):
    cls = engine_class(name)
    assert issubclass(cls, Engine)
    assert "traits" in vars(cls), f"{cls.__name__} inherits another engine's traits"
    assert cls.traits is engine_traits(name)


@pytest.mark.parametrize("traits", REGISTRY, ids=lambda traits: traits.name)
def test_traits_are_consistent(traits):
    assert traits.integrates in ("gd", "flow")
    assert traits.exact in ("per draw", "in law")
    assert traits.precision in ("float64", "mpmath")
    assert traits.inits and set(traits.inits) <= set(INIT_KINDS)
    assert traits.tokens or not (traits.test_set or traits.query)
    assert traits.exact == "per draw" or not traits.tokens
    assert "\n" not in traits.description and traits.description


@pytest.mark.parametrize("name", engine_names())
def test_state_and_cost_are_positive_and_grow_with_the_problem(name):
    traits = engine_traits(name)
    config = preset("benign", engine=name, init=traits.inits[0], test_size=0)
    bigger = config.replace(n=2 * config.model.n, d=2 * config.model.d)
    assert 0 < traits.state_bytes(config) < traits.state_bytes(bigger)
    cost = traits.cost(config)
    assert 0 < cost.seconds < math.inf and cost.steps > 0
    assert cost.seconds < traits.cost(bigger).seconds
    longer = config.replace(steps=10 * config.training.steps)
    assert cost.seconds < traits.cost(longer).seconds


def test_an_mpmath_run_costs_more_than_its_float64_twin():
    for slow, fast in (("mp", "reduced"), ("mp-flow", "flow")):
        config = preset("benign", d=60, n=4, T=4, engine=slow)
        assert (
            engine_traits(slow).cost(config).seconds
            > 100 * engine_traits(fast).cost(config).seconds
        )


#: The engines before the registry, and the sets the code named by hand then.
HAND_LISTED = ("dense", "reduced", "mp", "flow", "mp-flow", "dfree", "dfree-flow")


def among_hand_listed(names):
    return tuple(name for name in names if name in HAND_LISTED)


def test_queries_give_the_sets_the_code_named_by_hand():
    """On the engines that existed then (an engine added since joins by its traits)."""
    assert among_hand_listed(engine_names()) == HAND_LISTED
    assert among_hand_listed(engines_where(integrates="flow")) == ("flow", "mp-flow", "dfree-flow")
    assert among_hand_listed(engines_where(exact="in law")) == ("dfree", "dfree-flow")
    tokens = ("dense", "reduced", "mp", "flow", "mp-flow")
    assert among_hand_listed(engines_where(tokens=True)) == tokens
    assert among_hand_listed(BOUNDARY_ENGINES) == ("reduced", "flow", "dfree", "dfree-flow")
    engine = next(f for f in dataclasses.fields(BoundarySettings) if f.name == "engine")
    assert engine.metadata["constraint"].choices == BOUNDARY_ENGINES


def test_an_engine_refuses_an_initialisation_it_does_not_take_with_one_message():
    refusal = engine_traits("dfree").cannot_run(RunConfig.build(engine="reduced"))
    assert refusal is not None and refusal.parameter == "init"
    assert engine_traits("reduced").cannot_run(RunConfig.build(init="gaussian")) is None
    with pytest.raises(InvalidParameter) as info:
        RunConfig.build(engine="dfree")
    assert str(info.value) == (
        "init='uniform' is invalid: allowed gaussian with engine dfree (its law needs a "
        "rotation-invariant W0; engines reduced and flow take the uniform init)"
    )


def test_the_estimate_counts_tokens_only_for_engines_that_hold_them():
    config = preset("benign", init="gaussian", test_size=0)
    for name in engine_names():
        on = config.replace(engine=name)
        with_data = estimated_bytes(on) - engine_traits(name).state_bytes(on)
        grows = estimated_bytes(on.replace(d=4000)) - engine_traits(name).state_bytes(
            on.replace(d=4000)
        )
        assert (grows > with_data) == engine_traits(name).tokens


def test_the_readme_table_is_the_registry_rendered():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("<!-- engines -->", 1)[1].split("<!-- /engines -->", 1)[0]
    assert block.strip() == engine_table(), "README engine table is stale; it should read:\n" + (
        engine_table()
    )


def test_reading_the_registry_imports_no_engine():
    code = (
        "import sys, verify.sim.config, verify.sim.resources, verify.experiments.settings\n"
        "from verify.sim.engines import engine_traits\n"
        "engine_traits('flow').cost(verify.sim.config.preset('benign'))\n"
        "heavy = [m for m in ('scipy', 'mpmath', 'verify.sim.engines.base') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
