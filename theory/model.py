r"""The attention model in SymPy, its exact gradients, and generated reference kernels.

Model (KNOWN from the paper): :math:`f(X) = \nu^\top X^\top \mathrm{softmax}(X W^\top p)`,
logits :math:`a_t = x_t^\top q` with :math:`q = W^\top p`, token scores
:math:`\gamma_t = \langle x_t, \nu\rangle`, :math:`f = \sum_t s_t \gamma_t`,
loss :math:`L = \frac1n \sum_i \ell(y_i f_i)`, :math:`\ell(z) = \log(1 + e^{-z})`.

Derived here and proved symbolically for each small size:

* :math:`h_{i,t} = \partial L / \partial a_{i,t}
  = \frac1n \ell'(y_i f_i)\, y_i\, s_{i,t} (\gamma_{i,t} - f_i)`,
  :math:`\ell'(z) = -1/(1 + e^{z})`;
* :math:`\nabla_p L = W G`, :math:`\nabla_W L = p G^\top`, :math:`G = \sum_{i,t} h_{i,t} x_{i,t}`;
* :math:`\gamma_t - f = \sum_u s_u (\gamma_t - \gamma_u)` (the cancellation-free form).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import sympy as sp
from sympy.codegen.cfunctions import log1p

from theory.foundation.codegen import lambdify_expression
from theory.foundation.proof import DERIVED, KNOWN, Derivation, for_sizes, indexed
from theory.foundation.symbols import logit_symbols, real_matrix, real_vector, score_symbols
from theory.foundation.validation import Integer, Options

GRADIENT_FORMS = ("cancellation_free", "naive")
LOSS_FORMS = ("stable", "naive")

_label = sp.Symbol("y", real=True)
_n_samples = sp.Symbol("n", positive=True)


# --------------------------------------------------------------------------- building blocks


def softmax(logits: Sequence[sp.Expr]) -> list[sp.Expr]:
    r"""Softmax over the tokens: :math:`s_t = e^{a_t} / \sum_u e^{a_u}`."""
    partition = sp.Add(*[sp.exp(a) for a in logits])
    return [sp.exp(a) / partition for a in logits]


def shifted_softmax(logits: Sequence[sp.Expr], shift: sp.Expr) -> list[sp.Expr]:
    r"""Softmax with the logits shifted by ``shift``:
    :math:`s_t = e^{a_t - m} / \sum_u e^{a_u - m}` (equal to :func:`softmax` for every m)."""
    partition = sp.Add(*[sp.exp(a - shift) for a in logits])
    return [sp.exp(a - shift) / partition for a in logits]


def stable_softmax(logits: Sequence[sp.Expr]) -> list[sp.Expr]:
    r"""Overflow-free softmax, :func:`shifted_softmax` with :math:`m = \max_u a_u`."""
    return shifted_softmax(logits, sp.Max(*logits))


def attention_output(probabilities: Sequence[sp.Expr], scores: Sequence[sp.Expr]) -> sp.Expr:
    r"""Attention output of one sequence: :math:`f = \sum_t s_t \gamma_t`."""
    return sp.Add(*[s * g for s, g in zip(probabilities, scores, strict=True)])


def logistic_loss(margin: sp.Expr) -> sp.Expr:
    r"""Logistic loss :math:`\ell(z) = \log(1 + e^{-z})`."""
    return sp.log(1 + sp.exp(-margin))


def logistic_loss_derivative(margin: sp.Expr) -> sp.Expr:
    r"""Derivative of the logistic loss, :math:`\ell'(z) = -1/(1 + e^{z})`."""
    return -1 / (1 + sp.exp(margin))


def stable_logistic_loss(margin: sp.Expr) -> sp.Expr:
    r"""Overflow-free logistic loss
    :math:`\ell(z) = \max(-z, 0) + \operatorname{log1p}(e^{-|z|})`."""
    return sp.Max(-margin, 0) + log1p(sp.exp(-sp.Abs(margin)))


def stable_logistic_loss_derivative(margin: sp.Expr) -> sp.Expr:
    r"""Overflow-free :math:`\ell'(z) = -e^{-(z + |z|)/2} / (1 + e^{-|z|})`."""
    return -sp.exp(-(margin + sp.Abs(margin)) / 2) / (1 + sp.exp(-sp.Abs(margin)))


def sequence_loss(
    logits: Sequence[sp.Expr], scores: Sequence[sp.Expr], label: sp.Expr, n_samples: sp.Expr
) -> sp.Expr:
    r"""One sequence's contribution to the loss, :math:`\frac1n \ell(y f)`."""
    output = attention_output(softmax(logits), scores)
    return logistic_loss(label * output) / n_samples


