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


def test_gap_velocities_reproduce_spec_measurements():
    """Measured on one draw each: 3.38, 2.67, 36.3 (clean) and -31.6 (noisy)."""
    clean = {
        name: stage1_predictions(DataModel(d=dd, n=20, T=8, mu_norm=mu)).clean_gap_velocities["I"]
        for name, dd, mu in [("harmful", 5000, 5), ("benign", 2000, 20), ("not", 1000, 100)]
    }
    assert clean["harmful"] == pytest.approx(3.38, rel=0.15)
    assert clean["benign"] == pytest.approx(2.67, rel=0.15)
    assert clean["not"] == pytest.approx(36.3, rel=0.15)
    noisy = stage1_predictions(DataModel(d=1000, n=20, T=8, mu_norm=100)).noisy_gap_velocities["R"]
    assert noisy == pytest.approx(-31.6, rel=0.15)


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
