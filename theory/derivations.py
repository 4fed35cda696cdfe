r"""Every derived equation and identity of ``theory``, as data for printing and notebooks.

:func:`derivation_list` returns ``(title, statement, status)`` tuples (statement: a SymPy
``Eq``, relation or expression); :func:`all_derivations` returns :class:`Derivation` records
that also carry the proof check (a zero-argument callable returning residuals that must
all be 0).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sympy as sp

from theory import (
    gd_quadrature,
    invariants,
    model,
    quadrature,
    quadrature_asymptotics,
    softmax_cosh,
)
from theory.proof import residuals_vanish
from theory.symbols import T, alpha, c, n, tau, u, x, x0, y

KNOWN = "KNOWN (from the paper, its public code or the authors' rebuttal)"
DERIVED = "DERIVED (this package; exact, proved symbolically)"
RECONSTRUCTION = (
    "Reconstruction (this package's own derivation; the paper's exact statement is not "
    "available)"
)

STATUSES = (KNOWN, DERIVED, RECONSTRUCTION)


@dataclass(frozen=True)
class Derivation:
    """One derived result: a title, a SymPy statement, its status and its proof check."""

    title: str
    statement: sp.Basic
    status: str
    check: Callable[[], object] | None = None

    def verified(self) -> bool | None:
        """Run the proof check: True if every residual is 0, None if there is no check."""
        return None if self.check is None else residuals_vanish(self.check())


def _indexed(name: str) -> sp.IndexedBase:
    return sp.IndexedBase(name, real=True)


def _all_sizes(check: Callable[[int], object], sizes: range = range(2, 9)) -> Callable[[], list]:
    return lambda: [check(size) for size in sizes]


def all_derivations() -> list[Derivation]:
    """All derivations of the package, in reading order."""
    t_index, u_index, i_index = sp.symbols("t u i", integer=True, positive=True)
    s, gamma, a = _indexed("s"), _indexed("gamma"), _indexed("a")
    f = sp.Symbol("f", real=True)
    label = sp.Symbol("y_i", real=True)
    loss_slope = sp.Function("ell'")
    h = sp.Symbol("h_{i,t}", real=True)
    loss = sp.Symbol("L", real=True)
    d_dim = sp.Symbol("d", positive=True, integer=True)
    W = sp.MatrixSymbol("W", d_dim, d_dim)
    p = sp.MatrixSymbol("p", d_dim, 1)
    G = sp.MatrixSymbol("G", d_dim, 1)
    q = sp.MatrixSymbol("q", d_dim, 1)
    W_next = sp.MatrixSymbol("W'", d_dim, d_dim)
    p_next = sp.MatrixSymbol("p'", d_dim, 1)
    p_norm_sq = sp.Symbol("||p||^2", nonnegative=True)
    G_norm_sq = sp.Symbol("||G||^2", nonnegative=True)
    gap_saturation = sp.Symbol("s(1-s)", positive=True)
    S = sp.Symbol("S", positive=True)
    x_eff, x_min, x_max = sp.symbols("x_eff x_min x_max", real=True)
    g_of = sp.Function("g")
    g_inv = sp.Function("g^-1")
    x_of = sp.Function("x")
    L_pos = sp.Symbol("L", positive=True)  # log(T y)
    delta_k, u_k, E_k, m_k = sp.symbols("delta_k u_k E_k m_k", real=True)
    x_k = sp.Symbol("x_k", real=True)

    return [
        Derivation(
            "Model output and loss",
            sp.Eq(f, sp.Sum(s[t_index] * gamma[t_index], (t_index, 1, T))),
            KNOWN,
        ),
        Derivation(
            "Gradient with respect to the logits (proved for T = 2..8)",
            sp.Eq(
                sp.Derivative(loss, a[i_index, t_index]),
                loss_slope(label * f) * label * s[t_index] * (gamma[t_index] - f) / n,
            ),
            DERIVED,
            _all_sizes(model.logit_gradient_residuals),
        ),
        Derivation(
            "Vectorised gradients, G = sum_{i,t} h_{i,t} x_{i,t} (chain rule, T = 2..8, d = 2)",
            sp.And(
                sp.Eq(sp.Derivative(loss, p), W * G, evaluate=False),
                sp.Eq(sp.Derivative(loss, W), p * G.T, evaluate=False),
            ),
            DERIVED,
            _all_sizes(model.chain_rule_residuals),
        ),
        Derivation(
            "Cancellation-free score deviation (T = 2..8)",
            sp.Eq(
                gamma[t_index] - f,
                sp.Sum(s[u_index] * (gamma[t_index] - gamma[u_index]), (u_index, 1, T)),
            ),
            DERIVED,
            _all_sizes(model.score_deviation_residuals),
        ),
        Derivation(
            "Overflow-free kernel equals the textbook gradient (T = 2..8)",
            sp.Eq(
                h,
                loss_slope(label * f) * label * s[t_index]
                * sp.Sum(s[u_index] * (gamma[t_index] - gamma[u_index]), (u_index, 1, T)) / n,
            ),
            DERIVED,
            lambda: [
                model.stable_loss_residuals(),
                [model.stable_gradient_residuals(size) for size in range(2, 9)],
                [model.shifted_softmax_residuals(size) for size in range(2, 9)],
            ],
        ),
        Derivation(
            "Gradient-flow invariant",
            sp.Eq(
                sp.Derivative(W * W.T - p * p.T, tau), sp.ZeroMatrix(d_dim, d_dim), evaluate=False
            ),
            DERIVED,
            lambda: [invariants.gradient_flow_invariant_residual(d) for d in (2, 3)],
        ),
        Derivation(
            "Query velocity under gradient flow",
            sp.Eq(
                sp.Derivative(q, tau),
                -(W.T * W + p_norm_sq * sp.Identity(d_dim)) * G,
                evaluate=False,
            ),
            DERIVED,
            lambda: [invariants.query_velocity_residual(d) for d in (2, 3)],
        ),
        Derivation(
            "Exact GD drift of the invariant per step",
            sp.Eq(
                (W_next * W_next.T - p_next * p_next.T) - (W * W.T - p * p.T),
                alpha**2 * (G_norm_sq * p * p.T - (W * G) * (W * G).T),
                evaluate=False,
            ),
            DERIVED,
            lambda: [invariants.gd_invariant_drift_residual(d) for d in (2, 3)],
        ),
        Derivation(
            "Softmax saturation as a cosh (equal gaps; the paper writes log T)",
            sp.Eq(gap_saturation, softmax_cosh.exact_saturation_expression()),
            RECONSTRUCTION,
            softmax_cosh.saturation_identity_residual,
        ),
        Derivation(
            "Paper form vs exact form: sharp factor T/(T-1) both ways",
            sp.And(
                sp.Le((T - 1) / T, softmax_cosh.paper_form_ratio_expression()),
                sp.Le(softmax_cosh.paper_form_ratio_expression(), T / (T - 1)),
            ),
            RECONSTRUCTION,
            lambda: [
                softmax_cosh.cosh_shift_identity_residuals(),
                [lim - bound for lim, bound in zip(
                    softmax_cosh.paper_form_ratio_limits(), (T / (T - 1), (T - 1) / T),
                    strict=True,
                )],
            ],
        ),
        Derivation(
            "Unequal competitor gaps: soft-min effective gap (T = 2..8)",
            sp.Eq(
                gap_saturation,
                sp.Eq(
                    S / (1 + S) ** 2,
                    1 / (2 + 2 * sp.cosh(x_eff - sp.log(T - 1))),
                    evaluate=False,
                ),
                evaluate=False,
            ),
            RECONSTRUCTION,
            _all_sizes(softmax_cosh.unequal_gaps_residuals),
        ),
        Derivation(
            "Effective gap bounds",
            sp.And(sp.Le(x_min, x_eff), sp.Le(x_eff, sp.Min(x_max, x_min + sp.log(T - 1)))),
            RECONSTRUCTION,
            softmax_cosh.saturation_slope_residual,
        ),
        Derivation(
            "The quadrature function and its derivatives",
            sp.And(
                sp.Eq(g_of(x), quadrature.g_expression()),
                sp.Eq(sp.Derivative(g_of(x), x), quadrature.g_prime_expression()),
            ),
            KNOWN,
            quadrature.g_derivative_residuals,
        ),
        Derivation(
            "Quadrature: dx/dtau = c/g'(x) implies g(x(tau)) = g(x0) + c tau",
            sp.Eq(g_of(x_of(tau)), g_of(x0) + c * tau),
            KNOWN,
            lambda: [
                quadrature.quadrature_flow_residual(),
                quadrature.quadrature_solution_residual(),
            ],
        ),
        Derivation(
            "Symmetries of g (odd about (log T, 2 log T); negative branch = g_{1/T})",
            sp.And(
                sp.Eq(g_of(sp.log(T) + u), 2 * sp.log(T) + 2 * u + 2 * sp.sinh(u)),
                sp.Eq(g_inv(y), -sp.Function("g_{1/T}^{-1}")(-y)),
            ),
            DERIVED,
            quadrature.g_symmetry_residuals,
        ),
        Derivation(
            "Time to reach gap x, and its scaling e^x/(cT)",
            sp.Eq(
                sp.Limit(quadrature.time_to_reach_gap_expression() * c * T * sp.exp(-x), x, sp.oo),
                1,
            ),
            KNOWN,
            lambda: quadrature.time_to_reach_gap_limit() - 1,
        ),
        Derivation(
            "Large-argument series of g^-1, L = log(T y), error O(L^4/y^4) "
            "(y -> +oo; y -> -oo via g_{1/T})",
            sp.Eq(
                g_inv(y),
                L_pos + sp.Add(*[
                    coefficient.subs(sp.Symbol("L", real=True), L_pos) / y ** (j + 1)
                    for j, coefficient in enumerate(
                        quadrature_asymptotics.g_inverse_series_coefficients(3)
                    )
                ]),
            ),
            RECONSTRUCTION,
            lambda: quadrature_asymptotics.g_inverse_series_residual(3),
        ),
        Derivation(
            "Order-1 error bound of the series, L = log(T y) (proved; needs 2L/y < 1)",
            sp.Le(
                sp.Abs(g_inv(y) - (L_pos - 2 * L_pos / y)),
                sp.Max(2 * L_pos**2, 4 * L_pos + sp.exp((2 * L_pos / y) / (1 - 2 * L_pos / y)))
                / ((1 - 2 * L_pos / y) * y**2),
            ),
            RECONSTRUCTION,
        ),
        Derivation(
            "GD recursion: per-step defect (Taylor, Lagrange remainder)",
            sp.Le(
                sp.Abs(g_of(x_k + delta_k) - g_of(x_k) - alpha * c),
                alpha**2 * c**2 * sp.exp(sp.Abs(delta_k)) * sp.cosh(u_k)
                / (4 * (1 + sp.cosh(u_k)) ** 2),
            ),
            RECONSTRUCTION,
            gd_quadrature.gd_taylor_remainder_residuals,
        ),
        Derivation(
            "GD recursion: uniform per-step defect (the brief's 1/8 tightened to 1/16)",
            sp.Le(
                sp.Abs(g_of(x_k + delta_k) - g_of(x_k) - alpha * c),
                alpha**2 * c**2 * sp.exp(sp.Abs(alpha * c) / 4) / 16,
            ),
            RECONSTRUCTION,
            gd_quadrature.saturation_peak_residual,
        ),
        Derivation(
            "GD recursion vs quadrature: accumulated gap error",
            sp.Le(sp.Abs(x_k - g_inv(g_of(x0) + sp.Symbol("k") * alpha * c)), E_k / m_k),
            RECONSTRUCTION,
        ),
    ]


def derivation_list() -> list[tuple[str, sp.Basic, str]]:
    """``(title, statement, status)`` for every derivation (for notebooks)."""
    return [(item.title, item.statement, item.status) for item in all_derivations()]


def render(item: Derivation, latex: bool = False) -> str:
    """One derivation as text: title, status and the statement (pretty or LaTeX)."""
    body = sp.latex(item.statement) if latex else sp.pretty(item.statement, use_unicode=True)
    return f"{item.title}\n  status: {item.status}\n\n{body}\n"


__all__ = [
    "DERIVED",
    "KNOWN",
    "RECONSTRUCTION",
    "STATUSES",
    "Derivation",
    "derivation_list",
    "all_derivations",
    "render",
]
