r"""Large-argument asymptotics of :math:`g^{-1}`, with explicit error constants.

Positive branch, :math:`y \to +\infty`, :math:`L = \log(T y)`: writing
:math:`x = L + \sum_{j\ge1} a_j(L)\, y^{-j}` and expanding
:math:`y^{-1}(g(x) - y) = e^{x-L} - 1 + 2x/y - y^{-2} e^{-(x-L)}` in :math:`w = 1/y`
(SymPy, order by order) gives

.. math:: a_1 = -2L,\quad a_2 = -2L^2 + 4L + 1,\quad
          a_3 = -\tfrac83 L^3 + 12L^2 - 4L - 2,\ \dots

so :math:`x = \log(Ty) - 2\log(Ty)/y + O(\log(Ty)^2/y^2)`.

Negative branch, :math:`y \to -\infty`: :math:`g_T(-x) = -g_{1/T}(x)` gives
:math:`g_T^{-1}(y) = -g_{1/T}^{-1}(-y)`, i.e. the same series with
:math:`L = \log(|y|/T)` and an overall minus sign.

Order-1 error (proved here): with :math:`\epsilon_{\max} = 2L/|y| < 1`,
:math:`\delta_{\max} = \epsilon_{\max}/(1-\epsilon_{\max})` and :math:`L \ge 1/(2|y|)`,

.. math:: \bigl|x - (L - 2L/y)\bigr| \le
          \frac{\max(2L^2,\; 4L + e^{\delta_{\max}})}{(1 - \epsilon_{\max})\, y^2}
          \le 2.1\,\frac{L^2}{y^2}\quad (3 \le L \le 0.023\,|y|).

Proof sketch: :math:`x = L - \delta`, :math:`e^{-\delta} = 1 - \epsilon`,
:math:`\epsilon = (2x - T e^{-x})/y`; :math:`g(L) = 2L + y - 1/y \ge y` gives
:math:`\delta \ge 0`, hence :math:`0 \le \epsilon \le 2L/y`; then
:math:`R_1 = 2L/y - \delta = (2\delta + e^{\delta}/y)/y - (\delta - \epsilon)` with
:math:`0 \le \delta - \epsilon \le \epsilon^2/(2(1-\epsilon))` and
:math:`\delta \le \epsilon/(1-\epsilon)`.

Order-2 error: :math:`|x - (L - 2L/y + a_2(L)/y^2)| \le 3 L^3/|y|^3` for
:math:`|y| \ge 1000`, :math:`L \ge \log 1000` (leading term :math:`|a_3| \le \tfrac83 L^3`;
the constant 3 is verified numerically, not proved).

Reconstruction (this package's own derivation; the paper's exact statement is not available).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import mpmath
import numpy as np
import sympy as sp

from theory.foundation.codegen import lambdify_expression
from theory.foundation.proof import RECONSTRUCTION, Derivation
from theory.foundation.symbols import T as T_symbol
from theory.foundation.symbols import y as y_symbol
from theory.foundation.validation import Integer, InvalidParameter, Real

ORDER1_ERROR_CONSTANT = 2.1
ORDER2_ERROR_CONSTANT = 3.0
_L = sp.Symbol("L", real=True)
_w = sp.Symbol("w", positive=True)


@lru_cache(maxsize=8)
def g_inverse_series_coefficients(order: int = 3) -> tuple[sp.Expr, ...]:
    r"""Coefficients :math:`a_1(L), \dots, a_{order}(L)` of
    :math:`g^{-1}(y) = L + \sum_j a_j(L) y^{-j}`, :math:`L = \log(Ty)`, derived by SymPy:
    substitute :math:`x = L + \sum_j a_j w^j` into
    :math:`e^{x-L} - 1 + 2wx - w^2 e^{-(x-L)} = 0` (which is :math:`w(g(x) - y) = 0` with
    :math:`w = 1/y`, :math:`e^{L} = Ty`) and solve order by order in w."""
    order = Integer(1).check("order", order)
    unknowns = sp.symbols(f"a_1:{order + 1}")
    correction = sp.Add(*[a * _w ** (j + 1) for j, a in enumerate(unknowns)])
    equation = sp.exp(correction) - 1 + 2 * _w * (_L + correction) - _w**2 * sp.exp(-correction)
    expansion = sp.expand(sp.series(equation, _w, 0, order + 1).removeO())
    solution: dict[sp.Symbol, sp.Expr] = {}
    for j, unknown in enumerate(unknowns, start=1):
        coefficient = sp.expand(expansion.coeff(_w, j).subs(solution))
        solution[unknown] = sp.expand(sp.solve(coefficient, unknown)[0])
    return tuple(solution[a] for a in unknowns)


def g_inverse_series_expression(order: int = 2) -> sp.Expr:
    r"""Truncated series :math:`L + \sum_{j \le order} a_j(L)/y^j`, :math:`L = \log(Ty)`,
    as a SymPy expression in y and T (positive branch)."""
    coefficients = g_inverse_series_coefficients(order)
    log_Ty = sp.log(T_symbol * y_symbol)
    return log_Ty + sp.Add(
        *[a.subs(_L, log_Ty) / y_symbol ** (j + 1) for j, a in enumerate(coefficients)]
    )


def g_inverse_series_residual(order: int = 3) -> sp.Expr:
    r"""Proof that the truncated series solves :math:`w(g(x) - y) = 0` to
    :math:`O(w^{order+1})`: returns the expansion of the residual up to :math:`w^{order}`
    (0)."""
    coefficients = g_inverse_series_coefficients(order)
    correction = sp.Add(*[a * _w ** (j + 1) for j, a in enumerate(coefficients)])
    equation = sp.exp(correction) - 1 + 2 * _w * (_L + correction) - _w**2 * sp.exp(-correction)
    return sp.expand(sp.series(equation, _w, 0, order + 1).removeO())


@lru_cache(maxsize=16)
def _series_kernel(order: int, module: str) -> Any:
    coefficients = g_inverse_series_coefficients(max(order, 1))[:order]
    tail = sp.Add(*[a * _w ** (j + 1) for j, a in enumerate(coefficients)])
    return lambdify_expression([_L, _w], _L + tail, module)


def _branch_log(y: Any, T: float) -> tuple[int, Any]:
    if isinstance(y, mpmath.mpf):
        if y > 0:
            return 1, mpmath.log(mpmath.mpf(T) * y)
        return -1, mpmath.log(-y / mpmath.mpf(T))
    if y > 0:
        return 1, math.log(T) + math.log(y)
    return -1, math.log(-y) - math.log(T)


def g_inverse_asymptotic(y: Any, T: float, order: int = 1) -> Any:
    r"""Asymptotic :math:`g^{-1}(y)` for large :math:`|y|`:
    :math:`y > 0`: :math:`L + \sum_{j\le order} a_j(L)/y^j`, :math:`L = \log(Ty)`;
    :math:`y < 0`: :math:`-(L + \sum_{j\le order} a_j(L)/|y|^j)`, :math:`L = \log(|y|/T)`.
    ``order = 0`` gives the leading :math:`\pm L`. Float or mpf in, same type out (mpf at
    the caller's precision).

    Reconstruction (this package's own derivation; the paper's exact statement is not
    available)."""
    T = Real(0.0).check("T", T)
    order = Integer(0).check("order", order)
    if y == 0:
        raise InvalidParameter("y", y, "a non-zero value (the asymptotic form is for large |y|)")
    sign, log_scale = _branch_log(y, T)
    module = "mpmath" if isinstance(y, mpmath.mpf) else "numpy"
    inverse_size = 1 / abs(y) if module == "mpmath" else 1.0 / abs(float(y))
    value = _series_kernel(order, module)(log_scale, inverse_size)
    return sign * (value if module == "mpmath" else float(value))


def g_inverse_asymptotic_log(
    log_abs_y: np.ndarray | float, T: float, order: int = 1, sign: int = 1
) -> np.ndarray:
    r"""Float :func:`g_inverse_asymptotic` for :math:`|y| = e^{\ell}` given as
    :math:`\ell = \log|y|` (vectorised, no overflow for any :math:`\ell`)."""
    T = Real(0.0).check("T", T)
    order = Integer(0).check("order", order)
    if sign not in (1, -1):
        raise InvalidParameter("sign", sign, "+1 or -1")
    log_abs_y = np.asarray(log_abs_y, dtype=np.float64)
    log_scale = log_abs_y + sign * math.log(T)
    value = _series_kernel(order, "numpy")(log_scale, np.exp(-log_abs_y))
    return sign * np.asarray(value, dtype=np.float64)


def g_inverse_asymptotic_error_bound(y: Any, T: float) -> Any:
    r"""Rigorous bound on the order-1 error :math:`|g^{-1}(y) - (\pm)(L - 2L/|y|)|`:

    .. math:: \frac{\max(2L^2,\; 4L + e^{\delta_{\max}})}{(1 - \epsilon_{\max})\, y^2},\quad
              \epsilon_{\max} = \frac{2L}{|y|},\ \delta_{\max} =
              \frac{\epsilon_{\max}}{1-\epsilon_{\max}},

    :math:`L = \log(T^{\pm 1}|y|)`, valid when :math:`L \ge 1/(2|y|)` and
    :math:`\epsilon_{\max} < 1` (raises :class:`~theory.foundation.validation.InvalidParameter`
    otherwise). Float or mpf.

    Reconstruction (this package's own derivation; the paper's exact statement is not
    available)."""
    T = Real(0.0).check("T", T)
    if y == 0:
        raise InvalidParameter("y", y, "a non-zero value")
    _, log_scale = _branch_log(y, T)
    size = abs(y)
    epsilon_max = 2 * log_scale / size
    if not (log_scale >= 1 / (2 * size) and epsilon_max < 1):
        raise InvalidParameter(
            "y",
            y,
            f"|y| large enough that L >= 1/(2|y|) and 2L/|y| < 1 "
            f"with L = log(T^(+-1) |y|) (T = {T!r}), as the order-1 bound "
            "needs",
        )
    exp = mpmath.exp if isinstance(y, mpmath.mpf) else math.exp
    delta_max = epsilon_max / (1 - epsilon_max)
    numerator = max(2 * log_scale**2, 4 * log_scale + exp(delta_max))
    # Divide twice by |y| instead of by |y|^2: a float |y| above ~1e154 would overflow.
    return numerator / (1 - epsilon_max) / size / size


def g_inverse_asymptotic_simple_bound(y: Any, T: float, order: int = 1) -> Any:
    r"""The stated constants: order 1, :math:`2.1\,L^2/y^2` (implied by
    :func:`g_inverse_asymptotic_error_bound` when :math:`3 \le L \le 0.023|y|`);
    order 2, :math:`3\,L^3/|y|^3` (numerically verified for :math:`|y| \ge 1000`,
    :math:`L \ge \log 1000`)."""
    T = Real(0.0).check("T", T)
    if order not in (1, 2):
        raise InvalidParameter("order", order, "1 or 2")
    _, log_scale = _branch_log(y, T)
    if order == 1:
        return ORDER1_ERROR_CONSTANT * log_scale**2 / abs(y) ** 2
    return ORDER2_ERROR_CONSTANT * log_scale**3 / abs(y) ** 3


def derivations() -> list[Derivation]:
    """This module's derived results, as records for :mod:`theory.derivations`."""
    from theory.foundation.proof import NUMERIC, PARTIAL
    from theory.foundation.symbols import y

    g_inv = sp.Function("g^-1")
    L_pos = sp.Symbol("L", positive=True)
    return [
        Derivation(
            "Large-argument series of g^-1, L = log(T y), error O(L^4/y^4) "
            "(y -> +oo; y -> -oo via g_{1/T})",
            sp.Eq(
                g_inv(y),
                L_pos
                + sp.Add(
                    *[
                        coefficient.subs(sp.Symbol("L", real=True), L_pos) / y ** (j + 1)
                        for j, coefficient in enumerate(g_inverse_series_coefficients(3))
                    ]
                ),
            ),
            RECONSTRUCTION,
            lambda: g_inverse_series_residual(3),
            PARTIAL,
            "the check proves that the series solves w (g(x) - y) = 0 through order w^3, "
            "w = 1/y (the coefficients); that the truncation error of g^-1 is O(L^4/y^4) is "
            "the implicit-function argument, by hand; numeric: tests/theory/"
            "test_quadrature_asymptotics.py::test_series_solves_the_equation_to_the_stated_order",
            twin="theory.quadrature.asymptotics.g_inverse_asymptotic",
            test="tests/theory/quadrature/test_asymptotics.py::test_series_solves_the_equation_to_the_stated_order",
        ),
        Derivation(
            "Order-1 error bound of the series, L = log(T y) (proof by hand; needs 2L/y < 1)",
            sp.Le(
                sp.Abs(g_inv(y) - (L_pos - 2 * L_pos / y)),
                sp.Max(2 * L_pos**2, 4 * L_pos + sp.exp((2 * L_pos / y) / (1 - 2 * L_pos / y)))
                / ((1 - 2 * L_pos / y) * y**2),
            ),
            RECONSTRUCTION,
            proof=NUMERIC,
            evidence="the proof is written out by hand in the module docstring (not "
            "machine-checked); tests/theory/quadrature/test_asymptotics.py::"
            "test_error_constants_hold_from_1e3_to_1e300 and ::test_order1_constant_is_sharp "
            "check it against high-precision g^-1",
            twin="theory.quadrature.asymptotics.g_inverse_asymptotic_error_bound",
            test="tests/theory/quadrature/test_asymptotics.py::test_error_constants_hold_from_1e3_to_1e300",
        ),
    ]
