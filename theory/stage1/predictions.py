r"""Stage-1 predictions for one concrete setting, labelled with the paper result each
reconstructs.

Every prediction here is this package's own derivation (the paper's exact statements
and constants are not available); each is marked with the paper result it stands in
for. Inputs are the data model and training set-up of :mod:`theory.foundation.data_model`;
it never imports :mod:`verify`. Rates come from the SymPy expressions of
:mod:`theory.stage1.rates`, printed as plain Python (:mod:`theory.stage1.kernels`, kept
equal to the expressions by a test: nothing here imports SymPy), trajectories from the
quadrature of :mod:`theory.quadrature.g` (imported where a gap law is built).
"""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass, field

import numpy as np

from theory.foundation.data_model import DataModel, Training
from theory.foundation.integrate import gauss_kronrod
from theory.foundation.numerics import normal_cdf, normal_pdf
from theory.foundation.roots import brent_root
from theory.stage1.kernels import KERNELS

#: Constants of the predictions (exposed so that users holding the paper can plug in its
#: values). ``gap_bracket_factor``: the clean/noisy gap lies between the quadrature curves
#: with rate c / C and C c (C = 4: +-log 4 = 1.39 in gap units late on).
#: ``benign_test_accuracy``: predicted argmax test accuracy above which an overfitting
#: setting is called benign.
PREDICTION_CONSTANTS = {"gap_bracket_factor": 4.0, "benign_test_accuracy": 0.95}


def _values(model: DataModel, training: Training) -> tuple[float, ...]:
    """The kernels' arguments (:data:`theory.stage1.rates.KERNEL_ARGUMENTS`) at a setting."""
    return (
        model.d,
        model.n,
        model.T,
        model.n_relevant,
        model.n_weak_aligned,
        model.n_weak_opposite,
        model.rho,
        model.eta,
        model.mu_norm,
        model.sigma_eps,
        model.gamma0,
        training.kappa0(model.d),
    )


def rate(model: DataModel, training: Training, name: str, *arguments: str | bool) -> float:
    """A rate of :mod:`theory.stage1.rates` (``name``: ``signal_rate``, ``memorisation_rate``,
    ``token_velocity``, ``overfitting_ratio``, ``test_signal_to_noise``) at a setting, with
    the training loss (``training.loss``) in the loss weights, from its generated kernel
    (:mod:`theory.stage1.kernels`)."""
    return float(KERNELS[(name, *arguments, training.loss)](*_values(model, training)))


def token_velocities(model: DataModel, training: Training, noisy: bool) -> dict[str, float]:
    """Initial logit velocity of each present token group (clean or noisy sample)."""
    return {
        g.name: rate(model, training, "token_velocity", g.name, noisy)
        for g in model.groups
        if g.count > 0
    }


def gap_velocities(model: DataModel, training: Training, noisy: bool) -> dict[str, float]:
    r"""Initial velocities of the gaps of the leader (R for clean, :math:`W_-` for noisy)
    over every other present group (Lemmas 4.5 / 4.6, stage 1)."""
    velocities = token_velocities(model, training, noisy)
    leader = "W-" if noisy else "R"
    return {g: velocities[leader] - v for g, v in velocities.items() if g != leader}


def _argmax_probabilities(leads: dict[str, float], counts: dict[str, int]) -> dict[str, float]:
    r"""P(the argmax of independent :math:`N(m_g, 1)` logits falls in group g), with
    :math:`n_g` iid tokens per group:
    :math:`n_g\int \phi(x - m_g)\prod_h \Phi(x - m_h)^{n_h - [h = g]} dx`."""
    out = {}
    for g, count in counts.items():
        if count == 0:
            continue

        def density(u, g=g, count=count):
            # u = x - m_g, and the leads' differences taken first: exact at any lead size
            value = count * normal_pdf(u)
            for h, other in counts.items():
                power = other - (1 if h == g else 0)
                if power:
                    value *= normal_cdf(u + (leads[g] - leads[h])) ** power
            return value

        # A probability: quadrature error must not take it above 1.
        out[g] = min(gauss_kronrod(density, -12.0, 12.0), 1.0)
    return out


