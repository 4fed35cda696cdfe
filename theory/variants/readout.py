r"""The FFN readout (claim R3): what carries over from the linear head, and what does not.

Reconstruction (this package's own derivation), for the readout of
:mod:`theory.variants.ffn`, :math:`f(z) = \frac\lambda P\sum_j[\mathrm{GELU}(w_j + \kappa
\nu^\top z) - \mathrm{GELU}(w_j - \kappa\nu^\top z)]`, :math:`w_j = c_j + r_j^\top z`.

**Carries over.**

* The update structure: :math:`h_{i,t} = \frac1n\ell'(y_if_i)y_is_{i,t}\sum_u s_{i,u}
  (\phi_{i,t} - \phi_{i,u})` with :math:`\phi_{i,t} = \partial f_i/\partial s_{i,t}`, and
  :math:`\nabla_p = WG`, :math:`\nabla_W = pG^\top` (:mod:`theory.variants.gradients`);
  the conservation of :math:`WW^\top - pp^\top` (it depends on the logits' form only).
* A token selection problem given token scores: at hard selection (one-hot s on token t)
  :math:`f = \mathrm{FFN}(x_t)`, and over the random pairs
  :math:`\mathrm{FFN}(x_t) = \psi(\gamma_t) + O(P^{-1/2})` with
  :math:`\psi(\gamma) = \lambda E_{c,\xi}[\mathrm{GELU}(c + \xi + \kappa\gamma) -
  \mathrm{GELU}(c + \xi - \kappa\gamma)]`, :math:`\xi = r_j^\top x_t \sim N(0, 1)`: odd and
  increasing, so the score table keeps its signs and order (R: :math:`\psi(\gamma_0)`,
  :math:`W_\pm`: :math:`\pm\psi(\rho\gamma_0)`, I: 0) (:func:`selection_score_limit`).
* Bounded outputs: :math:`|f| \le 2\lambda\kappa L\max_t|\gamma_t|`, so no loss weight
  vanishes while the scores are bounded (the R4 argument).
* Stage 1: at uniform attention the gradient scores are
  :math:`\phi_t - \phi_u = a^\top(\mathrm{GELU}'(\bar v)\odot B(x_t - x_u))
  \approx g_{\rm eff}(\gamma_t - \gamma_u)` plus a small random part, with
  :math:`g_{\rm eff} = \kappa\lambda E[\mathrm{GELU}'(c + \bar\xi + \kappa\bar f) +
  \mathrm{GELU}'(c + \bar\xi - \kappa\bar f)]`, :math:`\bar\xi \sim N(0, 1/T)`: the base
  model's stage-1 rates with the score differences scaled by :math:`g_{\rm eff}`
  (:func:`effective_gain`).

**Does not carry over.** The output is not an average of token scores (f is not
:math:`\sum_ts_t\phi_t`); the gradient scores :math:`\phi` move with s (through
:math:`\mathrm{GELU}'(Bz + c)`), so the token-score table of the mean-field flow is not fixed
and the stage-2 predictions do not apply as they stand; at saturation the gap's drive is
:math:`\phi_{\rm sel} - \phi_u = \nabla\mathrm{FFN}(x_{\rm sel})^\top(x_{\rm sel} - x_u)`, a
first-order difference, not :math:`\mathrm{FFN}(x_{\rm sel}) - \mathrm{FFN}(x_u)`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache

import numpy as np
import sympy as sp

from theory.foundation.data_model import DataModel
from theory.foundation.proof import NUMERIC, PARTIAL, RECONSTRUCTION, Derivation
from theory.variants.ffn import GELU_SLOPE_MAX, OFFSET_RANGE, FFNReadout
from theory.variants.gradients import gelu, gelu_residuals
from theory.variants.kernels import FLOAT64
from theory.variants.loss import mean_output


@cache
def _nodes(points: int = 48) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes on the offsets' interval and Gauss-Hermite nodes for N(0, 1),
    with weights summing to 1."""
    low, high = OFFSET_RANGE
    x, w = np.polynomial.legendre.leggauss(points)
    offsets, offset_weights = low + (high - low) * (x + 1) / 2, w / 2
    normal, normal_weights = np.polynomial.hermite_e.hermegauss(points)
    return offsets, offset_weights, normal, normal_weights / math.sqrt(2 * math.pi)


def limit_scale(model: DataModel) -> float:
    r""":math:`\lambda_\infty = \gamma_0/E_c[\mathrm{GELU}(c + 1) - \mathrm{GELU}(c - 1)]`, the
    scale :math:`\lambda` for many pairs."""
    offsets, weights, _, _ = _nodes()
    units = FLOAT64.gelu(offsets + 1.0) - FLOAT64.gelu(offsets - 1.0)
    return model.gamma0 / float(weights @ units)


def _pair_average(function: Callable[[np.ndarray], np.ndarray], spread: float) -> float:
    """:math:`E_{c,\\xi}[F(c + \\xi)]`, :math:`\\xi \\sim N(0, \\text{spread}^2)`."""
    offsets, weights, normal, normal_weights = _nodes()
    grid = offsets[:, None] + spread * normal[None, :]
    return float(weights @ function(grid) @ normal_weights)


def selection_score_limit(model: DataModel, gamma: float, spread: float = 1.0) -> float:
    r""":math:`\psi(\gamma)` (module docstring): the hard-selection score of a token with head
    score :math:`\gamma` for many pairs (``spread``: the sd of :math:`r_j^\top x_t`, 1 for a
    token)."""
    kappa = 1.0 / model.gamma0
    return limit_scale(model) * _pair_average(
        lambda w: FLOAT64.gelu(w + kappa * gamma) - FLOAT64.gelu(w - kappa * gamma), spread
    )