def logit_gradient(
    logits: Sequence[sp.Expr], scores: Sequence[sp.Expr], label: sp.Expr, n_samples: sp.Expr
) -> list[sp.Expr]:
    r"""The claimed gradient with respect to the logits (the textbook form):
    :math:`h_t = \frac1n \ell'(y f)\, y\, s_t (\gamma_t - f)`."""
    probabilities = softmax(logits)
    output = attention_output(probabilities, scores)
    slope = logistic_loss_derivative(label * output)
    return [
        slope * label * s * (g - output) / n_samples
        for s, g in zip(probabilities, scores, strict=True)
    ]


def cancellation_free_logit_gradient(
    logits: Sequence[sp.Expr],
    scores: Sequence[sp.Expr],
    label: sp.Expr,
    n_samples: sp.Expr,
    shift: sp.Expr | None = None,
) -> list[sp.Expr]:
    r"""The same gradient in a form with no catastrophic cancellation or overflow:
    :math:`h_t = \frac1n \ell'(y f)\, y\, s_t \sum_u s_u (\gamma_t - \gamma_u)` with
    :math:`s_t = e^{a_t - m}/\sum_u e^{a_u - m}` (``shift`` m; default
    :math:`m = \max_u a_u`, i.e. :func:`stable_softmax`) and :math:`\ell'` from
    :func:`stable_logistic_loss_derivative`."""
    probabilities = shifted_softmax(logits, sp.Max(*logits) if shift is None else shift)
    output = attention_output(probabilities, scores)
    slope = stable_logistic_loss_derivative(label * output)
    gradient = []
    for s_t, g_t in zip(probabilities, scores, strict=True):
        deviation = sp.Add(
            *[s_u * (g_t - g_u) for s_u, g_u in zip(probabilities, scores, strict=True)]
        )
        gradient.append(slope * label * s_t * deviation / n_samples)
    return gradient


# --------------------------------------------------------------------------- proofs


def _exp_atoms_to_positive_symbols(expression: sp.Expr, logits: Sequence[sp.Expr]) -> sp.Expr:
    """Replace each e^{a_t} by a positive symbol so rational simplification applies."""
    positives = sp.symbols(f"e_1:{len(logits) + 1}", positive=True)
    return expression.subs({sp.exp(a): e for a, e in zip(logits, positives, strict=True)})


def logit_gradient_residuals(T: int) -> list[sp.Expr]:
    r"""Proof, for ``T`` tokens, that differentiating :math:`\frac1n \ell(y f)` by SymPy gives
    :math:`h_t = \frac1n \ell'(y f)\, y\, s_t(\gamma_t - f)`; returns the T simplified
    residuals :math:`\partial_{a_t}(\frac1n\ell(yf)) - h_t` (all 0). Label y and n are
    symbolic. Method: differentiate, write :math:`e^{y f} = E`, :math:`e^{a_t} = e_t > 0`,
    and cancel the rational function."""
    T = Integer(2).check("T", T)
    logits, scores = logit_symbols(T), score_symbols(T)
    loss = sequence_loss(logits, scores, _label, _n_samples)
    claimed = logit_gradient(logits, scores, _label, _n_samples)
    output = attention_output(softmax(logits), scores)
    margin_exp = sp.Symbol("E", positive=True)
    residuals = []
    for a_t, h_t in zip(logits, claimed, strict=True):
        difference = sp.diff(loss, a_t) - h_t
        difference = difference.subs(sp.exp(_label * output), margin_exp)
        difference = _exp_atoms_to_positive_symbols(difference, logits)
        residuals.append(sp.cancel(sp.together(difference)))
    return residuals


def score_deviation_residuals(T: int) -> list[sp.Expr]:
    r"""Proof of the cancellation-free identity
    :math:`\gamma_t - f = \sum_u s_u (\gamma_t - \gamma_u)` for ``T`` tokens (uses
    :math:`\sum_u s_u = 1`); returns the T simplified residuals (all 0)."""
    T = Integer(2).check("T", T)
    logits, scores = logit_symbols(T), score_symbols(T)
    probabilities = softmax(logits)
    output = attention_output(probabilities, scores)
    residuals = []
    for g_t in scores:
        deviation = sp.Add(*[s * (g_t - g) for s, g in zip(probabilities, scores, strict=True)])
        difference = _exp_atoms_to_positive_symbols((g_t - output) - deviation, logits)
        residuals.append(sp.cancel(sp.together(difference)))
    return residuals


