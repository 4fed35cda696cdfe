"""PyTorch's default initialisation of the authors' layers, drawn from a seeded NumPy
generator."""

import math

import numpy as np

from verify.encoder.config import EncoderConfig, EncoderSettings
from verify.encoder.parameters import initial_parameters
from verify.encoder.train import encoder_parameters
from verify.sim.config import RunConfig


def test_bounds_and_constants_are_pytorchs_defaults():
    d, m = 300, 200
    params = initial_parameters(d, m, np.random.default_rng(0))
    bounds = {
        "qkv": 1 / math.sqrt(d),
        "fc1_weight": 1 / math.sqrt(d),
        "fc1_bias": 1 / math.sqrt(d),
        "fc2_weight": 1 / math.sqrt(m),
        "fc2_bias": 1 / math.sqrt(m),
        "head_weight": 1 / math.sqrt(d),
    }
    for name, bound in bounds.items():
        values = getattr(params, name)
        assert np.abs(values).max() <= bound
        # uniform on (-b, b): variance b^2/3; the large arrays pin it to a few percent
        if values.size > 10_000:
            assert abs(np.var(values) / (bound**2 / 3) - 1) < 0.05, name
    assert params.qkv.shape == (3 * d, d) and params.fc2_weight.shape == (d, m)
    for name in ("ln1", "ln2", "lnf"):
        assert np.all(getattr(params, f"{name}_weight") == 1.0)
        assert np.all(getattr(params, f"{name}_bias") == 0.0)
    assert abs(np.mean(params.cls)) < 0.25 and abs(np.var(params.cls) - 1) < 0.25


def test_same_seed_same_parameters_other_seed_other_parameters():
    config = EncoderConfig(RunConfig.build(d=40, seed=7), EncoderSettings(mlp_dim=30))
    first, again = encoder_parameters(config), encoder_parameters(config)
    other = encoder_parameters(
        EncoderConfig(RunConfig.build(d=40, seed=8), EncoderSettings(mlp_dim=30))
    )
    for name, array in first.items():
        assert np.array_equal(array, getattr(again, name)), name
    assert not np.array_equal(first.qkv, other.qkv)
