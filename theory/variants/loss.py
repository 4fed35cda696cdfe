r"""The loss variant: what the logistic, exponential and squared losses change (claim R4).

Reconstruction (this package's own derivation). The loss enters gradient descent only
through the per-sample weight :math:`w(y_if_i) = -\ell'(y_if_i)`
(:mod:`theory.foundation.losses`).

**Stage 1.** At :math:`\tau = 0` every :math:`s_t = 1/T` and :math:`f_i = y^*_i\bar f`,
:math:`\bar f = \gamma_0\sum_g n_g(c_g - c'_g)/T`, so clean samples carry
:math:`\ell_c = w(\bar f)` and noisy ones :math:`\ell_n = w(-\bar f)`; every stage-1 rate
of :mod:`theory.stage1.rates` is linear in them (signal :math:`\propto (1-\eta)\ell_c -
\eta\ell_n`, memorisation :math:`\propto\ell`), and :func:`theory.stage1.predictions.rate`
reads the training loss. The overfitting threshold in :math:`n\,\mathrm{SNR}^2` is a ratio:

.. math::

    \theta = \theta_0\,\frac{1 - 2\eta}{(1 - \eta)q - \eta},\qquad
    q = \frac{w(\bar f)}{w(-\bar f)},\qquad
    \theta_0 = \frac{2(1+\rho)}{(1-\rho)(1 - (1+2\rho)/T)(1 - 2\eta)},

so at :math:`\bar f \to 0` it is the same for every loss (the common factor :math:`w(0)` —
1/2, 1, 1 — cancels), and to first order in :math:`\bar f`,
:math:`q = 1 + 2\bar f w'(0)/w(0)` shifts it by :math:`(1-\eta)\bar f c_\ell/(1-2\eta)`
relative, :math:`c_\ell = -2w'(0)/w(0)` = 1 (logistic), 2 (exponential, squared).

**Stage 2 (R4).** The mean-field flow (:mod:`theory.stage2.flow`) takes the loss through
its weights. A clean sample that selects its relevant token has
:math:`f \to \gamma_R` and weight :math:`w_\infty = w(\gamma_R)`; since :math:`|f| \le
\max_t|\gamma_t|` no weight vanishes while the scores are bounded (logistic
:math:`\ge 1/(1 + e^{\gamma_{\max}})`, exponential :math:`\ge e^{-\gamma_{\max}}`, squared
:math:`\ge 1 - \gamma_{\max} > 0` for :math:`\gamma_{\max} < 1`). Its gap then obeys
:math:`\dot x = c\,w_\infty\kappa(\tau)e^{-x}` (the softmax's :math:`s(1-s) = 1/g'(x)`),

.. math::

    x = \log\big(e^{x_0} + c\,w_\infty\textstyle\int_0^\tau\kappa\big),\qquad
    \frac{dx}{d\log_{10}\tau} \to \ln 10\,\Big(1 + \frac{d\log\kappa}{d\log\tau}\Big),

the same slope per decade for every loss: the logarithmic growth (the exponential time)
comes from the softmax, not from the loss. The loss sets the prefactor only: at equal
time the late gap differs by :math:`\log(w_\infty/w_\infty^{\rm logistic})`, and the time to
reach a gap scales by :math:`w_\infty^{\rm logistic}/w_\infty`.

**Where it stops.** The squared loss has a finite target :math:`yf = 1`: when the selected
token's score exceeds 1 (:math:`s_\nu > \sqrt2` for R), :math:`w = 1 - yf` reaches 0 at a
finite gap :math:`x^*` (:func:`squared_loss_stationary_gap`) and the gap stops there.
"""

from __future__ import annotations

import math

import sympy as sp

from theory.foundation.data_model import DataModel, Training
from theory.foundation.losses import LOSSES, weight, weight_expression
from theory.foundation.proof import RECONSTRUCTION, SYMBOLIC, Derivation
from theory.foundation.symbols import d, eta, mu_norm, n, rho, sigma_eps
from theory.foundation.validation import Options
from theory.stage1 import rates

#: One token per group (R, W+, W-), as the paper's data.
ONE_PER_GROUP = {rates.n_R: 1, rates.n_A: 1, rates.n_O: 1}


def mean_output(model: DataModel) -> float:
    r""":math:`\bar f = \gamma_0\sum_g n_g(c_g - c'_g)/T`, a clean class-+1 sample's output at
    uniform attention."""
    return model.gamma0 * sum(g.count * g.score for g in model.groups) / model.T


def stage1_weights(model: DataModel, loss: str) -> tuple[float, float]:
    r""":math:`(\ell_c, \ell_n) = (w(\bar f), w(-\bar f))` of ``loss`` at :math:`\tau = 0`."""
    f0 = mean_output(model)
    return weight(f0, loss), weight(-f0, loss)


