r"""The per-example weak-relevance factor rho_i ~ U[rho - s, rho + s] (claim R1).

Reconstruction (this package's own derivation). Draws from the uniform law have
:math:`E\rho_i = \rho`, :math:`E\rho_i^2 = \rho^2 + s^2/3`, and for any function with a
third derivative :math:`E F(\rho_i) = F(\rho) + \frac{s^2}{6}F''(\rho) + O(s^4)`, exact
when F is a polynomial of degree at most 3 (:func:`spread_residuals`).

**Stage 1.** Sample i's token velocities (:mod:`theory.stage1.rates`) take its own
:math:`\rho_i` in its memorisation part and the population's signal rate :math:`S` (a mean
over all samples) in its signal part:

.. math::

    v_{g,i} = \varsigma M\frac{\gamma_g(\rho_i) - \bar f}{\gamma_0}
              + (c_g + c'_g)(\rho_i)\,E_\rho[S],\qquad
    S(\rho) \propto \sum_h n_h(c_h + c'_h)(\gamma_h - \bar f)
    = n_R(\gamma_0 - \bar f) - (n_{W+} + n_{W-})\rho\bar f + (n_{W+} - n_{W-})\rho^2\gamma_0 .

With :math:`n_{W+} = n_{W-}` (the paper's data) :math:`\bar f` does not depend on
:math:`\rho` and both are linear in :math:`\rho_i`: the mean velocities are those of the base
model at :math:`\rho`, exactly (first order unchanged, no :math:`s^2` term); otherwise
:math:`E S` moves by :math:`(n_{W+} - n_{W-})\gamma_0 s^2/3` times S's prefactor. The
:math:`s^2` terms enter where squares are averaged: the query's memorisation norm
:math:`\sum_g n_g(\gamma_g - \bar f)^2` gains :math:`(n_{W+} + n_{W-})\gamma_0^2 s^2/3`
(:func:`spread_test_signal_to_noise`).

**The threshold becomes a band.** Noisy sample i's :math:`W_-` gap grows when
:math:`r_i = M_n(1 + \rho_i)/(E[S](1 - \rho_i)) > 1`: its own threshold in
:math:`n\,\mathrm{SNR}^2` is :math:`\theta(\rho)\,\psi(\rho_i)/\psi(\rho)`,
:math:`\psi(\rho) = (1+\rho)/(1-\rho)`. At a setting, the noisy samples with
:math:`\rho_i > \rho^*`, :math:`\psi(\rho^*) = \psi(\rho)\,n\mathrm{SNR}^2/\theta(\rho)`, start
to overfit (:func:`overfitting_fraction`); the mean threshold moves by the second-order
:math:`E\psi(\rho_i)/\psi(\rho) - 1 = \frac{2s^2}{3(1+\rho)(1-\rho)^2} + O(s^4)`.
"""

from __future__ import annotations

import math

import sympy as sp

from theory.foundation.data_model import DataModel, Training
from theory.foundation.proof import DERIVED, NUMERIC, RECONSTRUCTION, SYMBOLIC, Derivation
from theory.foundation.symbols import rho, sigma_eps
from theory.stage1 import rates
from theory.stage1.predictions import overfitting_threshold, rate

#: The spread s of :math:`\rho_i`.
spread = sp.Symbol("s", nonnegative=True)


def spread_average(expression: sp.Expr) -> sp.Expr:
    r""":math:`E F(\rho_i) \approx F(\rho) + \frac{s^2}{6}F''(\rho)` (exact for polynomials of
    degree <= 3 in :math:`\rho`)."""
    return expression + spread**2 / 6 * sp.diff(expression, rho, 2)


def spread_residuals() -> list[sp.Expr]:
    r"""Proof that :math:`E\rho_i = \rho`, :math:`E\rho_i^2 = \rho^2 + s^2/3` and
    :func:`spread_average` is exact for a general cubic :math:`F` (the uniform law's
    integrals; 3 residuals, all 0)."""
    r = sp.Symbol("r", real=True)
    coefficients = sp.symbols("k_0:4", real=True)

    def mean(function: sp.Expr) -> sp.Expr:
        return sp.integrate(function, (r, rho - spread, rho + spread)) / (2 * spread)

    cubic = sum(k * r**j for j, k in enumerate(coefficients))
    return [
        sp.simplify(mean(r) - rho),
        sp.simplify(mean(r**2) - (rho**2 + spread**2 / 3)),
        sp.expand(mean(cubic) - spread_average(cubic.subs(r, rho))),
    ]


def _odds(value: float) -> float:
    return (1 + value) / (1 - value)


def example_threshold(model: DataModel, training: Training, rho_i: float) -> float:
    r"""The overfitting threshold in :math:`n\,\mathrm{SNR}^2` of a noisy sample whose factor
    is :math:`\rho_i`: :math:`\theta(\rho)\psi(\rho_i)/\psi(\rho)` (module docstring; paper
    table, :math:`n_{W+} = n_{W-}`)."""
    return overfitting_threshold(model, training) * _odds(rho_i) / _odds(model.rho)


