r"""The softmax saturation factor :math:`s(1-s)` of the selected token, as a cosh.

Exact identity (derived by this package; the rebuttal states it with :math:`\log T`):
if the selected token leads each of the other :math:`T-1` tokens by the same gap x, then

.. math:: s = \frac{e^x}{e^x + T - 1},\qquad
          s(1-s) = \frac{1}{2 + 2\cosh(x - \log(T-1))}.

The paper's form :math:`1/(2 + 2\cosh(x - \log T))` differs from the exact one by a factor
in :math:`[\frac{T-1}{T}, \frac{T}{T-1}]` (sharp, attained as :math:`x \to \pm\infty`),
from :math:`\cosh(a + b) \le e^{|b|}\cosh a`.

Unequal gaps :math:`x_u` (u = 2..T): with :math:`S = \sum_u e^{-x_u}`,
:math:`s = 1/(1+S)`, :math:`s(1-s) = S/(1+S)^2 = 1/(2 + 2\cosh(x_{\rm eff} - \log(T-1)))`,
:math:`x_{\rm eff} = -\log(\frac{1}{T-1}\sum_u e^{-x_u})` (a soft-min) with
:math:`x_{\min} \le x_{\rm eff} \le \min(x_{\max}, x_{\min} + \log(T-1))`.

Reconstruction (this package's own derivation; the paper's exact statement is not available).
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp
from scipy.special import logsumexp

from theory.foundation.numerics import finite_array, reciprocal_two_plus_two_cosh
from theory.foundation.proof import RECONSTRUCTION, Derivation, for_sizes
from theory.foundation.symbols import T as T_symbol
from theory.foundation.symbols import gap_symbols
from theory.foundation.symbols import x as x_symbol
from theory.foundation.validation import Integer, InvalidParameter

# --------------------------------------------------------------------------- symbolic


def leader_probability_expression(gap: sp.Expr = x_symbol, T: sp.Expr = T_symbol) -> sp.Expr:
    r"""Attention probability of a token leading all :math:`T-1` others by ``gap``:
    :math:`s = e^x / (e^x + T - 1)`."""
    return sp.exp(gap) / (sp.exp(gap) + T - 1)


def exact_saturation_expression(gap: sp.Expr = x_symbol, T: sp.Expr = T_symbol) -> sp.Expr:
    r""":math:`\frac{1}{2 + 2\cosh(x - \log(T-1))}` (equals :math:`s(1-s)` exactly)."""
    return 1 / (2 + 2 * sp.cosh(gap - sp.log(T - 1)))


def paper_saturation_expression(gap: sp.Expr = x_symbol, T: sp.Expr = T_symbol) -> sp.Expr:
    r"""The paper's form :math:`\frac{1}{2 + 2\cosh(x - \log T)}`."""
    return 1 / (2 + 2 * sp.cosh(gap - sp.log(T)))


def _rational_in_exp(expression: sp.Expr, variable: sp.Symbol) -> sp.Expr:
    positive = sp.Symbol("E_x", positive=True)
    rewritten = sp.expand(expression.rewrite(sp.exp), power_exp=True)
    rewritten = sp.powsimp(sp.expand_log(rewritten, force=True))
    return sp.cancel(sp.together(rewritten.subs(sp.exp(variable), positive)))


def saturation_identity_residual() -> sp.Expr:
    r"""Proof of :math:`s(1-s) = 1/(2 + 2\cosh(x - \log(T-1)))` for symbolic x and
    :math:`T = m + 1`, m > 0 (so every T > 1); returns the simplified residual (0)."""
    m = sp.Symbol("m", positive=True)
    s = leader_probability_expression(x_symbol, m + 1)
    residual = s * (1 - s) - exact_saturation_expression(x_symbol, m + 1)
    return _rational_in_exp(residual, x_symbol)


