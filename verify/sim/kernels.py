r"""The per-step kernel: from logits to :math:`h = \partial L / \partial a`, without cancellation.

For sample :math:`i` with logits :math:`a_{i,t}`, token scores :math:`\gamma_{i,t}`, label
:math:`y_i`:

.. math::

    s_{i,t} = \mathrm{softmax}_t(a_{i,\cdot}), \quad f_i = \sum_t s_{i,t}\gamma_{i,t}, \quad
    h_{i,t} = \tfrac1n\, \ell'(y_i f_i)\, y_i\, s_{i,t}\,(\gamma_{i,t} - f_i),

with :math:`\ell(z) = \log(1 + e^{-z})`, :math:`\ell'(z) = -1/(1+e^{z})`.

The stable form computes :math:`\gamma_{i,t} - f_i = \sum_u s_{i,u}(\gamma_{i,t} - \gamma_{i,u})`
from the exact score differences, so that when one token's probability is within
:math:`e^{-x}` of 1 the selected token's update keeps full relative accuracy; the naive
form :math:`\gamma_t - \sum_u s_u\gamma_u` cancels catastrophically. Both
are proved equal to the SymPy derivation in ``tests/test_kernels.py``.

The same code runs on float64 arrays and on NumPy object arrays of mpmath numbers
(the ``mp`` engine), through :class:`Arithmetic`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Arithmetic:
    r"""Elementwise transcendental functions for one number type.

    ``softplus(x)`` is :math:`\log(1 + e^{x})`; ``expit(x)`` is :math:`1/(1+e^{-x})`.
    """

    name: str
    exp: Callable[[np.ndarray], np.ndarray]
    expit: Callable[[np.ndarray], np.ndarray]
    softplus: Callable[[np.ndarray], np.ndarray]
    asarray: Callable[[np.ndarray], np.ndarray]


def _expit(x: np.ndarray) -> np.ndarray:
    r""":math:`1/(1 + e^{-x}) = e^{-\mathrm{softplus}(-x)}`, accurate for every :math:`x`."""
    return np.exp(-np.logaddexp(0.0, -x))


FLOAT64 = Arithmetic(
    name="float64",
    exp=np.exp,
    expit=_expit,
    softplus=lambda x: np.logaddexp(0.0, x),
    asarray=lambda x: np.asarray(x, dtype=np.float64),
)


@cache
def mpmath_arithmetic() -> Arithmetic:
    """mpmath numbers at the precision of the surrounding ``mpmath.workdps`` context
    (mpmath is imported on first use)."""
    import mpmath

    convert = np.frompyfunc(mpmath.mpf, 1, 1)
    return Arithmetic(
        name="mpmath",
        exp=np.frompyfunc(mpmath.exp, 1, 1),
        expit=np.frompyfunc(lambda x: 1 / (1 + mpmath.exp(-x)), 1, 1),
        softplus=np.frompyfunc(lambda x: mpmath.log1p(mpmath.exp(x)), 1, 1),
        asarray=lambda values: np.asarray(convert(np.asarray(values, dtype=object)), dtype=object),
    )


def __getattr__(name: str) -> Any:
    if name == "MPMATH":  # the mpmath arithmetic, built (and mpmath imported) on first use
        return mpmath_arithmetic()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def softmax(logits: np.ndarray, arithmetic: Arithmetic = FLOAT64) -> np.ndarray:
    r"""Row-wise :math:`s_t = e^{a_t - \max a} / \sum_u e^{a_u - \max a}`; every entry,
    including those near :math:`e^{-700}`, is accurate to relative rounding."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    weights = arithmetic.exp(shifted)
    return weights / weights.sum(axis=-1, keepdims=True)


def score_differences(scores: np.ndarray) -> np.ndarray:
    r""":math:`\Delta_{i,t,u} = \gamma_{i,t} - \gamma_{i,u}`, shape (..., n, T, T), fixed in
    training."""
    return scores[..., :, None] - scores[..., None, :]


def logistic_loss(margins: np.ndarray, arithmetic: Arithmetic = FLOAT64) -> np.ndarray:
    r""":math:`\ell(z) = \log(1 + e^{-z})`, overflow-free."""
    return arithmetic.softplus(-margins)


def logistic_derivative(margins: np.ndarray, arithmetic: Arithmetic = FLOAT64) -> np.ndarray:
    r""":math:`\ell'(z) = -1/(1 + e^{z}) = -\mathrm{expit}(-z)`, accurate for large :math:`|z|`."""
    return -arithmetic.expit(-margins)


@dataclass(frozen=True)
class KernelOutput:
    """Everything one step needs, and the observables that come for free."""

    probabilities: np.ndarray  # s, (n, T)
    outputs: np.ndarray  # f, (n,)
    margins: np.ndarray  # y f, (n,)
    logit_gradient: np.ndarray  # h = dL/da, (n, T)


def logit_gradient(
    logits: np.ndarray,
    scores: np.ndarray,
    differences: np.ndarray,
    labels: np.ndarray,
    arithmetic: Arithmetic = FLOAT64,
) -> KernelOutput:
    r"""Cancellation-free :math:`h_{i,t} = \tfrac1n \ell'(y_i f_i) y_i s_{i,t}
    \sum_u s_{i,u} (\gamma_{i,t} - \gamma_{i,u})`.

    ``differences`` is :func:`score_differences` of ``scores`` (precomputed once). Arrays may
    carry leading batch axes (independent runs): logits (..., n, T), labels (..., n).
    """
    n = logits.shape[-2]
    s = softmax(logits, arithmetic)
    f = (s * scores).sum(axis=-1)
    centred = (differences @ s[..., None])[..., 0]  # gamma_t - f, without cancellation
    margins = labels * f
    slope = logistic_derivative(margins, arithmetic) * labels / n
    return KernelOutput(s, f, margins, slope[..., None] * s * centred)


def naive_logit_gradient(
    logits: np.ndarray, scores: np.ndarray, labels: np.ndarray, dtype: type = np.float64
) -> np.ndarray:
    r"""The textbook form :math:`h_t = \tfrac1n \ell'(yf) y s_t (\gamma_t - f)` with
    :math:`f = \sum_u s_u\gamma_u`, in ``dtype`` (float32 as in the public PyTorch code).

    For the precision study only: it loses all accuracy once a gap exceeds about 17
    (float32) or 37 (float64).
    """
    logits = np.asarray(logits, dtype=dtype)
    scores = np.asarray(scores, dtype=dtype)
    labels = np.asarray(labels, dtype=dtype)
    n = logits.shape[0]
    shifted = logits - logits.max(axis=-1, keepdims=True)
    weights = np.exp(shifted)
    s = weights / weights.sum(axis=-1, keepdims=True)
    f = (s * scores).sum(axis=-1)
    slope = (-1.0 / (1.0 + np.exp(labels * f))).astype(dtype) * labels / dtype(n)
    return slope[:, None] * s * (scores - f[:, None])
