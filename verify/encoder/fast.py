r"""The encoder restricted to what reaches the head: the [CLS] row, exactly.

The authors' encoder (one pre-LayerNorm transformer block on ``[cls; X]``, a final
LayerNorm and a linear head on the [CLS] position) sends every token through every layer,
but the head reads the [CLS] position only, and at that position only the [CLS] query
matters. With :math:`h_s = g_1 \odot \hat x_s + b_1` the first LayerNorm's output for
token :math:`s` (:math:`s = 0` the [CLS] token :math:`c`, :math:`s = 1..T` the data
tokens) and :math:`W_q, W_k, W_v` the three blocks of the fused projection:

.. math::

    q = W_q h_0,\quad u = W_k^\top q,\quad
    \ell_s = d^{-1/2}\,\langle h_s, u\rangle = d^{-1/2}(\langle \hat x_s, g_1 \odot u\rangle
    + \langle b_1, u\rangle),\quad A = \mathrm{softmax}(\ell),

.. math::

    a = W_v \textstyle\sum_s A_s h_s
      = W_v\big(g_1 \odot \textstyle\sum_s A_s \hat x_s + b_1\big),\qquad
    y = a + c \ \text{(residual)}\ \text{or}\ a,

.. math::

    z = y + F(y)\ \text{(residual)}\ \text{or}\ F(y),\quad
    F(y) = W_2\,\mathrm{gelu}(W_1\,\mathrm{LN}_2(y) + c_1) + c_2,\quad
    f = \langle w, \mathrm{LN}_f(z)\rangle + b.

Per sample this costs matrix-vector products: the normalised data tokens
:math:`\hat x_s` never change (LayerNorm's affine parameters train, its normalisation of a
fixed token does not), :math:`u` is shared by all samples, and the scores and the mixture
are products with :math:`\hat x`. The backward map is the chain rule through the same
expressions (written out in :func:`cls_backward`); the gradients of the five large
matrices are low rank (rank one for :math:`W_q, W_k`, rank n for :math:`W_v, W_1, W_2`)
and are kept as factor pairs :math:`G = L^\top R`, applied in place by BLAS, at once or
in batches (:mod:`verify.encoder.deferred`).

The full encoder (every token through every layer, as the authors' code runs it) is
:mod:`verify.encoder.reference`; the tests hold the two equal in float64.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from verify.encoder.deferred import DeferredMatrix, DenseMatrix
from verify.encoder.layers import (
    gelu,
    gelu_derivative,
    logistic_slope,
    normalise,
    normalise_backward,
    softmax_backward,
    softmax_rows,
)
from verify.encoder.parameters import EncoderParameters

#: The large matrices, whose gradients are kept as factor pairs.
LOW_RANK = ("query", "key", "value", "fc1_weight", "fc2_weight")
#: The large matrices by name, behind their products (plain or with deferred updates).
Matrices = Mapping[str, DenseMatrix | DeferredMatrix]


@dataclass
class AttentionPass:
    """The [CLS] row of the attention for a batch of sequences (shapes: (d,) shared,
    (m, T + 1) probabilities with column 0 the [CLS] token itself, (m, d) per sample)."""

    cls_hat: np.ndarray
    cls_inverse_sd: np.ndarray
    cls_normed: np.ndarray  # h_0
    query: np.ndarray  # q = W_q h_0
    probe: np.ndarray  # u = W_k^T q
    probabilities: np.ndarray
    mixed_hat: np.ndarray  # sum_s A_s x_hat_s
    mixed: np.ndarray  # g1 * mixed_hat + b1


@dataclass
class HeadPass:
    """From the attention output to the head's output, per sample (m, .)."""

    y: np.ndarray
    y_hat: np.ndarray
    y_inverse_sd: np.ndarray
    ffn_in: np.ndarray
    hidden_pre: np.ndarray
    hidden: np.ndarray
    z_hat: np.ndarray
    z_inverse_sd: np.ndarray
    features: np.ndarray
    outputs: np.ndarray


