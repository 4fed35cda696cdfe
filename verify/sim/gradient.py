r"""The logit gradient of a run, whatever its loss, readout and head.

Every engine steps with :math:`h = \partial L/\partial a` (the training logits' gradient);
a :class:`Kernel` holds what it needs besides the logits and picks the formula:

* the paper's model (logistic loss, linear head): :func:`verify.sim.kernels.logit_gradient`,
  :math:`h_{i,t} = \frac1n\ell'(y_if_i)y_is_{i,t}\sum_u s_{i,u}(\gamma_{i,t} - \gamma_{i,u})`
  (the base engines' numbers, bit for bit);
* another loss: the same with :math:`-w(y_if_i)` for :math:`\ell'`
  (:func:`theory.variants.kernels.logit_gradient`);
* the FFN readout :math:`f = a^\top\mathrm{GELU}(\sum_t s_tBx_t + c)`: the token scores
  :math:`\phi_{i,t} = a^\top(\mathrm{GELU}'(\cdot)\odot Bx_{i,t})` in place of
  :math:`\gamma_{i,t}` (:func:`theory.variants.kernels.ffn_logit_gradient`, on the projections
  :math:`Bx_{i,t}`, fixed in training);
* a trained head: the current scores :math:`\gamma = X\nu` are passed with the logits, and
  the output's slope gives the head's gradient (:func:`head_gradient`).

A kernel holds arrays only (no engine), so that a flow solver's right-hand side may hold it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from theory.variants import kernels as variant
from verify.sim.config import RunConfig
from verify.sim.kernels import FLOAT64, Arithmetic, logit_gradient, score_differences


def elementwise(arithmetic: Arithmetic) -> variant.Elementwise:
    """The variants' elementwise functions for the same number type."""
    return variant.FLOAT64 if arithmetic.name == "float64" else variant.mpmath_arithmetic()


@dataclass(frozen=True)
class Kernel:
    """What the logit gradient of one run needs besides the logits: the labels, the fixed
    head's scores and their differences, the loss, and the FFN readout's projections,
    offsets and output weights (``None`` with the linear head), in ``arithmetic``."""

    labels: Any
    scores: Any
    differences: Any
    loss: str
    arithmetic: Arithmetic
    projections: Any = None
    biases: Any = None
    out_weights: Any = None

    @classmethod
    def of_run(cls, config: RunConfig, data: Any, arithmetic: Arithmetic = FLOAT64) -> Kernel:
        """The kernel of ``config``'s variants on ``data`` (a dataset, or d-free statistics)."""
        scores = arithmetic.asarray(data.train_scores)
        readout = getattr(data, "readout", None)
        ffn: dict[str, Any] = {}
        if readout is not None:
            ffn = {
                "projections": arithmetic.asarray(data.train_projections),
                "biases": arithmetic.asarray(readout.biases),
                "out_weights": arithmetic.asarray(readout.out_weights),
            }
        return cls(
            labels=arithmetic.asarray(data.y_train),
            scores=scores,
            differences=score_differences(scores),
            loss=config.training.loss,
            arithmetic=arithmetic,
            **ffn,
        )

    @property
    def base(self) -> bool:
        """The paper's model: logistic loss and linear head."""
        return self.loss == "logistic" and self.projections is None

    def __call__(self, logits: Any, scores: Any = None) -> Any:
        """The kernel output at ``logits`` (n, T): probabilities, outputs, margins and
        ``logit_gradient``; ``scores`` are a trained head's current scores (else the fixed
        head's)."""
        if scores is not None:
            return variant.logit_gradient(
                logits,
                scores,
                score_differences(scores),
                self.labels,
                self.loss,
                elementwise(self.arithmetic),
            )
        if self.base:
            return logit_gradient(
                logits, self.scores, self.differences, self.labels, self.arithmetic
            )
        if self.projections is None:
            return variant.logit_gradient(
                logits,
                self.scores,
                self.differences,
                self.labels,
                self.loss,
                elementwise(self.arithmetic),
            )
        return variant.ffn_logit_gradient(
            logits,
            self.projections,
            self.labels,
            self.biases,
            self.out_weights,
            self.loss,
            elementwise(self.arithmetic),
        )


def head_gradient(output: Any) -> Any:
    r""":math:`g_{i,t} = \partial L/\partial\gamma_{i,t} = \frac1n\ell'(y_if_i)y_is_{i,t}`
    (n, T) of a trained head's kernel output: :math:`\nabla_\nu L = \sum_{i,t}g_{i,t}x_{i,t}`."""
    return variant.score_gradient(output)


def head_rate(config: RunConfig) -> float:
    r"""The trained head's step over the attention's, :math:`\alpha_\nu/\alpha` (its flow
    moves :math:`\nu` at that rate in the flow time :math:`\alpha k`)."""
    return head_step(config) / config.training.alpha


def head_step(config: RunConfig) -> float:
    r"""The head's step :math:`\alpha_\nu` (``head_step``, else :math:`\alpha` for a trained
    head, :func:`theory.variants.head.head_step`)."""
    training = config.training
    return training.alpha if training.head_step is None else training.head_step


def noisy_gradient_ratio_dense(
    tokens: np.ndarray, W: np.ndarray, p: np.ndarray, h: np.ndarray, noisy: np.ndarray
) -> float:
    r""":math:`\|G_N\|_F/\|G_C\|_F` from the full parameters: with :math:`G_S = B h_S` (h
    restricted to the samples S), :math:`\|\nabla_W L_S\|_F^2 = \|p\|^2\|G_S\|^2` and
    :math:`\|\nabla_p L_S\|^2 = \|WG_S\|^2`."""
    mask = np.asarray(noisy, dtype=bool)[:, None]
    squares = []
    for part in (np.where(mask, h, 0.0), np.where(mask, 0.0, h)):
        G = tokens.T @ part.reshape(-1)
        squares.append(float(p @ p) * float(G @ G) + float(np.sum((W @ G) ** 2)))
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.sqrt(np.float64(squares[0]) / np.float64(squares[1])))


__all__ = [
    "Kernel",
    "elementwise",
    "head_gradient",
    "head_rate",
    "head_step",
    "noisy_gradient_ratio_dense",
]
