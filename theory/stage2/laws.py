r"""Closed-form stage-2 laws: the separable collapse model and the saturated-gap slope.

Reconstruction (this package's own derivation; the paper's stage-2 lemmas are not
available).

**Separable collapse model.** Keep, in one class, only the relevant token's lead over T - 1
equivalent competitors (:math:`\rho \to 0`), with the preconditioner frozen. After the
clean samples saturate, write the clean and noisy leads as :math:`\Lambda = \beta + u_c`
and :math:`\Gamma = \beta - u_n` (:math:`\beta`: signal logit; :math:`u_c, u_n`:
memorisation). To leading order in the softmax tails :math:`e^{-\Lambda}, e^{-\Gamma}`,

.. math::

    \dot\beta = A e^{-\beta}(\nu_c e^{-u_c} - \nu_n e^{u_n}),\quad
    \dot u_c = B_c e^{-\beta - u_c},\quad \dot u_n = B_n e^{-\beta + u_n},

with :math:`A = \kappa_0\|\mu\|^2\gamma_0(T-1)/n`, :math:`B_k = \kappa_0\sigma_\epsilon^2 d
\gamma_0 T\ell_k/n`, :math:`\nu_c = n(1-\eta)\ell_c/2`, :math:`\nu_n = n\eta\ell_n/2` and the
saturated loss weights :math:`\ell_c = 1/(1+e^{\gamma_0})`, :math:`\ell_n = 1/(1+e^{-\gamma_0})`.
In the time :math:`d\theta = e^{-\beta}d\tau` the system separates:

.. math::

    u_c = \log(1 + B_c\theta),\quad u_n = -\log(1 - B_n\theta),\quad
    \beta = A\Big[\frac{\nu_c}{B_c}\log(1 + B_c\theta) + \frac{\nu_n}{B_n}\log(1 - B_n\theta)\Big],

:math:`\tau = \int_0^\theta e^{\beta}d\theta'`. The signal peaks at
:math:`B_n\theta_m = (r - 1)/(r + q)` (:math:`r = \nu_c/\nu_n`, :math:`q = B_c/B_n`), at
:math:`\beta_m = (A\nu_n/B_n)\,\Phi(r, q)`,
:math:`\Phi = \frac rq\log\frac{r(1+q)}{r+q} + \log\frac{1+q}{r+q}`, then collapses and the
noisy samples switch (:math:`u_n \to \infty` at :math:`B_n\theta = 1`). Laplace's method on
:math:`\tau(\theta)` gives :math:`\log(B_n\tau_c) = C\,n\,\mathrm{SNR}^2 + O(\log n\mathrm{SNR}^2)`
with :math:`C = \frac{T-1}{T}\frac\eta2\Phi`, hence at a horizon :math:`\tau`

.. math:: \|\mu\|^* \approx \sqrt{\frac{\sigma_\epsilon^2 d}{n\,C}\log(B_n\tau)}.

The full mean-field flow (:mod:`theory.stage2.flow`) reproduces C within 2% at
:math:`\rho = 0.01`; at :math:`\rho = 0.1` its exponent is about 0.72 C (the weakly relevant
tokens start :math:`\rho\beta` closer to R), which is why the predictions use the flow.

**Saturated-gap slope.** A saturated gap obeys :math:`\dot x = c\,\kappa(\tau)e^{-x}`, so
:math:`x = \log(e^{x_0} + c\int_0^\tau\kappa)` and per decade of time
:math:`dx/d\log_{10}\tau = \ln 10\cdot\tau\kappa(\tau)/(e^{x_0}/c + \int_0^\tau\kappa)
\to \ln 10\,(1 + d\log\kappa/d\log\tau)` for slowly growing :math:`\kappa`.
"""

from __future__ import annotations

import math

import sympy as sp

from theory.foundation.data_model import DataModel, Training
from theory.foundation.proof import RECONSTRUCTION, SYMBOLIC, Derivation
from theory.foundation.validation import Real

theta, tau = sp.symbols("theta tau", nonnegative=True)
A, B_c, B_n, nu_c, nu_n = sp.symbols("A B_c B_n nu_c nu_n", positive=True)
r_ratio, q_ratio = sp.symbols("r q", positive=True)


def separable_solution() -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    r""":math:`(u_c, u_n, \beta)` as functions of :math:`\theta` (module docstring)."""
    u_c = sp.log(1 + B_c * theta)
    u_n = -sp.log(1 - B_n * theta)
    beta = A * (nu_c / B_c * sp.log(1 + B_c * theta) + nu_n / B_n * sp.log(1 - B_n * theta))
    return u_c, u_n, beta


def separable_residuals() -> list[sp.Expr]:
    r"""Proof that :func:`separable_solution` solves :math:`u_c' = B_c e^{-u_c}`,
    :math:`u_n' = B_n e^{u_n}`, :math:`\beta' = A(\nu_c e^{-u_c} - \nu_n e^{u_n})` in
    :math:`\theta` with zero initial values (3 derivative residuals, 3 initial values)."""
    u_c, u_n, beta = separable_solution()
    equations = [
        sp.diff(u_c, theta) - B_c * sp.exp(-u_c),
        sp.diff(u_n, theta) - B_n * sp.exp(u_n),
        sp.diff(beta, theta) - A * (nu_c * sp.exp(-u_c) - nu_n * sp.exp(u_n)),
    ]
    initial = [expression.subs(theta, 0) for expression in (u_c, u_n, beta)]
    return [sp.simplify(item) for item in equations + initial]


def peak_theta() -> sp.Expr:
    r""":math:`\theta_m = (\nu_c - \nu_n)/(\nu_c B_n + \nu_n B_c)`, where :math:`\beta' = 0`."""
    return (nu_c - nu_n) / (nu_c * B_n + nu_n * B_c)


