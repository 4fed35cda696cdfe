r"""The growing preconditioner :math:`W^\top W + \|p\|^2 I`: its rank-one closure and the
two-channel flow it gives, proved symbolically.

Derived by this package (the paper's statements are not available). Gradient flow
:math:`\dot W = -p G^\top`, :math:`\dot p = -W G` moves :math:`W` by rank-one terms along
:math:`p`. If :math:`W - W_0 = p\,\varrho^\top` (exact while the direction of :math:`p` is
fixed; on the paper's benign setting the flow under this closure stays within 1% of the
largest training logit and logit velocity (per unit log tau) of the mean-field flow that
needs no closure,
:mod:`theory.stage2.discrete`, from :math:`10^2` to :math:`10^{12}` steps: tested by
``tests/theory/stage2/test_preconditioner.py::test_rank_one_closure_within_one_percent``),
then with
:math:`\pi = \|p\|^2`, :math:`k = W_0^\top p` and :math:`q = W^\top p`:

* :math:`W^\top W = W_0^\top W_0 + (q q^\top - k k^\top)/\pi` (:func:`closure_residual`);
* from :math:`WW^\top - pp^\top = W_0W_0^\top` (conserved), exactly
  :math:`\|q\|^2 = \pi^2 + \kappa_p\pi`, :math:`\kappa_p = p^\top W_0W_0^\top p/\pi`
  (:func:`query_norm_residual`);
* the flow :math:`\dot q = -(W^\top W + \pi I)G` under the closure, with
  :math:`\dot k = -W_0^\top W_0 G - k\,((q - k)\cdot G)/\pi` and :math:`\dot\pi = -2q\cdot G`,
  makes the p channel :math:`c = q - k` obey :math:`\dot c = -\pi G + c\,\dot\pi/(2\pi)`,
  i.e. :math:`c = \sqrt\pi\,\tilde r` with :math:`\dot{\tilde r} = -\sqrt\pi\,G`
  (:func:`channel_residuals`). :mod:`theory.stage2.flow` integrates these in logit space.
"""

from __future__ import annotations

import sympy as sp

from theory.foundation.proof import DERIVED, PARTIAL, RECONSTRUCTION, Derivation
from theory.foundation.symbols import real_matrix, real_vector
from theory.foundation.validation import Integer


def _state(d: int) -> tuple[sp.Matrix, sp.Matrix, sp.Matrix, sp.Matrix]:
    d = Integer(1).check("d", d)
    return (
        real_matrix("V", d, d),
        real_vector("p", d),
        real_vector("varrho", d),
        real_vector("G", d),
    )


def closure_residual(d: int = 2) -> sp.Matrix:
    r"""Proof of :math:`W^\top W = W_0^\top W_0 + (qq^\top - kk^\top)/\pi` for
    :math:`W = W_0 + p\varrho^\top`, :math:`q = W^\top p`, :math:`k = W_0^\top p`,
    :math:`\pi = p^\top p` (explicit symbolic :math:`d\times d` :math:`W_0`); returns the
    residual times :math:`\pi` (zero)."""
    W0, p, varrho, _ = _state(d)
    W = W0 + p * varrho.T
    pi = (p.T * p)[0, 0]
    q, k = W.T * p, W0.T * p
    residual = (W.T * W - W0.T * W0) * pi - (q * q.T - k * k.T)
    return residual.applyfunc(sp.expand)


def query_norm_residual(d: int = 2) -> sp.Expr:
    r"""Proof of :math:`\|q\|^2 = \pi^2 + p^\top W_0W_0^\top p` given
    :math:`WW^\top = W_0W_0^\top + pp^\top`: :math:`\|q\|^2 = p^\top WW^\top p`; returns the
    expanded difference (zero)."""
    W0, p, _, _ = _state(d)
    conserved = W0 * W0.T + p * p.T  # = W W^T by the invariant
    q_norm_sq = (p.T * conserved * p)[0, 0]
    pi = (p.T * p)[0, 0]
    return sp.expand(q_norm_sq - pi**2 - (p.T * W0 * W0.T * p)[0, 0])


