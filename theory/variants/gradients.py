r"""Exact gradients of the model variants, derived and proved in SymPy at small sizes.

Derived here (this package; exact), each proved by residuals that vanish identically:

* **any loss** of the margin: :math:`h_t = \frac1n\ell'(yf)\,y\,s_t(\gamma_t - f)`, the loss
  an undefined function whose derivative is a symbol (so the proof holds for every loss),
  and :math:`w = -\ell'` written out for each loss of :mod:`theory.foundation.losses`;
* **FFN readout** :math:`f = a^\top\sigma(Bz + c)`, :math:`z = X^\top s`, for any activation
  :math:`\sigma`: :math:`h_t = \frac1n\ell'(yf)\,y\,s_t\sum_u s_u(\phi_t - \phi_u)`,
  :math:`\phi_t = a^\top(\sigma'(Bz + c)\odot Bx_t) = \partial f/\partial s_t`; and for
  :math:`\sigma = \mathrm{GELU}`, :math:`\mathrm{GELU}'(x) = \Phi(x) + x\varphi(x)`;
* **trained head**: :math:`\nabla_\nu L = \frac1n\sum_i\ell'(y_if_i)y_iX_i^\top s_i = Bg`,
  :math:`g_{i,t} = \frac1n\ell'(y_if_i)y_is_{i,t}`, and with :math:`\nu = \nu_0 + Bc` the
  scores :math:`B^\top\nu = B^\top\nu_0 + \mathrm{Gram}\,c`;
* **one-step head**: at :math:`p = 0` the attention is uniform and one GD step on
  :math:`\frac1m\sum_j\ell(y_jf_j)` gives
  :math:`\nu_1 = \nu_0 + \alpha_\nu\frac1m\sum_jw(y_j\nu_0^\top\bar x_j)y_j\bar x_j`;
* **gradient norms in reduced coordinates**: :math:`\|WG\|^2 = u^\top Ku`,
  :math:`\|pG^\top\|_F^2 = (a^\top Ka)(h^\top\mathrm{Gram}\,h)`.

Their numeric twins are the kernels of :mod:`theory.variants.kernels`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import sympy as sp

from theory.foundation.losses import weight_residuals
from theory.foundation.proof import DERIVED, SYMBOLIC, Derivation, SizedCheck, indexed
from theory.foundation.symbols import logit_symbols, real_matrix, real_vector, score_symbols
from theory.foundation.validation import Integer
from theory.model import attention_output, softmax

_label = sp.Symbol("y", real=True)
_n_samples = sp.Symbol("n", positive=True)
_step = sp.Symbol("alpha_nu", positive=True)

#: An undefined loss slope and activation slope (their values are free symbols in a proof).
LossSlope = sp.Function("ell'")
ActivationSlope = sp.Function("sigma'")


def _with_slope(name: str, slope: Any) -> Any:
    """An undefined one-argument function whose derivative is ``slope`` at its argument."""

    def fdiff(self: sp.Function, argindex: int = 1) -> Any:
        return slope(self.args[0])

    return type(name, (sp.Function,), {"fdiff": fdiff, "nargs": 1})


#: The loss :math:`\ell` and the activation :math:`\sigma` as functions with those slopes.
Loss = _with_slope("ell", LossSlope)
Activation = _with_slope("sigma", ActivationSlope)


def _reduce(expression: sp.Expr, logits: Sequence[sp.Expr], slopes: dict) -> sp.Expr:
    """Slopes to symbols, :math:`e^{a_t}` to positive symbols, then rational cancellation."""
    expression = expression.xreplace(slopes)
    positives = sp.symbols(f"e_1:{len(logits) + 1}", positive=True)
    expression = expression.subs({sp.exp(a): e for a, e in zip(logits, positives, strict=True)})
    return sp.cancel(sp.together(expression))


def _deviation(probabilities: Sequence[sp.Expr], phi: Sequence[sp.Expr], t: int) -> sp.Expr:
    r""":math:`\sum_u s_u(\phi_t - \phi_u)` (the cancellation-free deviation)."""
    return sp.Add(*[s_u * (phi[t] - phi_u) for s_u, phi_u in zip(probabilities, phi, strict=True)])


def _logit_residuals(
    loss: sp.Expr,
    margin: sp.Expr,
    logits: Sequence[sp.Expr],
    probabilities: Sequence[sp.Expr],
    phi: Sequence[sp.Expr],
    slopes: dict,
) -> list[sp.Expr]:
    r""":math:`\partial_{a_t}L - \frac1n\ell'(yf)\,y\,s_t\sum_u s_u(\phi_t - \phi_u)` for
    every token, reduced (:func:`_reduce`)."""
    slope = LossSlope(margin) * _label / _n_samples
    return [
        _reduce(
            sp.diff(loss, a_t) - slope * s_t * _deviation(probabilities, phi, t), logits, slopes
        )
        for t, (a_t, s_t) in enumerate(zip(logits, probabilities, strict=True))
    ]


def any_loss_gradient_residuals(T: int) -> list[sp.Expr]:
    r"""Proof, for ``T`` tokens and every loss :math:`\ell`, that
    :math:`\partial_{a_t}\frac1n\ell(yf) = \frac1n\ell'(yf)\,y\,s_t\sum_u s_u(\gamma_t -
    \gamma_u)` with :math:`f = \sum_t s_t\gamma_t`; returns the T residuals (all 0)."""
    T = Integer(2).check("T", T)
    logits, scores = logit_symbols(T), score_symbols(T)
    probabilities = softmax(logits)
    margin = _label * attention_output(probabilities, scores)
    loss = Loss(margin) / _n_samples
    slopes = {LossSlope(margin): sp.Symbol("L_1", real=True)}
    return _logit_residuals(loss, margin, logits, probabilities, scores, slopes)


def _ffn_parts(T: int, width: int, d: int) -> tuple:
    """Symbolic logits, tokens (T x d), B (width x d), c and a, and the FFN's pre-activations."""
    logits = logit_symbols(T)
    tokens = real_matrix("x", T, d)
    B, c, a = real_matrix("B", width, d), real_vector("c", width), real_vector("w", width)
    probabilities = softmax(logits)
    hidden = B * (tokens.T * sp.Matrix(probabilities)) + c
    return logits, tokens, B, a, probabilities, hidden


