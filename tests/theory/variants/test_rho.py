"""The per-example rho: uniform moments, stage-1 velocities linear in the example's rho_i
(the mean unchanged), the threshold band, and second-order shifts in s^2 only."""

from __future__ import annotations

import math

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from theory.foundation.data_model import DataModel, Training
from theory.foundation.proof import residuals_vanish
from theory.foundation.sampling import example_rhos
from theory.stage1.predictions import gap_velocities, overfitting_threshold, rate
from theory.stage1.sampling import draw_initial_state
from theory.stage1.sampling import gap_velocities as exact_gap_velocities
from theory.variants import rho as variant

TRAINING = Training()


def test_uniform_moments_of_the_sampler():
    assert residuals_vanish(variant.spread_residuals())
    model = DataModel(rho=0.4, rho_spread=0.3)
    draws = example_rhos(np.random.default_rng(8), 200_000, model)
    assert draws is not None
    assert draws.mean() == pytest.approx(0.4, abs=4 * 0.3 / math.sqrt(3 * draws.size))
    second = 0.4**2 + 0.3**2 / 3
    assert np.mean(draws**2) == pytest.approx(second, abs=4 * 0.1 / math.sqrt(draws.size))
    assert abs(np.mean(draws**2) - 0.4**2) > 0.02  # without the s^2/3 it fails


def test_noisy_gap_velocity_is_linear_in_the_example_rho():
    model = DataModel(d=300, n=10, T=4, mu_norm=12.0, rho=0.4, rho_spread=0.35)
    rng = np.random.default_rng(31)
    rhos, velocities = [], []
    with threadpool_limits(1):
        for _ in range(400):
            state = draw_initial_state(model, TRAINING, rng)
            noisy = state.y != state.ystar
            velocities.extend(exact_gap_velocities(model, state, "R", noisy=True)[noisy])
            rhos.extend(state.rhos[noisy])
    x, v = np.array(rhos), np.array(velocities)
    slope, intercept = np.polyfit(x, v, 1)
    residual_sd = np.std(v - (slope * x + intercept), ddof=2)
    slope_error = residual_sd / (np.std(x) * math.sqrt(x.size))
    predicted = variant.example_gap_velocity(model, TRAINING, 1.0) - variant.example_gap_velocity(
        model, TRAINING, 0.0
    )
    memorisation = rate(model, TRAINING, "memorisation_rate", True)
    signal = rate(model, TRAINING, "signal_rate")
    assert predicted == pytest.approx(memorisation + signal, rel=1e-12)
    assert abs(slope - predicted) < 4 * slope_error + 0.05 * abs(predicted)
    assert abs(slope - memorisation) > 4 * slope_error  # the signal part is needed too
    mean_error = residual_sd / math.sqrt(x.size)
    base = gap_velocities(model.replace(rho_spread=0.0), TRAINING, noisy=True)["R"]
    assert abs(v.mean() - base) < 4 * mean_error + 0.05 * abs(base)  # the mean is unchanged


def test_threshold_band_and_its_second_order_mean():
    model = DataModel(d=2000, mu_norm=20.0, rho=0.3, rho_spread=0.2)
    base = overfitting_threshold(model, TRAINING)
    assert variant.example_threshold(model, TRAINING, 0.3) == pytest.approx(base, rel=1e-12)
    draws = np.random.default_rng(2).uniform(0.1, 0.5, 100_000)
    thresholds = np.array([variant.example_threshold(model, TRAINING, r) for r in draws[:2000]])
    exact = variant.mean_threshold(model, TRAINING)
    assert thresholds.mean() == pytest.approx(
        exact, rel=4 * thresholds.std() / exact / math.sqrt(2000)
    )
    second_order = base * (1 + 2 * 0.2**2 / (3 * 1.3 * 0.7**2))
    assert exact == pytest.approx(second_order, rel=0.01)
    assert exact > base * 1.01  # a shift, of second order in s
    # At ||mu|| on the band's centre, n SNR^2 = theta(rho): about half the noisy samples overfit.
    model = model.replace(mu_norm=math.sqrt(base * model.d / model.n))
    snr_sq = model.n * model.snr**2
    fraction = variant.overfitting_fraction(model, TRAINING)
    sampled = np.mean(
        [variant.example_threshold(model, TRAINING, r) > snr_sq for r in draws[:2000]]
    )
    assert fraction == pytest.approx(sampled, abs=4 * math.sqrt(0.25 / 2000))
    assert 0.3 < fraction < 0.7
    assert variant.overfitting_fraction(model.replace(rho_spread=0.0), TRAINING) in (0.0, 1.0)


def test_test_signal_to_noise_moves_at_second_order_only():
    model = DataModel(d=2000, mu_norm=20.0, rho=0.3)
    base = rate(model, TRAINING, "test_signal_to_noise")
    assert variant.spread_test_signal_to_noise(model, TRAINING) == pytest.approx(base, rel=1e-12)
    shifts = [
        variant.spread_test_signal_to_noise(model.replace(rho_spread=s), TRAINING) / base - 1
        for s in (0.05, 0.1, 0.2)
    ]
    assert all(shift < 0 for shift in shifts)  # more spread in the scores, more query noise
    assert shifts[1] / shifts[0] == pytest.approx(4, rel=0.01)  # proportional to s^2
    assert shifts[2] / shifts[0] == pytest.approx(16, rel=0.02)