def shifted_softmax_residuals(T: int) -> list[sp.Expr]:
    r"""Proof that the softmax is shift-invariant, :math:`e^{a_t - m}/\sum_u e^{a_u - m} =
    e^{a_t}/\sum_u e^{a_u}` for every real m (so also for :math:`m = \max_u a_u`)."""
    T = Integer(2).check("T", T)
    logits = logit_symbols(T)
    shift = sp.Symbol("m", real=True)
    residuals = []
    for shifted, plain in zip(shifted_softmax(logits, shift), softmax(logits), strict=True):
        difference = sp.expand(shifted - plain, power_exp=True)
        difference = _exp_atoms_to_positive_symbols(difference, logits)
        residuals.append(sp.cancel(sp.together(difference)))
    return residuals


def stable_loss_residuals() -> list[sp.Expr]:
    r"""Proof that the overflow-free loss and slope equal :math:`\log(1 + e^{-z})` and
    :math:`-1/(1 + e^{z})`, case by case on the sign of z; returns 4 residuals (all 0)."""
    magnitude = sp.Symbol("zeta", positive=True)
    residuals = []
    for margin in (magnitude, -magnitude):
        loss_difference = stable_logistic_loss(margin).rewrite(sp.log) - logistic_loss(margin)
        loss_difference = sp.simplify(sp.expand_log(sp.expand(loss_difference), force=True))
        if loss_difference != 0:
            loss_difference = sp.simplify(sp.exp(loss_difference) - 1)
        slope_difference = stable_logistic_loss_derivative(margin) - logistic_loss_derivative(
            margin
        )
        residuals.extend([loss_difference, sp.simplify(slope_difference)])
    return residuals


def model_logits(tokens: sp.Matrix, W: sp.Matrix, p: sp.Matrix) -> sp.Matrix:
    r"""Logits of one sequence, :math:`a = X W^\top p` (``tokens`` is the T x d matrix X)."""
    return tokens * W.T * p


def model_output(tokens: sp.Matrix, W: sp.Matrix, p: sp.Matrix, nu: sp.Matrix) -> sp.Expr:
    r"""Model output :math:`f(X) = \nu^\top X^\top \mathrm{softmax}(X W^\top p)`."""
    probabilities = sp.Matrix(softmax(list(model_logits(tokens, W, p))))
    return (nu.T * tokens.T * probabilities)[0, 0]


def chain_rule_residuals(T: int, d: int = 2, n: int = 2) -> tuple[sp.Matrix, sp.Matrix]:
    r"""Proof of the vectorised gradients :math:`\nabla_W L = p G^\top`,
    :math:`\nabla_p L = W G`, :math:`G = \sum_{i,t} h_{i,t} x_{i,t}`, for ANY loss that
    depends on (W, p) only through the logits :math:`a_{i,t} = x_{i,t}^\top W^\top p`.

    The loss is an undefined SymPy function of the n T logits whose partial derivatives
    are the symbols :math:`h_{i,t}`; SymPy's chain rule differentiates it with respect to
    every entry of explicit symbolic W (d x d), p (d) and tokens. Returns the simplified
    residual matrices :math:`(\nabla_W L - p G^\top, \nabla_p L - W G)` (both zero).
    Combined with :func:`logit_gradient_residuals` this proves the exact GD update.
    """
    T = Integer(2).check("T", T)
    d = Integer(1).check("d", d)
    n = Integer(1).check("n", n)
    W, p = real_matrix("W", d, d), real_vector("p", d)
    tokens = [[real_vector(f"x_{{{i + 1},{t + 1}}}", d) for t in range(T)] for i in range(n)]
    h = [[sp.Symbol(f"h_{{{i + 1},{t + 1}}}", real=True) for t in range(T)] for i in range(n)]
    flat_h = [h_it for row in h for h_it in row]

    def _partial(self: sp.Function, argindex: int = 1) -> sp.Symbol:
        return flat_h[argindex - 1]

    loss_of_logits = type("LossOfLogits", (sp.Function,), {"fdiff": _partial})
    logits = [(x_it.T * W.T * p)[0, 0] for row in tokens for x_it in row]
    loss = loss_of_logits(*logits)
    G = sp.zeros(d, 1)
    for i in range(n):
        for t in range(T):
            G += h[i][t] * tokens[i][t]
    grad_W = sp.Matrix(d, d, lambda j, m: sp.diff(loss, W[j, m]))
    grad_p = sp.Matrix(d, 1, lambda j, _: sp.diff(loss, p[j]))
    return (grad_W - p * G.T).applyfunc(sp.expand), (grad_p - W * G).applyfunc(sp.expand)


