r"""Stage-2 predictions for GD itself: both regime boundaries, the noisy switch and the
test metrics after k steps of size :math:`\alpha`, read off the mean-field GD map
(:mod:`theory.stage2.discrete`), each with the error its derivation drops, computed for
the setting, or no number and the reason.

Reconstruction (this package's own derivation). The boundaries are found on grids of
:math:`\|\mu\|` run as one batch (:func:`theory.stage2.discrete.evolve`), the crossing
interpolated in :math:`\log\|\mu\|`:

* **harmful | benign**: :math:`z = \beta/(\sigma_\epsilon\|q\|) = z_{1/2}`
  (:func:`theory.stage2.predictions.half_selection_z`), :math:`\|q\|^2 = \pi^2 +
  \kappa_p\pi`; model error :math:`(\delta_s + n/d)/|d\log z/d\log\|\mu\||` (score noise
  and second-order cross terms, :func:`theory.stage2.predictions.dropped_terms`);
* **benign | not-overfitting**: the noisy sample's output after k steps changes sign
  (fitted below, not above). Model error: one standard deviation of the boundary over the
  terms the mean field drops (:func:`benign_not_error`): per token, the noise cross
  terms of the Gram matrix and of :math:`W_0^\top W_0` (relative spread
  :math:`\delta_{\rm tok}` of a noisy sample's memorisation gap, integrated along the
  map); per class, :math:`\kappa_s = \hat\mu_s^\top W_0^\top W_0\hat\mu_s/\kappa_0`,
  relative spread :math:`\sqrt{2/d}`; each times the boundary's sensitivity to it (the
  root's shift when the map's memorisation or its signal preconditioner is scaled).
  Which noisy samples are fitted first is an order statistic of those spreads; its mean
  effect is below one standard deviation, and no correction for it is made.
* Where the map is chaotic in :math:`\|\mu\|` (the noisy output changes sign more than
  once), the boundary is the band of crossings: its geometric middle, the band's half
  width added to the error; a band wider than :data:`BAND_LIMIT` gives no number.
"""

from __future__ import annotations

import collections
import functools
import math
from dataclasses import dataclass, field

import numpy as np

from theory.foundation.data_model import DataModel, Training
from theory.stage2 import discrete
from theory.stage2.flow import KAPPA_P_RATIO, population
from theory.stage2.predictions import (
    dropped_terms,
    half_selection_z,
    metrics_at,
    token_spread,
)

#: First grids (low, high, points) in units of :math:`(\sigma_\epsilon^4 d/n)^{1/4}` for
#: harmful | benign and of :math:`\sqrt{\sigma_\epsilon^2 d/n}` for benign | not.
HARMFUL_GRID = (1.0, 8.0, 20)
BENIGN_GRID = (0.7, 50.0, 30)
#: The sensitivity probes' step: the memorisation or the signal preconditioner times 1 + PROBE.
PROBE = 0.1
#: A chaotic band whose ends differ by more than this factor gives no boundary.
BAND_LIMIT = 1.25


@dataclass(frozen=True)
class Crossings:
    """Where a grid's values change sign upwards (interpolated in log ||mu||): the first
    and last, how many, and the values' sign below and above the grid."""

    first: float
    last: float
    count: int
    below: bool  # every value negative
    above: bool  # every value non-negative

    @property
    def band(self) -> float:
        """The last crossing over the first (1 for a single crossing)."""
        return self.last / self.first if self.count else math.nan


def crossings(mus: np.ndarray, values: np.ndarray) -> Crossings:
    r"""Upward sign changes of ``values`` along increasing ``mus`` (log-interpolated);
    downward changes count towards ``count`` (a chaotic band) but are not returned."""
    negative = values < 0
    changes = np.flatnonzero(negative[:-1] != negative[1:])
    up = [i for i in changes if negative[i]]
    if not up:
        return Crossings(math.nan, math.nan, 0, bool(negative.all()), bool((~negative).all()))

    def at(i: int) -> float:
        fraction = values[i] / (values[i] - values[i + 1])
        return float(np.exp(np.log(mus[i]) + fraction * np.log(mus[i + 1] / mus[i])))

    return Crossings(at(int(up[0])), at(int(up[-1])), len(changes), False, False)


