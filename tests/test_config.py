import math

import pytest

from verify.sim.config import PRESETS, ConfigError, RunConfig, preset


@pytest.mark.parametrize(
    ("changes", "name"),
    [
        ({"d": 0}, "d"), ({"n": -3}, "n"), ({"T": 1}, "T"), ({"n_relevant": 0}, "n_relevant"),
        ({"T": 3, "n_weak_aligned": 2}, "T"), ({"eta": 0.5}, "eta"), ({"eta": -0.1}, "eta"),
        ({"rho": 0.0}, "rho"), ({"rho": 1.0}, "rho"), ({"alpha": math.nan}, "alpha"),
        ({"mu_norm": math.inf}, "mu_norm"), ({"engine": "gpu"}, "engine"),
        ({"flip": "random"}, "flip"), ({"sigma_eps": 0.0}, "sigma_eps"),
        ({"d": 2.5}, "d"), ({"steps": True}, "steps"), ({"init": "zeros"}, "init"),
        ({"mp_dps": 5}, "mp_dps"), ({"log_every": 1, "steps": 10**9}, "log_every"),
    ],
)
def test_invalid_values_name_parameter_value_and_range(changes, name):
    with pytest.raises(ConfigError) as info:
        RunConfig(**changes)
    message = str(info.value)
    assert message.startswith(f"{name}=")
    assert "allowed" in message


def test_presets_are_the_papers_settings():
    assert {name: (preset(name).d, preset(name).mu_norm) for name in PRESETS} == {
        "harmful": (5000, 5.0), "benign": (2000, 20.0), "not-overfitting": (1000, 100.0)}
    config = preset("benign")
    assert (config.n, config.T, config.rho, config.eta, config.alpha, config.steps) == (
        20, 8, 0.1, 0.2, 5e-3, 1000)
    assert config.n_irrelevant == 5


def test_round_trip_and_unknown_fields():
    config = preset("harmful", seed=3)
    assert RunConfig.from_dict(config.to_dict()) == config
    with pytest.raises(ConfigError, match="unknown"):
        RunConfig.from_dict({"dimension": 3})


def test_default_linear_log_interval_gives_about_100_points():
    assert RunConfig(steps=1000).linear_log_interval == 10
    assert RunConfig(steps=10**12, engine="flow").linear_log_interval == 10**10
