r"""The head variants: one GD step from a random start (claim R2), and a trained head (R6).

Reconstruction (this package's own derivation). Notation: :math:`u = (\mu_{+1} -
\mu_{-1})/(\sqrt2\|\mu\|)`, :math:`S_T = \sum_g n_g(c_g - c'_g)` (1 for the paper's table,
any :math:`\rho`), :math:`w_0 = -\ell'(0)` (:data:`theory.foundation.losses.WEIGHT_AT_ZERO`).

**One-step head.** :math:`\nu_1 = \nu_0 + \alpha_\nu\frac1m\sum_j w_jy_j\bar x_j` on a head
set of m balanced examples with a fraction :math:`\eta_h` of flipped labels (the training set:
:math:`m = n`, :math:`\eta_h = \eta`; a separate clean set: :math:`\eta_h = 0`). With
:math:`\nu_0` small, :math:`w_j \approx w_0` and

.. math::

    \frac1m\sum_j y_j\bar x_j = (1 - 2\eta_h)\frac{S_T}{2T}(\mu_{+1} - \mu_{-1})
    + \frac1m\sum_j y_j\bar\epsilon_j,\qquad \bar\epsilon_j \sim N(0, \sigma_\epsilon^2I/T),

so :math:`\nu_1` has three nearly orthogonal parts of norms
:math:`A = \alpha_\nu w_0(1 - 2\eta_h)S_T\sqrt2\|\mu\|/(2T)` (along u),
:math:`B = \alpha_\nu w_0\sigma_\epsilon\sqrt{d/(mT)}` (noise) and :math:`C = s\sqrt d`
(:math:`\nu_0`): alignment :math:`\cos(\nu_1, u) = A/\sqrt{A^2 + B^2 + C^2}` and scale
:math:`\|\nu_1\|\|\mu\| = \|\mu\|\sqrt{A^2 + B^2 + C^2}`. The default step makes the scale
the fixed head's, :math:`s_\nu`: :math:`\alpha_\nu = \sqrt{\|\nu\|^2 - C^2}/(w_0
\sqrt{A_1^2 + B_1^2})` (:math:`A_1, B_1`: A, B at :math:`\alpha_\nu w_0 = 1`). Alignment near
1 needs :math:`A \gg B`: :math:`m(1 - 2\eta_h)^2S_T^2\,\mathrm{SNR}^2 \gg 2T`.

On the training set the head also memorises: a training token's score gains
:math:`\alpha_\nu w_0 y_j\|\epsilon_{j,t}\|^2/(mT) \approx \alpha_\nu w_0y_j\sigma_\epsilon^2
d/(mT)`, the same for every token of sample j, against the relevant token's signal score
:math:`\alpha_\nu w_0(1 - 2\eta)S_T\|\mu\|^2/(2T)`: ratio
:math:`2/(m(1 - 2\eta)S_T\mathrm{SNR}^2)`. At uniform attention a training sample's margin
is :math:`y_j\nu_1^\top\bar x_j = \alpha_\nu w_0[\pm(1-2\eta)S_T^2\|\mu\|^2/(2T^2) +
\sigma_\epsilon^2d/(mT)] + N(0, v)` (+ clean, - noisy;
:math:`v = (\alpha_\nu w_0)^2[(m+1)\sigma_\epsilon^4d/(m^2T^2) + A_1^2\sigma_\epsilon^2/T]
+ C^2\sigma_\epsilon^2/T`): the head alone fits the noisy labels, before any token
selection, when :math:`m(1 - 2\eta)S_T^2\mathrm{SNR}^2 < 2T`
(:attr:`OneStepPrediction.noisy_fitted`).

**Trained head.** :math:`\nu` starts at the fixed head and moves with step
:math:`\alpha_\nu`: in flow time :math:`\tau = \alpha k`,
:math:`\dot\nu = \frac{\alpha_\nu}{\alpha}\frac1{nT}\sum_i\ell_iy_i\sum_tx_{i,t}` at
:math:`\tau = 0` (:math:`\ell_{c,n} = w(\pm\bar f)`): along u at
:math:`\frac{\alpha_\nu}{\alpha}w_sS_T\|\mu\|/(\sqrt2T)`, :math:`w_s = (1-\eta)\ell_c -
\eta\ell_n`, and on the noise with norm :math:`\frac{\alpha_\nu}{\alpha}\sigma_\epsilon
\sqrt{d((1-\eta)\ell_c^2 + \eta\ell_n^2)/(nT)}`. A noisy sample's margin moves through the
head at :math:`\frac{\alpha_\nu}{\alpha}[\ell_n\sigma_\epsilon^2d/(nT) -
w_sS_T^2\|\mu\|^2/(2T^2)]` and through the attention at
:math:`-\frac1T\sum_g n_gv_g(\gamma_g - \bar f)` (stage-1 token velocities :math:`v_g`);
their memorisation parts stand in the ratio :math:`(\alpha_\nu/\alpha)/(\kappa_0
\mathrm{Var}_t\gamma)` (:math:`\mathrm{Var}_t\gamma` the spread of a sample's scores,
:func:`score_variance`): with :math:`\alpha_\nu = \alpha` the head memorises faster than
the attention by that ratio (:func:`trained_head_rates` evaluates it), and it fits the
noisy samples alone when
:math:`n\mathrm{SNR}^2 < 2T\ell_n/(w_sS_T^2)`. Its memorisation shifts all scores of a sample
alike (differences move by :math:`O(\sqrt{2/d})` of it), so it fits the noisy labels without
changing their token selection. Where the derivation stops: once :math:`\nu` moves the
token scores move, and the mean-field flow (:mod:`theory.stage2.flow`), which holds the
score table fixed, no longer applies; only the initial rates are predicted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import sympy as sp

from theory.foundation.data_model import DataModel, Training
from theory.foundation.losses import WEIGHT_AT_ZERO
from theory.foundation.numerics import normal_cdf
from theory.foundation.proof import NUMERIC, RECONSTRUCTION, Derivation
from theory.foundation.sampling import head_init_std
from theory.foundation.validation import require
from theory.stage1.predictions import stage1_noisy_fitting_time, token_velocities
from theory.variants.loss import mean_output, stage1_weights


def score_sum(model: DataModel) -> float:
    r""":math:`S_T = \sum_g n_g(c_g - c'_g)` (linear in :math:`\rho`, so also the mean over a
    spread of :math:`\rho_i`)."""
    return float(sum(g.count * g.score for g in model.groups))


def head_set(model: DataModel, training: Training) -> tuple[int, float]:
    r"""The one-step head set: its size m and noise rate :math:`\eta_h` (the training set's
    realised rate, or 0 for ``head_n`` clean examples)."""
    if training.head_n:
        return training.head_n, 0.0
    rate = model.noisy_count / model.n if model.flip == "exact" else model.eta
    return model.n, rate


def init_norm(model: DataModel, training: Training) -> float:
    r""":math:`C = s\sqrt d`, the norm of :math:`\nu_0` (default :math:`0.1\|\nu\|`)."""
    return head_init_std(model, training) * math.sqrt(model.d)


def unit_parts(model: DataModel, training: Training) -> tuple[float, float]:
    r""":math:`(A_1, B_1)`: the signal and noise norms of :math:`\nu_1 - \nu_0` per unit
    :math:`\alpha_\nu w_0`."""
    m, rate = head_set(model, training)
    signal = (1 - 2 * rate) * abs(score_sum(model)) * math.sqrt(2) * model.mu_norm / (2 * model.T)
    noise = model.sigma_eps * math.sqrt(model.d / (m * model.T))
    return signal, noise


def default_one_step(model: DataModel, training: Training) -> float:
    r"""The one-step default :math:`\alpha_\nu = \sqrt{\|\nu\|^2 - C^2}/(w_0\sqrt{A_1^2 +
    B_1^2})`: :math:`E\|\nu_1\|^2 = \|\nu\|^2` of the fixed head."""
    room = model.nu_norm**2 - init_norm(model, training) ** 2
    require(
        room > 0,
        "head_init_scale",
        training.head_init_scale,
        f"a scale s with s sqrt d below the fixed head's norm {model.nu_norm:g} when "
        "head_step is derived (or give head_step)",
    )
    signal, noise = unit_parts(model, training)
    return math.sqrt(room) / (WEIGHT_AT_ZERO[training.loss] * math.hypot(signal, noise))


def head_step(model: DataModel, training: Training) -> float | None:
    r"""The head's step :math:`\alpha_\nu`: ``head_step``, else the one-step default
    (:func:`default_one_step`) or, for a trained head, :math:`\alpha`; ``None`` for the
    fixed head."""
    if training.head == "fixed":
        return None
    if training.head_step is not None:
        return training.head_step
    return default_one_step(model, training) if training.head == "one-step" else training.alpha


@dataclass(frozen=True)
class OneStepPrediction:
    r"""What the data model predicts for the one-step head (module docstring): the step,
    the norms A, B, C, the alignment :math:`\cos(\nu_1, u)`, the scale
    :math:`\|\nu_1\|\|\mu\|`, a head-set token's memorisation over its signal score, the
    training samples' uniform-attention margins (clean and noisy means, their standard
    deviation) with the fractions they fit, the test accuracy at uniform attention, and the
    head's signal score :math:`\gamma_0^{\rm eff} = \nu_1^\top\mu_{y^*}y^*`."""

    step: float
    signal: float
    noise: float
    init: float
    alignment: float
    scale: float
    memorisation_ratio: float
    clean_margin: float
    noisy_margin: float
    margin_sd: float
    clean_fitted: float
    noisy_fitted: float
    uniform_test_accuracy: float
    effective_gamma0: float