def test_selection(model: DataModel, z: float) -> dict[str, float]:
    r"""Reconstruction of Lemma 4.8's mechanism: a fresh test token of group g has logit
    :math:`(c_g + c'_g) z + \xi`, :math:`\xi \sim N(0, 1)` (units of
    :math:`\sigma_\epsilon\|q\|`), so in the argmax limit the probability that a test
    sequence selects a token of group g is :func:`_argmax_probabilities`."""
    leads = {g.name: g.signal * z for g in model.groups}
    return _argmax_probabilities(leads, model.group_counts)


def stage1_selection(model: DataModel, training: Training, noisy: bool) -> dict[str, float]:
    r"""Which token group a training sample selects (reconstruction of the selection part of
    Theorem 4.1 via Lemmas 4.5-4.6): the token with the largest stage-1 velocity. Including
    each token's noise score :math:`\xi_t \sim N(0, \sigma_\epsilon^2\|\nu\|^2)`, token t of
    group g has velocity :math:`\varsigma M (\gamma_g + \xi_t)/\gamma_0 + (c_g + c'_g) S` (up
    to a common shift), so the selected group follows :func:`_argmax_probabilities` with
    leads :math:`m_g/s`, :math:`s = M\sigma_\epsilon\|\nu\|/\gamma_0`. When the noise scores
    are larger than :math:`\rho\gamma_0` (assumption A7 fails) noisy samples pick whichever
    token has the best score for the flipped label, often an irrelevant one."""
    sign = -1.0 if noisy else 1.0
    memo = rate(model, training, "memorisation_rate", noisy)
    signal = rate(model, training, "signal_rate")
    spread = abs(memo) * model.score_noise / model.gamma0
    leads = {g.name: (sign * memo * g.score + g.signal * signal) / spread for g in model.groups}
    return _argmax_probabilities(leads, model.group_counts)


@dataclass(frozen=True)
class SelectionError:
    """The stage-1 selection's share of ``group`` and its model error: the share's change
    when the race adds the dropped terms' per-token velocity spread (``sd``) to the token
    scores' (``score_spread``)."""

    group: str
    share: float
    with_spread: float
    score_spread: float
    sd: float

    @property
    def model_error(self) -> float:
        return abs(self.with_spread - self.share)

    def source(self) -> str:
        return (
            f"derived: the share's change ({self.share:.3f} -> {self.with_spread:.3f}) when the "
            f"race adds the dropped terms' per-token velocity sd {self.sd:.3g} to the scores' "
            f"{self.score_spread:.3g} (independent tokens: an upper bound, a sample's tokens "
            "share part of them)"
        )


def selection_error(
    model: DataModel, training: Training, noisy: bool, group: str
) -> SelectionError:
    r"""The model error of :func:`stage1_selection`'s share of ``group``: the race of
    :func:`stage1_selection` with spread :math:`\sqrt{s^2 + \mathrm{sd}^2}`, s the token
    scores' velocity spread and sd the dropped terms' per-token velocity standard
    deviation (:func:`theory.stage1.moments.token_velocity_error` of the sample's leader,
    R or W-), against the race with s alone."""
    from theory.stage1.moments import token_velocity_error

    sign = -1.0 if noisy else 1.0
    memo = rate(model, training, "memorisation_rate", noisy)
    signal = rate(model, training, "signal_rate")
    spread = abs(memo) * model.score_noise / model.gamma0
    leader = "W-" if noisy and model.group_counts.get("W-", 0) else "R"
    sd = token_velocity_error(model, training, leader, noisy=noisy).sample_sd
    velocities = {g.name: sign * memo * g.score + g.signal * signal for g in model.groups}
    model_share = stage1_selection(model, training, noisy).get(group, 0.0)
    wide = math.hypot(spread, sd)
    race = _argmax_probabilities({g: v / wide for g, v in velocities.items()}, model.group_counts)
    return SelectionError(group, model_share, race.get(group, 0.0), spread, sd)


def argmax_test_accuracy(model: DataModel, z: float) -> float:
    r"""Test accuracy when each test sequence outputs the score of its argmax token:
    :math:`\sum_g P(\text{select } g)\,\Phi(\gamma_g / (\sigma_\epsilon\|\nu\|))`, with the
    token's score :math:`\gamma_g` plus its noise score
    :math:`N(0, \sigma_\epsilon^2\|\nu\|^2)`."""
    selection = test_selection(model, z)
    noise = model.score_noise / model.gamma0  # in units of gamma0
    return float(
        sum(
            selection[g.name] * normal_cdf(g.score / noise)
            for g in model.groups
            if g.name in selection
        )
    )


