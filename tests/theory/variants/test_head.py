"""The head variants against Monte Carlos of the data model: the one-step head's alignment,
scale and uniform-attention margins over seeds, and the trained head's initial rates against
the exact gradient."""

from __future__ import annotations

import math

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from theory.foundation import sampling
from theory.foundation.data_model import DataModel, Training
from theory.foundation.validation import InvalidParameter
from theory.stage1.sampling import draw_initial_state
from theory.variants import head


def draw_one_step(model: DataModel, training: Training, seed: int) -> dict[str, np.ndarray]:
    """The sampler's training set and one-step head for one seed, with the training margins
    at uniform attention."""
    streams = sampling.random_streams(seed)
    y_star = sampling.balanced_labels(model.n)
    flipped = sampling.noisy_mask(y_star, model, streams["flips"])
    X = sampling.add_signals(sampling.token_noise(streams["train"], model.n, model), y_star, model)
    y = np.where(flipped, -y_star, y_star)
    step = head.head_step(model, training)
    result = sampling.one_step_head(streams["head"], model, training, X, y, step)
    u = np.zeros(model.d)
    u[0], u[1] = 1 / math.sqrt(2), -1 / math.sqrt(2)
    return {
        "alignment": np.array(result.nu @ u / np.linalg.norm(result.nu)),
        "scale": np.array(np.linalg.norm(result.nu) * model.mu_norm),
        "margins": y * (X.mean(axis=1) @ result.nu),
        "noisy": flipped,
    }


@pytest.mark.parametrize(
    ("d", "mu", "head_n"), [(800, 8.0, 0), (800, 8.0, 400), (500, 20.0, 0), (500, 20.0, 200)]
)
def test_one_step_alignment_and_scale_match_a_monte_carlo_over_seeds(d, mu, head_n):
    model, training = DataModel(d=d, mu_norm=mu), Training(head="one-step", head_n=head_n)
    predicted = head.one_step_prediction(model, training)
    with threadpool_limits(1):
        draws = [draw_one_step(model, training, seed) for seed in range(6)]
    for name, value in (("alignment", predicted.alignment), ("scale", predicted.scale)):
        sample = np.array([draw[name] for draw in draws])
        error = sample.std(ddof=1) / math.sqrt(sample.size)
        assert abs(sample.mean() - value) < 4 * error + 0.02 * value, name
    assert predicted.scale == pytest.approx(model.nu_scale, rel=1e-12)  # the default step
    # Without the noise part the alignment would be 1: the data say otherwise here.
    assert abs(np.mean([draw["alignment"] for draw in draws]) - 1) > 0.02


def test_one_step_head_on_the_training_set_fits_noisy_labels_at_uniform_attention():
    model, training = DataModel(d=500, mu_norm=25.0), Training(head="one-step")
    predicted = head.one_step_prediction(model, training)
    assert 0.2 < predicted.noisy_fitted < 0.8  # m (1 - 2 eta) SNR^2 S_T^2 near 2T
    with threadpool_limits(1):
        draws = [draw_one_step(model, training, seed) for seed in range(40)]
    noisy = np.concatenate([draw["margins"][draw["noisy"]] for draw in draws])
    clean = np.concatenate([draw["margins"][~draw["noisy"]] for draw in draws])
    error = noisy.std(ddof=1) / math.sqrt(noisy.size)
    assert abs(noisy.mean() - predicted.noisy_margin) < 4 * error
    assert abs(clean.mean() - predicted.clean_margin) < 4 * clean.std(ddof=1) / math.sqrt(
        clean.size
    )
    assert noisy.std(ddof=1) == pytest.approx(
        predicted.margin_sd, rel=4 / math.sqrt(2 * noisy.size)
    )
    fitted = np.mean(noisy > 0)
    assert abs(fitted - predicted.noisy_fitted) < 4 * math.sqrt(0.25 / noisy.size)
    # The memorised self-term is needed: without it a noisy margin would be minus the signal.
    without_memorisation = -(predicted.clean_margin - predicted.noisy_margin) / 2
    assert abs(noisy.mean() - without_memorisation) > 4 * error


def test_the_one_step_default_refuses_an_init_larger_than_the_head():
    model = DataModel(d=400, mu_norm=10.0)
    big = Training(head="one-step", head_init_scale=1.0)
    with pytest.raises(InvalidParameter, match="^head_init_scale=1 is invalid: allowed a scale"):
        head.head_step(model, big)
    assert head.head_step(model, big.replace(head_step=0.2)) == 0.2
    assert head.head_step(model, Training()) is None
    assert head.head_step(model, Training(head="trained")) == Training().alpha


def test_trained_head_initial_rates_match_the_exact_gradient():
    model, training = DataModel(d=300, n=10, T=4, mu_norm=10.0), Training(head="trained")
    rates = head.trained_head_rates(model, training)
    rng = np.random.default_rng(12)
    head_noisy, attention_noisy, head_clean = [], [], []
    with threadpool_limits(1):
        for _ in range(150):
            state = draw_initial_state(model, Training(), rng)
            nu = sampling.head_vector(model)
            scores = state.tokens @ nu
            output = scores.mean(axis=1)
            weights = 1 / (1 + np.exp(state.y * output))
            velocity = np.einsum("i,itd->d", weights * state.y, state.tokens) / (model.n * model.T)
            head_margin = state.y * (state.tokens.mean(axis=1) @ velocity)
            logit_velocity = (state.tokens @ state.W.T) @ (state.W @ state.g)  # x^T W0^T W0 (-G)
            centred = scores - output[:, None]
            attention_margin = state.y * (logit_velocity * centred).mean(axis=1)
            noisy = state.y != state.ystar
            head_noisy.extend(head_margin[noisy])
            head_clean.extend(head_margin[~noisy])
            attention_noisy.extend(attention_margin[noisy])
    for sample, value in (
        (head_noisy, rates.head_noisy),
        (head_clean, rates.head_clean),
        (attention_noisy, rates.attention_noisy),
    ):
        sample = np.array(sample)
        error = sample.std(ddof=1) / math.sqrt(sample.size)
        assert abs(sample.mean() - value) < 4 * error + 0.05 * abs(value)
    assert rates.memorisation_ratio > 10  # the head memorises first at alpha_nu = alpha
    slower = head.trained_head_rates(model, training.replace(head_step=training.alpha / 100))
    assert slower.memorisation_ratio == pytest.approx(rates.memorisation_ratio / 100)
    assert np.mean(head_noisy) / np.mean(attention_noisy) > 10
