r"""Named SymPy symbols of the model, the data model and the gap dynamics.

Assumptions are attached only where they are true for every use in the package:
sizes are positive integers, scales and probabilities are positive, gaps and rates are
real (a rate :math:`c` may be negative: a gap can shrink).
"""

from __future__ import annotations

import sympy as sp

# Sizes.
d = sp.Symbol("d", positive=True, integer=True)  # token dimension
n = sp.Symbol("n", positive=True, integer=True)  # number of training sequences
T = sp.Symbol("T", positive=True, integer=True)  # tokens per sequence (T >= 2 in use)

# Data model.
rho = sp.Symbol("rho", positive=True)  # weak-relevance factor, 0 < rho < 1
eta = sp.Symbol("eta", positive=True)  # label-noise rate, 0 < eta < 1/2
mu_norm = sp.Symbol("mu_norm", positive=True)  # ||mu||
sigma_eps = sp.Symbol("sigma_epsilon", positive=True)  # token-noise standard deviation
nu_norm = sp.Symbol("nu_norm", positive=True)  # ||nu||, the fixed head's norm
#: A signal's score :math:`\gamma_0 = \langle\mu_{y^*}, \nu\rangle y^*` (1/sqrt 2 for the paper's
#: head; its value at a setting is :attr:`theory.foundation.data_model.DataModel.gamma0`).
gamma0 = sp.Symbol("gamma_0", positive=True)

# Optimisation.
alpha = sp.Symbol("alpha", positive=True)  # GD step size
sigma_0 = sp.Symbol("sigma_0", positive=True)  # initialisation scale of W(0)
delta = sp.Symbol("delta", positive=True)  # failure probability
tau = sp.Symbol("tau", nonnegative=True)  # continuous (gradient-flow) time
k = sp.Symbol("k", nonnegative=True, integer=True)  # GD step index

# Gap dynamics.
x = sp.Symbol("x", real=True)  # an attention gap
x0 = sp.Symbol("x_0", real=True)  # the gap at time 0
c = sp.Symbol("c", real=True)  # a gap rate
u = sp.Symbol("u", real=True)  # a shifted gap, e.g. x - log T
y = sp.Symbol("y", real=True)  # a label, or a value of g (context decides)
z = sp.Symbol("z", real=True)  # the margin argument of the logistic loss


def logit_symbols(T: int, prefix: str = "a") -> tuple[sp.Symbol, ...]:
    r"""Real symbols :math:`a_1, \dots, a_T` (attention logits of one sequence)."""
    return sp.symbols(f"{prefix}_1:{T + 1}", real=True)


def score_symbols(T: int, prefix: str = "gamma") -> tuple[sp.Symbol, ...]:
    r"""Real symbols :math:`\gamma_1, \dots, \gamma_T` (token scores
    :math:`\gamma_t = \langle x_t, \nu \rangle`)."""
    return sp.symbols(f"{prefix}_1:{T + 1}", real=True)


def gap_symbols(count: int, prefix: str = "x") -> tuple[sp.Symbol, ...]:
    r"""Real symbols :math:`x_2, \dots, x_{count+1}` (gaps of the leading token over its
    competitors)."""
    return sp.symbols(f"{prefix}_2:{count + 2}", real=True)


def real_matrix(name: str, rows: int, cols: int) -> sp.Matrix:
    r"""An explicit ``rows x cols`` matrix of real symbols :math:`\mathrm{name}_{ij}`."""
    return sp.Matrix(rows, cols, lambda i, j: sp.Symbol(f"{name}_{i + 1}{j + 1}", real=True))


def real_vector(name: str, size: int) -> sp.Matrix:
    r"""An explicit column vector of real symbols :math:`\mathrm{name}_i`."""
    return sp.Matrix(size, 1, lambda i, _: sp.Symbol(f"{name}_{i + 1}", real=True))