@functools.lru_cache(maxsize=8)
def _standard_normals(samples: int, columns: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The draws of :func:`soft_test_accuracy`, token by token (``columns`` rows of
    ``samples``: the (samples, columns) draws of ``seed`` transposed); they depend on the
    token count only: kept, read-only."""
    rng = np.random.default_rng(seed)
    logits, scores = (
        np.ascontiguousarray(rng.standard_normal((samples, columns)).T),
        np.ascontiguousarray(rng.standard_normal((samples, columns)).T),
    )
    logits.flags.writeable = scores.flags.writeable = False
    return logits, scores


#: Rows summed in one block by :func:`_token_sum` (NumPy's pairwise-summation block).
_PAIRWISE_BLOCK = 128


def _token_sum(rows: np.ndarray) -> np.ndarray:
    """The sum over the first axis, in the order NumPy's pairwise summation adds a
    contiguous row (so it equals ``rows.T.sum(axis=1)`` bit for bit, one whole row of
    ``rows`` at a time): fewer than 8 terms in turn; up to :data:`_PAIRWISE_BLOCK` in
    eight running sums combined as a tree, the rest in turn; more, halved (the first
    half a multiple of 8) and each half summed so."""
    count = rows.shape[0]
    if count < 8:
        total = np.zeros(rows.shape[1:])
        for row in rows:
            total += row
        return total
    if count > _PAIRWISE_BLOCK:
        half = count // 2
        half -= half % 8
        return _token_sum(rows[:half]) + _token_sum(rows[half:])
    sums = rows[:8].copy()
    full = count - count % 8
    for start in range(8, full, 8):
        sums += rows[start : start + 8]
    total = ((sums[0] + sums[1]) + (sums[2] + sums[3])) + (
        (sums[4] + sums[5]) + (sums[6] + sums[7])
    )
    for row in rows[full:]:
        total += row
    return total


def soft_test_accuracy(
    model: DataModel, signal_logit: float, query_norm: float, samples: int = 20000, seed: int = 0
) -> float:
    r"""Lemma 4.8's mechanism at finite temperature (reconstruction): for a fresh test
    sequence of class +1, token t of group g has logit
    :math:`a_t = (c_g + c'_g)\beta + \sigma_\epsilon\|q\|\xi_t` and score
    :math:`\gamma_0 (c_g - c'_g) + \zeta_t` (:math:`\xi, \zeta` independent standard /
    score noise, :math:`\beta = \langle\mu_{+1}, q\rangle`), and the prediction is correct
    when :math:`\sum_t \mathrm{softmax}(a)_t(\gamma_0 (c_g - c'_g) + \zeta_t) > 0`.
    Evaluated by Monte Carlo with ``samples`` draws from a fixed ``seed`` (deterministic;
    the draws, which depend on T only, are kept between calls). Tends to
    :func:`argmax_test_accuracy` as :math:`\sigma_\epsilon\|q\| \to \infty` at fixed
    :math:`\beta/(\sigma_\epsilon\|q\|)`."""
    return soft_test_accuracies(model, [signal_logit], query_norm, samples, seed)[0]


def soft_test_accuracies(
    model: DataModel,
    signal_logits: list[float],
    query_norm: float,
    samples: int = 20000,
    seed: int = 0,
) -> list[float]:
    r""":func:`soft_test_accuracy` at each of ``signal_logits`` (one query norm), on the
    same draws: the token noise :math:`\sigma_\epsilon\|q\|\xi` and the scores are
    formed once."""
    tokens = [model.groups[code] for code in model.position_groups]
    mean_score = np.array([model.gamma0 * g.score for g in tokens])
    xi, zeta = _standard_normals(int(samples), len(tokens), int(seed))
    noise = model.sigma_eps * query_norm * xi
    scores = mean_score[:, None] + model.score_noise * zeta
    accuracies = []
    for signal_logit in signal_logits:
        mean_logit = np.array([g.signal * signal_logit for g in tokens])
        weights = mean_logit[:, None] + noise
        weights -= np.maximum.reduce(weights, axis=0)
        np.exp(weights, out=weights)
        outputs = _token_sum(weights * scores) / _token_sum(weights)
        accuracies.append(np.count_nonzero(outputs > 0) / outputs.size)
    return accuracies


def stage1_noisy_fitting_time(model: DataModel, training: Training) -> float:
    r"""Stage-1 end (reconstruction of Lemma 4.6): with logits linear in time,
    :math:`a_g(\tau) = v_g \tau` (noisy-sample velocities), the noisy sample is fitted
    once :math:`\sum_g n_g e^{v_g\tau}\gamma_g < 0` (its output takes the flipped sign).
    Returns that :math:`\tau` (``inf`` if it never happens: not overfitting);
    :func:`theory.stage2.predictions.stage2_noisy_fitting_time` is the stage-2 flow's."""
    velocities = token_velocities(model, training, noisy=True)
    groups = {g.name: g for g in model.groups}

    def output(tau: float) -> float:
        top = max(velocities.values()) * tau
        return sum(
            groups[g].count * math.exp(v * tau - top) * groups[g].score
            for g, v in velocities.items()
        )

    if output(0.0) <= 0:
        return 0.0
    upper = 1.0
    while output(upper) > 0:
        upper *= 2
        if upper > 1e12:
            return math.inf
    return brent_root(output, 0.0, upper, xtol=1e-12, rtol=1e-10)


@dataclass(frozen=True)
class GapLaw:
    r"""A gap trajectory :math:`x(\tau) = g^{-1}(g(x_0) + c\tau)` and its bracket
    :math:`[g^{-1}(g(x_0) + c\tau/C),\ g^{-1}(g(x_0) + Cc\tau)]`. The rate
    :math:`c = v\,g'(x_0)` matches the stage-1 initial velocity :math:`v` (since
    :math:`\dot x = c/g'(x)`), and then the law carries it into the exponential-time regime."""

    x0: float
    rate: float
    T: int
    factor: float

    def curve(self, tau, scale: float = 1.0) -> np.ndarray:
        from theory.quadrature.g import quadrature_gap

        return quadrature_gap(self.x0, self.rate * scale, np.asarray(tau, dtype=float), self.T)

    def bracket(self, tau) -> tuple[np.ndarray, np.ndarray]:
        return self.curve(tau, 1 / self.factor), self.curve(tau, self.factor)


def gap_law(velocity: float, T: int, factor: float, x0: float = 0.0) -> GapLaw:
    r"""The law whose initial velocity is ``velocity`` (rate :math:`c = v\,g'(x_0)`)."""
    from theory.quadrature.g import g_prime

    return GapLaw(x0=x0, rate=float(velocity * g_prime(x0, T)), T=T, factor=factor)


@dataclass(frozen=True)
class Stage1Predictions:
    """Everything stage 1 predicts for one setting (see each field's reference): the rates,
    velocities and selections at the start of training and what they imply (Theorem 4.1's
    regime, Lemma 4.8's argmax-limit test accuracy, the gap laws)."""

    model: DataModel
    training: Training
    signal_rate: float  # Lemma 4.5: S
    memorisation_clean: float  # Lemma 4.5: M_c
    memorisation_noisy: float  # Lemma 4.6: M_n
    clean_gap_velocities: dict[str, float]  # Lemma 4.5, stage 1
    noisy_gap_velocities: dict[str, float]  # Lemma 4.6, stage 1
    overfitting_ratio: float  # Theorem 4.1: > 1 means the noisy samples get fitted
    overfitting_threshold: float  # Theorem 4.1: n SNR^2 below which r > 1
    test_z: float  # Lemma 4.8 / Remark 4.2
    test_selection: dict[str, float]  # Lemma 4.8: argmax group of test sequences
    test_accuracy: float  # Theorem 4.1 / Remark 4.2 (argmax limit)
    regime: str  # Theorem 4.1 / Remark 4.2
    train_accuracy: float  # Theorem 4.1
    clean_selection: dict[str, float]  # Theorem 4.1 / Lemma 4.5: groups clean samples select
    noisy_selection: dict[str, float]  # Theorem 4.1 / Lemma 4.6: groups noisy samples select
    noisy_fitting_time: float  # Lemma 4.6: stage-1 end (flow time tau)
    clean_gap_law: GapLaw  # Lemma 4.5
    noisy_gap_law: GapLaw | None  # Lemma 4.7 (overfitting regimes)
    constants: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict:
        out = asdict(self)
        out["clean_gap_law"] = asdict(self.clean_gap_law)
        out["noisy_gap_law"] = asdict(self.noisy_gap_law) if self.noisy_gap_law else None
        return out


def overfitting_threshold(model: DataModel, training: Training) -> float:
    r"""The :math:`n\,\mathrm{SNR}^2` at which the overfitting ratio equals 1 (the ratio is
    proportional to :math:`1/(n\,\mathrm{SNR}^2)`): Theorem 4.1's benign/not-overfitting
    boundary, :math:`\|\mu\| = \sqrt{\theta\,\sigma_\epsilon^2 d / n}`."""
    return rate(model, training, "overfitting_ratio") * model.n * model.snr**2


@dataclass(frozen=True)
class Outcome:
    """Theorem 4.1's verdict for one setting: the overfitting ratio (> 1: the noisy samples
    get fitted), the test z and argmax test accuracy, the regime and the train accuracy."""

    overfitting_ratio: float
    test_z: float
    test_accuracy: float
    regime: str
    train_accuracy: float


def outcome(
    model: DataModel,
    training: Training,
    benign_test_accuracy: float = PREDICTION_CONSTANTS["benign_test_accuracy"],
) -> Outcome:
    """The regime (not-overfitting unless the overfitting ratio exceeds 1; else benign when
    the argmax test accuracy reaches ``benign_test_accuracy``, harmful below) and the
    accuracies, without the rest of :func:`stage1_predictions` (no velocities, selections or
    laws)."""
    ratio = rate(model, training, "overfitting_ratio")
    z = rate(model, training, "test_signal_to_noise")
    accuracy = argmax_test_accuracy(model, z)
    overfits = ratio > 1
    if not overfits:
        regime = "not-overfitting"
    elif accuracy >= benign_test_accuracy:
        regime = "benign"
    else:
        regime = "harmful"
    train = 1.0 if overfits else 1.0 - model.noisy_count / model.n
    return Outcome(ratio, z, accuracy, regime, train)


def stage1_predictions(
    model: DataModel, training: Training | None = None, constants: dict[str, float] | None = None
) -> Stage1Predictions:
    """All predictions for the data model and training set-up (default: the paper's GD)."""
    training = training or Training()
    constants = {**PREDICTION_CONSTANTS, **(constants or {})}
    verdict = outcome(model, training, constants["benign_test_accuracy"])
    ratio, z, overfits = verdict.overfitting_ratio, verdict.test_z, verdict.overfitting_ratio > 1
    clean = gap_velocities(model, training, noisy=False)
    noisy = gap_velocities(model, training, noisy=True) if model.n_weak_opposite else {}
    factor = constants["gap_bracket_factor"]
    noisy_selection = stage1_selection(model, training, noisy=True) if overfits else {"R": 1.0}
    noisy_law = None  # Lemma 4.7 tracks the W- lead: only when noisy samples select W-
    if (
        overfits
        and noisy
        and min(noisy.values()) > 0
        and max(noisy_selection, key=noisy_selection.__getitem__) == "W-"
    ):
        noisy_law = gap_law(min(noisy.values()), model.T, factor)
    return Stage1Predictions(
        model=model,
        training=training,
        signal_rate=rate(model, training, "signal_rate"),
        memorisation_clean=rate(model, training, "memorisation_rate", False),
        memorisation_noisy=rate(model, training, "memorisation_rate", True),
        clean_gap_velocities=clean,
        noisy_gap_velocities=noisy,
        overfitting_ratio=ratio,
        overfitting_threshold=overfitting_threshold(model, training),
        test_z=z,
        test_selection=test_selection(model, z),
        test_accuracy=verdict.test_accuracy,
        regime=verdict.regime,
        train_accuracy=verdict.train_accuracy,
        clean_selection=stage1_selection(model, training, noisy=False),
        noisy_selection=noisy_selection,
        noisy_fitting_time=stage1_noisy_fitting_time(model, training) if overfits else math.inf,
        clean_gap_law=gap_law(min(clean.values()), model.T, factor),
        noisy_gap_law=noisy_law,
        constants=constants,
    )


__all__ = [
    "Stage1Predictions",
    "GapLaw",
    "stage1_predictions",
    "Outcome",
    "outcome",
    "gap_law",
    "token_velocities",
    "gap_velocities",
    "test_selection",
    "stage1_selection",
    "SelectionError",
    "selection_error",
    "soft_test_accuracy",
    "soft_test_accuracies",
    "argmax_test_accuracy",
    "stage1_noisy_fitting_time",
    "overfitting_threshold",
    "rate",
    "PREDICTION_CONSTANTS",
]