def selection_score_table(model: DataModel) -> dict[str, float]:
    r"""The limit score :math:`\psi(\gamma_0(c_g - c'_g))` of each token group."""
    return {g.name: selection_score_limit(model, model.gamma0 * g.score) for g in model.groups}


def selection_score_sd(model: DataModel, gamma: float) -> float:
    r"""Standard deviation over the random pairs of :math:`\mathrm{FFN}(x_t)` at score
    :math:`\gamma`: :math:`\lambda_\infty\,\mathrm{sd}(D)/\sqrt P`, D a pair's term."""
    kappa = 1.0 / model.gamma0

    def term(w: np.ndarray) -> np.ndarray:
        return FLOAT64.gelu(w + kappa * gamma) - FLOAT64.gelu(w - kappa * gamma)

    mean = _pair_average(term, 1.0)
    second = _pair_average(lambda w: term(w) ** 2, 1.0)
    pairs = model.hidden_width // 2
    return limit_scale(model) * math.sqrt(max(second - mean * mean, 0.0) / pairs)


def effective_gain(model: DataModel) -> float:
    r""":math:`g_{\rm eff}`: the factor on the score differences :math:`\gamma_t - \gamma_u` in
    the gradient scores at uniform attention (module docstring)."""
    kappa, shift = 1.0 / model.gamma0, mean_output(model) / model.gamma0
    slope = _pair_average(
        lambda w: FLOAT64.gelu_prime(w + shift) + FLOAT64.gelu_prime(w - shift),
        1.0 / math.sqrt(model.T),
    )
    return kappa * limit_scale(model) * slope


def output_bound(readout: FFNReadout) -> float:
    r""":math:`2\lambda\kappa L`: :math:`|f(z)| \le 2\lambda\kappa L\,|\nu^\top z|`,
    :math:`L = \max|\mathrm{GELU}'|`."""
    return 2 * readout.scale * readout.kappa * GELU_SLOPE_MAX


def pair_oddness_residual() -> sp.Expr:
    r"""Proof that a pair's term :math:`P(w, u) = \mathrm{GELU}(w + u) - \mathrm{GELU}(w - u)`
    is odd in u (so :math:`f(\mu_{-1}) = -f(\mu_{+1})`, the directions being orthogonal to
    the signals): :math:`P(w, u) + P(w, -u) = 0`."""
    w, u = sp.symbols("w u", real=True)

    def pair(value: sp.Expr) -> sp.Expr:
        return gelu(w + value) - gelu(w - value)

    return sp.simplify(pair(u) + pair(-u))


def derivations() -> list[Derivation]:
    """This module's records, for :mod:`theory.derivations`."""
    f, gamma_max, lam, kappa, L = sp.symbols("f gamma_max lambda kappa L", positive=True)
    psi, gamma = sp.Function("psi"), sp.Symbol("gamma_t", real=True)
    test = "tests/theory/variants/test_readout.py::"
    return [
        Derivation(
            "FFN readout (R3): f(mu_{+-1}) = +-gamma0 and |f| <= 2 lambda kappa L max_t "
            "|gamma_t|, L = GELU'(sqrt 2)",
            sp.Le(sp.Abs(f), 2 * lam * kappa * L * gamma_max),
            RECONSTRUCTION,
            lambda: [*gelu_residuals(), pair_oddness_residual()],
            PARTIAL,
            "the check proves each pair odd in nu^T z and GELU'' = phi (2 - x^2) (so L = "
            "GELU'(sqrt 2)); the mean-value bound and f(mu_{+1}) = gamma0 are by hand and "
            "tested on sampled readouts; not simulated yet",
            twin="theory.variants.readout.output_bound",
            test=test + "test_ffn_readout_has_the_base_signal_scores_and_bounded_outputs",
        ),
        Derivation(
            "FFN readout (R3): hard selection poses the token selection problem with scores "
            "FFN(x_t) = psi(gamma_t) + O(P^{-1/2}), psi odd and increasing",
            sp.Eq(sp.Symbol("FFN(x_t)"), psi(gamma)),
            RECONSTRUCTION,
            proof=NUMERIC,
            evidence=test + "test_selection_scores_follow_the_limit_within_their_spread: "
            "FFN(x_t) of sampled tokens and readouts against psi(gamma_t) within the predicted "
            "spread; the stage-2 flow does not carry over (the scores phi move with s)",
            twin="theory.variants.readout.selection_score_limit",
            test=test + "test_selection_scores_follow_the_limit_within_their_spread",
        ),
        Derivation(
            "FFN readout, stage 1: the gradient scores' differences are g_eff (gamma_t - "
            "gamma_u) at uniform attention",
            sp.Eq(
                sp.Symbol("phi_t - phi_u"), sp.Symbol("g_eff") * sp.Symbol("(gamma_t - gamma_u)")
            ),
            RECONSTRUCTION,
            proof=NUMERIC,
            evidence=test + "test_uniform_attention_gradient_scores_scale_the_score_"
            "differences: the kernel's phi at p = 0 on sampled data regress on gamma with "
            "slope g_eff",
            twin="theory.variants.readout.effective_gain",
            test=test + "test_uniform_attention_gradient_scores_scale_the_score_differences",
        ),
    ]


__all__ = [
    "limit_scale",
    "selection_score_limit",
    "selection_score_table",
    "selection_score_sd",
    "effective_gain",
    "output_bound",
    "pair_oddness_residual",
    "derivations",
]