def cosh_shift_identity_residuals() -> list[sp.Expr]:
    r"""Proof of :math:`\cosh(a+b) \le e^{|b|}\cosh a` through the exact identity
    :math:`e^{|b|}\cosh a - \cosh(a + b) = \sinh|b|\, e^{-\operatorname{sign}(b) a} \ge 0`,
    checked for b > 0 and b < 0; returns the two simplified residuals (0)."""
    a = sp.Symbol("a", real=True)
    b = sp.Symbol("b", positive=True)
    residuals = []
    for shift, tilt in ((b, -a), (-b, a)):
        residual = sp.exp(b) * sp.cosh(a) - sp.cosh(a + shift) - sp.sinh(b) * sp.exp(tilt)
        residuals.append(sp.simplify(sp.expand(residual.rewrite(sp.exp))))
    return residuals


def paper_form_ratio_expression(gap: sp.Expr = x_symbol, T: sp.Expr = T_symbol) -> sp.Expr:
    r"""Ratio paper form / exact form,
    :math:`\frac{2 + 2\cosh(x - \log(T-1))}{2 + 2\cosh(x - \log T)}`."""
    return paper_saturation_expression(gap, T) / exact_saturation_expression(gap, T)


def paper_form_ratio_limits() -> tuple[sp.Expr, sp.Expr]:
    r"""The ratio's limits :math:`x \to +\infty` and :math:`x \to -\infty`:
    :math:`T/(T-1)` and :math:`(T-1)/T`, i.e. the factor bound is attained asymptotically.
    Computed by SymPy with :math:`T = m + 1`, m > 0; returned in terms of T."""
    m = sp.Symbol("m", positive=True)
    ratio = paper_form_ratio_expression(x_symbol, m + 1).rewrite(sp.exp)
    upper = sp.limit(ratio, x_symbol, sp.oo)
    lower = sp.limit(ratio, x_symbol, -sp.oo)
    return sp.simplify(upper.subs(m, T_symbol - 1)), sp.simplify(lower.subs(m, T_symbol - 1))


def saturation_slope_residual() -> sp.Expr:
    r"""Proof of unimodality: with :math:`\phi(v) = 1/(2 + 2\cosh v)`,
    :math:`\phi'(v) = -\sinh v / (2 (1 + \cosh v)^2)`, negative for v > 0 and positive for
    v < 0, so :math:`\phi(x - \log(T-1))` peaks (value 1/4) at :math:`x = \log(T-1)`.
    Returns the simplified residual of the derivative formula (0)."""
    v = sp.Symbol("v", real=True)
    phi = 1 / (2 + 2 * sp.cosh(v))
    return sp.simplify(sp.diff(phi, v) + sp.sinh(v) / (2 * (1 + sp.cosh(v)) ** 2))


def effective_gap_expression(gaps: tuple[sp.Expr, ...]) -> sp.Expr:
    r""":math:`x_{\rm eff} = -\log\bigl(\frac{1}{T-1}\sum_{u=2}^T e^{-x_u}\bigr)`."""
    return -sp.log(sp.Add(*[sp.exp(-g) for g in gaps]) / len(gaps))


def unequal_gaps_residuals(T: int) -> list[sp.Expr]:
    r"""Proof, for ``T`` tokens whose leader has gaps :math:`x_2..x_T` (symbols), that
    :math:`s(1-s) = S/(1+S)^2` with :math:`s = 1/(1+S)`, :math:`S = \sum_u e^{-x_u}`, and
    :math:`S/(1+S)^2 = 1/(2 + 2\cosh(x_{\rm eff} - \log(T-1)))`; returns 2 residuals (0)."""
    T = Integer(2).check("T", T)
    gaps = gap_symbols(T - 1)
    decays = sp.symbols(f"w_2:{T + 1}", positive=True)  # w_u = e^{-x_u}
    to_decays = {sp.exp(-g): w for g, w in zip(gaps, decays, strict=True)}
    logits = (sp.Integer(0),) + tuple(-g for g in gaps)
    partition = sp.Add(*[sp.exp(a) for a in logits])
    s = sp.exp(logits[0]) / partition
    total = sp.Add(*decays)
    first = sp.cancel(sp.together((s * (1 - s)).subs(to_decays) - total / (1 + total) ** 2))
    cosh_form = 1 / (2 + 2 * sp.cosh(effective_gap_expression(gaps) - sp.log(T - 1)))
    cosh_form = sp.expand(cosh_form.rewrite(sp.exp), power_exp=True)
    cosh_form = sp.powsimp(sp.expand_log(cosh_form, force=True), combine="exp")
    cosh_form = sp.simplify(cosh_form.subs(to_decays))
    second = sp.cancel(sp.together(cosh_form - total / (1 + total) ** 2))
    return [first, second]