def stable_gradient_residuals(T: int) -> list[sp.Expr]:
    r"""Proof that :func:`cancellation_free_logit_gradient` equals :func:`logit_gradient`
    for ``T`` tokens, case by case on the sign of the margin :math:`z = y f`.

    Exponentials become positive symbols: :math:`e^{a_t} = e_t`, :math:`e^{-m} = M` for the
    shift m (any real m, so in particular :math:`m = \max_u a_u`), and
    :math:`e^{-|z|} = w`; then each residual is a rational function that cancels to 0.
    """
    T = Integer(2).check("T", T)
    scores = score_symbols(T)
    positives = sp.symbols(f"e_1:{T + 1}", positive=True)
    shift_factor = sp.Symbol("M", positive=True)  # e^{-m}
    decay = sp.Symbol("w", positive=True)  # e^{-|z|}
    shifted_partition = sp.Add(*[e * shift_factor for e in positives])
    shifted = [e * shift_factor / shifted_partition for e in positives]
    partition = sp.Add(*positives)
    plain = [e / partition for e in positives]
    output = attention_output(plain, scores)
    magnitude = sp.Symbol("zeta", positive=True)  # |z|
    as_decay = {sp.exp(-magnitude): decay, sp.exp(magnitude): 1 / decay}
    slopes = [
        (
            stable_logistic_loss_derivative(sign * magnitude).subs(as_decay),
            logistic_loss_derivative(sign * magnitude).subs(as_decay),
        )
        for sign in (1, -1)
    ]
    residuals = []
    for stable_slope, plain_slope in slopes:
        for s_stable, s_plain, g_t in zip(shifted, plain, scores, strict=True):
            deviation = sp.Add(*[s * (g_t - g) for s, g in zip(shifted, scores, strict=True)])
            stable_t = stable_slope * _label * s_stable * deviation / _n_samples
            plain_t = plain_slope * _label * s_plain * (g_t - output) / _n_samples
            residuals.append(sp.cancel(sp.together(stable_t - plain_t)))
    return residuals


def end_to_end_gradient_residuals(T: int = 2, d: int = 2) -> tuple[sp.Matrix, sp.Matrix]:
    r"""Direct proof, with the true logistic loss and one sequence, that SymPy's
    :math:`\partial L/\partial W` and :math:`\partial L/\partial p` equal :math:`p G^\top`
    and :math:`W G` with :math:`h_t = \frac1n \ell'(yf) y s_t (\gamma_t - f)` and
    :math:`\gamma_t = \langle x_t, \nu\rangle` (no generic function). Slower; small sizes."""
    T = Integer(2).check("T", T)
    d = Integer(1).check("d", d)
    W, p, nu = real_matrix("W", d, d), real_vector("p", d), real_vector("nu", d)
    tokens = real_matrix("x", T, d)
    logits = list(model_logits(tokens, W, p))
    scores = list(tokens * nu)
    probabilities = softmax(logits)
    output = attention_output(probabilities, scores)
    loss = logistic_loss(_label * output) / _n_samples
    h = logit_gradient(logits, scores, _label, _n_samples)
    G = sp.zeros(d, 1)
    for t in range(T):
        G += h[t] * tokens[t, :].T
    margin_exp = sp.Symbol("E", positive=True)
    positives = sp.symbols(f"e_1:{T + 1}", positive=True)
    to_rational = {sp.exp(a): e for a, e in zip(logits, positives, strict=True)}

    def _reduce(expression: sp.Expr) -> sp.Expr:
        expression = expression.subs(sp.exp(_label * output), margin_exp)
        expression = expression.subs(to_rational)
        return sp.cancel(sp.together(expression))

    grad_W = sp.Matrix(d, d, lambda j, m: sp.diff(loss, W[j, m]))
    grad_p = sp.Matrix(d, 1, lambda j, _: sp.diff(loss, p[j]))
    return (grad_W - p * G.T).applyfunc(_reduce), (grad_p - W * G).applyfunc(_reduce)


# --------------------------------------------------------------------------- reference kernels


