r"""Test-time baselines of the fixed head: uniform attention, and the argmax limit's loss.

Uniform attention (:math:`q = 0`, every :math:`s_t = 1/T`): the output of a fresh test
sequence of class :math:`y^*` is the mean score,
:math:`f = \frac1T\sum_t \gamma_t = y^*\gamma_0\bar k + \frac1T\sum_t \epsilon_t\cdot\nu`
with :math:`\bar k = \frac1T\sum_g n_g (c_g - c'_g)` and independent score noises of
variance :math:`\sigma_\epsilon^2\|\nu\|^2`, so

.. math::

    y^* f \sim N\big(\gamma_0\bar k,\ \sigma_\epsilon^2\|\nu\|^2/T\big), \qquad
    P(y^* f > 0) = \Phi\Big(\frac{\gamma_0 \bar k \sqrt T}{\sigma_\epsilon\|\nu\|}\Big),

which for the paper's groups (:math:`\sum_g n_g k_g = 1`) and head
(:math:`\|\nu\| = \sqrt2\gamma_0/\|\mu\|`) is :math:`\Phi(\|\mu\|/(\sqrt{2T}\sigma_\epsilon))`
:math:`= \Phi(\gamma_0\|\mu\|/\sqrt T)` at :math:`\sigma_\epsilon = 1`: 0.841, 0.933, 0.977
at :math:`\|\mu\| = 4, 6, 8` (T = 8), whatever d. A test accuracy near that value says
nothing about the attention.

The argmax limit: when every test sequence attends to a single token (the token of
largest logit), the output is that token's score, and the loss is
:math:`\sum_g P(\text{select } g)\,E[\ell(\gamma_0 k_g + \sigma_\epsilon\|\nu\|\xi)]`,
:math:`\xi \sim N(0, 1)`, :math:`\ell(u) = \log(1 + e^{-u})`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from theory.foundation.data_model import DataModel, token_groups
from theory.foundation.numerics import normal_cdf

if TYPE_CHECKING:
    import sympy as sp

#: Gauss-Hermite nodes and weights for expectations over one standard normal.
_HERMITE = np.polynomial.hermite.hermgauss(64)


def uniform_output_law_expression() -> tuple[sp.Expr, sp.Expr]:
    r"""SymPy: mean and variance of :math:`y^* f` under uniform attention for symbolic
    group counts, :math:`\rho`, :math:`\gamma_0`, :math:`\sigma_\epsilon` and
    :math:`\|\nu\|` (SymPy is imported here: the numeric baselines do not need it)."""
    import sympy as sp

    from theory.foundation.symbols import gamma0

    rho, sigma, nu_norm = sp.symbols("rho sigma_epsilon nu_norm", positive=True)
    n_R, n_A, n_O, T = sp.symbols("n_R n_W+ n_W- T", positive=True, integer=True)
    groups = token_groups(rho, n_R, n_A, n_O, T)
    mean = gamma0 * sum(g.count * g.score for g in groups) / T
    variance = sum(g.count for g in groups) * sigma**2 * nu_norm**2 / T**2
    return sp.simplify(mean), sp.simplify(variance)


def uniform_attention_accuracy(model: DataModel) -> float:
    r""":math:`\Phi(\gamma_0\bar k\sqrt T/(\sigma_\epsilon\|\nu\|))`, the test accuracy of
    uniform attention."""
    mean_k = sum(g.count * g.score for g in model.groups) / model.T
    z = model.gamma0 * mean_k * math.sqrt(model.T) / model.score_noise
    return normal_cdf(z)


def gaussian_loss(mean: float, sd: float) -> float:
    r""":math:`E[\log(1 + e^{-u})]` for :math:`u \sim N(\text{mean}, \text{sd}^2)`
    (Gauss-Hermite, 64 nodes)."""
    nodes, weights = _HERMITE
    values = mean + math.sqrt(2.0) * sd * nodes
    return float(np.sum(weights * np.logaddexp(0.0, -values)) / math.sqrt(math.pi))


def uniform_attention_loss(model: DataModel) -> float:
    """The test loss of uniform attention (the model at step 0)."""
    mean_k = sum(g.count * g.score for g in model.groups) / model.T
    return gaussian_loss(model.gamma0 * mean_k, model.score_noise / math.sqrt(model.T))


def argmax_loss(model: DataModel, selection: dict[str, float]) -> float:
    """The test loss when each test sequence outputs the score of its argmax token, with
    group ``selection`` probabilities (e.g. :func:`theory.stage1.predictions.test_selection`)."""
    return float(
        sum(
            selection.get(g.name, 0.0) * gaussian_loss(model.gamma0 * g.score, model.score_noise)
            for g in model.groups
            if g.count > 0
        )
    )


def derivations() -> list[Any]:
    """This module's derived results, as records for :mod:`theory.derivations`."""
    import sympy as sp

    from theory.foundation.proof import DERIVED, SYMBOLIC, Derivation
    from theory.foundation.symbols import gamma0

    mean, variance = uniform_output_law_expression()
    rho = sp.Symbol("rho", positive=True)
    n_R, n_A, n_O, T = sp.symbols("n_R n_W+ n_W- T", positive=True, integer=True)
    sigma, nu_norm = sp.symbols("sigma_epsilon nu_norm", positive=True)
    return [
        Derivation(
            "Uniform attention: y* f ~ N(gamma0 (n_R + rho n_W+ - rho n_W-)/T, "
            "sigma^2 ||nu||^2 / T)",
            sp.And(sp.Eq(sp.Symbol("E[y* f]"), mean), sp.Eq(sp.Symbol("Var[y* f]"), variance)),
            DERIVED,
            lambda: [
                mean - gamma0 * (n_R + rho * n_A - rho * n_O) / T,
                variance - sigma**2 * nu_norm**2 / T,
            ],
            proof=SYMBOLIC,
            evidence="the mean and variance of the uniform average, from the group table",
            twin="theory.baselines.uniform_attention_accuracy",
            simulated="verify.sim.population.population_metrics",
            test="tests/theory/test_baselines.py::test_uniform_attention_is_the_simulators_population_metric_at_q_0",
        ),
    ]


__all__ = [
    "uniform_output_law_expression",
    "uniform_attention_accuracy",
    "uniform_attention_loss",
    "argmax_loss",
    "gaussian_loss",
]