def ffn_gradient_residuals(T: int, width: int = 2, d: int = 2) -> list[sp.Expr]:
    r"""Proof, for ``T`` tokens, explicit :math:`B` (``width`` x ``d``), :math:`c`,
    :math:`a`, tokens, and every loss and activation, that
    :math:`\partial_{a_t}\frac1n\ell(yf)` with :math:`f = a^\top\sigma(BX^\top s + c)` equals
    :math:`\frac1n\ell'(yf)\,y\,s_t\sum_u s_u(\phi_t - \phi_u)`,
    :math:`\phi_t = a^\top(\sigma'(BX^\top s + c)\odot Bx_t)`; returns T residuals (all 0)."""
    T = Integer(2).check("T", T)
    logits, tokens, B, a, probabilities, hidden = _ffn_parts(T, width, d)
    output = sum(a[k] * Activation(hidden[k]) for k in range(width))
    margin = _label * output
    loss = Loss(margin) / _n_samples
    slopes = {ActivationSlope(hidden[k]): sp.Symbol(f"A_{k + 1}", real=True) for k in range(width)}
    slopes[LossSlope(margin)] = sp.Symbol("L_1", real=True)
    projections = [B * tokens[t, :].T for t in range(T)]
    phi = [
        sum(a[k] * ActivationSlope(hidden[k]) * projections[t][k] for k in range(width))
        for t in range(T)
    ]
    return _logit_residuals(loss, margin, logits, probabilities, phi, slopes)


def gelu(x: sp.Expr) -> sp.Expr:
    r""":math:`\mathrm{GELU}(x) = x\Phi(x) = \frac x2(1 + \mathrm{erf}(x/\sqrt2))`."""
    return x * (1 + sp.erf(x / sp.sqrt(2))) / 2


