r"""The attention-SVM of max-margin token selection, solved in reduced coordinates.

Problem (the hard-margin SVM of token selection of Tarzanagh et al., "Max-margin token
selection in attention mechanism"). Each training sequence :math:`i` selects one token
:math:`\mathrm{sel}(i)`; the SVM direction is

.. math::

    q^\star = \arg\min_q \tfrac12 \|q\|^2 \quad \text{s.t.} \quad
    (x_{i,\mathrm{sel}(i)} - x_{i,t})^\top q \ge 1
    \quad \text{for every } i \text{ and every } t \ne \mathrm{sel}(i).

Reduced coordinates (this package's own reconstruction of the standard representer
argument). Put the :math:`N = nT` training tokens in the columns of :math:`B`
(:math:`d \times N`) and let :math:`C` (:math:`m \times N`, :math:`m = n(T-1)`) have one
row :math:`e_{(i,\mathrm{sel}(i))} - e_{(i,t)}` per constraint, so the constraints read
:math:`C B^\top q \ge 1`. Any component of :math:`q` outside the span of the tokens adds
to :math:`\|q\|` and changes no constraint, so :math:`q^\star = B\beta` and the problem
is a QP over :math:`N` variables,

.. math::

    \min_\beta \tfrac12 \beta^\top \mathrm{Gram}\,\beta \quad\text{s.t.}\quad
    C\,\mathrm{Gram}\,\beta \ge 1, \qquad \mathrm{Gram} = B^\top B .

Its Lagrange dual is a non-negative QP over the :math:`m` multipliers,

.. math::

    \min_{\lambda \ge 0} \tfrac12 \lambda^\top H \lambda - \mathbf 1^\top\lambda, \qquad
    H = C\,\mathrm{Gram}\,C^\top, \qquad \beta = C^\top \lambda,

and the KKT conditions of a pair :math:`(\beta, \lambda)` are: primal feasibility
:math:`r = C\,\mathrm{Gram}\,\beta \ge 1` (the margins), dual feasibility
:math:`\lambda \ge 0`, complementary slackness :math:`\lambda_j (r_j - 1) = 0`, and
stationarity :math:`B(\beta - C^\top\lambda) = 0`, whose norm is
:math:`\sqrt{(\beta - C^\top\lambda)^\top \mathrm{Gram}\,(\beta - C^\top\lambda)}`. With
:math:`\beta = C^\top\lambda`, primal minus dual objective equals
:math:`\sum_j \lambda_j (r_j - 1)`, so KKT means a zero duality gap.

Other geometries. For a symmetric positive definite :math:`P`, the SVM in the metric
:math:`\|q\|_{P^{-1}}^2 = q^\top P^{-1} q` has the solution :math:`q^\star_P = P B c`
(stationarity :math:`P^{-1}q = B C^\top\lambda`), and its QP is the one above with
``kernel`` :math:`B^\top P B` in place of Gram. The gradient flow of a linear model
preconditioned by a fixed :math:`P` converges in direction to this solution; for the
attention model the flow's preconditioner on :math:`q = W^\top p` is
:math:`W^\top W + \|p\|^2 I`, which is :math:`A = W_0^\top W_0` at the start (kernel
:math:`K = B^\top A B`).

Solver. The dual is solved by SciPy's Lawson-Hanson active-set NNLS
(:math:`H = R^\top R` by Cholesky, then :math:`\min_{\lambda\ge0}\|R\lambda - b\|` with
:math:`R^\top b = \mathbf 1`, which equals the dual objective up to a constant), and the
returned active set is then solved exactly, :math:`H_{SS}\lambda_S = \mathbf 1`, and
checked against every KKT condition (:func:`kkt_residuals`). An active-set method ends on
an exact solution of the KKT system (no interior-point or penalty tolerance), which is
what the KKT tests need; :math:`m` is a few hundred here, so its cost is negligible.

Cosines (exact, in reduced coordinates). For a query :math:`q` with
:math:`\|q\|^2` known, and the candidate :math:`q^\star_P = PBc`,

.. math::

    \cos(q, q^\star_P) = \frac{(B^\top P q)^\top c}
        {\|q\|\,\sqrt{c^\top (B^\top P^2 B)\, c}};

for :math:`P = I`, :math:`B^\top q` are the training logits and
:math:`B^\top P^2 B = \mathrm{Gram}`. The share of :math:`q` inside the span of the tokens
is :math:`\|\Pi_B q\| / \|q\| = \sqrt{\ell^\top \mathrm{Gram}^{-1}\ell}/\|q\|`
(:math:`\ell = B^\top q`), and :math:`\cos(q, q^\star) = (\|\Pi_B q\|/\|q\|)
\cos(\Pi_B q, q^\star)`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp
from scipy.linalg import cho_factor, cho_solve, cholesky, solve_triangular
from scipy.optimize import nnls

from theory.foundation.proof import RECONSTRUCTION, SYMBOLIC, Derivation
from theory.foundation.validation import InvalidParameter

#: The KKT tolerance of :func:`solve_token_svm`, fixed before any run: the active system
#: :math:`H_{SS}\lambda_S = 1` is solved by Cholesky with a relative error of a few
#: :math:`\epsilon\,\kappa(H_{SS})` (:math:`\epsilon = 2.2\times10^{-16}`), so every scaled
#: residual of :func:`kkt_residuals` stays below this for :math:`\kappa \le 10^{5}`
#: (the condition number is returned with each solution).
KKT_TOLERANCE = 1e-9


def constraint_matrix(selected: np.ndarray, T: int) -> tuple[np.ndarray, np.ndarray]:
    r"""The constraint matrix :math:`C` (:math:`n(T-1) \times nT`, rows
    :math:`e_{(i,\mathrm{sel}(i))} - e_{(i,t)}` over :math:`t \ne \mathrm{sel}(i)`, in
    sample-major order) and the ``(sample, token)`` pair of each row."""
    selected = np.asarray(selected, dtype=np.int64)
    n = selected.shape[0]
    if T < 2 or np.any((selected < 0) | (selected >= T)):
        raise InvalidParameter("selected", selected.tolist(), f"token indices in 0..{T - 1}")
    pairs = np.array([(i, t) for i in range(n) for t in range(T) if t != selected[i]])
    C = np.zeros((pairs.shape[0], n * T))
    rows = np.arange(pairs.shape[0])
    C[rows, pairs[:, 0] * T + selected[pairs[:, 0]]] = 1.0
    C[rows, pairs[:, 0] * T + pairs[:, 1]] = -1.0
    return C, pairs


@dataclass(frozen=True)
class TokenSVM:
    r"""A solution of the token-selection SVM in the geometry of ``kernel``
    (:math:`B^\top P B`): :math:`q^\star = P B\,` ``coefficients``, the dual
    ``multipliers`` :math:`\lambda` of the constraints ``pairs`` (sample, token), the
    margins :math:`r = C\,\text{kernel}\,c`, the norm :math:`\|q^\star\|_{P^{-1}}`, and
    :math:`\kappa(H_{SS})` of the active system."""

    coefficients: np.ndarray
    multipliers: np.ndarray
    pairs: np.ndarray
    margins: np.ndarray
    norm: float
    condition: float

    @property
    def active(self) -> np.ndarray:
        """Mask of the support constraints (:math:`\\lambda_j > 0`)."""
        return self.multipliers > 0


def _check_kernel(kernel: np.ndarray, N: int) -> np.ndarray:
    kernel = np.asarray(kernel, dtype=np.float64)
    if kernel.shape != (N, N) or not np.all(np.isfinite(kernel)):
        raise InvalidParameter("kernel", f"shape {kernel.shape}", f"a finite {N} x {N} matrix")
    return kernel


def solve_token_svm(kernel: np.ndarray, selected: np.ndarray, T: int) -> TokenSVM:
    r"""Solve the token-selection SVM for the selected tokens ``selected`` (one index per
    sample) in the geometry of ``kernel`` (Gram for the :math:`\ell_2` SVM): the dual by
    NNLS, then the active set exactly (see the module docstring). Raises
    :class:`~theory.foundation.validation.InvalidParameter` when :math:`H` is not positive definite
    (the :math:`n(T-1)` difference vectors are linearly dependent, e.g. :math:`d < n(T-1)`)
    or when the result fails the KKT conditions (no separating query exists)."""
    selected = np.asarray(selected, dtype=np.int64)
    kernel = _check_kernel(kernel, selected.shape[0] * T)
    C, pairs = constraint_matrix(selected, T)
    H = C @ kernel @ C.T
    try:
        R = cholesky(H, lower=False)
    except np.linalg.LinAlgError:
        raise InvalidParameter(
            "kernel",
            "singular on the constraints",
            "a kernel positive definite on the token differences (linearly independent "
            "tokens, e.g. d >= nT)",
        ) from None
    ones = np.ones(H.shape[0])
    rough, _ = nnls(R, solve_triangular(R, ones, trans="T"), maxiter=50 * H.shape[0])
    multipliers, condition = _polish(H, rough)
    coefficients = C.T @ multipliers
    margins = H @ multipliers
    solution = TokenSVM(
        coefficients=coefficients,
        multipliers=multipliers,
        pairs=pairs,
        margins=margins,
        norm=math.sqrt(float(coefficients @ kernel @ coefficients)),
        condition=condition,
    )
    worst = max(kkt_residuals(kernel, selected, T, coefficients, multipliers).values())
    if worst > KKT_TOLERANCE:
        raise InvalidParameter(
            "selected",
            selected.tolist(),
            f"tokens some query separates (the solution misses the KKT conditions by {worst:.2g})",
        )
    return solution


def _polish(H: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, float]:
    r"""Lawson-Hanson active-set iterations on the dual, in its normal-equations form,
    started from the (non-negative) NNLS solution ``start`` and its support: solve
    :math:`H_{SS} z_S = 1` exactly; step back towards the previous iterate while some
    :math:`z_j \le 0` (dropping the indices that reach zero); add the constraint of
    smallest margin while one is below :math:`1 - \text{tolerance}/10`. Returns
    :math:`\lambda` and :math:`\kappa(H_{SS})`."""
    m = H.shape[0]
    multipliers = np.maximum(start, 0.0)
    support = multipliers > 0
    for _ in range(3 * m + 3):
        z = _solve_on(H, support)
        while np.any(z[support] <= 0):
            bad = np.flatnonzero(support & (z <= 0))
            ratios = multipliers[bad] / (multipliers[bad] - z[bad])
            first = int(np.argmin(ratios))
            multipliers = multipliers + ratios[first] * (z - multipliers)
            multipliers[bad[first]] = 0.0
            support &= multipliers > 0
            z = _solve_on(H, support)
        multipliers = z
        slack = 1.0 - H @ multipliers
        slack[support] = -np.inf
        if m == 0 or float(np.max(slack)) <= KKT_TOLERANCE / 10:
            index = np.flatnonzero(support)
            block = H[np.ix_(index, index)]
            return multipliers, float(np.linalg.cond(block)) if index.size else 1.0
        support[int(np.argmax(slack))] = True
    raise AssertionError("the active-set iterations did not end")


def _solve_on(H: np.ndarray, support: np.ndarray) -> np.ndarray:
    r""":math:`z` with :math:`H_{SS} z_S = \mathbf 1` and :math:`z = 0` off the support."""
    z = np.zeros(H.shape[0])
    index = np.flatnonzero(support)
    if index.size:
        z[index] = cho_solve(cho_factor(H[np.ix_(index, index)]), np.ones(index.size))
    return z


def kkt_residuals(
    kernel: np.ndarray,
    selected: np.ndarray,
    T: int,
    coefficients: np.ndarray,
    multipliers: np.ndarray,
) -> dict[str, float]:
    r"""Scaled KKT residuals of a candidate pair :math:`(c, \lambda)`, each zero at the
    solution:

    * ``primal``: :math:`\max(0, 1 - \min_j r_j)`, :math:`r = C\,\text{kernel}\,c`;
    * ``dual``: :math:`\max(0, -\min_j \lambda_j) / \max_j |\lambda_j|`;
    * ``complementarity``: :math:`\sum_j |\lambda_j (r_j - 1)| / \sum_j |\lambda_j|`;
    * ``stationarity``: :math:`\|B(c - C^\top\lambda)\|_P / \|B c\|_P
      = \sqrt{\delta^\top \text{kernel}\,\delta / c^\top \text{kernel}\,c}`,
      :math:`\delta = c - C^\top\lambda`."""
    selected = np.asarray(selected, dtype=np.int64)
    kernel = _check_kernel(kernel, selected.shape[0] * T)
    C, _ = constraint_matrix(selected, T)
    c, lam = np.asarray(coefficients, dtype=float), np.asarray(multipliers, dtype=float)
    margins = C @ (kernel @ c)
    scale = float(np.max(np.abs(lam))) or 1.0
    delta = c - C.T @ lam
    norm_sq = float(c @ kernel @ c)
    return {
        "primal": max(0.0, 1.0 - float(np.min(margins))),
        "dual": max(0.0, -float(np.min(lam))) / scale,
        "complementarity": float(np.sum(np.abs(lam * (margins - 1.0))))
        / float(np.sum(np.abs(lam)) or 1.0),
        "stationarity": math.sqrt(max(float(delta @ kernel @ delta), 0.0) / norm_sq)
        if norm_sq > 0
        else math.inf,
    }


def selected_tokens(logits: np.ndarray) -> np.ndarray:
    """The token of largest attention logit in each sequence (``logits`` (n, T))."""
    return np.argmax(np.asarray(logits), axis=-1)


def direction_cosine(
    projections: np.ndarray, q_sq: float, coefficients: np.ndarray, second_moment: np.ndarray
) -> float:
    r""":math:`\cos(q, PBc) = (B^\top P q)^\top c / (\|q\|\sqrt{c^\top B^\top P^2 B\,c})`
    from ``projections`` :math:`B^\top P q`, ``q_sq`` :math:`\|q\|^2` and
    ``second_moment`` :math:`B^\top P^2 B` (the logits and Gram for :math:`P = I`)."""
    c = np.asarray(coefficients, dtype=float)
    denominator = math.sqrt(q_sq * float(c @ second_moment @ c))
    return float(np.asarray(projections) @ c) / denominator


def span_fraction(
    logits: np.ndarray, q_sq: float, gram: np.ndarray, factor: Any | None = None
) -> float:
    r""":math:`\|\Pi_B q\| / \|q\| = \sqrt{\ell^\top \mathrm{Gram}^{-1}\ell / \|q\|^2}`,
    :math:`\ell = B^\top q` the training logits (flattened); ``factor`` is
    ``scipy.linalg.cho_factor(gram)`` when the caller has it."""
    flat = np.asarray(logits, dtype=float).reshape(-1)
    inside = float(flat @ cho_solve(factor or cho_factor(gram), flat))
    return math.sqrt(max(inside, 0.0) / q_sq)


def _initialisation_moments(
    beta: np.ndarray, gram: np.ndarray, K: np.ndarray, Q: np.ndarray
) -> tuple[float, float, float, float]:
    r""":math:`|v|^2 = \beta^\top\mathrm{Gram}\,\beta`, :math:`v^\top A v = \beta^\top K\beta`,
    :math:`|Av|^2 = \beta^\top Q\beta` and :math:`|\Pi_B A v|^2 =
    (K\beta)^\top\mathrm{Gram}^{-1}K\beta` for :math:`v = B\beta`."""
    K_beta = K @ beta
    inside = float(K_beta @ cho_solve(cho_factor(gram), K_beta))
    return float(beta @ gram @ beta), float(beta @ K_beta), float(beta @ Q @ beta), inside


def misalignment_constant(
    beta: np.ndarray, gram: np.ndarray, K: np.ndarray, Q: np.ndarray
) -> float:
    r"""The predicted limit of :math:`2\|q\|\,(1 - \cos(q, q^\star))` along the flow (this
    package's own reconstruction):

    .. math::

        c_{\mathrm{init}} = \frac{\|(I - \hat v\hat v^\top) A v\|^2}{v^\top A v}
        = \frac{\beta^\top Q\beta - (\beta^\top K\beta)^2 / \beta^\top\mathrm{Gram}\,\beta}
               {\beta^\top K\beta}, \qquad v = q^\star = B\beta,

    with :math:`A = W_0^\top W_0`, :math:`K = B^\top A B`, :math:`Q = B^\top A^2 B`.

    Mechanism. Once the descent direction :math:`g = -\sum_{i,t} h_{i,t}x_{i,t}` has
    settled on :math:`\hat v`, the flow :math:`\dot p = W g`, :math:`\dot W = p g^\top`
    grows the mode :math:`p + W\hat v` like :math:`e^{\int |g|}` and damps
    :math:`p - W\hat v`; from :math:`p(0) = 0` this gives :math:`p \approx \|p\| u` with
    :math:`u = W_0\hat v / \|W_0\hat v\|` and :math:`W \approx W_0 + \|p\| u\hat v^\top`, so

    .. math::

        q = W^\top p \approx \|p\|^2\hat v + \|p\|\,\frac{A\hat v}{\sqrt{\hat v^\top A\hat v}},
        \qquad \|q\| = \|p\|^2 (1 + O(\|p\|^{-2}))

    (the second from the conserved :math:`WW^\top - pp^\top = W_0W_0^\top`). The angle to
    :math:`\hat v` is :math:`\approx \|(I - \hat v\hat v^\top)A\hat v\| /
    (\|p\|\sqrt{\hat v^\top A\hat v})`, hence :math:`1 - \cos \approx c_{\mathrm{init}} /
    (2\|q\|)`. With :math:`\|q\| \approx \|q^\star\|\log t` this is an :math:`O(1/\log t)`
    approach, slower than the :math:`O(1/\log^2 t)` of :math:`1 - \cos` for a linear model
    (whose angle is :math:`O(1/\log t)`): the initialisation's trace
    :math:`W_0^\top p` has size :math:`\|p\| \sim \|q\|^{1/2}`."""
    norm_sq, v_A_v, A_v_sq, _ = _initialisation_moments(beta, gram, K, Q)
    return (A_v_sq - v_A_v**2 / norm_sq) / v_A_v


def out_of_span_constant(beta: np.ndarray, gram: np.ndarray, K: np.ndarray, Q: np.ndarray) -> float:
    r"""The part of :func:`misalignment_constant` outside the tokens' span, the predicted
    limit of :math:`\|q_\perp\|^2/\|q\|` with :math:`q_\perp = (I - \Pi_B)q` (this
    package's own reconstruction, same mechanism):

    .. math::

        c_\perp = \frac{\|(I - \Pi_B) A v\|^2}{v^\top A v}
                = \frac{\beta^\top Q \beta - (K\beta)^\top \mathrm{Gram}^{-1} K\beta}
                       {\beta^\top K \beta}.

    From :math:`p(0) = 0`, :math:`p = W_0 B a` and :math:`q_\perp = (I - \Pi_B) W_0^\top p`
    exactly; then :math:`1 - \|\Pi_B q\|/\|q\| \approx c_\perp / (2\|q\|)`."""
    _, v_A_v, A_v_sq, inside = _initialisation_moments(beta, gram, K, Q)
    return (A_v_sq - inside) / v_A_v


def duality_gap_residual(m: int = 3, N: int = 4) -> sp.Expr:
    r"""Proof that, with :math:`\beta = C^\top\lambda`, the primal objective minus the dual
    objective equals :math:`\sum_j \lambda_j (r_j - 1)`, :math:`r = C\,G\beta`, for a
    symbolic symmetric :math:`G` and a symbolic :math:`C` (:math:`m \times N`); returns the
    expanded difference (zero)."""
    lam = sp.Matrix(sp.symbols(f"lambda0:{m}", real=True))
    C = sp.Matrix(m, N, lambda j, k: sp.Symbol(f"C_{j}_{k}", real=True))
    G = sp.Matrix(N, N, lambda j, k: sp.Symbol(f"G_{min(j, k)}_{max(j, k)}", real=True))
    beta = C.T * lam
    primal = (beta.T * G * beta)[0, 0] / 2
    dual = sum(lam) - (lam.T * C * G * C.T * lam)[0, 0] / 2
    margins = C * G * beta
    claimed = sum(lam[j] * (margins[j] - 1) for j in range(m))
    return sp.expand(primal - dual - claimed)


def derivations() -> list[Derivation]:
    """This module's derivation records."""
    return [
        Derivation(
            "Token-selection SVM: duality gap = sum_j lambda_j (r_j - 1) at beta = C^T lambda",
            sp.Eq(sp.Symbol("P") - sp.Symbol("D"), sp.Symbol("Sum_j lambda_j (r_j - 1)")),
            RECONSTRUCTION,
            duality_gap_residual,
            proof=SYMBOLIC,
            evidence="the primal-dual gap expanded for symbolic multipliers and margins",
            twin="theory.max_margin.solve_token_svm",
            simulated="verify.experiments.max_margin.family_cosine",
            test="tests/theory/test_max_margin.py::test_solution_meets_every_kkt_condition_on_random_problems",
        )
    ]


__all__ = [
    "KKT_TOLERANCE",
    "TokenSVM",
    "constraint_matrix",
    "solve_token_svm",
    "kkt_residuals",
    "selected_tokens",
    "direction_cosine",
    "span_fraction",
    "misalignment_constant",
    "out_of_span_constant",
    "duality_gap_residual",
    "derivations",
]