def dense_matrices(params: EncoderParameters) -> Matrices:
    """The large matrices of ``params`` behind the products (no deferred updates)."""
    return {name: DenseMatrix(getattr(params, name)) for name in LOW_RANK}


def cls_attention(
    params: EncoderParameters, tokens_hat: np.ndarray, matrices: Matrices | None = None
) -> AttentionPass:
    """The [CLS] query's attention over ``[cls; X]`` for normalised tokens (m, T, d);
    ``matrices`` (default: ``params``' own) holds the query and key maps."""
    matrices = matrices or dense_matrices(params)
    m, T, d = tokens_hat.shape
    scale = 1.0 / math.sqrt(d)
    g1, b1 = params.ln1_weight, params.ln1_bias
    cls_hat, cls_inverse_sd = normalise(params.cls)
    h0 = g1 * cls_hat + b1
    query = matrices["query"].right_product(h0[None])[0]
    probe = matrices["key"].left_product(query[None])[0]
    bias_logit = scale * float(b1 @ probe)
    logits = np.empty((m, T + 1))
    logits[:, 0] = scale * float(h0 @ probe)
    logits[:, 1:] = scale * (tokens_hat.reshape(m * T, d) @ (g1 * probe)).reshape(m, T)
    logits[:, 1:] += bias_logit
    probabilities = softmax_rows(logits)
    mixed_hat = np.matmul(probabilities[:, None, 1:], tokens_hat)[:, 0]  # (m, d)
    mixed_hat += probabilities[:, :1] * cls_hat
    return AttentionPass(
        cls_hat=cls_hat,
        cls_inverse_sd=cls_inverse_sd,
        cls_normed=h0,
        query=query,
        probe=probe,
        probabilities=probabilities,
        mixed_hat=mixed_hat,
        mixed=g1 * mixed_hat + b1,
    )


def cls_head(
    params: EncoderParameters,
    attended: np.ndarray,
    residual: bool,
    matrices: Matrices | None = None,
) -> HeadPass:
    """Residual, feed-forward block, final LayerNorm and head on the [CLS] rows (m, d)."""
    matrices = matrices or dense_matrices(params)
    y = attended + params.cls if residual else attended
    y_hat, y_inverse_sd = normalise(y)
    ffn_in = params.ln2_weight * y_hat + params.ln2_bias
    hidden_pre = matrices["fc1_weight"].right_product(ffn_in) + params.fc1_bias
    hidden = gelu(hidden_pre)
    z = matrices["fc2_weight"].right_product(hidden) + params.fc2_bias
    if residual:
        z += y
    z_hat, z_inverse_sd = normalise(z)
    features = params.lnf_weight * z_hat + params.lnf_bias
    return HeadPass(
        y=y,
        y_hat=y_hat,
        y_inverse_sd=y_inverse_sd,
        ffn_in=ffn_in,
        hidden_pre=hidden_pre,
        hidden=hidden,
        z_hat=z_hat,
        z_inverse_sd=z_inverse_sd,
        features=features,
        outputs=features @ params.head_weight + params.head_bias,
    )


@dataclass
class ClsPass:
    attention: AttentionPass
    head: HeadPass

    @property
    def outputs(self) -> np.ndarray:
        return self.head.outputs

    @property
    def probabilities(self) -> np.ndarray:
        return self.attention.probabilities


def cls_forward(
    params: EncoderParameters,
    tokens_hat: np.ndarray,
    residual: bool,
    matrices: Matrices | None = None,
) -> ClsPass:
    """The encoder's output and [CLS] attention for normalised tokens (m, T, d)."""
    matrices = matrices or dense_matrices(params)
    attention = cls_attention(params, tokens_hat, matrices)
    attended = matrices["value"].right_product(attention.mixed)
    return ClsPass(attention, cls_head(params, attended, residual, matrices))