def channel_residuals(d: int = 2) -> list[sp.Expr]:
    r"""Proof of the two-channel flow: with :math:`\dot q = -(A + (qq^\top - kk^\top)/\pi
    + \pi I)G`, :math:`\dot k = -AG - k((q-k)\cdot G)/\pi` and :math:`\dot\pi = -2 q\cdot G`
    (A symmetric), the p channel :math:`c = q - k` satisfies
    :math:`\dot c = -\pi G + c\,\dot\pi/(2\pi)`, and :math:`c = \sqrt\pi\,\tilde r` gives
    :math:`\dot{\tilde r} = -\sqrt\pi\,G`. Returns the residuals of both (zero)."""
    d = Integer(1).check("d", d)
    A = sp.Matrix(d, d, lambda i, j: sp.Symbol(f"A_{min(i, j) + 1}{max(i, j) + 1}", real=True))
    q, k, G = real_vector("q", d), real_vector("k", d), real_vector("G", d)
    pi = sp.Symbol("pi", positive=True)
    q_dot = -(A + (q * q.T - k * k.T) / pi + pi * sp.eye(d)) * G
    k_dot = -A * G - k * ((q - k).T * G)[0, 0] / pi
    pi_dot = -2 * (q.T * G)[0, 0]
    c, c_dot = q - k, q_dot - k_dot
    first = (c_dot - (-pi * G + c * pi_dot / (2 * pi))).applyfunc(sp.simplify)
    # c = sqrt(pi) r  =>  r_dot = (c_dot - c pi_dot / (2 pi)) / sqrt(pi) = -sqrt(pi) G
    r_dot = (c_dot - c * pi_dot / (2 * pi)) / sp.sqrt(pi)
    second = (r_dot + sp.sqrt(pi) * G).applyfunc(sp.simplify)
    return [*first, *second]


def derivations() -> list[Derivation]:
    """This module's results, as records for :mod:`theory.derivations`."""
    d_dim = sp.Symbol("d", positive=True, integer=True)
    W, W0 = sp.MatrixSymbol("W", d_dim, d_dim), sp.MatrixSymbol("W_0", d_dim, d_dim)
    q, k, G = (sp.MatrixSymbol(name, d_dim, 1) for name in ("q", "k", "G"))
    c, r = sp.MatrixSymbol("c", d_dim, 1), sp.MatrixSymbol("r", d_dim, 1)
    pi, kappa_p, tau = sp.symbols("pi kappa_p tau", positive=True)
    return [
        Derivation(
            "Rank-one closure of the preconditioner",
            sp.Eq(W.T * W, W0.T * W0 + (q * q.T - k * k.T) / pi, evaluate=False),
            RECONSTRUCTION,
            lambda: [closure_residual(size) for size in (2, 3)],
            proof=PARTIAL,
            evidence="the identity checked for symbolic matrices at d = 2 and 3 under the "
            "rank-one premise (W - W0 along p), which is assumed, not proved",
            twin="theory.stage2.flow.velocity",
            test="tests/theory/stage2/test_preconditioner.py::test_rank_one_closure_fails_with_a_wrong_sign",
        ),
        Derivation(
            "Query norm from the conserved W W^T - p p^T",
            sp.Eq(sp.Symbol("||q||^2"), pi**2 + kappa_p * pi, evaluate=False),
            DERIVED,
            lambda: [query_norm_residual(size) for size in (2, 3)],
            proof=PARTIAL,
            evidence="the identity checked for symbolic matrices at d = 2 and 3; the "
            "general-d step is by hand",
            twin="theory.stage2.flow.Trajectory.query_norm_sq",
            simulated="verify.sim.observables.query_components",
            test="tests/theory/stage2/test_flow.py::test_kappa_p_is_twice_kappa0_for_a_square_initialisation",
        ),
        Derivation(
            "Two-channel flow of the query",
            sp.Eq(
                sp.Derivative(c, tau),
                -pi * G + c * sp.Derivative(pi, tau) / (2 * pi),
                evaluate=False,
            ),
            DERIVED,
            lambda: channel_residuals(2),
            proof=PARTIAL,
            evidence="the channel equations checked for symbolic vectors at d = 2",
            twin="theory.stage2.flow.velocity",
            test="tests/theory/stage2/test_preconditioner.py::test_two_channel_flow_needs_the_rank_one_term",
        ),
        Derivation(
            "p channel in normalised form",
            sp.Eq(sp.Derivative(r, tau), -sp.sqrt(pi) * G, evaluate=False),
            DERIVED,
            lambda: channel_residuals(2),
            proof=PARTIAL,
            evidence="the channel equations checked for symbolic vectors at d = 2",
            twin="theory.stage2.flow.velocity",
            simulated="verify.sim.engines.base.Engine.parameter_norms",
            test="tests/theory/stage2/test_flow.py::test_mean_field_starts_with_the_stage1_velocities",
        ),
    ]


__all__ = ["closure_residual", "query_norm_residual", "channel_residuals", "derivations"]
