"""The variants' draws: streams appended after the base four leave those four's numbers as
they were; at the base values nothing extra is drawn and the data are bit for bit the same;
per-example rho, the one-step head and the FFN readout come from their own streams."""

from __future__ import annotations

import math

import numpy as np
import pytest

from theory.foundation import sampling
from theory.foundation.data_model import DataModel, Training

BASE_STREAMS = ("train", "test", "init", "flips")


def old_streams(seed: int) -> dict[str, np.random.Generator]:
    """The sampler's streams as they were: four children spawned from the seed."""
    children = np.random.SeedSequence(seed).spawn(4)
    return {name: np.random.default_rng(c) for name, c in zip(BASE_STREAMS, children, strict=True)}


@pytest.mark.parametrize("seed", [0, 11, 2**40 + 3])
def test_the_four_base_streams_are_unchanged_and_the_new_ones_differ(seed):
    new, old = sampling.random_streams(seed), old_streams(seed)
    assert sampling.STREAMS[:4] == BASE_STREAMS
    assert set(sampling.STREAMS[4:]) == {"rho", "head", "readout"}
    draws = {name: new[name].standard_normal(64) for name in sampling.STREAMS}
    for name in BASE_STREAMS:
        assert draws[name].tobytes() == old[name].standard_normal(64).tobytes()
    firsts = [draws[name][0] for name in sampling.STREAMS]
    assert len(set(firsts)) == len(firsts)  # seven independent streams


def test_no_spread_draws_nothing_and_gives_the_base_signal_bit_for_bit():
    model = DataModel(d=30, n=12, T=6, rho=0.3, mu_norm=4.0)
    rng = np.random.default_rng(5)
    state = rng.bit_generator.state
    assert sampling.example_rhos(rng, model.n, model) is None
    assert rng.bit_generator.state == state
    y = sampling.balanced_labels(model.n)
    base = sampling.signal_part(y, model)
    constant = sampling.signal_part(y, model, np.full(model.n, model.rho))
    assert base.tobytes() == constant.tobytes()
    # A wrong rho in one example shows.
    wrong = np.full(model.n, model.rho)
    wrong[3] = 0.31
    assert sampling.signal_part(y, model, wrong).tobytes() != base.tobytes()


def test_example_rhos_are_uniform_on_the_band_and_enter_the_weak_tokens():
    model = DataModel(d=20, n=4000, T=5, rho=0.3, rho_spread=0.2, mu_norm=2.0)
    rhos = sampling.example_rhos(np.random.default_rng(1), model.n, model)
    assert rhos is not None and rhos.min() >= 0.1 and rhos.max() <= 0.5
    standard_error = 0.2 / math.sqrt(3 * model.n)
    assert abs(rhos.mean() - 0.3) < 4 * standard_error
    assert abs(np.mean(rhos**2) - (0.09 + 0.04 / 3)) < 4 * 0.05 / math.sqrt(model.n)
    y = sampling.balanced_labels(model.n)
    part = sampling.signal_part(y, model, rhos)
    positive = y == 1
    np.testing.assert_array_equal(part[positive, 1, 0], rhos[positive] * model.mu_norm)  # W+
    np.testing.assert_array_equal(part[positive, 2, 1], rhos[positive] * model.mu_norm)  # W-
    np.testing.assert_array_equal(part[:, 0].max(axis=1), model.mu_norm)  # R


def test_one_step_head_is_reproducible_and_uses_its_own_stream():
    model = DataModel(d=40, n=10, T=4, mu_norm=3.0)
    training = Training(head="one-step", head_n=50)
    heads = []
    for _ in range(2):
        streams = sampling.random_streams(9)
        X = sampling.token_noise(streams["train"], model.n, model)
        heads.append(sampling.one_step_head(streams["head"], model, training, X, np.ones(10), 0.3))
    assert heads[0].nu.tobytes() == heads[1].nu.tobytes() and heads[0].size == 50
    s = sampling.head_init_std(model, training)
    assert s == pytest.approx(0.1 * model.nu_norm / math.sqrt(model.d))
    # nu0 is the head stream's first d normals; the separate set comes after it.
    rng = sampling.random_streams(9)["head"]
    np.testing.assert_array_equal(heads[0].nu0, s * rng.standard_normal(model.d))
    on_training = Training(head="one-step")
    streams = sampling.random_streams(9)
    X = sampling.token_noise(streams["train"], model.n, model)
    y = sampling.balanced_labels(model.n)
    step = sampling.one_step_head(streams["head"], model, on_training, X, y, 0.3)
    means = X.mean(axis=1)
    weights = 1 / (1 + np.exp(y * (means @ step.nu0)))  # logistic -l'(y nu0^T xbar)
    expected = step.nu0 + 0.3 * ((weights * y) @ means) / model.n
    assert step.size == model.n
    np.testing.assert_allclose(step.nu, expected, rtol=1e-13, atol=0)
    assert not np.allclose(step.nu, step.nu0 + 0.3 * (y @ means) / model.n)  # w = 1 is wrong


def test_ffn_readout_draws_from_its_stream_and_matches_its_matrix_form():
    model = DataModel(d=25, readout="ffn", ffn_width=12)
    first = sampling.ffn_readout(sampling.random_streams(4)["readout"], model)
    again = sampling.ffn_readout(sampling.random_streams(4)["readout"], model)
    other = sampling.ffn_readout(sampling.random_streams(5)["readout"], model)
    assert first.directions.tobytes() == again.directions.tobytes()
    assert first.directions.tobytes() != other.directions.tobytes()
    assert first.width == 12 and first.in_weights.shape == (12, 25)
    assert np.all(first.directions[:, :2] == 0)
    assert np.all((first.offsets >= 0.5) & (first.offsets <= 1.5))
    X = np.random.default_rng(0).standard_normal((3, 4, 25))
    np.testing.assert_allclose(first.projections(X), X @ first.in_weights.T, atol=1e-13)