def outputs_with_attention(
    params: EncoderParameters, tokens_hat: np.ndarray, probabilities: np.ndarray, residual: bool
) -> HeadPass:
    r"""The encoder's [CLS] pass with the attention replaced by ``probabilities``
    (m, T + 1; column 0 the [CLS] token): :math:`a = W_v \sum_s A_s h_s` for the given
    :math:`A`, then the rest of the block as trained (a diagnostic: e.g. uniform
    attention shows what the feed-forward block and the head fit without selection)."""
    g1, b1 = params.ln1_weight, params.ln1_bias
    cls_hat = normalise(params.cls)[0]
    mixed_hat = np.matmul(probabilities[:, None, 1:], tokens_hat)[:, 0]
    mixed_hat += probabilities[:, :1] * cls_hat
    mixed = g1 * mixed_hat + b1 * probabilities.sum(axis=1, keepdims=True)
    return cls_head(params, mixed @ params.value.T, residual)


@dataclass
class Gradients:
    """Gradients of the mean loss: ``dense`` for the small arrays (by parameter name) and
    ``factors[name] = (L, R)`` with gradient :math:`L^\\top R` for :data:`LOW_RANK`."""

    dense: dict[str, np.ndarray]
    factors: dict[str, tuple[np.ndarray, np.ndarray]]

    def matrix(self, name: str) -> np.ndarray:
        left, right = self.factors[name]
        return left.T @ right

    def qkv(self) -> np.ndarray:
        """The fused projection's gradient (3d, d)."""
        return np.concatenate([self.matrix(name) for name in ("query", "key", "value")])

    def full(self) -> dict[str, np.ndarray]:
        """Every gradient as a dense array, by the names of :class:`EncoderParameters`."""
        out = dict(self.dense)
        out["qkv"] = self.qkv()
        out["fc1_weight"] = self.matrix("fc1_weight")
        out["fc2_weight"] = self.matrix("fc2_weight")
        return out


def head_backward(
    params: EncoderParameters,
    head: HeadPass,
    slope: np.ndarray,
    residual: bool,
    gradients: Gradients,
    matrices: Matrices,
) -> np.ndarray:
    r"""Back through head, final LayerNorm, feed-forward block and residuals, from
    ``slope`` :math:`= \partial L/\partial f` (n,); fills ``gradients`` and returns
    :math:`\partial L/\partial a` on the attention output (n, d)."""
    dense = gradients.dense
    dense["head_weight"] = head.features.T @ slope
    dense["head_bias"] = np.asarray(slope.sum())
    d_features = slope[:, None] * params.head_weight
    dense["lnf_weight"] = np.sum(d_features * head.z_hat, axis=0)
    dense["lnf_bias"] = d_features.sum(axis=0)
    d_z = normalise_backward(d_features * params.lnf_weight, head.z_hat, head.z_inverse_sd)
    dense["fc2_bias"] = d_z.sum(axis=0)
    gradients.factors["fc2_weight"] = (d_z, head.hidden)
    d_pre = matrices["fc2_weight"].left_product(d_z) * gelu_derivative(head.hidden_pre)
    dense["fc1_bias"] = d_pre.sum(axis=0)
    gradients.factors["fc1_weight"] = (d_pre, head.ffn_in)
    d_ffn_in = matrices["fc1_weight"].left_product(d_pre)
    dense["ln2_weight"] = np.sum(d_ffn_in * head.y_hat, axis=0)
    dense["ln2_bias"] = d_ffn_in.sum(axis=0)
    d_y = normalise_backward(d_ffn_in * params.ln2_weight, head.y_hat, head.y_inverse_sd)
    if residual:
        d_y += d_z
        dense["cls"] = d_y.sum(axis=0)
    else:
        dense["cls"] = np.zeros_like(params.cls)
    return d_y


