r"""The numeric kernels of the model variants, for the simulator's engines.

Every kernel is vectorised over samples and accepts leading batch axes (independent runs),
and runs on float64 arrays (:data:`FLOAT64`) or on NumPy object arrays of mpmath numbers
(:func:`mpmath_arithmetic`, at the precision of the surrounding ``mpmath.workdps``). Their
formulas are derived in SymPy in :mod:`theory.variants.gradients`, and a test proves each
kernel equal to its SymPy form.

**Any loss** (:mod:`theory.foundation.losses`). With :math:`w(z) = -\ell'(z)`,

.. math::

    h_{i,t} = \frac{\partial L}{\partial a_{i,t}}
    = -\frac1n w(y_if_i)\, y_i\, s_{i,t} \sum_u s_{i,u}(\phi_{i,t} - \phi_{i,u}),
    \qquad \phi_{i,t} = \frac{\partial f_i}{\partial s_{i,t}},

the cancellation-free form (:math:`\phi_t - \sum_u s_u\phi_u = \sum_u s_u(\phi_t - \phi_u)`
keeps full relative accuracy when one :math:`s_u` is close to 1). Linear readout:
:math:`\phi_{i,t} = \gamma_{i,t}` (:func:`logit_gradient`; logistic loss: the base kernel's
numbers bit for bit). FFN readout :math:`f = a^\top\mathrm{GELU}(Bz + c)`,
:math:`z = X^\top s`: :math:`\phi_{i,t} = a^\top(\mathrm{GELU}'(Bz_i + c)\odot Bx_{i,t})`
(:func:`ffn_logit_gradient`, on the precomputed projections :math:`Bx_{i,t}`).

**Trained head.** :math:`\partial L/\partial\gamma_{i,t} = g_{i,t} = \frac1n\ell'(y_if_i)
y_i s_{i,t}` (:func:`score_gradient`) and :math:`\nabla_\nu L = \sum_{i,t} g_{i,t}x_{i,t}
= Bg` (:math:`B`: the training tokens as columns): from :math:`\nu = \nu_0 + Bc`, GD keeps
:math:`\nu` in that span, :math:`c \leftarrow c - \alpha_\nu g`, and the scores are
:math:`\gamma = B^\top\nu_0 + \mathrm{Gram}\,c` (:func:`trained_head_scores`).

**One-step head.** At :math:`p = 0` every :math:`s_t = 1/T`, :math:`f_j = \nu^\top\bar x_j`
and one GD step on the head loss gives
:math:`\nu_1 = \nu_0 + \alpha_\nu\frac1m\sum_j w(y_j\nu_0^\top\bar x_j)\,y_j\bar x_j`
(:func:`one_step_update`).

**Gradient norms in reduced coordinates.** With :math:`p = Va`,
:math:`W = W_0 + VMB^\top`, :math:`V = W_0B`, :math:`K = V^\top V`,
:math:`\mathrm{Gram} = B^\top B` and a subset's logit gradient :math:`h_S`
(:math:`G_S = Bh_S`): :math:`\|\nabla_W\|_F^2 = \|p\|^2\|G_S\|^2 = (a^\top Ka)(h_S^\top
\mathrm{Gram}\,h_S)` and :math:`\|\nabla_p\|^2 = \|WG_S\|^2 = u^\top Ku`,
:math:`u = h_S + M\,\mathrm{Gram}\,h_S` (:func:`subset_gradient_norms`,
:func:`noisy_gradient_ratio`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from theory.foundation.losses import LOSSES
from theory.foundation.validation import Options

_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


@dataclass(frozen=True)
class Elementwise:
    r"""Elementwise functions for one number type: ``expit`` :math:`1/(1 + e^{-x})`,
    ``softplus`` :math:`\log(1 + e^x)`, ``gelu`` :math:`x\Phi(x)` and ``gelu_prime``
    :math:`\Phi(x) + x\varphi(x)` (:math:`\Phi(x) = \frac12(1 + \mathrm{erf}(x/\sqrt2))`)."""

    name: str
    exp: Callable[[Any], Any]
    expit: Callable[[Any], Any]
    softplus: Callable[[Any], Any]
    gelu: Callable[[Any], Any]
    gelu_prime: Callable[[Any], Any]
    asarray: Callable[[Any], Any]


def _expit(x: np.ndarray) -> np.ndarray:
    r""":math:`1/(1 + e^{-x}) = e^{-\mathrm{softplus}(-x)}`, accurate for every :math:`x`."""
    return np.exp(-np.logaddexp(0.0, -x))


@cache
def _erf() -> Callable[[np.ndarray], np.ndarray]:
    from scipy.special import erf

    return erf


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf()(x * _INV_SQRT2))


def _gelu_prime(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + _erf()(x * _INV_SQRT2)) + x * np.exp(-0.5 * x * x) * _INV_SQRT_2PI


FLOAT64 = Elementwise(
    name="float64",
    exp=np.exp,
    expit=_expit,
    softplus=lambda x: np.logaddexp(0.0, x),
    gelu=_gelu,
    gelu_prime=_gelu_prime,
    asarray=lambda x: np.asarray(x, dtype=np.float64),
)


@cache
def mpmath_arithmetic() -> Elementwise:
    """mpmath numbers at the precision of the surrounding ``mpmath.workdps`` context (the
    same ``exp``, ``expit`` and ``softplus`` as the simulator's mpmath arithmetic)."""
    import mpmath

    def gelu(x: Any) -> Any:
        return x * (1 + mpmath.erf(x / mpmath.sqrt(2))) / 2

    def gelu_prime(x: Any) -> Any:
        return (1 + mpmath.erf(x / mpmath.sqrt(2))) / 2 + x * mpmath.npdf(x)

    convert = np.frompyfunc(mpmath.mpf, 1, 1)
    return Elementwise(
        name="mpmath",
        exp=np.frompyfunc(mpmath.exp, 1, 1),
        expit=np.frompyfunc(lambda x: 1 / (1 + mpmath.exp(-x)), 1, 1),
        softplus=np.frompyfunc(lambda x: mpmath.log1p(mpmath.exp(x)), 1, 1),
        gelu=np.frompyfunc(gelu, 1, 1),
        gelu_prime=np.frompyfunc(gelu_prime, 1, 1),
        asarray=lambda values: np.asarray(convert(np.asarray(values, dtype=object)), dtype=object),
    )


# --------------------------------------------------------------------------- losses


def loss_value(margins: Any, loss: str, arithmetic: Elementwise = FLOAT64) -> Any:
    r""":math:`\ell(z)`: :math:`\log(1 + e^{-z})` (overflow-free), :math:`e^{-z}`,
    :math:`(1 - z)^2/2`."""
    loss = Options(LOSSES).check("loss", loss)
    if loss == "logistic":
        return arithmetic.softplus(-margins)
    if loss == "exponential":
        return arithmetic.exp(-margins)
    return 0.5 * (1 - margins) ** 2


def loss_weight(margins: Any, loss: str, arithmetic: Elementwise = FLOAT64) -> Any:
    r""":math:`w(z) = -\ell'(z)`: :math:`1/(1 + e^{z})` (as :math:`\mathrm{expit}(-z)`,
    accurate for large :math:`|z|`), :math:`e^{-z}`, :math:`1 - z`."""
    loss = Options(LOSSES).check("loss", loss)
    if loss == "logistic":
        return arithmetic.expit(-margins)
    if loss == "exponential":
        return arithmetic.exp(-margins)
    return 1 - margins


# --------------------------------------------------------------------------- logit gradients


@dataclass(frozen=True)
class GradientOutput:
    """One step's kernel output: probabilities s (..., n, T), outputs f (..., n), margins
    y f, the logit gradient h (..., n, T), the per-sample slope
    :math:`\\frac1n\\ell'(y_if_i)y_i` (..., n) and the token scores :math:`\\phi` the
    gradient used (..., n, T)."""

    probabilities: np.ndarray
    outputs: np.ndarray
    margins: np.ndarray
    logit_gradient: np.ndarray
    slope: np.ndarray
    token_scores: np.ndarray


def softmax(logits: Any, arithmetic: Elementwise = FLOAT64) -> Any:
    r"""Row-wise :math:`s_t = e^{a_t - \max a}/\sum_u e^{a_u - \max a}`."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    weights = arithmetic.exp(shifted)
    return weights / weights.sum(axis=-1, keepdims=True)


def _finish(
    s: Any, f: Any, differences: Any, labels: Any, loss: str, arithmetic: Elementwise, phi: Any
) -> GradientOutput:
    """:math:`h = \\frac1n\\ell'(yf)\\,y\\,s_t\\sum_u s_u(\\phi_t - \\phi_u)` from the
    probabilities, outputs and score differences."""
    n = s.shape[-2]
    centred = (differences @ s[..., None])[..., 0]  # phi_t - sum_u s_u phi_u, no cancellation
    margins = labels * f
    slope = -loss_weight(margins, loss, arithmetic) * labels / n
    return GradientOutput(s, f, margins, slope[..., None] * s * centred, slope, phi)


def logit_gradient(
    logits: Any,
    scores: Any,
    differences: Any,
    labels: Any,
    loss: str = "logistic",
    arithmetic: Elementwise = FLOAT64,
) -> GradientOutput:
    r"""Linear readout, any loss: :math:`f_i = \sum_t s_{i,t}\gamma_{i,t}` and
    :math:`h_{i,t} = -\frac1n w(y_if_i)y_is_{i,t}\sum_u s_{i,u}(\gamma_{i,t} - \gamma_{i,u})`.

    ``differences`` holds :math:`\gamma_{i,t} - \gamma_{i,u}` (..., n, T, T), precomputed
    while the scores are fixed. Logits (..., n, T), labels (..., n). With the logistic loss
    the arithmetic is the base kernel's, operation for operation (same numbers)."""
    s = softmax(logits, arithmetic)
    f = (s * scores).sum(axis=-1)
    return _finish(s, f, differences, labels, loss, arithmetic, scores)


def ffn_logit_gradient(
    logits: Any,
    projections: Any,
    labels: Any,
    biases: Any,
    out_weights: Any,
    loss: str = "logistic",
    arithmetic: Elementwise = FLOAT64,
) -> GradientOutput:
    r"""FFN readout :math:`f_i = a^\top\mathrm{GELU}(v_i)`, :math:`v_i = Bz_i + c =
    \sum_t s_{i,t}Bx_{i,t} + c`, and :math:`h_{i,t}` with
    :math:`\phi_{i,t} = a^\top(\mathrm{GELU}'(v_i)\odot Bx_{i,t})` (module docstring).

    ``projections`` are :math:`Bx_{i,t}` (..., n, T, m), fixed in training; ``biases`` c and
    ``out_weights`` a have shape (m,). Cost :math:`O(nTm)` a step."""
    s = softmax(logits, arithmetic)
    hidden = (s[..., None, :] @ projections)[..., 0, :] + biases
    f = arithmetic.gelu(hidden) @ out_weights
    slopes = out_weights * arithmetic.gelu_prime(hidden)
    phi = (projections @ slopes[..., None])[..., 0]
    differences = phi[..., :, None] - phi[..., None, :]
    return _finish(s, f, differences, labels, loss, arithmetic, phi)


def ffn_output(
    logits: Any, projections: Any, biases: Any, out_weights: Any, arithmetic: Elementwise = FLOAT64
) -> Any:
    r"""The FFN readout's outputs :math:`f_i = a^\top\mathrm{GELU}(\sum_t s_{i,t}Bx_{i,t} + c)`
    (e.g. on test sequences), shape (..., n)."""
    s = softmax(logits, arithmetic)
    hidden = (s[..., None, :] @ projections)[..., 0, :] + biases
    return arithmetic.gelu(hidden) @ out_weights


# --------------------------------------------------------------------------- heads


def score_gradient(output: GradientOutput) -> Any:
    r""":math:`g_{i,t} = \partial L/\partial\gamma_{i,t} = \frac1n\ell'(y_if_i)y_is_{i,t}`
    (linear readout), shape (..., n, T): the trained head's step in span coordinates,
    :math:`c \leftarrow c - \alpha_\nu g` (flattened to N = nT)."""
    return output.slope[..., None] * output.probabilities


def trained_head_scores(base_scores: Any, gram: Any, coefficients: Any) -> Any:
    r"""Training-token scores of :math:`\nu = \nu_0 + Bc`:
    :math:`\gamma = B^\top\nu_0 + \mathrm{Gram}\,c`, shape of ``base_scores``
    :math:`B^\top\nu_0` (..., n, T); ``gram`` (..., N, N), ``coefficients`` c (..., N)."""
    spans = (gram @ coefficients[..., None])[..., 0]
    return base_scores + spans.reshape(base_scores.shape)


def one_step_update(
    nu0: Any,
    mean_tokens: Any,
    labels: Any,
    step: float,
    loss: str = "logistic",
    arithmetic: Elementwise = FLOAT64,
) -> Any:
    r""":math:`\nu_1 = \nu_0 + \alpha_\nu\frac1m\sum_j w(y_j\nu_0^\top\bar x_j)\,y_j\bar x_j`:
    one GD step on the head loss :math:`\frac1m\sum_j\ell(y_j\nu^\top\bar x_j)` at uniform
    attention (:math:`p = 0`); ``mean_tokens`` :math:`\bar x_j` (m, d), ``labels`` (m,)."""
    margins = labels * (mean_tokens @ nu0)
    weights = loss_weight(margins, loss, arithmetic) * labels
    return nu0 + step * (weights @ mean_tokens) / mean_tokens.shape[0]


# --------------------------------------------------------------------------- gradient norms


def subset_gradient_norms(K: Any, gram: Any, a: Any, M: Any, h: Any) -> tuple[Any, Any]:
    r""":math:`(\|\nabla_W L_S\|_F^2, \|\nabla_p L_S\|^2)` of the loss of a subset S whose
    logit gradient is ``h`` (..., N) (zero outside S), in reduced coordinates (module
    docstring): :math:`(a^\top Ka)(h^\top\mathrm{Gram}\,h)` and :math:`u^\top Ku`,
    :math:`u = h + M\,\mathrm{Gram}\,h`. ``K``, ``gram``, ``M`` (..., N, N), ``a`` (..., N)."""
    gram_h = (gram @ h[..., None])[..., 0]
    p_sq = (a * (K @ a[..., None])[..., 0]).sum(axis=-1)
    u = h + (M @ gram_h[..., None])[..., 0]
    return p_sq * (h * gram_h).sum(axis=-1), (u * (K @ u[..., None])[..., 0]).sum(axis=-1)


def noisy_gradient_ratio(K: Any, gram: Any, a: Any, M: Any, h: Any, noisy: Any) -> Any:
    r""":math:`\|G_N\|_F/\|G_C\|_F`, :math:`G_S = \sum_{i\in S}\nabla_{(W,p)}\ell_i`: the
    gradient of the noisy samples' loss over the clean samples' (both with the common
    :math:`1/n`), from the logit gradient ``h`` (..., n, T) and the noisy mask (n,);
    ``inf`` when the clean part vanishes."""
    mask = np.asarray(noisy, dtype=bool)[:, None]
    shape = h.shape[:-2] + (-1,)
    totals = []
    for part in (np.where(mask, h, 0 * h), np.where(mask, 0 * h, h)):
        weight_sq, query_sq = subset_gradient_norms(K, gram, a, M, part.reshape(shape))
        totals.append(weight_sq + query_sq)
    noisy_sq, clean_sq = (np.asarray(total, dtype=np.float64) for total in totals)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.sqrt(noisy_sq / clean_sq)


__all__ = [
    "Elementwise",
    "FLOAT64",
    "mpmath_arithmetic",
    "loss_value",
    "loss_weight",
    "GradientOutput",
    "softmax",
    "logit_gradient",
    "ffn_logit_gradient",
    "ffn_output",
    "score_gradient",
    "trained_head_scores",
    "one_step_update",
    "subset_gradient_norms",
    "noisy_gradient_ratio",
]