@dataclass(frozen=True)
class Prediction:
    """A predicted number with its relative ``model_error``, where the error came from
    (``error_source``), and ``validity``: empty, or why there is no number (``value`` is
    then nan). ``band`` is a chaotic band's ends, if any; ``parts`` the error's parts."""

    value: float
    model_error: float
    description: str
    error_source: str = ""
    validity: str = ""
    band: tuple[float, float] | None = None
    parts: dict[str, float] = field(default_factory=dict)


def abstain(description: str, reason: str) -> Prediction:
    return Prediction(math.nan, math.nan, description, validity=reason)


def handover(
    model: DataModel, training: Training, mus: np.ndarray, memorisation: np.ndarray | None = None
) -> discrete.Handover:
    """Continues member i (at ``mus[i]`` and ``memorisation[i]``) with the closure flow
    beyond the map (:func:`theory.stage2.discrete.evolve`); a signal-preconditioner probe
    continues unprobed there (the closure flow has no per-direction kappa)."""
    from theory.stage2 import flow

    def follow(member: int, state, tau: float, tau_end: float, event: str | None):
        scale = 1.0 if memorisation is None else float(memorisation[member])
        pop = population(model.replace(mu_norm=float(mus[member])), training, scale)
        run = flow.solve(
            pop, tau_end, np.array([tau_end]), events=(event,) if event else (), start=(tau, state)
        )
        at = run.events.get(event, math.inf) if event else math.inf
        return run.logits[-1], float(run.beta[-1]), float(run.pi[-1]), at

    return follow


def _run(
    model: DataModel, training: Training, steps: float, mus: np.ndarray
) -> tuple[discrete.Table, discrete.Evolution]:
    pop = population(model, training)
    table = discrete.Table.of(pop, np.asarray(mus) ** 2)
    follow = handover(model, training, mus)
    return table, discrete.evolve(table, training.alpha, steps, handover=follow)


def noisy_output(table: discrete.Table, state: discrete.MapState) -> np.ndarray:
    r"""The noisy sample's output :math:`\bar f` in units of :math:`y^*` (fitted when
    negative), per member."""
    return discrete.logit_gradient(table, state.logits(table))[1][:, 1]


def signal_to_noise(table: discrete.Table, state: discrete.MapState, sigma: float) -> np.ndarray:
    r""":math:`z = \beta/(\sigma_\epsilon\sqrt{\pi^2 + \kappa_p\pi})` per member."""
    kappa_p = KAPPA_P_RATIO * table.kappa0
    return state.signal(table)[:, 0] / (sigma * np.sqrt(state.pi**2 + kappa_p * state.pi))


@dataclass(frozen=True)
class FirstPass:
    """The first batch: grids of both boundaries and the configuration's own member."""

    table: discrete.Table
    evolution: discrete.Evolution
    harmful_mus: np.ndarray
    benign_mus: np.ndarray


def grid(low: float, high: float, points: int, unit: float) -> np.ndarray:
    return unit * np.geomspace(low, high, points)


def first_pass(model: DataModel, training: Training, steps: float) -> FirstPass:
    """Both grids and the configuration's :math:`\\|\\mu\\|`, one batch."""
    harmful = grid(*HARMFUL_GRID, (model.sigma_eps**4 * model.d / model.n) ** 0.25)
    benign = grid(*BENIGN_GRID, math.sqrt(model.sigma_eps**2 * model.d / model.n))
    mus = np.concatenate([harmful, benign, [model.mu_norm]])
    table, evolution = _run(model, training, steps, mus)
    return FirstPass(table, evolution, harmful, benign)


def _unreached(evolution: discrete.Evolution, members: np.ndarray, steps: float) -> str:
    """Why members did not reach the horizon (empty when all did)."""
    if evolution.reached[members].all():
        return ""
    return (
        f"GD has not settled after {discrete.MAP_STEPS} steps (the noisy samples' logits "
        f"still jump from step to step), so its flow limit cannot carry it to {steps:g} steps"
    )


def _band(found: Crossings, description: str, unit: str) -> tuple[float, float, str]:
    """The value and the band's relative half width; the reason to abstain, if any."""
    if found.count <= 1:
        return found.first, 0.0, ""
    middle = math.sqrt(found.first * found.last)
    if found.band > BAND_LIMIT:
        reason = (
            f"the GD map is chaotic in ||mu|| over [{found.first:.4g}, {found.last:.4g}] "
            f"({found.count} sign changes of {unit}): no single boundary; the outcome flips "
            "with ||mu|| inside the band"
        )
        return middle, math.sqrt(found.band) - 1, reason
    return middle, math.sqrt(found.band) - 1, ""


