r"""Overflow-free elementary kernels shared by the numeric parts of ``theory``.

All functions are pure, vectorised over NumPy arrays, and never emit overflow warnings:
exponentials are only ever taken of non-positive arguments.
"""

from __future__ import annotations

import math

import numpy as np

from theory.foundation.validation import InvalidParameter

LOG_FLOAT64_MAX = float(np.log(np.finfo(np.float64).max))


def finite_array(name: str, value: object) -> np.ndarray:
    """``value`` as a float64 array when every entry is a finite real number, else
    :class:`~theory.foundation.validation.InvalidParameter`."""
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidParameter(name, value, "finite real numbers") from None
    if not np.all(np.isfinite(array)):
        raise InvalidParameter(name, value, "finite real numbers")
    return array


def reciprocal_two_plus_two_cosh(v: np.ndarray | float) -> np.ndarray:
    r"""Overflow-free :math:`\frac{1}{2 + 2\cosh v} = \frac{e^{-|v|}}{(1 + e^{-|v|})^2}`."""
    decay = np.exp(-np.abs(np.asarray(v, dtype=np.float64)))
    return decay / (1.0 + decay) ** 2


def normal_cdf(x: float) -> float:
    r"""The standard normal distribution function :math:`\Phi(x) = \tfrac12
    \operatorname{erfc}(-x/\sqrt2)` of one float (no SciPy call: it sits inside quadratures)."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def normal_cdf_array(x: np.ndarray | float) -> np.ndarray:
    r""":func:`normal_cdf` element by element (NumPy has no erfc; the arrays here are a
    quadrature's nodes, short)."""
    x = np.asarray(x, dtype=np.float64)
    return np.array([normal_cdf(value) for value in x.ravel().tolist()]).reshape(x.shape)


def normal_pdf(x: float) -> float:
    r"""The standard normal density :math:`\phi(x) = e^{-x^2/2}/\sqrt{2\pi}` of one float."""
    return math.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def exp_clipped(log_value: np.ndarray | float) -> np.ndarray:
    r""":math:`e^{\ell}`, returning ``inf`` (without a warning) where :math:`\ell` exceeds
    the float64 range."""
    log_value = np.asarray(log_value, dtype=np.float64)
    safe = np.exp(np.minimum(log_value, LOG_FLOAT64_MAX))
    return np.where(log_value > LOG_FLOAT64_MAX, np.inf, safe)


def asinh_of_exp(log_value: np.ndarray | float) -> np.ndarray:
    r""":math:`\operatorname{asinh}(e^{\ell})` without overflow:
    :math:`\ell + \log\bigl(1 + \sqrt{1 + e^{-2\ell}}\bigr)` for :math:`\ell > 0`,
    the direct form otherwise."""
    log_value = np.asarray(log_value, dtype=np.float64)
    positive = log_value > 0.0
    large_form = log_value + np.log1p(np.sqrt(1.0 + np.exp(-2.0 * np.abs(log_value))))
    small_form = np.arcsinh(np.exp(np.minimum(log_value, 0.0)))
    return np.where(positive, large_form, small_form)


def signed_log_add(
    sign_a: np.ndarray, log_a: np.ndarray, sign_b: np.ndarray, log_b: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    r"""Signed log-sum: given :math:`a = s_a e^{\ell_a}`, :math:`b = s_b e^{\ell_b}`, return
    :math:`(s, \ell)` with :math:`a + b = s e^{\ell}` (:math:`s = 0, \ell = -\infty` for 0).

    Same signs: :math:`\ell = \operatorname{logaddexp}(\ell_a, \ell_b)`; opposite signs:
    :math:`\ell = \ell_{\max} + \log(1 - e^{\ell_{\min} - \ell_{\max}})`.
    """
    sign_a, log_a, sign_b, log_b = np.broadcast_arrays(
        np.asarray(sign_a, dtype=np.float64),
        np.asarray(log_a, dtype=np.float64),
        np.asarray(sign_b, dtype=np.float64),
        np.asarray(log_b, dtype=np.float64),
    )
    log_a = np.where(sign_a == 0.0, -np.inf, log_a)
    log_b = np.where(sign_b == 0.0, -np.inf, log_b)
    a_dominates = log_a >= log_b
    log_max = np.where(a_dominates, log_a, log_b)
    log_min = np.where(a_dominates, log_b, log_a)
    sign_max = np.where(a_dominates, sign_a, sign_b)
    both_zero = np.isneginf(log_max)
    finite_max = np.where(both_zero, 0.0, log_max)
    ratio = np.exp(np.where(both_zero, -np.inf, log_min - finite_max))
    same_sign = (sign_a == sign_b) | (sign_a == 0.0) | (sign_b == 0.0)
    ratio_for_log1p = np.where(same_sign, ratio, -np.minimum(ratio, 1.0))
    cancels = (~same_sign) & (ratio >= 1.0)
    with_log1p = finite_max + np.log1p(np.where(cancels, 0.0, ratio_for_log1p))
    zero = both_zero | cancels
    log_sum = np.where(zero, -np.inf, with_log1p)
    sign_sum = np.where(zero, 0.0, sign_max)
    return sign_sum, log_sum