def threshold_expression(loss: str) -> sp.Expr:
    r"""The overfitting threshold :math:`\theta = \theta_0(1 - 2\eta)/((1-\eta)q - \eta)`
    in :math:`n\,\mathrm{SNR}^2` (module docstring), one token per group, for ``loss``."""
    loss = Options(LOSSES).check("loss", loss)
    T = rates.T_tokens
    f0 = rates.mean_score(rates.paper_groups()).subs(ONE_PER_GROUP)
    q = weight_expression(f0, loss) / weight_expression(-f0, loss)
    theta0 = 2 * (1 + rho) / ((1 - rho) * (1 - (1 + 2 * rho) / T) * (1 - 2 * eta))
    return theta0 * (1 - 2 * eta) / ((1 - eta) * q - eta)


def threshold_residuals() -> list[sp.Expr]:
    r"""Proof, for every loss, that :func:`threshold_expression` is the :math:`n\,
    \mathrm{SNR}^2` at which :func:`theory.stage1.rates.overfitting_ratio` equals 1 (the
    ratio is :math:`\theta/(n\,\mathrm{SNR}^2)`); returns 3 residuals (all 0)."""
    snr_sq = mu_norm**2 / (sigma_eps**2 * d)
    residuals = []
    for loss in LOSSES:
        ratio = rates.overfitting_ratio(simplify=False, loss=loss).subs(ONE_PER_GROUP)
        difference = ratio * n * snr_sq - threshold_expression(loss)
        residuals.append(sp.simplify(sp.together(difference.rewrite(sp.exp))))
    return residuals


def threshold_ratio(model: DataModel, loss: str) -> float:
    r""":math:`\theta_{\rm loss}/\theta_{\rm logistic} = ((1-\eta)q_{\rm logistic} - \eta)/
    ((1-\eta)q_{\rm loss} - \eta)` at the model's :math:`\bar f` and noise rate."""
    rate = model.noisy_count / model.n if model.flip == "exact" else model.eta

    def denominator(name: str) -> float:
        clean, noisy = stage1_weights(model, name)
        return (1 - rate) * clean / noisy - rate

    return denominator("logistic") / denominator(loss)


def saturated_weight(model: DataModel, loss: str) -> float:
    r""":math:`w_\infty = w(\gamma_0)`: a clean sample's weight once it selects its relevant
    token (:math:`f \to \gamma_R`, expected :math:`\gamma_0`)."""
    return weight(model.gamma0, loss)


def late_gap_offset(model: DataModel, loss: str) -> float:
    r"""Late clean gap of ``loss`` minus the logistic loss's at equal time,
    :math:`\log(w_\infty/w_\infty^{\rm logistic})` (module docstring); ``nan`` when
    :math:`w_\infty \le 0` (squared loss with :math:`\gamma_0 \ge 1`: no late regime)."""
    value = saturated_weight(model, loss)
    return math.log(value / saturated_weight(model, "logistic")) if value > 0 else math.nan


def time_to_gap_ratio(model: DataModel, loss: str) -> float:
    r"""Time for the clean gap to reach a late value under ``loss`` over the logistic loss's:
    :math:`w_\infty^{\rm logistic}/w_\infty` (``inf`` when the gap stops,
    :func:`squared_loss_stationary_gap`)."""
    value = saturated_weight(model, loss)
    return saturated_weight(model, "logistic") / value if value > 0 else math.inf


def squared_loss_stationary_gap(model: DataModel) -> float:
    r"""The squared loss's stationary clean gap: with R leading the other T - 1 tokens by
    the same gap x, :math:`f = s\gamma_0 + (1 - s)\bar\gamma_o` (:math:`\bar\gamma_o` the
    others' mean score) reaches the target 1 at
    :math:`s^* = (1 - \bar\gamma_o)/(\gamma_0 - \bar\gamma_o)`,
    :math:`x^* = \log((T-1)s^*/(1 - s^*))`; ``inf`` when :math:`\gamma_0 \le 1` (never
    reached: the gap grows without bound)."""
    count = model.T - 1
    other_mean = (mean_output(model) * model.T - model.gamma0) / count
    if model.gamma0 <= 1 or other_mean >= 1:
        return math.inf
    share = (1 - other_mean) / (model.gamma0 - other_mean)
    return math.log(count * share / (1 - share))


def stationary_gap_residual() -> sp.Expr:
    r"""Proof that at :math:`x^*` the output is the squared loss's target:
    :math:`s^*\gamma + (1 - s^*)\bar\gamma_o - 1 = 0` with
    :math:`s^* = e^{x^*}/(e^{x^*} + T - 1)` (returns the residual, 0)."""
    gamma, other, count = sp.symbols("gamma gamma_o T_1", positive=True)
    share = (1 - other) / (gamma - other)
    x_star = sp.log(count * share / (1 - share))
    s = sp.exp(x_star) / (sp.exp(x_star) + count)
    return sp.simplify(s * gamma + (1 - s) * other - 1)


