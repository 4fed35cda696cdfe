r"""The training losses of the margin z = y f and their weights w = -l', as SymPy forms
and as float twins.

=============  =============================  ========================
name           :math:`\ell(z)`                :math:`w(z) = -\ell'(z)`
=============  =============================  ========================
logistic       :math:`\log(1 + e^{-z})`       :math:`1/(1 + e^{z})`
exponential    :math:`e^{-z}`                 :math:`e^{-z}`
squared        :math:`(1 - z)^2/2`            :math:`1 - z`
=============  =============================  ========================

The loss enters gradient descent only through the weight of each sample,
:math:`h_{i,t} = -\frac1n w(y_if_i)\,y_i\,s_{i,t}(\gamma_{i,t} - f_i)`, so every derivation
that is linear in the per-sample weights carries over with :math:`w` in place of the
logistic one. At the uniform attention of :math:`\tau = 0` the margins are small and the
weights sit near :math:`w(0)` (:data:`WEIGHT_AT_ZERO`: 1/2, 1, 1).

The float twins are overflow-free where the loss allows it (the exponential loss itself
overflows for margins below about -709). SymPy is imported only by the symbolic forms.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

#: The losses, the default first.
LOSSES = ("logistic", "exponential", "squared")
#: :math:`w(0) = -\ell'(0)` of each loss.
WEIGHT_AT_ZERO = {"logistic": 0.5, "exponential": 1.0, "squared": 1.0}


def _check(loss: str) -> str:
    from theory.foundation.validation import Options

    return Options(LOSSES).check("loss", loss)


def loss_expression(margin: Any, loss: str) -> Any:
    r"""SymPy :math:`\ell(z)` of ``loss`` at ``margin`` (module table)."""
    import sympy as sp

    loss = _check(loss)
    if loss == "logistic":
        return sp.log(1 + sp.exp(-margin))
    if loss == "exponential":
        return sp.exp(-margin)
    return (1 - margin) ** 2 / 2


def weight_expression(margin: Any, loss: str) -> Any:
    r"""SymPy :math:`w(z) = -\ell'(z)` of ``loss``, written out (module table); equal to
    ``-diff(loss_expression(z), z)`` (proved by :func:`weight_residuals`)."""
    import sympy as sp

    loss = _check(loss)
    if loss == "logistic":
        return 1 / (1 + sp.exp(margin))
    if loss == "exponential":
        return sp.exp(-margin)
    return 1 - margin


def weight_residuals() -> list[Any]:
    r"""Proof that :func:`weight_expression` is :math:`-\ell'` for every loss: the residuals
    :math:`w(z) + \ell'(z)`, simplified (all 0)."""
    import sympy as sp

    z = sp.Symbol("z", real=True)
    return [
        sp.simplify(weight_expression(z, loss) + sp.diff(loss_expression(z, loss), z))
        for loss in LOSSES
    ]


def _logistic_weight(margin: float) -> float:
    return 0.5 * (1.0 - math.tanh(0.5 * margin))


def _exponential_weight(margin: float) -> float:
    return math.exp(-margin)


def _squared_weight(margin: float) -> float:
    return 1.0 - margin


_WEIGHTS: dict[str, Callable[[float], float]] = {
    "logistic": _logistic_weight,
    "exponential": _exponential_weight,
    "squared": _squared_weight,
}


def weight_function(loss: str) -> Callable[[float], float]:
    r"""The float :math:`w` of ``loss``: logistic as :math:`\tfrac12(1 - \tanh(z/2))` (no
    overflow), exponential :math:`e^{-z}`, squared :math:`1 - z`."""
    return _WEIGHTS[_check(loss)]


def weight(margin: float, loss: str) -> float:
    r"""Float :math:`w(z)` of ``loss`` (:func:`weight_function`)."""
    return weight_function(loss)(margin)


def saturated_weight_floor(max_score: float, loss: str) -> float:
    r"""The smallest weight a sample can carry while every token score is at most
    ``max_score`` in size: since :math:`f = \sum_t s_t\gamma_t` is an average of the
    scores, :math:`|yf| \le \gamma_{\max}` and :math:`w(yf) \ge w(\gamma_{\max})` (each
    :math:`w` is decreasing): :math:`1/(1 + e^{\gamma_{\max}})`, :math:`e^{-\gamma_{\max}}`,
    :math:`1 - \gamma_{\max}` (positive only while :math:`\gamma_{\max} < 1`)."""
    return weight(abs(max_score), loss)


__all__ = [
    "LOSSES",
    "WEIGHT_AT_ZERO",
    "loss_expression",
    "weight_expression",
    "weight_residuals",
    "weight_function",
    "weight",
    "saturated_weight_floor",
]