def one_step_prediction(model: DataModel, training: Training) -> OneStepPrediction:
    """The one-step head's predictions at a setting (``training.head`` must be one-step)."""
    require(training.head == "one-step", "head", training.head, "'one-step'")
    step = head_step(model, training)
    assert step is not None
    unit = step * WEIGHT_AT_ZERO[training.loss]
    m, rate = head_set(model, training)
    A1, B1 = unit_parts(model, training)
    A, B, C = unit * A1, unit * B1, init_norm(model, training)
    norm = math.sqrt(A * A + B * B + C * C)
    sigma_sq, T, S = model.sigma_eps**2, model.T, score_sum(model)
    signal_margin = unit * (1 - 2 * rate) * S * S * model.mu_norm**2 / (2 * T * T)
    own = 0.0 if training.head_n else unit * sigma_sq * model.d / (m * T)
    cross = (m + (0 if training.head_n else 1)) * sigma_sq**2 * model.d / (m * m * T * T)
    sd = math.sqrt(unit * unit * (cross + A1 * A1 * sigma_sq / T) + C * C * sigma_sq / T)
    memorisation = 2 / (m * (1 - 2 * rate) * S * model.snr**2) if S else math.inf
    return OneStepPrediction(
        step=step,
        signal=A,
        noise=B,
        init=C,
        alignment=A / norm,
        scale=norm * model.mu_norm,
        memorisation_ratio=memorisation,
        clean_margin=signal_margin + own,
        noisy_margin=-signal_margin + own,
        margin_sd=sd,
        clean_fitted=normal_cdf((signal_margin + own) / sd),
        noisy_fitted=normal_cdf((own - signal_margin) / sd),
        uniform_test_accuracy=normal_cdf(signal_margin / (norm * model.sigma_eps / math.sqrt(T))),
        effective_gamma0=unit * (1 - 2 * rate) * S * model.mu_norm**2 / (2 * T),
    )


