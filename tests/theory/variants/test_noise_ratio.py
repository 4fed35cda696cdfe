"""The noisy-gradient ratio ||G_N|| / ||G_C|| (R5): its value at tau = 0 against a Monte Carlo
of the exact gradient, and its trajectory on the mean-field flow."""

from __future__ import annotations

import math

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from theory.foundation.data_model import DataModel, Training
from theory.stage1.sampling import draw_initial_state
from theory.variants import noise_ratio
from theory.variants.loss import stage1_weights

TRAINING = Training()


def exact_ratio(model: DataModel, state) -> float:  # type: ignore[no-untyped-def]
    """||W0 G_N|| / ||W0 G_C|| at p = 0 from the exact logit gradient."""
    scores = (
        state.tokens
        @ np.array([1.0, -1.0] + [0.0] * (model.d - 2))
        * (model.gamma0 / model.mu_norm)
    )
    output = scores.mean(axis=1)
    weights = 1 / (1 + np.exp(state.y * output))
    h = -(weights * state.y)[:, None] * (scores - output[:, None]) / (model.n * model.T)
    noisy = state.y != state.ystar
    norms = []
    for mask in (noisy, ~noisy):
        G = np.einsum("it,itd->d", h[mask], state.tokens[mask])
        norms.append(np.linalg.norm(state.W @ G))
    return float(norms[0] / norms[1])


@pytest.mark.parametrize(("d", "mu"), [(400, 2.0), (400, 8.0), (200, 40.0)])
def test_initial_ratio_matches_a_monte_carlo_of_the_exact_gradient(d, mu):
    model = DataModel(d=d, mu_norm=mu)
    predicted = noise_ratio.initial_ratio(model, TRAINING)
    rng = np.random.default_rng(17)
    with threadpool_limits(1):
        ratios = np.array(
            [exact_ratio(model, draw_initial_state(model, TRAINING, rng)) for _ in range(60)]
        )
    error = ratios.std(ddof=1) / math.sqrt(ratios.size)
    assert abs(ratios.mean() - predicted) < 4 * error + 0.05 * predicted
    # Its two limits: noise-dominated sqrt(|N|/|C|), signal-dominated |N|/|C| (times w_n/w_c).
    clean, noisy = stage1_weights(model, TRAINING.loss)
    limits = [noisy / clean * math.sqrt(4 / 16), noisy / clean * 4 / 16]
    assert min(limits) <= predicted <= max(limits)
    if mu == 2.0 or mu == 40.0:
        wrong = limits[1] if mu == 2.0 else limits[0]  # the other limit fails
        assert abs(ratios.mean() - wrong) > 4 * error + 0.05 * predicted


def test_flow_ratio_starts_at_the_initial_ratio_and_grows():
    model = DataModel(d=2000, mu_norm=20.0)
    first = noise_ratio.flow_ratio(model, TRAINING, np.array([1e-2]))[0]
    mean_field = noise_ratio.initial_ratio(model, TRAINING, score_noise=False)
    assert first == pytest.approx(mean_field, rel=1e-3)
    assert abs(first - noise_ratio.initial_ratio(model, TRAINING)) > 1e-4  # noise scores count
    steps = np.geomspace(1, 1e6, 121)
    ratios = noise_ratio.flow_ratio(model, TRAINING, steps)
    assert ratios.max() > 1 > ratios[0]  # the noisy samples dominate for a while (R5)
    dominance = noise_ratio.first_noisy_dominance(model, TRAINING)
    assert 1 < dominance < 1e6
    assert noise_ratio.flow_ratio(model, TRAINING, np.array([dominance]))[0] > 1


def test_not_overfitting_ratio_tends_to_one_from_above():
    """Without overfitting the signal settles where the clean and noisy pulls balance, so the
    two gradients' norms meet: the ratio tends to 1 (from above), even at eta = 0.1."""
    for eta in (0.2, 0.1):
        model = DataModel(d=1000, mu_norm=100.0, eta=eta)
        late = noise_ratio.flow_ratio(model, TRAINING, np.geomspace(1e8, 1e12, 3))
        assert np.all(late > 1) and np.all(np.diff(late) < 0) and late[-1] < 1.05
    harmful = DataModel(d=5000, mu_norm=5.0, eta=0.1)
    assert math.isinf(noise_ratio.first_noisy_dominance(harmful, TRAINING))
