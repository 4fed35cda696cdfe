"""The stage-1 rates and predictions: closed forms, limits, and the report command."""

import math

import pytest
import sympy as sp

from theory import rates
from theory.assumptions import ASSUMPTIONS, assess, symbol_values
from theory.data_model import DataModel, Training
from theory.predictions import (
    argmax_test_accuracy,
    overfitting_threshold,
    predict,
    soft_test_accuracy,
)
from theory.symbols import d, eta, mu_norm, n, rho, sigma_eps

ONE_PER_GROUP = {rates.n_R: 1, rates.n_A: 1, rates.n_O: 1}


def test_overfitting_ratio_closed_form():
    ell_c, ell_n = rates.loss_weights(rates.paper_groups())
    w = (1 - eta) * ell_c - eta * ell_n
    T = rates.T_tokens
    closed = (
        2
        * ell_n
        * (1 + rho)
        / (w * (1 - rho) * (1 - (1 + 2 * rho) / T))
        * sigma_eps**2
        * d
        / (n * mu_norm**2)
    )
    assert sp.simplify((rates.overfitting_ratio() - closed).subs(ONE_PER_GROUP)) == 0


def test_signal_rate_matches_first_order_sketch_when_loss_weights_are_one_half():
    """The first-order sketch (l' = -1/2, rho/T terms dropped):
    S = k0 mu^2 (1-2eta)(1-1/T)/(4 sqrt2 T)."""
    S = rates.signal_rate().subs(ONE_PER_GROUP).subs(rates.gamma0, 1 / sp.sqrt(2))
    f0 = rates.mean_score(rates.paper_groups()).subs(ONE_PER_GROUP)
    # Replace both loss weights by 1/2 (f0 -> 0 inside the exponentials) and rho/T -> 0.
    S_half = S.subs(sp.exp(f0.subs(rates.gamma0, 1 / sp.sqrt(2))), 1)
    sketch = (
        rates.kappa0
        * mu_norm**2
        * (1 - 2 * eta)
        * (1 - 1 / rates.T_tokens)
        / (4 * sp.sqrt(2) * rates.T_tokens)
    )
    difference = sp.simplify((S_half - sketch).subs(rho, 0))
    assert difference == 0


def test_gap_velocities_reproduce_spec_measurements():
    """Measured on one draw each: 3.38, 2.67, 36.3 (clean) and -31.6 (noisy)."""
    clean = {
        name: predict(DataModel(d=dd, n=20, T=8, mu_norm=mu)).clean_gap_velocities["I"]
        for name, dd, mu in [("harmful", 5000, 5), ("benign", 2000, 20), ("not", 1000, 100)]
    }
    assert clean["harmful"] == pytest.approx(3.38, rel=0.15)
    assert clean["benign"] == pytest.approx(2.67, rel=0.15)
    assert clean["not"] == pytest.approx(36.3, rel=0.15)
    noisy = predict(DataModel(d=1000, n=20, T=8, mu_norm=100)).noisy_gap_velocities["R"]
    assert noisy == pytest.approx(-31.6, rel=0.15)


def test_regimes_of_the_paper_settings():
    regimes = [
        predict(DataModel(d=dd, n=20, T=8, mu_norm=mu)).regime
        for dd, mu in [(5000, 5), (2000, 20), (1000, 100)]
    ]
    assert regimes == ["harmful", "benign", "not-overfitting"]


def test_ratio_scales_like_one_over_n_snr_squared():
    a = predict(DataModel(d=2000, n=20, T=8, mu_norm=20)).overfitting_ratio
    b = predict(DataModel(d=8000, n=20, T=8, mu_norm=20)).overfitting_ratio
    c = predict(DataModel(d=2000, n=20, T=8, mu_norm=40)).overfitting_ratio
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


def test_assumption_registry_is_sympy_data():
    assert [a.key for a in ASSUMPTIONS] == [f"A{i}" for i in range(1, 9)]
    for assumption in ASSUMPTIONS:
        assert assumption.reason
        assert all(isinstance(r, sp.core.relational.Relational) for r in assumption.statement())
    values = symbol_values(2000, 20, 8, 0.1, 0.2, 20.0, 1.0, 5e-3, math.sqrt(1 / 6000), 1 / 20)
    status = {s.key: s for s in assess(values)}
    assert status["A7"].holds is False  # the paper's benign setting: noise scores beat rho
    assert status["A2"].holds and status["A1"].holds


def test_a5_numeric_twin_equals_the_sympy_relation():
    from theory.assumptions import ASSUMPTION_CONSTANTS, symbol_values_for
    from theory.data_model import Training
    from theory.stability import max_stable_step

    a5 = next(a for a in ASSUMPTIONS if a.key == "A5")
    ((lhs, rhs),) = a5.relations
    for model, training in [
        (DataModel(), Training()),
        (
            DataModel(d=500, n=7, T=5, mu_norm=3.0, nu_scale=2.0),
            Training(init="gaussian", init_scale=0.1),
        ),
    ]:
        bound = max_stable_step(model, training)
        values = symbol_values_for(model, training.replace(alpha=bound))
        assert float(lhs.subs(values)) == pytest.approx(float(rhs.subs(values)), rel=1e-12)
        assert ASSUMPTION_CONSTANTS["C_5"] == 2.0