def attention_backward(
    params: EncoderParameters,
    attention: AttentionPass,
    tokens_hat: np.ndarray,
    d_attended: np.ndarray,
    gradients: Gradients,
    matrices: Matrices,
) -> None:
    r"""Back through the value map, the softmax, the scores, the [CLS] query and the first
    LayerNorm, from :math:`\partial L/\partial a` (n, d); fills ``gradients``.

    With :math:`\delta_\ell` the gradient on the logits and
    :math:`r = d^{-1/2}\sum_{i,s}\delta_{\ell,is}\hat x_{is}`:
    :math:`\partial L/\partial u = g_1 \odot r + b_1 d^{-1/2}\sum\delta_\ell`,
    :math:`\partial L/\partial W_k = q \otimes \partial u`,
    :math:`\partial L/\partial q = W_k\,\partial u`,
    :math:`\partial L/\partial W_q = \partial q \otimes h_0`; the [CLS] token's
    :math:`\hat x_0` collects its terms as query, as key and in the mixture."""
    n, T, d = tokens_hat.shape
    scale = 1.0 / math.sqrt(d)
    g1, dense = params.ln1_weight, gradients.dense
    probabilities = attention.probabilities
    gradients.factors["value"] = (d_attended, attention.mixed)
    d_mixed = matrices["value"].left_product(d_attended)
    d_mixed_hat = d_mixed * g1
    d_probabilities = np.empty((n, T + 1))
    d_probabilities[:, 0] = d_mixed_hat @ attention.cls_hat
    d_probabilities[:, 1:] = np.matmul(tokens_hat, d_mixed_hat[:, :, None])[:, :, 0]
    d_logits = softmax_backward(probabilities, d_probabilities) * scale
    logit_total = float(d_logits.sum())
    reduced = d_logits[:, 1:].reshape(n * T) @ tokens_hat.reshape(n * T, d)
    reduced += float(d_logits[:, 0].sum()) * attention.cls_hat
    probe, query = attention.probe, attention.query
    d_probe = g1 * reduced + params.ln1_bias * logit_total
    d_query = matrices["key"].right_product(d_probe[None])[0]
    gradients.factors["key"] = (query[None], d_probe[None])
    gradients.factors["query"] = (d_query[None], attention.cls_normed[None])
    d_h0_query = matrices["query"].left_product(d_query[None])[0]
    dense["ln1_weight"] = (
        np.sum(d_mixed * attention.mixed_hat, axis=0)
        + probe * reduced
        + d_h0_query * attention.cls_hat
    )
    dense["ln1_bias"] = d_mixed.sum(axis=0) + probe * logit_total + d_h0_query
    d_cls_hat = g1 * (
        probabilities[:, 0] @ d_mixed + float(d_logits[:, 0].sum()) * probe + d_h0_query
    )
    dense["cls"] = dense["cls"] + normalise_backward(
        d_cls_hat, attention.cls_hat, attention.cls_inverse_sd
    )


def cls_backward(
    params: EncoderParameters,
    forward: ClsPass,
    tokens_hat: np.ndarray,
    labels: np.ndarray,
    residual: bool,
    matrices: Matrices | None = None,
) -> Gradients:
    r"""Gradients of the mean logistic loss :math:`\frac1n\sum_i\log(1 + e^{-y_if_i})`
    over every parameter, from the training pass ``forward``."""
    slope = logistic_slope(labels * forward.outputs) * labels / labels.shape[0]
    matrices = matrices or dense_matrices(params)
    gradients = Gradients(dense={}, factors={})
    d_attended = head_backward(params, forward.head, slope, residual, gradients, matrices)
    attention_backward(params, forward.attention, tokens_hat, d_attended, gradients, matrices)
    return gradients


def apply_gradients(
    params: EncoderParameters,
    gradients: Gradients,
    step: float,
    matrices: Matrices | None = None,
) -> None:
    """One plain gradient-descent step (PyTorch's SGD without momentum), in place; the
    large matrices' updates go through ``matrices`` (deferred there, if they defer)."""
    matrices = matrices or dense_matrices(params)
    for name, gradient in gradients.dense.items():
        array = getattr(params, name)
        array -= step * gradient
    for name in LOW_RANK:
        left, right = gradients.factors[name]
        matrices[name].subtract(left, right, step)


__all__ = [
    "AttentionPass",
    "HeadPass",
    "ClsPass",
    "Gradients",
    "LOW_RANK",
    "cls_attention",
    "cls_head",
    "cls_forward",
    "outputs_with_attention",
    "cls_backward",
    "head_backward",
    "attention_backward",
    "apply_gradients",
    "dense_matrices",
    "Matrices",
]