@dataclass(frozen=True)
class TrainedHeadRates:
    r"""The trained head's initial rates (flow time :math:`\tau = \alpha k`; module
    docstring): the head's velocity along u and on the noise; a clean and a noisy sample's
    margin velocity through the head and through the attention; the head's memorisation
    over the attention's; the :math:`n\,\mathrm{SNR}^2` below which the head alone fits the
    noisy samples; the flow time at which it does (linear in time) and the attention's
    stage-1 time (``inf``: never)."""

    signal_velocity: float
    noise_velocity: float
    head_clean: float
    head_noisy: float
    attention_clean: float
    attention_noisy: float
    memorisation_ratio: float
    head_threshold: float
    head_fitting_time: float
    attention_fitting_time: float


def score_variance(model: DataModel) -> float:
    r""":math:`\mathrm{Var}_t\gamma = \frac1T\sum_g n_g(\gamma_g - \bar f)^2 +
    \frac{T-1}{T}\sigma_\epsilon^2\|\nu\|^2`: the spread of one sample's token scores."""
    f0 = mean_output(model)
    spread = sum(g.count * (model.gamma0 * g.score - f0) ** 2 for g in model.groups) / model.T
    return spread + (model.T - 1) / model.T * model.score_noise**2


def _attention_margin(model: DataModel, training: Training, noisy: bool) -> float:
    velocities = token_velocities(model, training.replace(head="fixed", head_step=None), noisy)
    f0 = mean_output(model)
    groups = {g.name: g for g in model.groups}
    moved = (
        sum(
            groups[g].count * v * (model.gamma0 * groups[g].score - f0)
            for g, v in velocities.items()
        )
        / model.T
    )
    return -moved if noisy else moved