def gelu_prime(x: sp.Expr) -> sp.Expr:
    r""":math:`\mathrm{GELU}'(x) = \Phi(x) + x\varphi(x)`,
    :math:`\varphi(x) = e^{-x^2/2}/\sqrt{2\pi}`."""
    return (1 + sp.erf(x / sp.sqrt(2))) / 2 + x * sp.exp(-(x**2) / 2) / sp.sqrt(2 * sp.pi)


def gelu_residuals() -> list[sp.Expr]:
    r"""Proof of :math:`\mathrm{GELU}' = \Phi + x\varphi` and
    :math:`\mathrm{GELU}'' = \varphi(x)(2 - x^2)` (its extremes at :math:`x = \pm\sqrt2`)."""
    x = sp.Symbol("x", real=True)
    second = sp.exp(-(x**2) / 2) / sp.sqrt(2 * sp.pi) * (2 - x**2)
    return [
        sp.simplify(sp.diff(gelu(x), x) - gelu_prime(x)),
        sp.simplify(sp.diff(gelu_prime(x), x) - second),
    ]


def _samples(n: int, T: int, d: int) -> tuple[list, list, list, list]:
    """Per sample: its logits (free symbols), its tokens (T x d), its label, its softmax."""
    logits = [sp.symbols(f"a_{i + 1}_1:{T + 1}", real=True) for i in range(n)]
    tokens = [real_matrix(f"x{i + 1}", T, d) for i in range(n)]
    labels = sp.symbols(f"y_1:{n + 1}", real=True)
    return logits, tokens, list(labels), [softmax(row) for row in logits]


def trained_head_residuals(T: int, d: int = 2, n: int = 2) -> list[sp.Expr]:
    r"""Proof, for ``n`` sequences of ``T`` tokens in dimension ``d`` and every loss, that
    :math:`\nabla_\nu\frac1n\sum_i\ell(y_if_i) = Bg` (:math:`f_i = \nu^\top X_i^\top s_i`,
    :math:`B` the tokens as columns, :math:`g_{i,t} = \frac1n\ell'(y_if_i)y_is_{i,t}`), and
    that :math:`\nu = \nu_0 + Bc` has scores :math:`B^\top\nu_0 + B^\top Bc`; returns the
    d gradient residuals and the nT score residuals (all 0)."""
    T = Integer(2).check("T", T)
    logits, tokens, labels, probabilities = _samples(n, T, d)
    nu = real_vector("nu", d)
    margins = [
        labels[i] * (nu.T * tokens[i].T * sp.Matrix(probabilities[i]))[0, 0] for i in range(n)
    ]
    loss = sum(Loss(m) for m in margins) / _n_samples
    columns = sp.Matrix.hstack(*[tokens[i][t, :].T for i in range(n) for t in range(T)])
    g = sp.Matrix(
        [
            LossSlope(margins[i]) * labels[i] * probabilities[i][t] / _n_samples
            for i in range(n)
            for t in range(T)
        ]
    )
    slopes = {LossSlope(m): sp.Symbol(f"L_{i + 1}", real=True) for i, m in enumerate(margins)}
    flat_logits = [a for row in logits for a in row]
    gradient = [
        _reduce(sp.diff(loss, nu[k]) - (columns * g)[k], flat_logits, slopes) for k in range(d)
    ]
    nu0, c = real_vector("nu0", d), real_vector("c", n * T)
    scores = columns.T * (nu0 + columns * c) - (columns.T * nu0 + (columns.T * columns) * c)
    return gradient + [sp.expand(entry) for entry in scores]