_shift = sp.Symbol("m", real=True)


@lru_cache(maxsize=64)
def _logit_gradient_kernel(T: int, module: str, form: str) -> Callable[..., Any]:
    logits, scores = logit_symbols(T), score_symbols(T)
    if form == "cancellation_free":
        expressions = cancellation_free_logit_gradient(
            logits, scores, _label, _n_samples, shift=_shift
        )
    else:
        expressions = logit_gradient(logits, scores, _label, _n_samples)
    return lambdify_expression([logits, scores, _label, _n_samples, _shift], expressions, module)


@lru_cache(maxsize=64)
def _sequence_loss_kernel(T: int, module: str, form: str) -> Callable[..., Any]:
    logits, scores = logit_symbols(T), score_symbols(T)
    if form == "stable":
        output = attention_output(shifted_softmax(logits, _shift), scores)
        expression = stable_logistic_loss(_label * output) / _n_samples
    else:
        expression = sequence_loss(logits, scores, _label, _n_samples)
    return lambdify_expression([logits, scores, _label, _n_samples, _shift], expression, module)


def _wrap_kernel(kernel: Callable[..., Any], module: str, stack: bool) -> Callable[..., Any]:
    """Adapt a generated kernel to ``(logits, scores, label, n_samples)``: the max-shift is
    computed here (``max`` over the token axis 0) and passed as the argument m."""
    if module == "mpmath":

        def mpmath_kernel(logits: Any, scores: Any, label: Any, n_samples: Any) -> Any:
            logits = list(logits)
            return kernel(logits, list(scores), label, n_samples, max(logits))

        return mpmath_kernel

    def numpy_kernel(logits: Any, scores: Any, label: Any, n_samples: Any) -> np.ndarray:
        logits = np.asarray(logits, dtype=np.float64)
        values = kernel(
            logits, np.asarray(scores, dtype=np.float64), label, n_samples, logits.max(axis=0)
        )
        if stack:
            return np.stack(np.broadcast_arrays(*values), axis=0)
        return np.asarray(values, dtype=np.float64)

    return numpy_kernel


def reference_logit_gradient(
    T: int, module: str = "numpy", form: str = "cancellation_free"
) -> Callable[..., Any]:
    r"""Generated reference kernel ``h = kernel(logits, scores, label, n_samples)`` for
    :math:`h_t = \partial L/\partial a_t = \frac1n \ell'(y f)\, y\, s_t (\gamma_t - f)` of
    one sequence of ``T`` tokens.

    ``form="cancellation_free"`` (default) lambdifies
    :func:`cancellation_free_logit_gradient` (max-shifted softmax, overflow-free
    :math:`\ell'`, :math:`\gamma_t - f = \sum_u s_u(\gamma_t - \gamma_u)`), proved equal to
    the textbook form by :func:`stable_gradient_residuals`; ``form="naive"`` lambdifies the
    textbook :func:`logit_gradient` (which loses accuracy at large gaps).

    ``module="numpy"``: logits/scores are arrays of shape ``(T, ...)`` (extra axes
    broadcast); returns a float64 array of shape ``(T, ...)``. ``module="mpmath"``: logits/
    scores are length-T sequences of mpf; returns a list of T mpf computed at the caller's
    working precision (use ``mpmath.workdps``).
    """
    T = Integer(2).check("T", T)
    module = Options(("numpy", "mpmath")).check("module", module)
    form = Options(GRADIENT_FORMS).check("form", form)
    wrapped = _wrap_kernel(_logit_gradient_kernel(T, module, form), module, stack=True)
    wrapped.__doc__ = reference_logit_gradient.__doc__
    return wrapped


def reference_sequence_loss(
    T: int, module: str = "numpy", form: str = "stable"
) -> Callable[..., Any]:
    r"""Generated reference kernel ``loss = kernel(logits, scores, label, n_samples)`` for
    one sequence's loss contribution :math:`\frac1n \ell(y f)`,
    :math:`f = \sum_t s_t \gamma_t`, :math:`\ell(z) = \log(1 + e^{-z})`.

    ``form="stable"`` uses the max-shifted softmax and
    :math:`\ell(z) = \max(-z, 0) + \operatorname{log1p}(e^{-|z|})` (proved equal by
    :func:`shifted_softmax_residuals` and :func:`stable_loss_residuals`); ``form="naive"``
    the literal formula. Argument shapes as in :func:`reference_logit_gradient`.
    """
    T = Integer(2).check("T", T)
    module = Options(("numpy", "mpmath")).check("module", module)
    form = Options(LOSS_FORMS).check("form", form)
    wrapped = _wrap_kernel(_sequence_loss_kernel(T, module, form), module, stack=False)
    wrapped.__doc__ = reference_sequence_loss.__doc__
    return wrapped