def saturated_slope_residuals() -> list[sp.Expr]:
    r"""Proof that :math:`x = \log(e^{x_0} + c\,w\,K(\tau))`, :math:`K' = \kappa`, solves
    :math:`\dot x = c\,w\,\kappa e^{-x}`, and that for :math:`\kappa = \tau^\beta` its slope
    :math:`dx/d\log\tau \to 1 + \beta` whatever the weight :math:`w > 0` (2 residuals)."""
    tau, beta = sp.symbols("tau beta", positive=True)
    c, w, x0 = sp.symbols("c w x_0", positive=True)
    K = sp.Function("K")(tau)
    x = sp.log(sp.exp(x0) + c * w * K)
    solves = sp.simplify(sp.diff(x, tau) - c * w * sp.diff(K, tau) * sp.exp(-x))
    power = x.subs(K, tau ** (1 + beta) / (1 + beta))
    slope = sp.limit(sp.simplify(tau * sp.diff(power, tau)), tau, sp.oo)
    return [solves, sp.simplify(slope - (1 + beta))]


def loss_summary(model: DataModel, training: Training) -> dict[str, dict[str, float]]:
    """Per loss: the stage-1 weights, the threshold ratio to the logistic loss, the
    saturated weight, the late gap offset, the time ratio and the stationary gap."""
    summary = {}
    for loss in LOSSES:
        clean, noisy = stage1_weights(model, loss)
        summary[loss] = {
            "clean_weight": clean,
            "noisy_weight": noisy,
            "threshold_ratio": threshold_ratio(model, loss),
            "saturated_weight": saturated_weight(model, loss),
            "late_gap_offset": late_gap_offset(model, loss),
            "time_to_gap_ratio": time_to_gap_ratio(model, loss),
            "stationary_gap": squared_loss_stationary_gap(model) if loss == "squared" else math.inf,
        }
    return summary


def derivations() -> list[Derivation]:
    """This module's records, for :mod:`theory.derivations`."""
    theta, theta0, q, w_inf = sp.symbols("theta theta_0 q w_inf", positive=True)
    x, tau, kappa = sp.Function("x"), sp.Symbol("tau", positive=True), sp.Function("kappa")
    return [
        Derivation(
            "Loss variant, stage 1: the overfitting threshold depends on the loss only through "
            "q = w(f0)/w(-f0)",
            sp.Eq(theta, theta0 * (1 - 2 * eta) / ((1 - eta) * q - eta)),
            RECONSTRUCTION,
            threshold_residuals,
            SYMBOLIC,
            "the closed form equals the stage-1 overfitting ratio times n SNR^2 for the "
            "logistic, exponential and squared losses (one token per group)",
            twin="theory.variants.loss.threshold_ratio",
            test="tests/theory/variants/test_loss.py::"
            "test_stage1_rates_scale_with_the_loss_weights",
        ),
        Derivation(
            "Loss variant, stage 2 (R4): a saturated gap grows by ln 10 (1 + dlog kappa/dlog "
            "tau) per decade for every loss; the loss shifts it by log(w_inf / w_inf^logistic)",
            sp.Eq(
                x(tau),
                sp.log(
                    sp.exp(sp.Symbol("x_0")) + sp.Symbol("c") * w_inf * sp.Integral(kappa(tau), tau)
                ),
                evaluate=False,
            ),
            RECONSTRUCTION,
            saturated_slope_residuals,
            SYMBOLIC,
            "the solution of x' = c w kappa e^{-x} and its slope limit 1 + beta for kappa = "
            "tau^beta, whatever w > 0; the flow's slopes and offsets per loss are tested "
            "numerically",
            twin="theory.variants.loss.late_gap_offset",
            test="tests/theory/variants/test_loss.py::"
            "test_flow_gap_slope_is_the_same_for_every_loss_and_the_offset_is_predicted",
        ),
        Derivation(
            "Squared loss: the clean gap stops at x* where f reaches 1 (selected score > 1)",
            sp.Eq(sp.Symbol("x^*"), sp.log(sp.Symbol("(T-1) s^*/(1 - s^*)"))),
            RECONSTRUCTION,
            stationary_gap_residual,
            SYMBOLIC,
            "the output at x* equals the target 1",
            twin="theory.variants.loss.squared_loss_stationary_gap",
            test="tests/theory/variants/test_loss.py::"
            "test_squared_loss_gap_stops_when_the_selected_score_exceeds_one",
        ),
    ]


__all__ = [
    "ONE_PER_GROUP",
    "mean_output",
    "stage1_weights",
    "threshold_expression",
    "threshold_residuals",
    "threshold_ratio",
    "saturated_weight",
    "late_gap_offset",
    "time_to_gap_ratio",
    "squared_loss_stationary_gap",
    "stationary_gap_residual",
    "saturated_slope_residuals",
    "loss_summary",
    "derivations",
]