def trained_head_rates(model: DataModel, training: Training) -> TrainedHeadRates:
    """The trained head's initial rates at a setting (``training.head`` must be trained)."""
    require(training.head == "trained", "head", training.head, "'trained'")
    step = head_step(model, training)
    assert step is not None
    ratio = step / training.alpha
    clean, noisy = stage1_weights(model, training.loss)
    rate = model.noisy_count / model.n if model.flip == "exact" else model.eta
    signal_weight = (1 - rate) * clean - rate * noisy
    S, T, spread_d = score_sum(model), model.T, model.sigma_eps**2 * model.d
    memorised = spread_d / (model.n * T)
    signal = signal_weight * S * S * model.mu_norm**2 / (2 * T * T)
    head_noisy = ratio * (noisy * memorised - signal)
    attention_noisy = _attention_margin(model, training, noisy=True)
    kappa0 = training.kappa0(model.d)
    mean_square = (1 - rate) * clean**2 + rate * noisy**2
    deficit = mean_output(model)
    attention_time = stage1_noisy_fitting_time(
        model, training.replace(head="fixed", head_step=None)
    )
    return TrainedHeadRates(
        signal_velocity=ratio * signal_weight * S * model.mu_norm / (math.sqrt(2) * T),
        noise_velocity=ratio * math.sqrt(spread_d * mean_square / (model.n * T)),
        head_clean=ratio * (clean * memorised + signal),
        head_noisy=head_noisy,
        attention_clean=_attention_margin(model, training, noisy=False),
        attention_noisy=attention_noisy,
        memorisation_ratio=ratio / (kappa0 * score_variance(model)),
        head_threshold=2 * T * noisy / (signal_weight * S * S) if S else math.inf,
        head_fitting_time=deficit / head_noisy if head_noisy > 0 else math.inf,
        attention_fitting_time=attention_time,
    )


def derivations() -> list[Derivation]:
    """This module's records, for :mod:`theory.derivations`."""
    A, B, C = sp.symbols("A B C", positive=True)
    cos = sp.Symbol("cos(nu_1, u)", positive=True)
    m, eta_h, snr, T, S_T = sp.symbols("m eta_h SNR T S_T", positive=True)
    ratio, alpha_nu, alpha, kappa0, var = sp.symbols(
        "r_head alpha_nu alpha kappa_0 Var_t(gamma)", positive=True
    )
    evidence = "tests/theory/variants/test_head.py::"
    return [
        Derivation(
            "One-step head (R2): cos(nu1, mu_{+1} - mu_{-1}) = A / sqrt(A^2 + B^2 + C^2); "
            "aligned iff m (1 - 2 eta_h)^2 S_T^2 SNR^2 >> 2T",
            sp.And(
                sp.Eq(cos, A / sp.sqrt(A**2 + B**2 + C**2)),
                sp.Eq(A**2 / B**2, m * (1 - 2 * eta_h) ** 2 * S_T**2 * snr**2 / (2 * T)),
            ),
            RECONSTRUCTION,
            proof=NUMERIC,
            evidence=evidence + "test_one_step_alignment_and_scale_match_a_monte_carlo_over_seeds"
            ": the alignment and the scale of the sampler's one-step head over seeds, on the "
            "training set and on a clean set, against the formula",
            twin="theory.variants.head.one_step_prediction",
            test=evidence + "test_one_step_alignment_and_scale_match_a_monte_carlo_over_seeds",
        ),
        Derivation(
            "One-step head on the training set memorises: token score gain over signal score "
            "= 2 / (m (1 - 2 eta) S_T SNR^2); the head alone fits the noisy labels at uniform "
            "attention when m (1 - 2 eta) S_T^2 SNR^2 < 2T",
            sp.Eq(sp.Symbol("memorised/signal"), 2 / (m * (1 - 2 * eta_h) * S_T * snr**2)),
            RECONSTRUCTION,
            proof=NUMERIC,
            evidence=evidence + "test_one_step_head_on_the_training_set_fits_noisy_labels_"
            "at_uniform_attention: the fraction of noisy training samples the head fits at "
            "p = 0, over seeds, against the normal approximation",
            twin="theory.variants.head.one_step_prediction",
            test=evidence + "test_one_step_head_on_the_training_set_fits_noisy_labels_"
            "at_uniform_attention",
        ),
        Derivation(
            "Trained head (R6): its memorisation of a noisy sample's margin over the "
            "attention's at tau = 0 is (alpha_nu / alpha) / (kappa_0 Var_t gamma)",
            sp.Eq(ratio, (alpha_nu / alpha) / (kappa0 * var)),
            RECONSTRUCTION,
            proof=NUMERIC,
            evidence=evidence + "test_trained_head_initial_rates_match_the_exact_gradient: the "
            "exact initial head and attention margin velocities of sampled data sets against "
            "the rates; the derivation stops once the scores move (no flow)",
            twin="theory.variants.head.trained_head_rates",
            test=evidence + "test_trained_head_initial_rates_match_the_exact_gradient",
        ),
    ]


__all__ = [
    "score_sum",
    "head_set",
    "init_norm",
    "unit_parts",
    "default_one_step",
    "head_step",
    "OneStepPrediction",
    "one_step_prediction",
    "TrainedHeadRates",
    "score_variance",
    "trained_head_rates",
    "derivations",
]