def harmful_benign(
    model: DataModel, training: Training, steps: float, first: FirstPass
) -> Prediction:
    r"""The :math:`\|\mu\|` below which fewer than half of the test sequences select R after
    ``steps`` GD steps (module docstring), from the first pass."""
    description = (
        f"||mu|| below which fewer than half of the test sequences select R at {steps:g} GD steps"
    )
    members = np.arange(first.harmful_mus.size)
    reason = _unreached(first.evolution, members, steps)
    if reason:
        return abstain(description, reason)
    table, state = first.table.select(members), first.evolution.state.select(members)
    values = np.log(signal_to_noise(table, state, model.sigma_eps) / half_selection_z(model))
    found = crossings(first.harmful_mus, values)
    if not found.count:
        side = "above" if found.below else "below"
        return abstain(description, f"no crossing of z = z_1/2 on the grid; it lies {side} it")
    value, half, reason = _band(found, description, "z - z_1/2")
    if reason:
        return Prediction(
            math.nan, math.nan, description, validity=reason, band=(found.first, found.last)
        )
    i = int(np.searchsorted(first.harmful_mus, found.first)) - 1
    slope = (values[i + 1] - values[i]) / math.log(first.harmful_mus[i + 1] / first.harmful_mus[i])
    terms = dropped_terms(model.replace(mu_norm=float(value)))
    dropped = (terms.score_noise + terms.cross_second_order) / abs(slope)
    return Prediction(
        value,
        dropped + half,
        description,
        error_source=f"derived: (score noise {terms.score_noise:.2g} + n/d "
        f"{terms.cross_second_order:.2g}) / |dlog z/dlog||mu||| {abs(slope):.3g} at the root"
        + (f"; chaotic band half width {half:.1%}" if half else ""),
        band=(found.first, found.last) if found.count > 1 else None,
        parts={"dropped": dropped, "band": half},
    )


def switched_lead(table: discrete.Table, a: np.ndarray) -> np.ndarray:
    """Positive once the noisy sample's best non-R token leads its relevant token R (the
    first present group)."""
    logits = a[:, : table.cells].reshape(-1, *table.scores.shape)[:, 1]
    return logits[:, 1:].max(axis=1) - logits[:, 0]


switched_lead.event = "noisy_switched"  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Probed:
    """A batch with sensitivity probes, run to ``horizon`` steps: the first step at which
    each member's lead turned positive, its memorisation integrals
    :math:`H = \\sum_k \\alpha(\\kappa_0 + \\pi_k)h_k` up to then, the final logits, and the
    captured state (if asked)."""

    table: discrete.Table
    evolution: discrete.Evolution
    integrals: np.ndarray  # (B, K, S)

    @property
    def firsts(self) -> np.ndarray:
        return self.evolution.first_lead


def run_probed(
    model: DataModel,
    training: Training,
    horizon: float,
    mus: np.ndarray,
    scales: tuple[np.ndarray, np.ndarray],
    lead: discrete.Lead | None = None,
    until_led: bool = False,
) -> Probed:
    """``mus`` with memorisation and signal-preconditioner ``scales`` (per member), the
    first positive ``lead`` of each member and its memorisation integrals up to it (to
    the horizon without a ``lead``)."""
    pop = population(model, training)
    table = discrete.Table.of(pop, np.asarray(mus) ** 2, *scales)
    total = np.zeros((table.batch, table.cells))

    def observe(state: discrete.MapState, f: discrete.Forces) -> None:
        before = 1.0 if lead is None else (lead(table, state.a) <= 0)[:, None]
        total[:] += before * training.alpha * (table.kappa0 + state.pi)[:, None] * f.w

    follow = handover(model, training, np.asarray(mus), scales[0])
    evolution = discrete.evolve(
        table, training.alpha, horizon, lead, observe, until_led=until_led, handover=follow
    )
    integrals = (total / table.multiplicity.reshape(-1)).reshape(-1, *table.scores.shape)
    return Probed(table, evolution, integrals)


def probes(count: int) -> tuple[np.ndarray, np.ndarray]:
    """Scales of ``count`` unprobed members, then ``count`` with the memorisation and
    ``count`` with the signal preconditioner scaled by 1 + :data:`PROBE`."""
    ones, up = np.ones(count), np.full(count, 1 + PROBE)
    return np.concatenate([ones, up, ones]), np.concatenate([ones, ones, up])


