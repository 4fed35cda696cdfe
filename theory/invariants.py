r"""Conservation laws of the (W, p) dynamics and their exact GD drift.

Gradient flow :math:`\dot W = -p G^\top`, :math:`\dot p = -W G` (with any G, in particular
:math:`G = \sum_{i,t} h_{i,t} x_{i,t}`):

* :math:`\frac{d}{d\tau}(W W^\top - p p^\top) = 0`;
* :math:`\dot q = -(W^\top W + \|p\|^2 I) G` for :math:`q = W^\top p`.

One GD step :math:`W' = W - \alpha p G^\top`, :math:`p' = p - \alpha W G`:

* :math:`(W'W'^\top - p'p'^\top) - (W W^\top - p p^\top)
  = \alpha^2 (\|G\|^2 p p^\top - (W G)(W G)^\top)` exactly.

These are derived by this package; the paper's statements are not
available.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from theory.foundation.proof import DERIVED, Derivation
from theory.foundation.symbols import alpha as alpha_symbol
from theory.foundation.symbols import real_matrix, real_vector
from theory.foundation.validation import Integer


def _symbolic_state(d: int) -> tuple[sp.Matrix, sp.Matrix, sp.Matrix]:
    d = Integer(1).check("d", d)
    return real_matrix("W", d, d), real_vector("p", d), real_vector("G", d)


def conserved_matrix_expression(W: sp.Matrix, p: sp.Matrix) -> sp.Matrix:
    r"""The conserved quantity :math:`W W^\top - p p^\top`."""
    return W * W.T - p * p.T


def gradient_flow_invariant_residual(d: int = 3) -> sp.Matrix:
    r"""Proof that :math:`\frac{d}{d\tau}(W W^\top - p p^\top) = \dot W W^\top + W \dot W^\top
    - \dot p p^\top - p \dot p^\top = 0` under :math:`\dot W = -p G^\top, \dot p = -W G`,
    with explicit symbolic d x d W and d-vectors p, G. Returns the expanded d x d residual
    (zero)."""
    W, p, G = _symbolic_state(d)
    W_dot, p_dot = -p * G.T, -W * G
    derivative = W_dot * W.T + W * W_dot.T - p_dot * p.T - p * p_dot.T
    return derivative.applyfunc(sp.expand)


def query_velocity_residual(d: int = 3) -> sp.Matrix:
    r"""Proof that :math:`\dot q = \dot W^\top p + W^\top \dot p
    = -(W^\top W + \|p\|^2 I) G` under gradient flow; returns the expanded residual
    (zero)."""
    W, p, G = _symbolic_state(d)
    W_dot, p_dot = -p * G.T, -W * G
    q_dot = W_dot.T * p + W.T * p_dot
    claimed = -(W.T * W + (p.T * p)[0, 0] * sp.eye(W.shape[0])) * G
    return (q_dot - claimed).applyfunc(sp.expand)


def gd_invariant_drift_expression(d: int = 3) -> sp.Matrix:
    r"""The GD drift of the invariant derived by SymPy: expand
    :math:`(W'W'^\top - p'p'^\top) - (W W^\top - p p^\top)` for
    :math:`W' = W - \alpha p G^\top`, :math:`p' = p - \alpha W G`."""
    W, p, G = _symbolic_state(d)
    W_next = W - alpha_symbol * p * G.T
    p_next = p - alpha_symbol * W * G
    drift = conserved_matrix_expression(W_next, p_next) - conserved_matrix_expression(W, p)
    return drift.applyfunc(sp.expand)


def gd_invariant_drift_residual(d: int = 3) -> sp.Matrix:
    r"""Proof of the exact drift
    :math:`\alpha^2 (\|G\|^2 p p^\top - (W G)(W G)^\top)`: returns the expanded difference
    between :func:`gd_invariant_drift_expression` and that formula (zero)."""
    W, p, G = _symbolic_state(d)
    claimed = alpha_symbol**2 * ((G.T * G)[0, 0] * p * p.T - (W * G) * (W * G).T)
    return (gd_invariant_drift_expression(d) - claimed).applyfunc(sp.expand)


# --------------------------------------------------------------------------- numeric


def conserved_matrix(W: np.ndarray, p: np.ndarray) -> np.ndarray:
    r"""Numeric :math:`W W^\top - p p^\top` (float64)."""
    W = np.asarray(W, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64).reshape(-1)
    return W @ W.T - np.outer(p, p)


def query_velocity(W: np.ndarray, p: np.ndarray, G: np.ndarray) -> np.ndarray:
    r"""Numeric gradient-flow velocity of the query, :math:`\dot q = -(W^\top W + \|p\|^2 I)G
    = -W^\top (W G) - \|p\|^2 G`."""
    W = np.asarray(W, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64).reshape(-1)
    G = np.asarray(G, dtype=np.float64).reshape(-1)
    return -(W.T @ (W @ G)) - float(p @ p) * G


def gd_invariant_drift(W: np.ndarray, p: np.ndarray, G: np.ndarray, alpha: float) -> np.ndarray:
    r"""Exact change of :math:`W W^\top - p p^\top` over one GD step with step ``alpha``:
    :math:`\alpha^2 (\|G\|^2 p p^\top - (W G)(W G)^\top)` (float64, d x d).

    Derived by this package (proved by :func:`gd_invariant_drift_residual`)."""
    W = np.asarray(W, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64).reshape(-1)
    G = np.asarray(G, dtype=np.float64).reshape(-1)
    WG = W @ G
    return float(alpha) ** 2 * (float(G @ G) * np.outer(p, p) - np.outer(WG, WG))


def derivations() -> list[Derivation]:
    """This module's derived results, as records for :mod:`theory.derivations`."""
    from theory.foundation.proof import SYMBOLIC
    from theory.foundation.symbols import alpha, tau

    d_dim = sp.Symbol("d", positive=True, integer=True)
    W = sp.MatrixSymbol("W", d_dim, d_dim)
    p = sp.MatrixSymbol("p", d_dim, 1)
    G = sp.MatrixSymbol("G", d_dim, 1)
    q = sp.MatrixSymbol("q", d_dim, 1)
    W_next = sp.MatrixSymbol("W'", d_dim, d_dim)
    p_next = sp.MatrixSymbol("p'", d_dim, 1)
    p_norm_sq = sp.Symbol("||p||^2", nonnegative=True)
    G_norm_sq = sp.Symbol("||G||^2", nonnegative=True)
    return [
        Derivation(
            "Gradient-flow invariant",
            sp.Eq(
                sp.Derivative(W * W.T - p * p.T, tau), sp.ZeroMatrix(d_dim, d_dim), evaluate=False
            ),
            DERIVED,
            lambda: [gradient_flow_invariant_residual(d) for d in (2, 3)],
            SYMBOLIC,
            "residuals vanish for explicit d x d matrices, d = 2, 3",
            twin="theory.invariants.conserved_matrix",
            simulated="verify.sim.engines.base.Engine.parameter_norms",
            test="tests/theory/test_invariants.py::test_drift_is_second_order_in_alpha",
        ),
        Derivation(
            "Query velocity under gradient flow",
            sp.Eq(
                sp.Derivative(q, tau),
                -(W.T * W + p_norm_sq * sp.Identity(d_dim)) * G,
                evaluate=False,
            ),
            DERIVED,
            lambda: [query_velocity_residual(d) for d in (2, 3)],
            SYMBOLIC,
            "residuals vanish for explicit d x d matrices, d = 2, 3",
            twin="theory.invariants.query_velocity",
            test="tests/theory/test_invariants.py::test_query_velocity_is_the_flow_derivative_of_WTp",
        ),
        Derivation(
            "Exact GD drift of the invariant per step",
            sp.Eq(
                (W_next * W_next.T - p_next * p_next.T) - (W * W.T - p * p.T),
                alpha**2 * (G_norm_sq * p * p.T - (W * G) * (W * G).T),
                evaluate=False,
            ),
            DERIVED,
            lambda: [gd_invariant_drift_residual(d) for d in (2, 3)],
            SYMBOLIC,
            "residuals vanish for explicit d x d matrices, d = 2, 3",
            twin="theory.invariants.gd_invariant_drift",
            simulated="verify.sim.engines.base.Engine.parameter_norms",
            test="tests/theory/test_invariants.py::test_gd_drift_equals_direct_gd_step",
        ),
    ]