def derivations() -> list[Derivation]:
    """This module's derived results, as records for :mod:`theory.derivations`."""
    from theory.foundation.proof import SYMBOLIC, SizedCheck
    from theory.foundation.symbols import T, n

    t_index, u_index, i_index = sp.symbols("t u i", integer=True, positive=True)
    s, gamma, a = indexed("s"), indexed("gamma"), indexed("a")
    f = sp.Symbol("f", real=True)
    label = sp.Symbol("y_i", real=True)
    loss_slope = sp.Function("ell'")
    h = sp.Symbol("h_{i,t}", real=True)
    loss = sp.Symbol("L", real=True)
    d_dim = sp.Symbol("d", positive=True, integer=True)
    W = sp.MatrixSymbol("W", d_dim, d_dim)
    p = sp.MatrixSymbol("p", d_dim, 1)
    G = sp.MatrixSymbol("G", d_dim, 1)
    return [
        Derivation(
            "Model output and loss",
            sp.Eq(f, sp.Sum(s[t_index] * gamma[t_index], (t_index, 1, T))),
            KNOWN,
            twin="theory.model.reference_sequence_loss",
            simulated="verify.sim.observables.split_metrics",
            test="tests/theory/test_model.py::test_stable_loss_kernel_has_no_overflow_at_huge_margins",
        ),
        Derivation(
            "Gradient with respect to the logits (proved for T = 2..8)",
            sp.Eq(
                sp.Derivative(loss, a[i_index, t_index]),
                loss_slope(label * f) * label * s[t_index] * (gamma[t_index] - f) / n,
            ),
            DERIVED,
            for_sizes(logit_gradient_residuals),
            SYMBOLIC,
            "residuals vanish for T = 2..8 tokens (symbolic label y and n)",
            twin="theory.model.reference_logit_gradient",
            simulated="verify.sim.kernels.logit_gradient",
            test="tests/theory/test_model.py::test_gradients_match_float64_central_differences",
        ),
        Derivation(
            "Vectorised gradients, G = sum_{i,t} h_{i,t} x_{i,t} (chain rule, T = 2..8, d = 2)",
            sp.And(
                sp.Eq(sp.Derivative(loss, p), W * G, evaluate=False),
                sp.Eq(sp.Derivative(loss, W), p * G.T, evaluate=False),
            ),
            DERIVED,
            for_sizes(chain_rule_residuals),
            SYMBOLIC,
            "residuals vanish for T = 2..8, explicit d = 2, n = 2, any loss of the logits",
            simulated="verify.sim.engines.dense.DenseEngine.step",
            test="tests/theory/test_model.py::test_gradients_match_float64_central_differences",
        ),
        Derivation(
            "Cancellation-free score deviation (T = 2..8)",
            sp.Eq(
                gamma[t_index] - f,
                sp.Sum(s[u_index] * (gamma[t_index] - gamma[u_index]), (u_index, 1, T)),
            ),
            DERIVED,
            for_sizes(score_deviation_residuals),
            SYMBOLIC,
            "residuals vanish for T = 2..8",
            twin="theory.model.reference_logit_gradient",
            simulated="verify.sim.kernels.score_differences",
            test="tests/theory/test_model.py::test_cancellation_free_kernel_keeps_relative_accuracy_at_large_gaps",
        ),
        Derivation(
            "Overflow-free kernel equals the textbook gradient (T = 2..8)",
            sp.Eq(
                h,
                loss_slope(label * f)
                * label
                * s[t_index]
                * sp.Sum(s[u_index] * (gamma[t_index] - gamma[u_index]), (u_index, 1, T))
                / n,
            ),
            DERIVED,
            SizedCheck(
                (stable_gradient_residuals, shifted_softmax_residuals),
                range(2, 9),
                (stable_loss_residuals,),
            ),
            SYMBOLIC,
            "residuals vanish for T = 2..8, both signs of the margin, any shift",
            twin="theory.model.reference_logit_gradient",
            simulated="verify.sim.kernels.logit_gradient",
            test="tests/sim/test_kernels.py::test_float_kernel_equals_generated_sympy_kernel",
        ),
    ]