# --------------------------------------------------------------------------- numeric


def saturation_equal_gaps(gap: np.ndarray | float, T: int) -> np.ndarray:
    r"""Exact :math:`s(1-s) = 1/(2 + 2\cosh(x - \log(T-1)))` for a leader ahead of every
    other token by ``gap`` (overflow-free, any real gap)."""
    T = Integer(2).check("T", T)
    gap = finite_array("gap", gap)
    return reciprocal_two_plus_two_cosh(gap - math.log(T - 1))


def saturation_paper_form(gap: np.ndarray | float, T: int) -> np.ndarray:
    r"""The paper's :math:`1/(2 + 2\cosh(x - \log T))` (overflow-free)."""
    T = Integer(2).check("T", T)
    gap = finite_array("gap", gap)
    return reciprocal_two_plus_two_cosh(gap - math.log(T))


def paper_form_ratio(gap: np.ndarray | float, T: int) -> np.ndarray:
    r"""Exact ratio paper form / exact form,
    :math:`\frac{2 + 2\cosh(x - \log(T-1))}{2 + 2\cosh(x - \log T)}` (log-domain, any gap)."""
    T = Integer(2).check("T", T)
    gap = finite_array("gap", gap)
    shift = math.log1p(1.0 / (T - 1))  # beta = log(T/(T-1)), without rounding log T - log(T-1)
    exact_shifted, paper_shifted = gap - math.log(T - 1), gap - math.log(T)
    # |v_E| - |v_P| is exactly +-beta when v_E, v_P share a sign (v_E - v_P = beta).
    magnitude_difference = np.where(
        paper_shifted >= 0.0,
        shift,
        np.where(exact_shifted <= 0.0, -shift, exact_shifted + paper_shifted),
    )
    log_ratio = magnitude_difference + 2.0 * (
        np.log1p(np.exp(-np.abs(exact_shifted))) - np.log1p(np.exp(-np.abs(paper_shifted)))
    )
    return np.exp(log_ratio)


def paper_form_ratio_bound(T: int) -> tuple[float, float]:
    r"""Sharp two-sided factor between the paper's and the exact form:
    :math:`\frac{T-1}{T} \le \frac{1/(2+2\cosh(x-\log T))}{1/(2+2\cosh(x-\log(T-1)))}
    \le \frac{T}{T-1}` for all real x. Derivation: with :math:`v = x - \log(T-1)`,
    :math:`\beta = \log\frac{T}{T-1}`, :math:`2 + 2\cosh(v \mp \beta) \le
    e^{\beta}(2 + 2\cosh v)` by :math:`\cosh(a+b) \le e^{|b|}\cosh a`.

    Reconstruction (this package's own derivation; the paper's exact statement is not
    available). Returns ``(lower, upper) = ((T-1)/T, T/(T-1))``."""
    T = Integer(2).check("T", T)
    return (T - 1) / T, T / (T - 1)


def _gaps_array(gaps: np.ndarray) -> np.ndarray:
    gaps = finite_array("gaps", gaps)
    if gaps.ndim == 0 or gaps.shape[-1] < 1:
        raise InvalidParameter(
            "gaps",
            f"shape {gaps.shape}",
            "an array whose last axis has length T - 1 >= 1 (one gap per competitor)",
        )
    return gaps


def log_competitor_mass(gaps: np.ndarray) -> np.ndarray:
    r""":math:`\log S = \log \sum_u e^{-x_u}` over the last axis (log-sum-exp, overflow-free)."""
    return logsumexp(-_gaps_array(gaps), axis=-1)


