"""The stage-1 predictions: the paper settings' velocities and regimes, the overfitting ratio's
scaling and threshold, and the test accuracy's argmax limit."""

import pytest

from theory.foundation.data_model import DataModel, Training
from theory.stage1.predictions import (
    argmax_test_accuracy,
    overfitting_threshold,
    soft_test_accuracy,
    stage1_predictions,
)


def _seed_mean_gap_velocity(name: str, leader: str, other: str, noisy: bool, seeds: int):
    """Mean over ``seeds`` draws of the preset of the samples' mean initial gap velocity
    leader - other (group means), exact from the logits after one GD step / alpha."""
    import numpy as np

    from theory.foundation.data_model import GROUP_NAMES
    from verify.sim.config import preset
    from verify.sim.simulate import simulate

    values = []
    for seed in range(seeds):
        config = preset(name, seed=seed, steps=1, log_every=1, test_size=0, population="none")
        result = simulate(config)
        data = result.data
        velocity = np.asarray(result.train_logits[-1]) / config.training.alpha
        rows = velocity[data.noisy if noisy else ~data.noisy]
        lead, rest = GROUP_NAMES.index(leader), GROUP_NAMES.index(other)
        gap = rows[:, data.groups == lead].mean(axis=1) - rows[:, data.groups == rest].mean(axis=1)
        values.append(gap.mean())
    return float(np.mean(values))


@pytest.mark.parametrize(
    ("name", "leader", "other", "noisy", "seeds"),
    [
        ("harmful", "R", "I", False, 3),  # d = 5000: a draw costs seconds
        ("benign", "R", "I", False, 6),
        ("not-overfitting", "R", "I", False, 6),
        ("not-overfitting", "W-", "R", True, 6),
    ],
)
def test_gap_velocities_match_simulated_draws(name, leader, other, noisy, seeds):
    """The kept initial gap velocity against the seed mean of a few simulated draws,
    within the dropped terms' mean and four standard deviations of that mean
    (theory.stage1.moments); a velocity 30% off is rejected."""
    from theory.stage1.moments import velocity_error
    from verify.sim.config import preset

    config = preset(name)
    error = velocity_error(config.model, config.training, other, noisy)
    measured = _seed_mean_gap_velocity(name, leader, other, noisy, seeds)
    tolerance = abs(error.bias) + 4 * error.mean_sd / seeds**0.5
    assert abs(measured - error.kept) <= tolerance
    assert abs(measured - 1.3 * error.kept) > tolerance


def test_regimes_of_the_paper_settings():
    regimes = [
        stage1_predictions(DataModel(d=dd, n=20, T=8, mu_norm=mu)).regime
        for dd, mu in [(5000, 5), (2000, 20), (1000, 100)]
    ]
    assert regimes == ["harmful", "benign", "not-overfitting"]


def test_ratio_scales_like_one_over_n_snr_squared():
    a = stage1_predictions(DataModel(d=2000, n=20, T=8, mu_norm=20)).overfitting_ratio
    b = stage1_predictions(DataModel(d=8000, n=20, T=8, mu_norm=20)).overfitting_ratio
    c = stage1_predictions(DataModel(d=2000, n=20, T=8, mu_norm=40)).overfitting_ratio
    assert b / a == pytest.approx(4, rel=1e-12)
    assert a / c == pytest.approx(4, rel=1e-12)


def test_overfitting_threshold_depends_on_T_and_rho_but_not_on_d():
    """The phase diagram draws the benign|not-overfitting boundary from one threshold on
    n SNR^2 for every d; that is right only while the threshold is free of d."""
    training = Training()
    at = {d_: overfitting_threshold(DataModel(d=d_), training) for d_ in (250, 1000, 5000)}
    assert max(at.values()) == pytest.approx(min(at.values()), rel=1e-12)
    assert overfitting_threshold(DataModel(d=5000, T=16), training) < 0.9 * at[5000]
    assert overfitting_threshold(DataModel(d=500, rho=0.5), training) > 2 * at[250]


def test_soft_test_accuracy_tends_to_argmax_limit():
    setting = DataModel(d=5000, n=20, T=8, mu_norm=5)
    z = 0.5
    argmax = argmax_test_accuracy(setting, z)
    assert soft_test_accuracy(setting, z * 1000, 1000, samples=200000) == pytest.approx(
        argmax, abs=0.005
    )
    assert soft_test_accuracy(setting, 0.0, 1e-9) > argmax  # uniform attention averages