@dataclass(frozen=True)
class Spread:
    """The dropped terms' sizes and the prediction's sensitivities to them (d log of the
    prediction / d log of the scaled quantity)."""

    token: float
    token_sensitivity: float
    class_: float
    class_sensitivity: float

    @property
    def error(self) -> float:
        return math.hypot(self.token * self.token_sensitivity, self.class_ * self.class_sensitivity)

    def parts(self) -> dict[str, float]:
        return {
            "token": self.token * abs(self.token_sensitivity),
            "class": self.class_ * abs(self.class_sensitivity),
        }

    def source(self) -> str:
        return (
            f"derived: one sd over the dropped terms, per token {self.token:.2%} x sensitivity "
            f"{abs(self.token_sensitivity):.2f}, per class sqrt(2/d) = {self.class_:.2%} x "
            f"{abs(self.class_sensitivity):.2f}"
        )


#: The refined window around the first pass's root (factor each side) and its points.
WINDOW, WINDOW_POINTS = 1.2, 24


def _sensitivity(base: float, probe: float) -> float:
    """d log(root) / d log(scale) from a root and the root with the scale 1 + PROBE."""
    if not (base > 0 and probe > 0):
        return math.inf
    return math.log(probe / base) / math.log1p(PROBE)


def benign_not(model: DataModel, training: Training, steps: float, first: FirstPass) -> Prediction:
    r"""The :math:`\|\mu\|` above which fewer than half of the noisy samples are fitted
    after ``steps`` GD steps (module docstring): the sign change of the noisy output on the
    first pass, refined on a window run three times (the map, and with the memorisation
    or the signal preconditioner scaled by 1 + :data:`PROBE`). More than one sign change
    in the window or on the first grid makes the map irregular there: the band of
    crossings. Error: one sd over the dropped terms, the band's half width and half the
    window's spacing (the root's resolution)."""
    description = (
        f"||mu|| above which fewer than half of the noisy samples are fitted at {steps:g} GD steps"
    )
    members = first.harmful_mus.size + np.arange(first.benign_mus.size)
    reason = _unreached(first.evolution, members, steps)
    if reason:
        return abstain(description, reason)
    table, state = first.table.select(members), first.evolution.state.select(members)
    coarse = crossings(first.benign_mus, noisy_output(table, state))
    if not coarse.count:
        if coarse.above:
            return Prediction(
                0.0,
                0.0,
                f"fewer than half of the noisy samples fitted at {steps:g} steps",
                error_source="none: no noisy sample is fitted anywhere on the grid",
            )
        return abstain(description, "the noisy samples are fitted up to the grid's top")
    window = coarse.first * np.geomspace(1 / WINDOW, WINDOW, WINDOW_POINTS)
    points = window.size
    result = run_probed(model, training, steps, np.tile(window, 3), probes(points))
    out = noisy_output(result.table, result.evolution.state)
    base, *shifted = (crossings(window, out[i * points : (i + 1) * points]) for i in range(3))
    if not base.count:
        return abstain(description, "the refined window has no crossing")
    regular = coarse.count == 1 and base.count == 1
    ends = [v for v in (coarse.first, coarse.last, base.first, base.last) if math.isfinite(v)]
    found = base if regular else Crossings(min(ends), max(ends), 2, False, False)
    value, half, reason = _band(found, description, "the noisy output")
    band = None if regular else (found.first, found.last)
    if reason:
        return Prediction(math.nan, math.nan, description, validity=reason, band=band)
    j = int(np.argmin(np.abs(np.log(window / value))))
    logits = result.evolution.state.logits(result.table)[j, 1]
    spread = Spread(
        token_spread(model.d, result.integrals[j], logits, result.table.multiplicity),
        _sensitivity(base.first, shifted[0].first),
        math.sqrt(2 / model.d),
        _sensitivity(base.first, shifted[1].first),
    )
    if not math.isfinite(spread.error):
        return abstain(
            description,
            f"the root leaves the window (x{WINDOW:g}) when the memorisation or the signal's "
            f"preconditioner moves by {PROBE:.0%}: too sensitive for a first-order error",
        )
    resolution = (WINDOW ** (2 / (points - 1)) - 1) / 2
    return Prediction(
        value,
        spread.error + half + resolution,
        description,
        error_source=spread.source()
        + f"; root resolution {resolution:.1%}"
        + (f"; irregular band half width {half:.1%}" if half else ""),
        band=band,
        parts={**spread.parts(), "band": half, "resolution": resolution},
    )