def mean_threshold(model: DataModel, training: Training) -> float:
    r""":math:`E_\rho[\theta_i] = \theta(\rho)E[\psi(\rho_i)]/\psi(\rho)`, with
    :math:`E\psi = \frac1{2s}\big[-r - 2\log(1 - r)\big]_{\rho - s}^{\rho + s}` exactly."""
    s, centre = model.rho_spread, model.rho
    if s == 0:
        return overfitting_threshold(model, training)

    def primitive(value: float) -> float:
        return -value - 2 * math.log(1 - value)

    expected = (primitive(centre + s) - primitive(centre - s)) / (2 * s)
    return overfitting_threshold(model, training) * expected / _odds(centre)


def overfitting_fraction(model: DataModel, training: Training) -> float:
    r"""Fraction of the noisy samples whose :math:`W_-` gap grows from the start:
    :math:`P(\rho_i > \rho^*)`, :math:`\psi(\rho^*) = \psi(\rho)\,n\mathrm{SNR}^2/\theta(\rho)`
    (0 or 1 without spread)."""
    target = _odds(model.rho) * model.n * model.snr**2 / overfitting_threshold(model, training)
    critical = (target - 1) / (target + 1)  # psi(rho*) = target
    s = model.rho_spread
    if s == 0:
        return float(model.rho > critical)
    return min(max((model.rho + s - critical) / (2 * s), 0.0), 1.0)


def example_gap_velocity(model: DataModel, training: Training, rho_i: float) -> float:
    r"""Initial velocity of the gap :math:`W_-` over R of a noisy sample with factor
    :math:`\rho_i`: :math:`M_n(1 + \rho_i) - (1 - \rho_i)E[S]` (one token per group; the
    population's :math:`E S = S(\rho)` for the paper's table)."""
    memorisation = rate(model, training, "memorisation_rate", True)
    signal = rate(model, training, "signal_rate")
    return memorisation * (1 + rho_i) - (1 - rho_i) * signal


def spread_test_signal_to_noise(model: DataModel, training: Training) -> float:
    r"""The stage-1 test signal-to-noise ratio z with the squared norms averaged over
    :math:`\rho_i` (:func:`spread_average` on :math:`\|\dot q_\mu\|^2` and
    :math:`\|\dot q_\perp\|^2` of :func:`theory.stage1.rates.query_velocity_norms`)."""
    signal_sq, memo_sq = rates.query_velocity_norms(loss=training.loss)
    signal = rates.signal_rate(loss=training.loss)
    expression = spread_average(signal) / (
        sigma_eps * sp.sqrt(spread_average(signal_sq) + spread_average(memo_sq))
    )
    values = _symbol_values(model, training)
    return float(expression.subs(values))


def _symbol_values(model: DataModel, training: Training) -> dict:
    from theory.foundation import symbols

    return {
        symbols.d: model.d,
        symbols.n: model.n,
        rates.T_tokens: model.T,
        rates.n_R: model.n_relevant,
        rates.n_A: model.n_weak_aligned,
        rates.n_O: model.n_weak_opposite,
        rho: model.rho,
        symbols.eta: model.eta,
        symbols.mu_norm: model.mu_norm,
        symbols.sigma_eps: model.sigma_eps,
        symbols.gamma0: model.gamma0,
        rates.kappa0: training.kappa0(model.d),
        spread: model.rho_spread,
    }


def derivations() -> list[Derivation]:
    """This module's records, for :mod:`theory.derivations`."""
    F = sp.Function("F")
    E = sp.Function("E")
    theta_i, theta = sp.symbols("theta_i theta", positive=True)
    rho_i = sp.Symbol("rho_i", positive=True)
    return [
        Derivation(
            "Per-example rho_i ~ U[rho - s, rho + s]: E F(rho_i) = F(rho) + s^2 F''(rho)/6 "
            "(exact for cubics)",
            sp.Eq(E(F(rho_i)), F(rho) + spread**2 / 6 * sp.Derivative(F(rho), rho, 2)),
            DERIVED,
            spread_residuals,
            SYMBOLIC,
            "the uniform law's integrals of rho_i, rho_i^2 and a general cubic",
            twin="theory.variants.rho.spread_test_signal_to_noise",
            test="tests/theory/variants/test_rho.py::test_uniform_moments_of_the_sampler",
        ),
        Derivation(
            "Per-example rho_i: a noisy sample's threshold is theta(rho) psi(rho_i)/psi(rho), "
            "psi = (1 + rho)/(1 - rho); its W- gap velocity is linear in rho_i",
            sp.Eq(theta_i, theta * ((1 + rho_i) / (1 - rho_i)) / ((1 + rho) / (1 - rho))),
            RECONSTRUCTION,
            twin="theory.variants.rho.overfitting_fraction",
            test="tests/theory/variants/test_rho.py::"
            "test_noisy_gap_velocity_is_linear_in_the_example_rho",
            proof=NUMERIC,
            evidence="tests/theory/variants/test_rho.py::"
            "test_noisy_gap_velocity_is_linear_in_the_example_rho: the exact initial velocities "
            "of a Monte Carlo of the data model with spread regress on rho_i with the "
            "predicted slope M_n + S and mean",
        ),
    ]


__all__ = [
    "spread",
    "spread_average",
    "spread_residuals",
    "example_threshold",
    "mean_threshold",
    "overfitting_fraction",
    "example_gap_velocity",
    "spread_test_signal_to_noise",
    "derivations",
]
