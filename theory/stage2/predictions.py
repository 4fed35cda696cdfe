r"""Stage-2 predictions at a horizon: both regime boundaries, the noisy switch, the late test
accuracy and the gap slope, each with the size of what its derivation drops.

Reconstruction (this package's own derivation; the paper's stage-2 statements are not
available). Every prediction is read off the mean-field flow of :mod:`theory.stage2.flow`
(horizons in GD steps, flow time :math:`\tau = \alpha k`), and each carries a relative
``model_error``: the effect of the terms the mean field drops, fixed before any
simulation, for use as an a priori tolerance.

Dropped terms (:func:`dropped_terms`, and per token and per class
:mod:`theory.stage2.horizon`):

* **per-token cross terms**: the noise cross terms of the Gram matrix and of
  :math:`W_0^\top W_0` move a noisy sample's memorisation gap by a relative
  :math:`\delta_{\rm tok}` (:func:`token_spread`, integrated along
  the flow by :func:`flow_token_spread`);
* **per-class preconditioner** :math:`\kappa_s = \hat\mu_s^\top W_0^\top W_0\hat\mu_s/
  \kappa_0`, relative spread :math:`\sqrt{2/d}`; it scales the signal's drive, so a
  boundary in :math:`\|\mu\|` moves by half of it (the GD map's sensitivity probes test it);
* **score noise** :math:`\delta_s = (\sigma_\epsilon\|\nu\|/\gamma_0)^2` and the second-order
  cross terms :math:`n/d`: the test signal-to-noise ratio :math:`z` is a ratio of sums over
  all tokens, where the first-order terms average out;
* **preconditioner spread** :math:`n/d + \sqrt{2/d}`: the relative error of
  :math:`\kappa_p = 2\kappa_0` and of the second-order cross terms in :math:`\|p\|^2`.

An earlier version moved the benign | not-overfitting boundary and the switch by a
"faster class" factor :math:`\sqrt{1 + 0.545\,\delta_0}` with the classes' spread
:math:`\delta_0` taken at :math:`\tau = 0`; integrated along the run the per-class spread
is far smaller (the clean samples' pull that carries it fades once they saturate), and the
factor moved the boundary away from the measurement. No such correction is made.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from theory.foundation.data_model import DataModel, Training
from theory.foundation.numerics import normal_cdf_array
from theory.foundation.roots import brent_root
from theory.foundation.validation import Real, require
from theory.quadrature import LOG_SLOPE_PER_DECADE
from theory.stage1.predictions import argmax_test_accuracy, soft_test_accuracies
from theory.stage2 import flow

#: Monte Carlo draws of the finite-temperature test accuracy (3 standard errors ~ 0.004).
ACCURACY_SAMPLES = 100_000


@dataclass(frozen=True)
class DroppedTerms:
    """Relative sizes of the terms the mean-field flow drops (see the module docstring)."""

    score_noise: float  # delta_s
    cross_second_order: float  # n / d
    preconditioner: float  # n / d + sqrt(2 / d)
    class_preconditioner: float  # sqrt(2 / d)


def dropped_terms(model: DataModel) -> DroppedTerms:
    r""":math:`\delta_s`, :math:`n/d`, :math:`n/d + \sqrt{2/d}` and :math:`\sqrt{2/d}` for
    ``model`` (see the module docstring)."""
    ratio = model.n / model.d
    return DroppedTerms(
        score_noise=(model.score_noise / model.gamma0) ** 2,
        cross_second_order=ratio,
        preconditioner=ratio + math.sqrt(2 / model.d),
        class_preconditioner=math.sqrt(2 / model.d),
    )


@dataclass(frozen=True)
class Estimate:
    """A predicted number, its relative model error, what it is, and where the error came
    from (``error_source``)."""

    value: float
    model_error: float
    description: str
    error_source: str = ""


def _horizon(training: Training, steps: float) -> float:
    steps = Real(0.0, 1e300, closed="neither").check("steps", steps)
    return training.alpha * steps


def require_label_noise(model: DataModel) -> None:
    """:class:`~theory.foundation.validation.InvalidParameter` unless ``model`` flips labels (the
    noisy-sample predictions need noisy samples)."""
    require(
        model.noisy_count > 0 or (model.flip == "bernoulli" and model.eta > 0),
        "eta",
        model.eta,
        f"a label-noise rate that flips at least one of the n = {model.n} labels",
    )


def _with_mu(model: DataModel, mu: float) -> DataModel:
    return model.replace(mu_norm=float(mu))


def _solve_log_root(
    function: Callable[[float], float], start: float, factor: float = 1.5
) -> float | None:
    r"""Root of an increasing ``function`` of :math:`\log\|\mu\|`, bracketed by stepping
    from ``start`` by ``factor``; ``None`` if none lies in :math:`[10^{-6}, 10^{8}]`
    times ``start``; the root to 0.2% in :math:`\|\mu\|`. Each point is evaluated once
    (the bracket's ends are reused by the root finder)."""
    function = functools.cache(function)
    origin = math.log(start)
    previous, value = origin, function(origin)
    step = math.log(factor) * (1 if value < 0 else -1)
    current = origin
    while True:
        current += step
        if abs(current - origin) > math.log(1e8):
            return None
        new = function(current)
        if (new < 0) != (value < 0):
            break
        previous, value = current, new
    left, right = sorted((previous, current))
    return math.exp(brent_root(function, left, right, xtol=2e-3))


def stage2_noisy_fitting_time(
    model: DataModel, training: Training, tau_max: float, memorisation_scale: float = 1.0
) -> float:
    r"""Flow time at which a mean-field noisy sample is fitted (:math:`\bar f < 0`) under the
    stage-2 flow (saturating softmax, growing preconditioner), ``inf`` if not by
    ``tau_max``; :func:`theory.stage1.predictions.stage1_noisy_fitting_time` is stage 1's
    estimate, with logits linear in time."""
    pop = flow.population(model, training, memorisation_scale)
    run = flow.solve(pop, tau_max, events=("noisy_fitted",), stop_at="noisy_fitted")
    return run.events["noisy_fitted"]


#: The memorisation probe's step for the flow's sensitivities (as the GD map's).
PROBE = 0.1


def token_spread(
    d: int, integrals: np.ndarray, noisy_logits: np.ndarray, multiplicity: np.ndarray
) -> float:
    r"""Relative standard deviation of a noisy sample's memorisation gap (its memorising
    token, the best non-R one by ``noisy_logits``, over R) from the dropped per-token terms:
    the noise cross terms of the Gram matrix and of :math:`W_0^\top W_0` add to token x's
    logit :math:`\sum_{y\ne x}(E_{xy} + F_{xy})H_y` with variances
    :math:`\sigma_\epsilon^4 d` each, against the kept
    :math:`\sigma_\epsilon^2 d\,(H_{\rm mem} - H_R)`:
    :math:`\delta_{\rm tok} = \sqrt{4\sum_y H_y^2/d}\,/\,|H_{\rm mem} - H_R|` (two
    tokens), :math:`H = \int(\kappa_0 + \pi)h\,d\tau` per cell (``integrals``, rows
    clean and noisy, R the first slot)."""
    memorising = 1 + int(np.argmax(noisy_logits[1:]))
    gap = abs(integrals[1, memorising] - integrals[1, 0])
    total = float((multiplicity * integrals**2).sum())
    return math.sqrt(4 * total / d) / gap if gap > 0 else math.inf


def flow_token_spread(model: DataModel, training: Training, tau: float) -> float:
    r""":func:`token_spread` along the flow to ``tau``:
    :math:`H = \int_0^\tau(\kappa_0 + \pi)h\,d\tau'` by the trapezoid rule on 200
    geometric points."""
    pop = flow.population(model, training)
    times = np.geomspace(tau * 1e-6, tau, 200)
    run = flow.solve(pop, tau, tau_eval=times)
    h = np.array([flow.logit_gradient(pop, logits).h for logits in run.logits])
    integrand = (pop.kappa0 + run.pi)[:, None, None] * h
    integrals = np.trapezoid(integrand, run.tau, axis=0)
    return token_spread(model.d, integrals, run.logits[-1, 1], pop.multiplicity)


def _flow_error(
    model: DataModel, training: Training, tau: float, sensitivity: float
) -> tuple[float, str]:
    """One sd over the dropped terms of a flow prediction whose d log / d log(memorisation)
    is ``sensitivity``: per token :func:`flow_token_spread`, per class sqrt(2/d) / 2."""
    token = flow_token_spread(model, training, tau)
    per_class = dropped_terms(model).class_preconditioner
    error = math.hypot(token * sensitivity, per_class / 2)
    source = (
        f"derived: one sd over the dropped terms, per token {token:.2%} x sensitivity "
        f"{abs(sensitivity):.2f}, per class sqrt(2/d) = {per_class:.2%} x 0.5"
    )
    return error, source


def benign_not_boundary(model: DataModel, training: Training, steps: float) -> Estimate:
    r"""The :math:`\|\mu\|` above which fewer than half of the noisy samples are fitted
    after the flow time of ``steps`` steps, :math:`\tau = \alpha k` (benign | not
    overfitting under the gradient flow; :mod:`theory.stage2.horizon` predicts GD): the
    root of :math:`\tau_{\rm fit}(\|\mu\|) = \alpha k`, with the other parameters of
    ``model``.

    Mechanism: once the clean samples saturate, their pull on the signal fades like
    :math:`1/\tau`; the noisy samples' memorisation reaches the balance
    :math:`n_c\ell_c E_c = n_n\ell_n E_n` (clean and noisy softmax tails) after a time
    exponential in :math:`n\,\mathrm{SNR}^2`, the signal of the class then collapses and
    its noisy samples switch. In the mean field the boundary depends on
    :math:`n\mathrm{SNR}^2` and :math:`\kappa_0\sigma_\epsilon^2 d\tau/n` only (while
    :math:`\|p\|^2 \ll \kappa_0`), so :math:`\|\mu\|^* \approx \sqrt{\sigma_\epsilon^2 d/n}
    \,\Psi(\kappa_0\sigma_\epsilon^2 d\tau/n)` with :math:`\Psi^2` growing like the log of
    its argument. Model error: :func:`_flow_error` with the root's sensitivity to the
    memorisation (the root again at :math:`\sigma_\epsilon^2 d` times 1 + :data:`PROBE`)."""
    horizon = _horizon(training, steps)
    require_label_noise(model)
    mu = _flow_root(model, training, horizon, steps, 1.0)
    if mu is None or mu == 0.0:
        if mu == 0.0:
            return Estimate(
                0.0, 0.0, f"fewer than half of the noisy samples fitted at {steps:g} steps"
            )
        return Estimate(math.nan, math.nan, "no boundary below 1e8 x the separable law's")
    probe = _flow_root(model, training, horizon, steps, 1 + PROBE)
    sensitivity = math.log(probe / mu) / math.log1p(PROBE) if probe else math.inf
    error, source = _flow_error(_with_mu(model, mu), training, horizon, sensitivity)
    return Estimate(
        mu,
        error,
        f"||mu|| above which fewer than half of the noisy samples are fitted at {steps:g} steps",
        error_source=source,
    )


def _flow_root(
    model: DataModel, training: Training, horizon: float, steps: float, scale: float
) -> float | None:
    """The root of log(tau_fit / horizon) in ||mu|| at memorisation ``scale``; 0 when no
    noisy sample is fitted even at 1e-3 times the scale's ||mu||; None when none is found."""
    cap = math.e * horizon

    def excess(log_mu: float) -> float:
        time = stage2_noisy_fitting_time(_with_mu(model, math.exp(log_mu)), training, cap, scale)
        return math.log(min(time, cap * math.e) / horizon)

    unit = math.sqrt(model.sigma_eps**2 * model.d / model.n)
    if excess(math.log(1e-3 * unit)) > 0:
        return 0.0
    from theory.stage2 import laws

    guess = laws.separable_boundary(model, training, steps)
    return _solve_log_root(excess, guess if math.isfinite(guess) else unit, factor=1.25)


@dataclass(frozen=True)
class SwitchTime:
    r"""When the mean-field noisy samples leave their relevant token (``tau``, flow time;
    ``steps`` = tau / alpha), for which token, and when they are fitted; ``model_error``
    is relative on the time, from ``error_source``."""

    tau: float
    steps: float
    token: str
    fitted_tau: float
    model_error: float
    error_source: str = ""


def _switch_run(
    model: DataModel, training: Training, tau_max: float, scale: float
) -> flow.Trajectory:
    pop = flow.population(model, training, scale)
    events = ("noisy_switched", "noisy_fitted")
    return flow.solve(pop, tau_max, events=events, stop_at="noisy_fitted")


def noisy_switch_time(model: DataModel, training: Training, max_steps: float = 1e40) -> SwitchTime:
    r"""The switch of a noisy sample from R to its memorising token
    (:math:`\max_{t\ne R} a_t = a_R`) under the gradient flow, as a function of
    :math:`n\,\mathrm{SNR}^2`, d and T: 0 when the memorising token leads from the start
    (stage 1, :math:`n\mathrm{SNR}^2` below the stage-1 threshold); of order
    :math:`n/(\kappa_0\sigma_\epsilon^2 d)` times a function of :math:`n\mathrm{SNR}^2` and
    T above it (log-time scale invariance of the flow); exponential in
    :math:`n\mathrm{SNR}^2` far above it (:mod:`theory.stage2.laws`). The mean-field
    sample is the median one (half of the noisy samples have then switched). Model
    error: :func:`_flow_error` with the time's sensitivity to the memorisation.
    :func:`theory.stage2.horizon.switch_time` is GD's."""
    tau_max = _horizon(training, max_steps)
    require_label_noise(model)
    run, probe = (_switch_run(model, training, tau_max, scale) for scale in (1.0, 1 + PROBE))
    tau, probed = run.events["noisy_switched"], probe.events["noisy_switched"]
    logits = run.logits[-1, 1]
    others = np.where(np.arange(logits.size) == run.population.slot("R"), -np.inf, logits)
    token = run.population.names[int(np.argmax(others))]
    if 0 < tau < math.inf and 0 < probed < math.inf:
        sensitivity = math.log(probed / tau) / math.log1p(PROBE)
        error, source = _flow_error(model, training, tau, sensitivity)
    else:
        error, source = 0.0, "exact: the switch is at the start or never"
    return SwitchTime(tau, tau / training.alpha, token, run.events["noisy_fitted"], error, source)


@dataclass(frozen=True)
class SelectionMetrics:
    r"""Test-side state at one horizon: signal logit :math:`\beta`, :math:`\|q\|`,
    :math:`z = \beta/(\sigma_\epsilon\|q\|)`, the fraction of test sequences selecting R
    (argmax of the logits), the test accuracy at the model's temperature, its argmax limit,
    and the accuracy's model error (absolute)."""

    steps: float
    beta: float
    query_norm: float
    z: float
    selects_relevant: float
    accuracy: float
    argmax_accuracy: float
    accuracy_error: float


def metrics_at(model: DataModel, steps: float, beta: float, query_norm: float) -> SelectionMetrics:
    z = beta / (model.sigma_eps * query_norm)
    error = dropped_terms(model)
    shift = error.score_noise + error.cross_second_order
    # Common random numbers: the shift's effect is exact, the level carries 3 MC errors.
    accuracy, shifted = soft_test_accuracies(
        model, [beta, beta * (1 + shift)], query_norm, samples=ACCURACY_SAMPLES
    )
    monte_carlo = 3 * math.sqrt(accuracy * (1 - accuracy) / ACCURACY_SAMPLES)
    return SelectionMetrics(
        steps=steps,
        beta=beta,
        query_norm=query_norm,
        z=z,
        selects_relevant=relevant_selection(model, z),
        accuracy=accuracy,
        argmax_accuracy=argmax_test_accuracy(model, z),
        accuracy_error=abs(shifted - accuracy) + monte_carlo,
    )


def late_test_metrics(
    model: DataModel, training: Training, steps: Sequence[float]
) -> list[SelectionMetrics]:
    r"""Test metrics at each horizon (GD steps), from one mean-field flow:
    :math:`\beta(\tau)` and :math:`\|q\|^2 = \pi^2 + \kappa_p\pi`. A fresh test token's logit
    is its signal logit plus :math:`N(0, \sigma_\epsilon^2\|q\|^2)`; accuracy at finite
    :math:`\|q\|` by :func:`theory.stage1.predictions.soft_test_accuracy`, tending to the argmax
    limit as :math:`\|q\|\to\infty` (slowly: :math:`\|q\|` grows like :math:`\log\tau`).
    Model error: the accuracy's change when :math:`\beta` moves by
    :math:`\delta_s + n/d` relative (:func:`dropped_terms`), plus three Monte Carlo
    standard errors of the accuracy (:data:`ACCURACY_SAMPLES` draws)."""
    horizons = np.array([_horizon(training, k) for k in steps])
    require(bool(np.all(np.diff(horizons) > 0)), "steps", steps, "increasing horizons")
    pop = flow.population(model, training)
    run = flow.solve(pop, float(horizons[-1]), tau_eval=horizons)
    norms = np.sqrt(run.query_norm_sq)
    return [
        metrics_at(model, float(k), float(b), float(q))
        for k, b, q in zip(steps, run.beta, norms, strict=True)
    ]


def signal_to_noise(model: DataModel, training: Training, steps: float) -> float:
    r""":math:`z = \beta/(\sigma_\epsilon\|q\|)` of the mean-field flow after ``steps``."""
    horizon = _horizon(training, steps)
    run = flow.solve(flow.population(model, training), horizon, tau_eval=np.array([horizon]))
    return float(run.beta[-1] / (model.sigma_eps * math.sqrt(run.query_norm_sq[-1])))


#: Gauss-Hermite nodes and weights (weight :math:`e^{-t^2/2}/\sqrt{2\pi}`) for selection
#: integrals.
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(120)
_WEIGHTS = _WEIGHTS / math.sqrt(2 * math.pi)


def relevant_selection(model: DataModel, z: float) -> float:
    r"""Argmax-limit probability that a test sequence selects a relevant token:
    :math:`n_R\,E_t\big[\Phi(t)^{n_R - 1}\prod_{h \ne R}\Phi(t + (\sigma_R -
    \sigma_h)z)^{n_h}\big]`, :math:`t \sim N(0, 1)` (the R entry of
    :func:`theory.stage1.predictions.test_selection`, by Gauss-Hermite quadrature)."""
    groups = {group.name: group for group in model.groups if group.count > 0}
    relevant = groups["R"]
    product = relevant.count * normal_cdf_array(_NODES) ** (relevant.count - 1)
    for name, group in groups.items():
        if name != "R":
            lead = (float(relevant.signal) - float(group.signal)) * z
            product = product * normal_cdf_array(_NODES + lead) ** group.count
    return float(_WEIGHTS @ product)


@dataclass(frozen=True)
class SelectionBand:
    r"""The predicted share of test sequences selecting R and its error band: ``share`` at
    the stage-1 z; ``low`` and ``high`` over z moved by the dropped terms
    (:math:`z(1 \pm (\delta_s + n/d))`) and the flow's z at the horizon (what the stage-1
    z drops: the drift of the learned direction in stage 2)."""

    share: float
    low: float
    high: float
    z: float
    z_flow: float
    relative: float

    def contains(self, level: float) -> bool:
        return self.low <= level <= self.high

    def source(self) -> str:
        return (
            f"derived: the share over z = {self.z:.3g} x (1 +- {self.relative:.2g}) (score "
            f"noise + n/d) and the flow's z = {self.z_flow:.3g} at the horizon: "
            f"[{self.low:.3f}, {self.high:.3f}]"
        )


def selection_band(model: DataModel, training: Training, z: float, steps: float) -> SelectionBand:
    r"""The stage-1 prediction's share of test sequences selecting R (argmax limit,
    :func:`relevant_selection` at ``z``) with its error band after ``steps`` of the flow
    (see :class:`SelectionBand`)."""
    terms = dropped_terms(model)
    relative = terms.score_noise + terms.cross_second_order
    z_flow = signal_to_noise(model, training, steps)
    values = [
        relevant_selection(model, v) for v in (z * (1 - relative), z * (1 + relative), z_flow)
    ]
    share = relevant_selection(model, z)
    return SelectionBand(share, min(share, *values), max(share, *values), z, z_flow, relative)


#: :func:`half_selection_z` by token groups (count and signal of each present group).
_HALF_SELECTION_Z: dict[tuple, float] = {}


def half_selection_z(model: DataModel) -> float:
    r"""The :math:`z` at which half of the test sequences select R (argmax limit); it
    depends on the token groups only (kept by groups)."""
    groups = tuple((g.name, g.count, g.signal) for g in model.groups if g.count > 0)
    if groups not in _HALF_SELECTION_Z:
        root = brent_root(lambda z: relevant_selection(model, z) - 0.5, 0.0, 50.0, xtol=1e-12)
        _HALF_SELECTION_Z[groups] = root
    return _HALF_SELECTION_Z[groups]


def harmful_benign_boundary(model: DataModel, training: Training, steps: float) -> Estimate:
    r"""The :math:`\|\mu\|` below which fewer than half of the test sequences select their
    relevant token after ``steps`` (harmful | benign by token selection): the root of
    :math:`z(\|\mu\|, \tau) = z_{1/2}` (:func:`half_selection_z`), with z from the mean-field
    flow. In stage 1 :math:`z \propto \sqrt n\|\mu\|^2/(\sigma_\epsilon^2\sqrt d)`, hence
    :math:`\|\mu\|^* \propto (d/n)^{1/4}`; later z drifts slowly. Model error:
    :math:`(\delta_s + n/d)` times :math:`|d\log\|\mu\|/d\log z|` at the boundary."""
    _horizon(training, steps)
    target = half_selection_z(model)

    def excess(log_mu: float) -> float:
        return math.log(
            signal_to_noise(_with_mu(model, math.exp(log_mu)), training, steps) / target
        )

    start = (model.sigma_eps**4 * model.d / model.n) ** 0.25
    mu = _solve_log_root(excess, start, factor=1.25)
    if mu is None:
        return Estimate(math.nan, math.nan, "no boundary within 1e8 x (sigma^4 d / n)^(1/4)")
    step = 0.01
    slope = (excess(math.log(mu) + step) - excess(math.log(mu) - step)) / (2 * step)
    terms = dropped_terms(_with_mu(model, mu))
    return Estimate(
        mu,
        (terms.score_noise + terms.cross_second_order) / abs(slope),
        f"||mu|| below which fewer than half of the test sequences select R at {steps:g} steps",
    )


def gap_slope(
    model: DataModel, training: Training, start: float = 1e6, stop: float = 1e12, points: int = 25
) -> Estimate:
    r"""Slope per decade of steps of the clean gap :math:`a_R - \max_{t\ne R}a_t`, fitted by
    least squares on ``points`` geometric horizons in [``start``, ``stop``]. A saturated gap
    obeys :math:`\dot x \propto \kappa_{\rm eff}(\tau)e^{-x}`, so
    :math:`x = \log\int\kappa_{\rm eff}d\tau + c` and the slope is
    :math:`\ln 10\,(1 + d\log\kappa_{\rm eff}/d\log\tau)` above the :math:`g^{-1}` law's
    :math:`\ln 10` (:mod:`theory.stage2.laws`). Model error (relative): the excess over
    :math:`\ln 10` times the preconditioner spread :math:`n/d + \sqrt{2/d}`, over the
    slope."""
    require(0 < start < stop, "start", start, f"a positive step below stop = {stop:g}")
    steps = np.geomspace(start, stop, int(points))
    horizons = training.alpha * steps
    run = flow.solve(flow.population(model, training), float(horizons[-1]), tau_eval=horizons)
    slope = float(np.polyfit(np.log10(steps), run.clean_gap(), 1)[0])
    error = abs(slope - LOG_SLOPE_PER_DECADE) * dropped_terms(model).preconditioner / slope
    return Estimate(slope, error, f"clean gap per decade over [{start:g}, {stop:g}] steps")


def derivations() -> list:
    """This module's record, for :mod:`theory.derivations`: the harmful | benign boundary
    (the other predictions are read off the flow the same way; their records are the
    flow's, :mod:`theory.stage2.preconditioner` and :mod:`theory.stage2.laws`)."""
    import sympy as sp

    from theory.foundation.proof import NUMERIC, RECONSTRUCTION, Derivation

    mu_star, tau, beta = sp.symbols("||mu||* tau beta", positive=True)
    sigma, q_norm, z_half = sp.symbols("sigma_epsilon ||q|| z_1/2", positive=True)
    z = sp.Function("z")
    return [
        Derivation(
            "Harmful | benign boundary at a horizon: z(||mu||*, tau) = z_1/2 on the stage-2 flow",
            sp.And(
                sp.Eq(z(mu_star, tau), z_half),
                sp.Eq(z(mu_star, tau), beta / (sigma * q_norm), evaluate=False),
            ),
            RECONSTRUCTION,
            proof=NUMERIC,
            evidence="tests/theory/stage2/test_predictions.py::"
            "test_harmful_benign_boundary_selection_at_the_paper_horizon: at the predicted "
            "||mu*|| (d = 500, 1e3 GD steps) half of the test sequences of 6 trained seeds "
            "select R within the stated error, and at the uniform-attention rule's ||mu|| "
            "they do not; the root finding and the flow are numeric, no symbolic proof",
            twin="theory.stage2.predictions.harmful_benign_boundary",
            simulated="verify.sim.population.population_metrics",
            test="tests/theory/stage2/test_predictions.py::"
            "test_harmful_benign_boundary_selection_at_the_paper_horizon",
        )
    ]


__all__ = [
    "ACCURACY_SAMPLES",
    "DroppedTerms",
    "dropped_terms",
    "require_label_noise",
    "Estimate",
    "stage2_noisy_fitting_time",
    "PROBE",
    "flow_token_spread",
    "token_spread",
    "benign_not_boundary",
    "SwitchTime",
    "noisy_switch_time",
    "SelectionMetrics",
    "metrics_at",
    "late_test_metrics",
    "signal_to_noise",
    "relevant_selection",
    "SelectionBand",
    "selection_band",
    "half_selection_z",
    "harmful_benign_boundary",
    "gap_slope",
    "derivations",
]
