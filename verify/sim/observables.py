r"""Observables computed from logits: probabilities, outputs, loss, accuracy, selection, gaps.

Attention gaps (Definition 4.4 of the paper, in this package's own reading, since
the paper's exact definition is not available):

* clean sample :math:`i`: :math:`\Lambda_{i,t} = \max_{r \in R} a_{i,r} - a_{i,t}`
  for every token :math:`t \notin R` (how far the relevant token leads);
* noisy sample :math:`j`: :math:`\Gamma_{j,u} = \max_{w \in W_{-y^*}} a_{j,w} - a_{j,u}`
  for every :math:`u \notin W_{-y^*}` (how far the token whose score sign matches the
  flipped label leads).

With one token per group these are exactly :math:`\langle x_R - x_t, q\rangle` and
:math:`\langle x_{W_-} - x_u, q\rangle`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from theory.variants.ffn import FFNReadout
from theory.variants.kernels import ffn_output, loss_value
from verify.sim.data import RELEVANT, WEAK_OPPOSITE
from verify.sim.kernels import logistic_loss, softmax

#: History columns of the population test metrics (:mod:`verify.sim.population`).
POPULATION_COLUMNS = (
    "population_test_accuracy",
    "population_test_loss",
    "population_test_selects_relevant",
    "population_test_accuracy_error",
    "population_test_loss_error",
    "population_test_selects_relevant_error",
)


@dataclass(frozen=True)
class SplitMetrics:
    """Model outputs and metrics on one split (training or test)."""

    probabilities: np.ndarray  # (m, T)
    outputs: np.ndarray  # f, (m,)
    loss: float
    accuracy: float
    selected: np.ndarray  # argmax token, (m,)


def split_metrics(
    logits: np.ndarray,
    scores: np.ndarray,
    labels: np.ndarray,
    loss: str = "logistic",
    readout: FFNReadout | None = None,
    projections: np.ndarray | None = None,
) -> SplitMetrics:
    r"""Mean loss :math:`\frac1m\sum\ell(y f)` (``loss``: logistic by default) and accuracy
    of :math:`\mathrm{sign}(f)` (a tie :math:`f = 0` counts as wrong), with
    :math:`f = \sum_t s_t\gamma_t` (the linear head's scores), or with an FFN ``readout``
    :math:`f = a^\top\mathrm{GELU}(\sum_t s_tBx_t + c)` on the tokens' ``projections``
    :math:`Bx_t`."""
    logits = np.asarray(logits, dtype=np.float64)
    if logits.shape[0] == 0:
        empty = np.zeros((0,))
        return SplitMetrics(
            np.zeros(logits.shape), empty, float("nan"), float("nan"), empty.astype(int)
        )
    s = softmax(logits)
    if readout is None:
        f = (s * scores).sum(axis=-1)
    else:
        f = ffn_output(logits, projections, readout.biases, readout.out_weights)
    margins = labels * f
    losses = logistic_loss(margins) if loss == "logistic" else loss_value(margins, loss)
    return SplitMetrics(
        probabilities=s,
        outputs=f,
        loss=float(np.mean(losses)),
        accuracy=float(np.mean(margins > 0)),
        selected=np.argmax(logits, axis=-1),
    )


def head_metrics(nu: np.ndarray | None, data: object) -> dict[str, float]:
    r"""``head_alignment`` :math:`\cos(\nu, \mu_{+1} - \mu_{-1})` and ``head_scale``
    :math:`\|\nu\|\|\mu\|` of the head ``nu`` (NaN without a head vector or known
    signal directions, as for d-free statistics or loaded data)."""
    mu_plus, mu_minus = getattr(data, "mu_plus", None), getattr(data, "mu_minus", None)
    if nu is None or mu_plus is None or mu_minus is None:
        return {"head_alignment": math.nan, "head_scale": math.nan}
    direction = mu_plus - mu_minus
    norm = float(np.linalg.norm(nu))
    cosine = float(nu @ direction) / (norm * float(np.linalg.norm(direction))) if norm else 0.0
    return {"head_alignment": cosine, "head_scale": norm * float(np.linalg.norm(mu_plus))}


def leading_gaps(logits: np.ndarray, groups: np.ndarray, leader_group: int) -> np.ndarray:
    r""":math:`\max_{w \in \text{leader}} a_w - a_u` for every token, shape (m, T)
    (entries of leader-group tokens are measured against the best leader too)."""
    leader = logits[:, groups == leader_group].max(axis=-1, keepdims=True)
    return leader - logits


def attention_gaps(logits: np.ndarray, groups: np.ndarray, noisy: np.ndarray) -> np.ndarray:
    r"""Per training sample and token: :math:`\Lambda_{i,t}` for clean samples (leader: R)
    and :math:`\Gamma_{j,u}` for noisy samples (leader: :math:`W_{-y^*}`); NaN at the
    leader's own tokens and where a noisy sample has no :math:`W_{-y^*}` token."""
    gaps = np.full(logits.shape, np.nan)
    clean = ~noisy
    if clean.any():
        gaps[clean] = leading_gaps(logits[clean], groups, RELEVANT)
        gaps[np.ix_(clean, groups == RELEVANT)] = np.nan
    if noisy.any() and (groups == WEAK_OPPOSITE).any():
        gaps[noisy] = leading_gaps(logits[noisy], groups, WEAK_OPPOSITE)
        gaps[np.ix_(noisy, groups == WEAK_OPPOSITE)] = np.nan
    return gaps


def relevant_saturation(probabilities: np.ndarray, groups: np.ndarray) -> np.ndarray:
    r""":math:`s_R (1 - s_R)` with :math:`s_R` the probability on the relevant group and
    :math:`1 - s_R` summed over the other tokens (no cancellation) (Figure 2)."""
    relevant = probabilities[:, groups == RELEVANT].sum(axis=-1)
    rest = probabilities[:, groups != RELEVANT].sum(axis=-1)
    return relevant * rest


def query_components(
    q_sq: float, q_signal: np.ndarray, has_signal: bool = True
) -> dict[str, float]:
    r"""Split of :math:`q` from its moments: :math:`\langle q, \mu_{\pm1}\rangle/\|\mu\|`
    (signal learning; the signals lie along :math:`e_1, e_2`) and the norm of the rest
    :math:`\|q_\perp\| = (\|q\|^2 - q_1^2 - q_2^2)^{1/2}` (memorisation of training
    noise); NaN for the split when the data carry no known signal directions."""
    q_norm = math.sqrt(q_sq)
    if not has_signal:
        return {
            "q_norm": q_norm,
            "q_signal_plus": math.nan,
            "q_signal_minus": math.nan,
            "q_orthogonal_norm": math.nan,
        }
    plus, minus = float(q_signal[0]), float(q_signal[1])
    return {
        "q_norm": q_norm,
        "q_signal_plus": plus,
        "q_signal_minus": minus,
        "q_orthogonal_norm": math.sqrt(max(q_sq - plus * plus - minus * minus, 0.0)),
    }
