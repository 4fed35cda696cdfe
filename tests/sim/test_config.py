import math

import pytest

from theory.foundation.data_model import DataModel, Training
from theory.foundation.validation import InvalidParameter
from verify.sim.config import PRESETS, RunConfig, preset


@pytest.mark.parametrize(
    ("changes", "name"),
    [
        ({"d": 0}, "d"),
        ({"n": -3}, "n"),
        ({"T": 1}, "T"),
        ({"n_relevant": 0}, "n_relevant"),
        ({"T": 3, "n_weak_aligned": 2}, "T"),
        ({"eta": 0.5}, "eta"),
        ({"eta": -0.1}, "eta"),
        ({"rho": 0.0}, "rho"),
        ({"rho": 1.0}, "rho"),
        ({"alpha": math.nan}, "alpha"),
        ({"mu_norm": math.inf}, "mu_norm"),
        ({"engine": "gpu"}, "engine"),
        ({"flip": "random"}, "flip"),
        ({"sigma_eps": 0.0}, "sigma_eps"),
        ({"d": 2.5}, "d"),
        ({"steps": True}, "steps"),
        ({"init": "zeros"}, "init"),
        ({"mp_dps": 5}, "mp_dps"),
        ({"mp_flow_tol": 0.0}, "mp_flow_tol"),
        ({"engine": "mp-flow", "mp_dps": 30, "mp_flow_tol": 1e-25}, "mp_flow_tol"),
        ({"log_every": 1, "steps": 10**9}, "log_every"),
        ({"mu_norm": 1e150}, "mu_norm"),
        ({"n": 2, "eta": 0.3}, "eta"),
        ({"log_geometric": 10**9}, "log_geometric"),
        ({"dimension": 3}, "dimension"),
    ],
)
def test_invalid_values_name_parameter_value_and_range(changes, name):
    with pytest.raises(InvalidParameter) as info:
        RunConfig.build(**changes)
    message = str(info.value)
    assert message.startswith(f"{name}=")
    assert " is invalid: allowed " in message
    assert info.value.name == name


def test_presets_are_the_papers_settings():
    assert {name: (preset(name).model.d, preset(name).model.mu_norm) for name in PRESETS} == {
        "harmful": (5000, 5.0),
        "benign": (2000, 20.0),
        "not-overfitting": (1000, 100.0),
    }
    config = preset("benign")
    model, training = config.model, config.training
    assert (model.n, model.T, model.rho, model.eta, training.alpha, training.steps) == (
        20,
        8,
        0.1,
        0.2,
        5e-3,
        1000,
    )
    assert model.n_irrelevant == 5 and model.noisy_count == 4


def test_composition_and_routing_by_flat_name():
    config = RunConfig.build(d=300, alpha=1e-3, engine="flow", test_size=7, seed=4)
    assert isinstance(config.model, DataModel) and isinstance(config.training, Training)
    assert (
        config.model.d,
        config.training.alpha,
        config.solver.engine,
        config.recording.test_size,
        config.seed,
    ) == (300, 1e-3, "flow", 7, 4)
    assert config.flat()["d"] == 300 and config.flat()["engine"] == "flow"
    changed = config.replace(mu_norm=3.0)
    assert changed.model.mu_norm == 3.0 and changed.model.d == 300


def test_integers_accept_integral_floats_and_reals_become_floats():
    config = RunConfig.build(steps=1e13, d=1e3, mu_norm=5)
    assert config.training.steps == 10**13 and isinstance(config.training.steps, int)
    assert config.model.d == 1000 and isinstance(config.model.mu_norm, float)


def test_round_trip_nested_and_flat():
    config = preset("harmful", seed=3)
    assert RunConfig.from_dict(config.to_dict()) == config
    assert RunConfig.from_dict(config.flat()) == config
    with pytest.raises(InvalidParameter, match="dimension=3 is invalid"):
        RunConfig.from_dict({"dimension": 3})


def test_default_linear_log_interval_gives_about_100_points():
    assert RunConfig.build(steps=1000).linear_log_interval == 10
    assert RunConfig.build(steps=10**12, engine="flow").linear_log_interval == 10**10


def test_kappa0_of_the_default_initialisation_is_one_third():
    assert math.isclose(RunConfig().kappa0, 1 / 3)
    assert math.isclose(RunConfig.build(init="gaussian").kappa0, 1.0)