def peak_function() -> sp.Expr:
    r""":math:`\Phi(r, q) = \frac rq\log\frac{r(1+q)}{r+q} + \log\frac{1+q}{r+q}`."""
    r, q = r_ratio, q_ratio
    return r / q * sp.log(r * (1 + q) / (r + q)) + sp.log((1 + q) / (r + q))


def peak_residuals() -> list[sp.Expr]:
    r"""Proof that :math:`\beta'(\theta_m) = 0` and :math:`\beta(\theta_m) = (A\nu_n/B_n)
    \Phi(\nu_c/\nu_n, B_c/B_n)` (after expanding the logarithms); returns 2 residuals."""
    _, _, beta = separable_solution()
    slope = sp.simplify(sp.diff(beta, theta).subs(theta, peak_theta()))
    claimed = A * nu_n / B_n * peak_function().subs({r_ratio: nu_c / nu_n, q_ratio: B_c / B_n})
    difference = sp.expand_log(beta.subs(theta, peak_theta()) - claimed, force=True)
    return [slope, sp.simplify(difference)]


def saturated_gap_residual() -> sp.Expr:
    r"""Proof that :math:`x = \log(e^{x_0} + c K(\tau))` with :math:`K' = \kappa` solves
    :math:`\dot x = c\,\kappa(\tau) e^{-x}` (returns the residual, zero)."""
    c, x0 = sp.symbols("c x_0", real=True)
    K = sp.Function("K")(tau)
    x = sp.log(sp.exp(x0) + c * K)
    return sp.simplify(sp.diff(x, tau) - c * sp.diff(K, tau) * sp.exp(-x))


def collapse_exponent(model: DataModel) -> float:
    r""":math:`C = \frac{T-1}{T}\frac\eta2\Phi(r, q)` with :math:`r = (1-\eta)\ell_c/(\eta\ell_n)`,
    :math:`q = \ell_c/\ell_n` at the saturated loss weights (module docstring)."""
    Real(0.0, 0.5, closed="neither").check("eta", model.eta)
    ell_c = 1 / (1 + math.exp(model.gamma0))
    ell_n = 1 / (1 + math.exp(-model.gamma0))
    r, q = (1 - model.eta) * ell_c / (model.eta * ell_n), ell_c / ell_n
    phi = float(peak_function().subs({r_ratio: r, q_ratio: q}))
    return (model.T - 1) / model.T * model.eta / 2 * phi


def noisy_memorisation_rate(model: DataModel, training: Training) -> float:
    r""":math:`B_n = \kappa_0\sigma_\epsilon^2 d\gamma_0 T\ell_n/n` (saturated noisy sample)."""
    ell_n = 1 / (1 + math.exp(-model.gamma0))
    return (
        training.kappa0(model.d)
        * model.sigma_eps**2
        * model.d
        * model.gamma0
        * model.T
        * ell_n
        / model.n
    )


def separable_boundary(model: DataModel, training: Training, steps: float) -> float:
    r"""The separable law's benign | not boundary after ``steps``:
    :math:`\|\mu\|^* = \sqrt{\sigma_\epsilon^2 d\log(B_n\alpha k)/(nC)}` (nan when
    :math:`B_n\alpha k \le 1`, i.e. before stage 2)."""
    argument = noisy_memorisation_rate(model, training) * training.alpha * steps
    if argument <= 1:
        return math.nan
    scale = model.sigma_eps**2 * model.d / (model.n * collapse_exponent(model))
    return math.sqrt(scale * math.log(argument))


def derivations() -> list[Derivation]:
    """This module's results, as records for :mod:`theory.derivations`."""
    u_c, u_n, beta = separable_solution()
    beta_symbol = sp.Function("beta")(theta)
    return [
        Derivation(
            "Separable stage-2 collapse model (theta = int e^{-beta} dtau)",
            sp.Eq(beta_symbol, beta, evaluate=False),
            RECONSTRUCTION,
            separable_residuals,
            proof=SYMBOLIC,
            evidence="the closed forms substituted into the separable equations",
            twin="theory.stage2.laws.separable_boundary",
            test="tests/theory/stage2/test_laws.py::test_separable_exponent_matches_the_flow_when_rho_vanishes",
        ),
        Derivation(
            "Peak of the signal before the collapse",
            sp.Eq(sp.Symbol("beta_m"), A * nu_n / B_n * peak_function(), evaluate=False),
            RECONSTRUCTION,
            peak_residuals,
            proof=SYMBOLIC,
            evidence="the peak condition solved and substituted back",
            twin="theory.stage2.laws.collapse_exponent",
            test="tests/theory/stage2/test_laws.py::test_separable_peak_function_is_not_symmetric_in_its_arguments",
        ),
        Derivation(
            "Saturated gap under a growing preconditioner",
            sp.Eq(
                sp.Function("x")(tau),
                sp.log(sp.exp(sp.Symbol("x_0")) + sp.Symbol("c") * sp.Function("K")(tau)),
                evaluate=False,
            ),
            RECONSTRUCTION,
            saturated_gap_residual,
            proof=SYMBOLIC,
            evidence="the solution substituted into x' = c K'(tau) e^{-x}",
            twin="theory.stage2.predictions.gap_slope",
            simulated="verify.sim.observables.attention_gaps",
            test="tests/theory/stage2/test_predictions.py::test_gap_slope_includes_the_preconditioner_and_ln10_does_not",
        ),
    ]


__all__ = [
    "separable_solution",
    "separable_residuals",
    "peak_theta",
    "peak_function",
    "peak_residuals",
    "saturated_gap_residual",
    "collapse_exponent",
    "noisy_memorisation_rate",
    "separable_boundary",
    "derivations",
]
