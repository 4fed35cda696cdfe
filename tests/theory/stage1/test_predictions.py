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


def test_the_argmax_selection_holds_at_any_lead_size():
    """At a lead of 1e49 noise units the relevant token is selected surely: the quadrature
    runs in the offset from the group's lead, so a lead far above 12 does not collapse
    its interval (it gave 0 before)."""
    from theory.stage1.predictions import argmax_test_accuracy, test_selection
    from verify.sim.config import preset

    model = preset("benign", mu_norm=1e50).model
    assert test_selection(model, 1e49)["R"] == pytest.approx(1.0)
    assert argmax_test_accuracy(model, 1e49) == pytest.approx(1.0)


def test_soft_test_accuracies_are_the_per_sequence_formula():
    """soft_test_accuracies (draws token by token, shared noise) against the formula per
    test sequence on the same draws: equal, not only close."""
    import numpy as np

    from theory.stage1.predictions import _standard_normals, _token_sum, soft_test_accuracies

    for setting, logits, norm in (
        (DataModel(), [0.0, 3.0, 25.0], 2.5),
        (DataModel(T=13, mu_norm=7.0), [1.5, -4.0], 0.3),
    ):
        tokens = [setting.groups[code] for code in setting.position_groups]
        xi, zeta = (np.ascontiguousarray(d.T) for d in _standard_normals(5000, len(tokens), 0))
        expected = []
        for logit in logits:
            mean_logit = np.array([g.signal * logit for g in tokens])
            scores = (
                np.array([setting.gamma0 * g.score for g in tokens]) + setting.score_noise * zeta
            )
            weights = mean_logit + setting.sigma_eps * norm * xi
            weights = np.exp(weights - weights.max(axis=1, keepdims=True))
            outputs = (weights * scores).sum(axis=1) / weights.sum(axis=1)
            expected.append(float(np.mean(outputs > 0)))
        assert soft_test_accuracies(setting, logits, norm, samples=5000) == expected
    rng = np.random.default_rng(0)
    for count in (3, 8, 13, 200):
        rows = rng.normal(size=(count, 1000)) * np.exp(3 * rng.normal(size=(count, 1000)))
        np.testing.assert_array_equal(_token_sum(rows), np.ascontiguousarray(rows.T).sum(axis=1))