def one_step_residuals(m: int = 2, T: int = 2, d: int = 2) -> list[sp.Expr]:
    r"""Proof that at :math:`p = 0` every :math:`s_t = 1/T` (for any W) and that one GD step
    of size :math:`\alpha_\nu` on :math:`\frac1m\sum_j\ell(y_j\nu^\top X_j^\top s_j)` from
    :math:`\nu_0` gives :math:`\nu_0 + \alpha_\nu\frac1m\sum_j w_jy_j\bar x_j`,
    :math:`w_j = -\ell'(y_j\nu_0^\top\bar x_j)`; returns the attention and the d head
    residuals (all 0)."""
    _, tokens, labels, _ = _samples(m, T, d)
    W, p = real_matrix("W", d, d), real_vector("p", d)
    uniform = [softmax(list((X * W.T * p).subs(dict.fromkeys(p, 0)))) for X in tokens]
    attention = [s - sp.Rational(1, T) for row in uniform for s in row]
    nu, nu0 = real_vector("nu", d), real_vector("nu0", d)
    margins = [labels[j] * (nu.T * tokens[j].T * sp.Matrix(uniform[j]))[0, 0] for j in range(m)]
    loss = sum(Loss(margin) for margin in margins) / m
    at_start = {nu[k]: nu0[k] for k in range(d)}
    stepped = [nu0[k] - _step * sp.diff(loss, nu[k]).subs(at_start) for k in range(d)]
    means = [tokens[j].T * sp.ones(T, 1) / T for j in range(m)]
    weights = [-LossSlope(labels[j] * (nu0.T * means[j])[0, 0]) for j in range(m)]
    pushes = sum((weights[j] * labels[j] * means[j] for j in range(m)), sp.zeros(d, 1))
    claimed = nu0 + _step * pushes / m
    head = [sp.expand(stepped[k] - claimed[k]) for k in range(d)]
    return attention + head


def reduced_norm_residuals(d: int = 2, N: int = 2) -> list[sp.Expr]:
    r"""Proof, for explicit :math:`W_0` (d x d), tokens :math:`B` (d x N), :math:`M`,
    :math:`a` and :math:`h`, that with :math:`V = W_0B`, :math:`p = Va`,
    :math:`W = W_0 + VMB^\top`, :math:`G = Bh`: :math:`\|WG\|^2 = u^\top Ku`
    (:math:`K = V^\top V`, :math:`u = h + M\,\mathrm{Gram}\,h`) and
    :math:`\|pG^\top\|_F^2 = (a^\top Ka)(h^\top\mathrm{Gram}\,h)`; returns 2 residuals."""
    W0, B, M = real_matrix("W", d, d), real_matrix("B", d, N), real_matrix("M", N, N)
    a, h = real_vector("a", N), real_vector("h", N)
    V = W0 * B
    p, W, G = V * a, W0 + V * M * B.T, B * h
    K, gram = V.T * V, B.T * B
    u = h + M * gram * h
    query = (W * G).T * (W * G) - u.T * K * u
    weight = sum(entry**2 for entry in p * G.T) - ((a.T * K * a) * (h.T * gram * h))[0, 0]
    return [sp.expand(query[0, 0]), sp.expand(weight)]


def _check(function: Callable[..., Any], *arguments: int) -> Callable[[], Any]:
    return lambda: function(*arguments)


