r"""The encoder's elementary layers in NumPy, each with its backward map beside it.

Every function is the float64 twin of the PyTorch layer the authors' encoder uses, with
PyTorch's conventions:

* LayerNorm over the last axis: :math:`\hat x = (x - \bar x)/\sqrt{v + \epsilon}` with the
  biased variance :math:`v = \frac1d\sum_j (x_j - \bar x)^2` and :math:`\epsilon = 10^{-5}`,
  then :math:`g \odot \hat x + b`. Its backward map, for an upstream gradient
  :math:`\delta` on :math:`\hat x`, is

  .. math::

      \frac{\partial L}{\partial x} = \frac{1}{\sqrt{v + \epsilon}}
      \Big(\delta - \overline{\delta} - \hat x\,\overline{\delta \odot \hat x}\Big).

* GELU, the exact (erf) form: :math:`\mathrm{gelu}(a) = a\,\Phi(a)`, with derivative
  :math:`\Phi(a) + a\,\varphi(a)`.
* The logistic loss :math:`\ell(m) = \log(1 + e^{-m})` of the margin :math:`m = y f`,
  with :math:`\ell'(m) = -\sigma(-m)`.
"""

from __future__ import annotations

import math

import numpy as np

#: PyTorch's LayerNorm epsilon (the authors' layers use the default).
LAYER_NORM_EPS = 1e-5


def normalise(x: np.ndarray, eps: float = LAYER_NORM_EPS) -> tuple[np.ndarray, np.ndarray]:
    r"""LayerNorm's normalisation over the last axis: :math:`\hat x` and
    :math:`1/\sqrt{v + \epsilon}` (shape ``x.shape[:-1] + (1,)``)."""
    centred = x - x.mean(axis=-1, keepdims=True)
    inverse_sd = 1.0 / np.sqrt(np.mean(centred * centred, axis=-1, keepdims=True) + eps)
    return centred * inverse_sd, inverse_sd


def normalise_backward(
    upstream: np.ndarray, x_hat: np.ndarray, inverse_sd: np.ndarray
) -> np.ndarray:
    r"""Gradient on the input of :func:`normalise` from the gradient ``upstream`` on
    :math:`\hat x` (the module docstring's formula)."""
    mean_upstream = upstream.mean(axis=-1, keepdims=True)
    mean_product = np.mean(upstream * x_hat, axis=-1, keepdims=True)
    return inverse_sd * (upstream - mean_upstream - x_hat * mean_product)


def gelu(a: np.ndarray) -> np.ndarray:
    r""":math:`a\,\Phi(a) = \tfrac12 a\,(1 + \mathrm{erf}(a/\sqrt2))`."""
    from scipy.special import erf

    return 0.5 * a * (1.0 + erf(a / math.sqrt(2.0)))


def gelu_derivative(a: np.ndarray) -> np.ndarray:
    r""":math:`\Phi(a) + a\,\varphi(a)`."""
    from scipy.special import erf

    density = np.exp(-0.5 * a * a) / math.sqrt(2.0 * math.pi)
    return 0.5 * (1.0 + erf(a / math.sqrt(2.0))) + a * density


def softmax_rows(logits: np.ndarray) -> np.ndarray:
    """Softmax over the last axis (shifted by the row maximum)."""
    shifted = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def softmax_backward(probabilities: np.ndarray, upstream: np.ndarray) -> np.ndarray:
    r"""Gradient on the logits from the gradient on the probabilities:
    :math:`A \odot (\delta - \langle A, \delta\rangle)` row by row."""
    weighted = np.sum(probabilities * upstream, axis=-1, keepdims=True)
    return probabilities * (upstream - weighted)


def logistic_loss(margins: np.ndarray) -> np.ndarray:
    r""":math:`\log(1 + e^{-m})` per margin, computed without overflow."""
    return np.logaddexp(0.0, -margins)


def logistic_slope(margins: np.ndarray) -> np.ndarray:
    r""":math:`\ell'(m) = -\sigma(-m) = -1/(1 + e^{m})`, computed without overflow."""
    return -np.exp(-np.logaddexp(0.0, margins))


__all__ = [
    "LAYER_NORM_EPS",
    "normalise",
    "normalise_backward",
    "gelu",
    "gelu_derivative",
    "softmax_rows",
    "softmax_backward",
    "logistic_loss",
    "logistic_slope",
]