def switch_time(
    model: DataModel, training: Training, max_steps: float = discrete.MAP_STEPS
) -> Prediction:
    r"""The GD step at which the mean-field noisy sample leaves R (its best other token
    overtakes R), with one sd over the dropped terms: :math:`\delta_{\rm tok}` up to the
    switch and :math:`\sqrt{2/d}`, times the step's sensitivities to the memorisation and
    the signal preconditioner (probes at 1 + :data:`PROBE`). The mean-field sample is the
    median one: no order statistic enters."""
    description = "GD step at which the noisy samples leave their relevant token"
    mus = np.full(3, model.mu_norm)
    result = run_probed(model, training, max_steps, mus, probes(1), switched_lead, until_led=True)
    base, memorised, signal = result.firsts
    if not math.isfinite(base):
        return abstain(description, f"the noisy sample keeps R for {max_steps:g} steps")
    if base <= 1:
        return Prediction(
            1.0,
            0.0,
            description,
            error_source="exact: the noisy sample leaves R at the first step (stage 1)",
        )
    logits = result.evolution.state.logits(result.table)[0, 1]
    spread = Spread(
        token_spread(model.d, result.integrals[0], logits, result.table.multiplicity),
        _sensitivity(base, memorised),
        math.sqrt(2 / model.d),
        _sensitivity(base, signal),
    )
    return Prediction(
        float(base),
        spread.error,
        description,
        error_source=spread.source().replace("sensitivity", "d log step / d log scale"),
        parts=spread.parts(),
    )


def test_metrics(model: DataModel, training: Training, steps: float, first: FirstPass):
    r"""The test side after ``steps`` GD steps at the configuration's :math:`\|\mu\|` (the
    first pass's last member): :math:`\beta`, :math:`\|q\|`, z, selection and accuracy
    (:class:`theory.stage2.predictions.SelectionMetrics`), or ``None`` where the map
    does not reach the horizon."""
    member = np.array([first.table.batch - 1])
    if not first.evolution.reached[member].all():
        return None
    state = first.evolution.state.select(member)
    beta = float(state.signal(first.table.select(member))[0, 0])
    pi = float(state.pi[0])
    query_norm = math.sqrt(pi**2 + KAPPA_P_RATIO * first.table.kappa0 * pi)
    return metrics_at(model, steps, beta, query_norm)


@dataclass(frozen=True)
class Horizon:
    """Everything :mod:`theory.stage2.horizon` predicts for one configuration after
    ``steps`` GD steps."""

    steps: float
    harmful_benign: Prediction
    benign_not: Prediction
    metrics: object | None


#: Boundaries already computed, by setting without its ||mu|| (they do not depend on it):
#: a sweep over ||mu|| computes them once. At most :data:`KEPT` settings are kept.
_BOUNDARIES: collections.OrderedDict = collections.OrderedDict()
KEPT = 256


def _boundary_key(model: DataModel, training: Training, steps: float) -> tuple:
    return (model.replace(mu_norm=1.0), training, float(steps))


def own_metrics(model: DataModel, training: Training, steps: float):
    r"""The test metrics at the configuration's own :math:`\|\mu\|` alone (one member)."""
    table, evolution = _run(model, training, steps, np.array([model.mu_norm]))
    first = FirstPass(table, evolution, np.zeros(0), np.zeros(0))
    return test_metrics(model, training, steps, first)


@functools.lru_cache(maxsize=KEPT)
def gd_horizon(model: DataModel, training: Training, steps: float) -> Horizon:
    r"""Both boundaries and the test metrics after ``steps`` GD steps: two batches, or (the
    boundaries of this setting at another :math:`\|\mu\|` known) one member. Pure: the
    last :data:`KEPT` results are kept."""
    key = _boundary_key(model, training, steps)
    if key in _BOUNDARIES:
        _BOUNDARIES.move_to_end(key)
        harmful, benign = _BOUNDARIES[key]
        return Horizon(steps, harmful, benign, own_metrics(model, training, steps))
    first = first_pass(model, training, steps)
    harmful, benign = (
        harmful_benign(model, training, steps, first),
        benign_not(model, training, steps, first),
    )
    _BOUNDARIES[key] = (harmful, benign)
    if len(_BOUNDARIES) > KEPT:
        _BOUNDARIES.popitem(last=False)
    return Horizon(steps, harmful, benign, test_metrics(model, training, steps, first))