def derivations() -> list[Derivation]:
    """This module's records, for :mod:`theory.derivations`."""
    t, u, i = sp.symbols("t u i", integer=True, positive=True)
    T, n = sp.symbols("T n", positive=True, integer=True)
    s, phi, x = indexed("s"), indexed("phi"), indexed("x")
    f, y = sp.Symbol("f", real=True), sp.Symbol("y_i", real=True)
    h, L = sp.Symbol("h_{i,t}", real=True), sp.Symbol("L", real=True)
    slope = sp.Function("ell'")
    nu, nu0, nu1 = sp.symbols("nu nu_0 nu_1", real=True)
    deviation = sp.Sum(s[u] * (phi[t] - phi[u]), (u, 1, T))
    kernels = "theory.variants.kernels"
    return [
        Derivation(
            "Logit gradient for any loss of the margin (T = 2..8)",
            sp.Eq(h, slope(y * f) * y * s[t] * deviation / n),
            DERIVED,
            SizedCheck((any_loss_gradient_residuals,), range(2, 9), (weight_residuals,)),
            SYMBOLIC,
            "residuals vanish for T = 2..8 with the loss an undefined function (phi = gamma), "
            "and w = -l' for the logistic, exponential and squared losses; the engines do not "
            "call the variant kernel yet (no simulated link)",
            twin=f"{kernels}.logit_gradient",
            test="tests/theory/variants/test_kernels.py::"
            "test_logit_gradient_equals_the_sympy_form_for_every_loss",
        ),
        Derivation(
            "FFN readout: logit gradient through phi_t = a^T (sigma'(B z + c) * B x_t) (T = 2..8)",
            sp.And(
                sp.Eq(h, slope(y * f) * y * s[t] * deviation / n),
                sp.Eq(phi[t], sp.Derivative(f, s[t])),
            ),
            DERIVED,
            SizedCheck((ffn_gradient_residuals,), range(2, 9), (gelu_residuals,)),
            SYMBOLIC,
            "residuals vanish for T = 2..8, m = 2 units, d = 2, any loss and activation; "
            "GELU' = Phi + x phi and GELU'' = phi (2 - x^2); not simulated yet",
            twin=f"{kernels}.ffn_logit_gradient",
            test="tests/theory/variants/test_kernels.py::"
            "test_ffn_gradient_equals_central_differences_of_the_loss",
        ),
        Derivation(
            "Trained head: grad_nu L = B g, g_{i,t} = l'(y_i f_i) y_i s_{i,t} / n; nu = nu0 + B c",
            sp.Eq(
                sp.Derivative(L, nu),
                sp.Sum(slope(y * f) * y * s[i, t] * x[i, t] / n, (i, 1, n), (t, 1, T)),
            ),
            DERIVED,
            SizedCheck((trained_head_residuals,), range(2, 9)),
            SYMBOLIC,
            "residuals vanish for n = 2 sequences of T = 2..8 tokens, d = 2, any loss; the "
            "scores of nu0 + B c are B^T nu0 + Gram c; not simulated yet",
            twin=f"{kernels}.score_gradient",
            test="tests/theory/variants/test_kernels.py::"
            "test_trained_head_span_step_equals_the_dense_step",
        ),
        Derivation(
            "One-step head at uniform attention: nu1 = nu0 + alpha_nu (1/m) sum_j w_j y_j xbar_j",
            sp.Eq(nu1, nu0 + _step * sp.Symbol("mean_j(w_j y_j xbar_j)")),
            DERIVED,
            _check(one_step_residuals, 2, 3, 2),
            SYMBOLIC,
            "residuals vanish for m = 2 sequences of T = 3 tokens, d = 2, any loss "
            "(w_j = -l'(y_j nu0^T xbar_j)); s_t = 1/T at p = 0 for any W; not simulated yet",
            twin=f"{kernels}.one_step_update",
            test="tests/theory/variants/test_kernels.py::"
            "test_one_step_update_is_a_gradient_step_on_the_head_loss",
        ),
        Derivation(
            "Gradient norms in reduced coordinates: ||W G||^2 = u^T K u, ||p G^T||_F^2 = "
            "(a^T K a)(h^T Gram h)",
            sp.Eq(sp.Symbol("||W G||^2"), sp.Symbol("u^T K u"), evaluate=False),
            DERIVED,
            _check(reduced_norm_residuals, 2, 2),
            SYMBOLIC,
            "polynomial residuals vanish for explicit d = 2, N = 2; not simulated yet (the "
            "observable noisy_gradient_ratio is to come)",
            twin=f"{kernels}.subset_gradient_norms",
            test="tests/theory/variants/test_kernels.py::"
            "test_reduced_gradient_norms_equal_the_dense_norms",
        ),
    ]


__all__ = [
    "LossSlope",
    "ActivationSlope",
    "Loss",
    "Activation",
    "any_loss_gradient_residuals",
    "ffn_gradient_residuals",
    "gelu",
    "gelu_prime",
    "gelu_residuals",
    "trained_head_residuals",
    "one_step_residuals",
    "reduced_norm_residuals",
    "derivations",
]