def leader_probability(gaps: np.ndarray) -> np.ndarray:
    r"""Attention probability of the leader, :math:`s = 1/(1 + S)`,
    :math:`S = \sum_u e^{-x_u}` (gaps on the last axis; overflow-free)."""
    log_mass = log_competitor_mass(gaps)
    softplus = np.maximum(log_mass, 0.0) + np.log1p(np.exp(-np.abs(log_mass)))
    return np.exp(-softplus)  # = 1/(1 + S), also accurate where it is subnormal


def selected_saturation(gaps: np.ndarray) -> np.ndarray:
    r"""Saturation factor of the leader, :math:`s(1-s) = S/(1+S)^2 = 1/(2 + 2\cosh \log S)`,
    :math:`S = \sum_u e^{-x_u}`, from the gaps :math:`x_u` to its T-1 competitors on the last
    axis. Overflow-free and relatively accurate for gaps of any size and sign.

    Reconstruction (this package's own derivation; the paper's exact statement is not
    available)."""
    return reciprocal_two_plus_two_cosh(log_competitor_mass(gaps))


def effective_gap(gaps: np.ndarray) -> np.ndarray:
    r"""Soft-min gap :math:`x_{\rm eff} = -\log\bigl(\frac{1}{T-1}\sum_u e^{-x_u}\bigr)`
    (last axis), for which :math:`s(1-s) = 1/(2 + 2\cosh(x_{\rm eff} - \log(T-1)))` exactly
    and :math:`x_{\min} \le x_{\rm eff} \le \min(x_{\max}, x_{\min} + \log(T-1))`.

    Reconstruction (this package's own derivation; the paper's exact statement is not
    available)."""
    gaps = _gaps_array(gaps)
    return math.log(gaps.shape[-1]) - log_competitor_mass(gaps)


