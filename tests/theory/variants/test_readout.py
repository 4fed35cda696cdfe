"""The FFN readout: the base head's signal scores with the class sign, bounded outputs, the
hard-selection scores psi(gamma_t) within their predicted spread, and the stage-1 gain."""

from __future__ import annotations

import math

import numpy as np
import pytest

from theory.foundation import sampling
from theory.foundation.data_model import DataModel
from theory.foundation.proof import residuals_vanish
from theory.variants import kernels, readout
from theory.variants.ffn import GELU_SLOPE_MAX

PRESETS = [(5000, 5.0), (2000, 20.0), (1000, 100.0)]


def draw(model: DataModel, seed: int):
    streams = sampling.random_streams(seed)
    ffn = sampling.ffn_readout(streams["readout"], model)
    y = sampling.balanced_labels(model.n)
    X = sampling.add_signals(sampling.token_noise(streams["train"], model.n, model), y, model)
    return ffn, X, y


@pytest.mark.parametrize(("d", "mu"), PRESETS)
def test_ffn_readout_has_the_base_signal_scores_and_bounded_outputs(d, mu):
    model = DataModel(d=d, mu_norm=mu, readout="ffn", ffn_width=64)
    ffn, X, _ = draw(model, 1)
    mu_plus, mu_minus = sampling.signal_vectors(model)
    assert ffn(mu_plus) == pytest.approx(model.gamma0, rel=1e-12)
    assert ffn(mu_minus) == pytest.approx(-model.gamma0, rel=1e-12)
    assert GELU_SLOPE_MAX == pytest.approx(kernels.FLOAT64.gelu_prime(np.array(math.sqrt(2))))
    assert residuals_vanish(readout.pair_oddness_residual())
    rng = np.random.default_rng(4)
    s = rng.dirichlet(np.ones(model.T) * 0.3, size=model.n)  # attention, often near one-hot
    z = np.einsum("it,itd->id", s, X)
    outputs = ffn(z)
    scores = X @ ffn.nu
    bound = readout.output_bound(ffn) * np.abs(np.einsum("it,it->i", s, scores))
    assert np.all(np.abs(outputs) <= bound + 1e-12)
    assert np.all(np.abs(outputs) <= readout.output_bound(ffn) * np.abs(scores).max(axis=1))
    assert np.any(np.abs(outputs) > 0.5 * bound)  # the bound is not loose by orders
    # the readout is not the linear head: on tokens it differs by O(1) of the score noise
    assert np.max(np.abs(ffn(X.reshape(-1, d)) - scores.ravel())) > 0.05


@pytest.mark.parametrize(("d", "mu"), PRESETS)
def test_selection_scores_follow_the_limit_within_their_spread(d, mu):
    model = DataModel(d=d, mu_norm=mu, readout="ffn")
    table = readout.selection_score_table(model)
    assert table["R"] > table["W+"] > table["I"] == 0 > table["W-"] == -table["W+"]
    standardised = []
    for seed in range(3):
        ffn, X, _ = draw(model, seed)
        tokens = X.reshape(-1, d)
        scores = tokens @ ffn.nu
        limit = np.array([readout.selection_score_limit(model, g) for g in scores])
        spread = np.array([readout.selection_score_sd(model, g) for g in scores])
        standardised.extend((ffn.selection_scores(tokens) - limit) / spread)
    standardised = np.array(standardised)
    assert abs(standardised.mean()) < 4 / math.sqrt(standardised.size) + 0.1
    assert 0.5 < standardised.std() < 1.3  # r_j^T x_t is N(0, 1) only up to O(1/d)
    wrong = np.array([readout.selection_score_limit(model, 1.2 * g) for g in scores])
    assert np.mean(np.abs(ffn.selection_scores(tokens) - wrong) / spread) > 1.5


def test_uniform_attention_gradient_scores_scale_the_score_differences():
    model = DataModel(d=2000, mu_norm=20.0, readout="ffn")
    gain = readout.effective_gain(model)
    slopes = []
    for seed in range(3):
        ffn, X, y = draw(model, seed)
        output = kernels.ffn_logit_gradient(
            np.zeros((model.n, model.T)),
            ffn.projections(X),
            y.astype(float),
            ffn.biases,
            ffn.out_weights,
        )
        phi = output.token_scores - output.token_scores.mean(axis=1, keepdims=True)
        scores = X @ ffn.nu
        centred = scores - scores.mean(axis=1, keepdims=True)
        slopes.append(float((phi * centred).sum() / (centred * centred).sum()))
    assert np.mean(slopes) == pytest.approx(gain, rel=0.02)
    assert abs(gain - 1) > 0.03  # not the linear head's 1
