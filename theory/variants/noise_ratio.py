r"""How much of the gradient the noisy samples carry (claim R5): the noisy-gradient ratio.

Reconstruction (this package's own derivation). With :math:`G_S = \sum_{i\in S}
\nabla_{(W,p)}\ell_i` over the noisy set N and the clean set C, the observable is
:math:`\|G_N\|_F/\|G_C\|_F`. A sample's loss depends only on its own logits, so
:math:`G_S` is the full gradient with the logit gradient h restricted to S; in reduced
coordinates its squared norm is :math:`(a^\top Ka)(h_S^\top\mathrm{Gram}\,h_S) +
u^\top Ku`, :math:`u = h_S + M\,\mathrm{Gram}\,h_S` (:func:`theory.variants.kernels.
noisy_gradient_ratio`, proved in :mod:`theory.variants.gradients`).

**At** :math:`\tau = 0` (:math:`p = 0`: only :math:`\nabla_p = W_0G_S`, and
:math:`W_0^\top W_0 \approx \kappa_0 I` cancels in the ratio), with
:math:`h_{i,t} = -\frac{w_i}{nT}y_i(\gamma_{i,t} - f_i)`: each sample adds its tokens' noise
with weights :math:`w_iy_i(\gamma_{i,t} - f_i)` (nearly orthogonal across samples) and a signal
:math:`\varsigma_iw_i\gamma_0D(\mu_{y^*} \text{ and } \mu_{-y^*}\text{ parts})`,
:math:`D = \sum_g n_g(c_g + c'_g)(s_g - \bar s)` (:math:`s_g = c_g - c'_g`,
:math:`\bar s = \sum_gn_gs_g/T`), which add coherently within a balanced set. Hence

.. math::

    \frac{\|G_N\|^2}{\|G_C\|^2} = \frac{w_n^2}{w_c^2}\,
    \frac{(|N|/2)^2\Sigma_\mu + |N|\Sigma_\epsilon}{(|C|/2)^2\Sigma_\mu + |C|\Sigma_\epsilon},
    \quad \Sigma_\mu = 2\gamma_0^2\|\mu\|^2D^2,\quad
    \Sigma_\epsilon = \sigma_\epsilon^2d\Big[\gamma_0^2\sum_gn_g(s_g - \bar s)^2
    + (T-1)\sigma_\epsilon^2\|\nu\|^2\Big],

between :math:`(w_n/w_c)|N|/|C|` (signal-dominated, large :math:`n\mathrm{SNR}^2`) and
:math:`(w_n/w_c)\sqrt{|N|/|C|}` (noise-dominated), with :math:`w_{c,n} = w(\pm\bar f)`: below 1
at the start whenever :math:`\eta < 1/2`.

**Later** (:func:`flow_ratio`): on the mean-field flow of :mod:`theory.stage2.flow` the
preconditioner is :math:`W^\top W = W_0^\top W_0 + (qq^\top - kk^\top)/\pi`, so per sample type
:math:`\|G_S\|^2 \approx (\kappa_0 + \pi)\|B h_S\|^2 + (r\cdot h_S)(a\cdot h_S + b\cdot h_S)/s`
(:math:`a = b + sr` the logits, b the :math:`W_0` channel, :math:`\pi = s^2 = \|p\|^2`), with
the mean-field Gram :math:`\|Bh_S\|^2 = \sigma_\epsilon^2d\sum m h^2 +
\frac{\|\mu\|^2}2(\sum m\sigma h)^2`. As the clean samples saturate their h falls like
:math:`e^{-\text{gap}}`, so the ratio grows; whether it passes 1, and when, is what the flow
predicts (R5 says it can, even at small :math:`\eta`).
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from theory.foundation.data_model import DataModel, Training
from theory.foundation.proof import NUMERIC, RECONSTRUCTION, Derivation
from theory.stage2 import flow
from theory.variants.loss import stage1_weights


def subset_sizes(model: DataModel) -> tuple[float, float]:
    """:math:`(|N|, |C|)`: noisy and clean training samples (exact flips, or the
    expected numbers under Bernoulli flips)."""
    noisy = model.noisy_count if model.flip == "exact" else model.n * model.eta
    return float(noisy), float(model.n - noisy)


def signal_noise_sums(model: DataModel, score_noise: bool = True) -> tuple[float, float]:
    r""":math:`(\Sigma_\mu, \Sigma_\epsilon)` of the module docstring (``score_noise=False``
    drops the tokens' noise scores, as the mean-field flow does)."""
    mean = sum(g.count * g.score for g in model.groups) / model.T
    D = sum(g.count * g.signal * (g.score - mean) for g in model.groups)
    spread = sum(g.count * (g.score - mean) ** 2 for g in model.groups)
    signal = 2 * model.gamma0**2 * model.mu_norm**2 * D**2
    scores = (model.T - 1) * model.score_noise**2 if score_noise else 0.0
    noise = model.sigma_eps**2 * model.d * (model.gamma0**2 * spread + scores)
    return signal, noise


def initial_ratio(model: DataModel, training: Training, score_noise: bool = True) -> float:
    r""":math:`\|G_N\|/\|G_C\|` at :math:`\tau = 0` (module docstring); 0 without noisy
    samples (``score_noise``: as :func:`signal_noise_sums`)."""
    noisy, clean = subset_sizes(model)
    w_clean, w_noisy = stage1_weights(model, training.loss)
    signal, noise = signal_noise_sums(model, score_noise)
    numerator = (noisy / 2) ** 2 * signal + noisy * noise
    denominator = (clean / 2) ** 2 * signal + clean * noise
    return w_noisy / w_clean * math.sqrt(numerator / denominator)


def _type_norms_sq(pop: flow.Population, logits: np.ndarray, b: np.ndarray, s: float) -> list:
    """Mean-field :math:`\\|\\nabla_{(W,p)}L_k\\|^2` of each sample type at one point."""
    h = flow.logit_gradient(pop, logits).h
    r = (logits - b) / s
    norms = []
    for k, weight in enumerate(pop.weights):
        mass = weight * pop.counts
        gram = pop.memorisation * float(mass @ h[k] ** 2)
        gram += 0.5 * pop.signal_strength * float(mass @ (pop.signal * h[k])) ** 2
        dots = [float(mass @ (x[k] * h[k])) for x in (logits, b, r)]
        radial = dots[2] * (dots[0] + dots[1]) / s
        norms.append((pop.kappa0 + s * s) * gram + radial)
    return norms


def flow_ratio(model: DataModel, training: Training, steps: np.ndarray) -> np.ndarray:
    r""":math:`\|G_N\|/\|G_C\|` on the mean-field flow after each of ``steps`` GD steps
    (module docstring; increasing positive steps)."""
    steps = np.asarray(steps, dtype=float)
    pop = flow.population(model, training)
    run = flow.solve(pop, float(training.alpha * steps[-1]), tau_eval=training.alpha * steps)
    ratios = []
    for logits, b, pi in zip(run.logits, run.w0_logits, run.pi, strict=True):
        clean_sq, noisy_sq = _type_norms_sq(pop, logits, b, math.sqrt(pi))
        ratios.append(math.sqrt(max(noisy_sq, 0.0) / clean_sq))
    return np.array(ratios)


def first_noisy_dominance(
    model: DataModel, training: Training, stop: float = 1e12, points: int = 241
) -> float:
    r"""The first GD step (on a geometric grid from 1 to ``stop``) at which the flow's noisy
    samples carry more of the gradient than the clean ones (ratio > 1); ``inf`` if none."""
    steps = np.geomspace(1.0, stop, points)
    above = np.flatnonzero(flow_ratio(model, training, steps) > 1)
    return float(steps[above[0]]) if above.size else math.inf


def derivations() -> list[Derivation]:
    """This module's records, for :mod:`theory.derivations`."""
    ratio, w_n, w_c = sp.symbols("||G_N||/||G_C|| w_n w_c", positive=True)
    N, C, sig, eps = sp.symbols("|N| |C| Sigma_mu Sigma_epsilon", positive=True)
    test = "tests/theory/variants/test_noise_ratio.py::"
    return [
        Derivation(
            "Noisy-gradient ratio at tau = 0 (R5): between (w_n/w_c)|N|/|C| and "
            "(w_n/w_c) sqrt(|N|/|C|)",
            sp.Eq(
                ratio**2,
                (w_n / w_c) ** 2 * ((N / 2) ** 2 * sig + N * eps) / ((C / 2) ** 2 * sig + C * eps),
            ),
            RECONSTRUCTION,
            proof=NUMERIC,
            evidence=test + "test_initial_ratio_matches_a_monte_carlo_of_the_exact_gradient: "
            "||W0 G_N|| / ||W0 G_C|| of sampled data sets and W0 at three settings against "
            "the formula; the observable verify.sim.observables.noisy_gradient_ratio does not "
            "exist yet (no simulated link)",
            twin="theory.variants.noise_ratio.initial_ratio",
            test=test + "test_initial_ratio_matches_a_monte_carlo_of_the_exact_gradient",
        ),
        Derivation(
            "Noisy-gradient ratio on the stage-2 flow: ||G_S||^2 = (kappa_0 + pi) ||B h_S||^2 "
            "+ (r.h_S)(a.h_S + b.h_S)/s",
            sp.Eq(sp.Symbol("||G_S||^2"), sp.Symbol("(kappa_0 + pi) ||B h_S||^2 + radial")),
            RECONSTRUCTION,
            proof=NUMERIC,
            evidence=test + "test_flow_ratio_starts_at_the_initial_ratio_and_grows: the flow's "
            "ratio at its first point equals the mean-field initial ratio and grows as the "
            "clean samples saturate",
            twin="theory.variants.noise_ratio.flow_ratio",
            test=test + "test_flow_ratio_starts_at_the_initial_ratio_and_grows",
        ),
    ]


__all__ = [
    "subset_sizes",
    "signal_noise_sums",
    "initial_ratio",
    "flow_ratio",
    "first_noisy_dominance",
    "derivations",
]