def effective_gap_bounds(
    gaps: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    r"""Bounds on :func:`effective_gap`: :math:`x_{\min}` and
    :math:`\min(x_{\max}, x_{\min} + \log(T-1))` (last axis)."""
    gaps = _gaps_array(gaps)
    gap_min, gap_max = gaps.min(axis=-1), gaps.max(axis=-1)
    return gap_min, np.minimum(gap_max, gap_min + math.log(gaps.shape[-1]))


def saturation_bounds(
    x_min: np.ndarray | float, x_max: np.ndarray | float, T: int
) -> tuple[np.ndarray, np.ndarray]:
    r"""Bracket on :math:`s(1-s)` when the leader's gaps lie in :math:`[x_{\min}, x_{\max}]`:
    with :math:`\phi(x) = 1/(2 + 2\cosh(x - \log(T-1)))` (unimodal, peak 1/4 at
    :math:`\log(T-1)`) and :math:`I = [x_{\min}, \min(x_{\max}, x_{\min} + \log(T-1))]`
    (which contains :math:`x_{\rm eff}`, and is inside :math:`[x_{\min}, x_{\max}]`),

    .. math:: \min(\phi(\inf I), \phi(\sup I)) \le s(1-s) \le
              \phi(\operatorname{clip}(\log(T-1), I)).

    Reconstruction (this package's own derivation; the paper's exact statement is not
    available). Returns ``(lower, upper)``."""
    T = Integer(2).check("T", T)
    x_min = finite_array("x_min", x_min)
    x_max = finite_array("x_max", x_max)
    if np.any(x_min > x_max):
        raise InvalidParameter("x_min", x_min, f"a value <= x_max = {x_max!r}")
    peak = math.log(T - 1)
    low, high = x_min, np.minimum(x_max, x_min + peak)
    upper = reciprocal_two_plus_two_cosh(np.clip(peak, low, high) - peak)
    lower = np.minimum(
        reciprocal_two_plus_two_cosh(low - peak), reciprocal_two_plus_two_cosh(high - peak)
    )
    return lower, upper


def derivations() -> list[Derivation]:
    """This module's derived results, as records for :mod:`theory.derivations`."""
    from theory.foundation.proof import NUMERIC, PARTIAL, SYMBOLIC
    from theory.foundation.symbols import T

    gap_saturation = sp.Symbol("s(1-s)", positive=True)
    S = sp.Symbol("S", positive=True)
    x_eff, x_min, x_max = sp.symbols("x_eff x_min x_max", real=True)
    return [
        Derivation(
            "Softmax saturation as a cosh (equal gaps; the paper writes log T)",
            sp.Eq(gap_saturation, exact_saturation_expression()),
            RECONSTRUCTION,
            saturation_identity_residual,
            SYMBOLIC,
            "residual vanishes for symbolic x and T = m + 1, m > 0",
            twin="theory.softmax_cosh.saturation_equal_gaps",
            simulated="verify.sim.observables.relevant_saturation",
            test="tests/theory/test_softmax_cosh.py::test_simulator_saturation_is_the_closed_form",
        ),
        Derivation(
            "Paper form vs exact form: sharp factor T/(T-1) both ways",
            sp.And(
                sp.Le((T - 1) / T, paper_form_ratio_expression()),
                sp.Le(paper_form_ratio_expression(), T / (T - 1)),
            ),
            RECONSTRUCTION,
            lambda: [
                cosh_shift_identity_residuals(),
                [
                    lim - bound
                    for lim, bound in zip(
                        paper_form_ratio_limits(),
                        (T / (T - 1), (T - 1) / T),
                        strict=True,
                    )
                ],
            ],
            PARTIAL,
            "the check proves the identity e^|b| cosh a - cosh(a + b) = sinh|b| e^(-sign(b) a) "
            "(>= 0) and the two limits (sharpness); applying it with b = +-log(T/(T-1)) to the "
            "ratio is by hand; numeric: tests/theory/test_softmax_cosh.py::"
            "test_paper_form_within_factor_T_over_T_minus_1",
            twin="theory.softmax_cosh.paper_form_ratio",
            test="tests/theory/test_softmax_cosh.py::test_paper_form_within_factor_T_over_T_minus_1",
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
            for_sizes(unequal_gaps_residuals),
            SYMBOLIC,
            "residuals vanish for T = 2..8 with symbolic gaps",
            twin="theory.softmax_cosh.selected_saturation",
            simulated="verify.sim.observables.relevant_saturation",
            test="tests/theory/test_softmax_cosh.py::test_unequal_gaps_saturation_is_exact_and_bracketed",
        ),
        Derivation(
            "Effective gap bounds",
            sp.And(sp.Le(x_min, x_eff), sp.Le(x_eff, sp.Min(x_max, x_min + sp.log(T - 1)))),
            RECONSTRUCTION,
            proof=NUMERIC,
            evidence="tests/theory/test_softmax_cosh.py::"
            "test_unequal_gaps_saturation_is_exact_and_bracketed (random gaps); the argument "
            "(e^-x_eff is the mean of e^-x_u, which lies between e^-x_max and e^-x_min and is "
            "at least e^-x_min/(T-1)) is not machine-checked",
            twin="theory.softmax_cosh.effective_gap_bounds",
            test="tests/theory/test_softmax_cosh.py::test_unequal_gaps_saturation_is_exact_and_bracketed",
        ),
        Derivation(
            "Saturation phi(v) = 1/(2 + 2 cosh v) is unimodal (peak 1/4 at v = 0)",
            sp.Eq(
                sp.Derivative(1 / (2 + 2 * sp.cosh(sp.Symbol("v"))), sp.Symbol("v")),
                -sp.sinh(sp.Symbol("v")) / (2 * (1 + sp.cosh(sp.Symbol("v"))) ** 2),
            ),
            RECONSTRUCTION,
            saturation_slope_residual,
            SYMBOLIC,
            "residual of the derivative vanishes for real v; its sign is that of -sinh v",
            twin="theory.softmax_cosh.saturation_bounds",
            test="tests/theory/test_softmax_cosh.py::test_bracket_is_tight_for_equal_gaps",
        ),
    ]
