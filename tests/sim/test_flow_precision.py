r"""The float64 gradient flow against the same flow in mpmath, out to :math:`10^{20}` GD steps.

The long-horizon checks read the ``flow`` engine (DOP853 in float64, log time). Here its
recorded history is compared, log point by log point, with the ``mp-flow`` engine's (the
same ODE by extrapolation in mpmath) on small problems.

Error model, fixed before any comparison was run. For the state :math:`y = (a, M)`:

* DOP853 accepts a step when its error estimate, scaled by :math:`\text{atol} +
  \text{rtol}\,|y_i|`, has root-mean-square at most one. The model reads this
  componentwise: each accepted step adds at most :math:`\text{atol} + \text{rtol}\,|y_i|`
  to component :math:`i` (an assumption, not a consequence: the mean alone allows one
  component :math:`\sqrt{D}` times that, :math:`D` the state's size; in exchange the
  estimate, from DOP853's embedded lower-order pair, overstates its 8th-order error);
* local errors add up without amplification, so after :math:`S` accepted steps, plus one
  for the dense output that gives the log point,

  .. math::

      |\delta y_i| \le (S + 1)(\text{atol} + \text{rtol}\,Y_i)
      + S_{mp}\,\tau\,(1 + Y_i),

  with :math:`Y_i` the largest :math:`|y_i|` at the log points so far and the second term
  the same bound for the reference (:math:`S_{mp}` steps at tolerance :math:`\tau`);
* neglected, and asserted small: the rounding of :math:`K`, Gram in the float64
  statistics (relative :math:`\varepsilon_K`, a perturbation of the ODE eight orders
  below rtol) and of the log time :math:`s` (relative :math:`2^{-53}`).

The state bound is propagated exactly through the bilinear maps and with exact bounds on
the smooth ones, from the reference state (:math:`|\cdot|` elementwise, :math:`u =
2^{-53}`, :math:`\gamma_k = k u / (1 - k u)`):

* logits :math:`z = K a + \mathrm{Gram}\,v`, :math:`v = M^\top K a`:
  :math:`e_v = e_M^\top(|Ka| + |K| e_a) + |M|^\top |K| e_a`,
  :math:`e_z = |K| e_a + |\mathrm{Gram}| e_v` plus the float64 rounding of both runs'
  logits, :math:`3\gamma_N(|K||a| + |\mathrm{Gram}||M|^\top|K||a|) + 2u|z|`;
* attention gaps (differences of logits within a sample): :math:`2\max_t e_{z,i,t}`;
* output :math:`f_i = \sum_t s_t \gamma_t`: :math:`|\delta f_i| \le e^{2\epsilon_i}
  \sum_t s_t \max_u|\gamma_t - \gamma_u|\, e_{z,i,t}` (:math:`\epsilon_i = \max_t
  e_{z,i,t}` bounds the softmax's change); margins :math:`m_i = y_i f_i` alike;
* training loss :math:`\frac1n\sum\ell(m_i)`: :math:`\frac1n\sum|\ell'(m_i)|\,
  e^{\delta m_i}\delta m_i`; ``noisy_fitted``: the share of noisy samples whose margin
  lies within its bound of zero;
* query :math:`q = A B a + B v`: :math:`|\delta\|q\|| \le \|\delta q\|`, with
  :math:`\|\delta q\|^2 \le e_a^\top|Q|e_a + 2(|K|e_a)^\top e_v +
  e_v^\top|\mathrm{Gram}|e_v`, plus the rounding :math:`\delta` of :math:`\|q\|^2` in
  both runs carried through the square root (:math:`\delta/\|q\|`, or
  :math:`\sqrt\delta` at :math:`q = 0`); the
  signal coordinates :math:`E^\top q`: :math:`|E^\top AB| e_a + |E^\top B| e_v`;
* population metrics (quasi-Monte Carlo from the query's moments): the two runs' stated
  errors added.

Registered disagreement. ``population_test_selects_relevant`` exceeds its a-priori bound
(the two runs' stated quadrature errors, about :math:`10^{-16}`) by up to
:math:`4\times10^{8}` times at :math:`n = 4, T = 3`: the stated error covers the selection
integral's quadrature only, while each run evaluates the integral at its own query
moments, which differ within their bounds above (about :math:`10^{-8}`). The bound that
includes that difference, :math:`\sum_k |\partial P/\partial m_k|\,e_{m_k}` over the
moments :math:`m = (\|q\|, q_1, q_2)` (forward differences), holds; both facts are tested.

The event "every noisy sample is fitted" (root-finding on the dense output) is checked by
value: at the float64 flow's event time the reference's smallest noisy margin must lie
within its bound of the float64 flow's own value there (zero up to the root finder's
tolerance); the reference's own event time must then agree to that bound over the slope.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import pytest

from verify.checks.evidence import noisy_margin_event
from verify.sim.config import RunConfig
from verify.sim.data import Dataset, generate
from verify.sim.engines import make_engine
from verify.sim.kernels import logistic_derivative, score_differences, softmax
from verify.sim.population import selection_metrics, sequence_law
from verify.sim.simulate import RunResult, logging_steps, record
from verify.sim.statistics import Statistics

UNIT = np.finfo(float).eps / 2
GAPS = ("clean_gap_mean", "clean_gap_min", "noisy_gap_mean", "noisy_gap_min")
MOMENTS = ("q_norm", "q_signal_plus", "q_signal_minus")
POPULATION = (
    "population_test_accuracy",
    "population_test_loss",
    "population_test_selects_relevant",
)
QUANTITIES = (*GAPS, "train_loss", "noisy_fitted", *MOMENTS, *POPULATION)
#: The registered disagreement (module docstring), and the quantities held to their bounds.
SELECTION = "population_test_selects_relevant"
AGREEING = tuple(name for name in QUANTITIES if name != SELECTION)
#: Relative step offset of the reference's points around the float64 event.
EVENT_OFFSET = 1e-6


def problem(**changes) -> RunConfig:
    """A small problem run to 1e20 GD steps (the paper's step size), logged geometrically;
    test metrics from the population only."""
    return RunConfig.build(
        **{
            "d": 16,
            "n": 4,
            "T": 3,
            "mu_norm": 5.0,
            "alpha": 5e-3,
            "steps": 10**20,
            "log_every": 10**20,
            "log_geometric": 40,
            "test_size": 0,
            "mp_dps": 30,
            "mp_flow_tol": 1e-16,
            **changes,
        }
    )


def gamma(k: int) -> float:
    return k * UNIT / (1 - k * UNIT)


@dataclass
class Point:
    """One recorded point: its history row, the state and the solver steps so far."""

    step: float
    row: dict[str, float]
    a: np.ndarray
    M: np.ndarray
    solver_steps: int
    logits: np.ndarray


@dataclass
class Trace:
    points: list[Point] = field(default_factory=list)
    extra: dict[float, Point] = field(default_factory=dict)
    event_at: float | None = None


def trace(engine, config: RunConfig, data: Dataset, extra_steps=(), watch=False) -> Trace:
    """Advance ``engine`` through the log points (recorded as :func:`simulate` records
    them) and ``extra_steps`` (state only)."""
    result = RunResult(config=config, data=data)
    event = engine.watch("noisy fitted", noisy_margin_event(data)) if watch else None
    log_steps = {float(step) for step in logging_steps(config)}
    out = Trace()
    for step in sorted(log_steps | {float(step) for step in extra_steps}):
        engine.advance_to(step)
        row = record(result, engine) if step in log_steps else {}
        a, M = engine.snapshot()
        point = Point(step, row, a, M, engine.solver_steps, engine.train_logits())
        if step in log_steps:
            out.points.append(point)
        if step in extra_steps:
            out.extra[step] = point
    out.event_at = event.at if event else None
    return out


# -- the error model -------------------------------------------------------------------------
@dataclass(frozen=True)
class ErrorModel:
    """The stated per-step errors of the float64 flow and of the reference."""

    rtol: float
    atol: float
    reference_tol: float

    @classmethod
    def of(cls, config: RunConfig) -> ErrorModel:
        solver = config.solver
        return cls(solver.flow_rtol, solver.flow_atol, solver.mp_flow_tol)

    def state_bound(self, steps: int, reference_steps: int, size: np.ndarray) -> np.ndarray:
        r""":math:`(S + 1)(\text{atol} + \text{rtol}\,Y) + S_{mp}\tau(1 + Y)`."""
        flow = (steps + 1) * (self.atol + self.rtol * size)
        return flow + reference_steps * self.reference_tol * (1.0 + size)


@dataclass(frozen=True)
class Propagated:
    """Bounds on the logits (n, T), the margins (n,) and :math:`v = M^\\top K a` (N,)."""

    logits: np.ndarray
    margins: np.ndarray
    v: np.ndarray


def propagate(
    stats: Statistics, data: Dataset, point: Point, e_a: np.ndarray, e_M: np.ndarray
) -> Propagated:
    """The state bounds carried to logits and margins (module docstring)."""
    K, G = np.abs(stats.K), np.abs(stats.gram)
    Ka = stats.K @ point.a
    e_Ka = K @ e_a
    e_v = e_M.T @ (np.abs(Ka) + e_Ka) + np.abs(point.M).T @ e_Ka
    chain = K @ np.abs(point.a) + G @ (np.abs(point.M).T @ (K @ np.abs(point.a)))
    rounding = 3 * gamma(len(e_a)) * chain.reshape(point.logits.shape)
    e_z = (e_Ka + G @ e_v).reshape(point.logits.shape) + rounding
    e_z += 2 * UNIT * np.abs(point.logits)
    probabilities = softmax(point.logits)
    spread = np.abs(score_differences(data.train_scores)).max(axis=-1)
    widest = e_z.max(axis=1)
    margins = np.exp(2 * widest) * (probabilities * spread * e_z).sum(axis=1)
    margins += 2 * (data.T + 4) * UNIT * np.abs(data.train_scores).max(axis=1)
    return Propagated(e_z, margins, e_v)


def margins_of(data: Dataset, logits: np.ndarray) -> np.ndarray:
    return data.y_train * (softmax(logits) * data.train_scores).sum(axis=-1)


def moment_bounds(
    stats: Statistics, point: Point, e_a: np.ndarray, e_v: np.ndarray
) -> dict[str, float]:
    """Bounds on the query's norm and signal coordinates (module docstring)."""
    Q, K, G = np.abs(stats.Q), np.abs(stats.K), np.abs(stats.gram)
    a, v = np.abs(point.a), np.abs(point.M.T @ (stats.K @ point.a))
    shift = math.sqrt(e_a @ Q @ e_a + 2 * (K @ e_a) @ e_v + e_v @ G @ e_v)
    terms = a @ Q @ a + 2 * (K @ a) @ v + v @ G @ v
    q_norm, squared = point.row["q_norm"], 2 * gamma(len(a) + 3) * terms
    rounding = squared / q_norm if q_norm > 0 else math.sqrt(squared)
    signal = np.abs(stats.signal_AB) @ e_a + np.abs(stats.signal_B) @ e_v
    signal += 2 * gamma(len(a) + 1) * (np.abs(stats.signal_AB) @ a + np.abs(stats.signal_B) @ v)
    return {
        "q_norm": shift + rounding,
        "q_signal_plus": float(signal[0]),
        "q_signal_minus": float(signal[1]),
    }


def point_bounds(
    stats: Statistics, data: Dataset, point: Point, e_a: np.ndarray, e_M: np.ndarray
) -> dict[str, float]:
    """Every compared quantity's bound at one log point."""
    carried = propagate(stats, data, point, e_a, e_M)
    noisy = data.noisy
    gap = 2 * carried.logits.max(axis=1) + 4 * UNIT * np.abs(point.logits).max(axis=1)
    margins = margins_of(data, point.logits)
    slope = -logistic_derivative(margins)
    loss = float(np.mean(slope * np.exp(carried.margins) * carried.margins))
    bounds = {name: float(gap[~noisy].max()) for name in GAPS[:2]}
    bounds.update({name: float(gap[noisy].max()) for name in GAPS[2:]})
    bounds["train_loss"] = loss + 8 * UNIT * point.row["train_loss"]
    ambiguous = np.abs(margins[noisy]) <= carried.margins[noisy]
    bounds["noisy_fitted"] = float(np.mean(ambiguous))
    bounds.update(moment_bounds(stats, point, e_a, carried.v))
    return bounds


# -- the comparison --------------------------------------------------------------------------
@dataclass(frozen=True)
class Entry:
    """One quantity at one log point: the two runs' values and the bound on their difference."""

    name: str
    step: float
    flow: float
    reference: float
    bound: float

    @property
    def difference(self) -> float:
        """:math:`|x - y|`; 0 when both are NaN, infinite when one is."""
        missing = math.isnan(self.flow) + math.isnan(self.reference)
        return (abs(self.flow - self.reference), math.inf, 0.0)[missing]

    @property
    def ratio(self) -> float:
        """difference / bound (0 when both are 0)."""
        if self.difference == 0.0:
            return 0.0
        return self.difference / self.bound if self.bound > 0 else math.inf


@dataclass(frozen=True)
class Comparison:
    """Every entry of a comparison; the violations are the entries beyond their bound."""

    entries: tuple[Entry, ...]

    def of(self, names: tuple[str, ...]) -> Comparison:
        return Comparison(tuple(e for e in self.entries if e.name in names))

    @property
    def violations(self) -> list[Entry]:
        return [e for e in self.entries if not e.difference <= e.bound]

    def worst_ratio(self, name: str) -> Entry:
        return max((e for e in self.entries if e.name == name), key=lambda e: e.ratio)

    def table(self) -> str:
        """Per quantity: the largest difference, the largest difference / bound and its step."""
        lines = [f"{'quantity':<34}{'max |diff|':>12}{'max diff/bound':>16}{'at step':>10}"]
        for name in dict.fromkeys(e.name for e in self.entries):
            largest = max(e.difference for e in self.entries if e.name == name)
            worst = self.worst_ratio(name)
            lines.append(f"{name:<34}{largest:>12.3g}{worst.ratio:>16.3g}{worst.step:>10.3g}")
        return "\n".join(lines)


def compare(
    config: RunConfig, data: Dataset, stats: Statistics, flow: Trace, reference: Trace
) -> Comparison:
    """Every quantity of every log point against its a-priori bound (module docstring)."""
    model = ErrorModel.of(config)
    entries = []
    size_a = np.zeros_like(reference.points[0].a)
    size_M = np.zeros_like(reference.points[0].M)
    for ours, ref in zip(flow.points, reference.points, strict=True):
        assert ours.step == ref.step
        size_a, size_M = np.maximum(size_a, np.abs(ref.a)), np.maximum(size_M, np.abs(ref.M))
        e_a = model.state_bound(ours.solver_steps, ref.solver_steps, size_a)
        e_M = model.state_bound(ours.solver_steps, ref.solver_steps, size_M)
        bounds = point_bounds(stats, data, ref, e_a, e_M)
        for name in POPULATION:
            bounds[name] = ours.row[f"{name}_error"] + ref.row[f"{name}_error"]
        entries += [
            Entry(name, ref.step, ours.row[name], ref.row[name], bounds[name])
            for name in QUANTITIES
        ]
    return Comparison(tuple(entries))


def selection_sensitivity(config: RunConfig, row: dict[str, float]) -> np.ndarray:
    r""":math:`|\partial P/\partial m_k|` of the relevant-selection probability :math:`P` in
    the moments :math:`m = (\|q\|, q_1, q_2)`, by forward differences of step
    :math:`10^{-6}\max(|m_k|, 10^{-3})`."""
    moments = np.array([row[name] for name in MOMENTS])

    def selection(m: np.ndarray) -> float:
        q_sq = max(m[0] ** 2, m[1] ** 2 + m[2] ** 2)
        return selection_metrics(sequence_law(config.model, q_sq, m[1:]))[0]

    centre = selection(moments)
    steps = 1e-6 * np.maximum(np.abs(moments), 1e-3)
    shifted = [selection(moments + shift) for shift in np.diag(steps)]
    return np.abs(np.array(shifted) - centre) / steps


def selection_with_moments(comparison: Comparison, config: RunConfig, flow: Trace) -> Comparison:
    """The selection entries with the moments' difference carried into their bound."""
    moment_bound = {(e.step, e.name): e.bound for e in comparison.of(MOMENTS).entries}
    rows = {point.step: point.row for point in flow.points}
    entries = []
    for e in comparison.of((SELECTION,)).entries:
        bounds = np.array([moment_bound[e.step, name] for name in MOMENTS])
        carried = float(selection_sensitivity(config, rows[e.step]) @ bounds)
        entries.append(Entry(e.name, e.step, e.flow, e.reference, e.bound + carried))
    return Comparison(tuple(entries))


# -- the runs ----------------------------------------------------------------------------------
@dataclass
class Runs:
    config: RunConfig
    data: Dataset
    stats: Statistics
    flow: Trace
    at_event: Point  # a second float64 flow, stopped at its event time
    reference: Trace
    K_rounding: float


def state_at(config: RunConfig, data: Dataset, step: float) -> Point:
    """A fresh engine's state at ``step`` (no recording: DOP853 takes the same steps
    whatever the requested times, which it reaches by dense output)."""
    engine = make_engine(config, data)
    engine.advance_to(step)
    a, M = engine.snapshot()
    return Point(step, {}, a, M, engine.solver_steps, engine.train_logits())


def run_all(config: RunConfig) -> Runs:
    """The float64 flow (watching the event), its state at that event, and the mp flow
    through the log points and around the float64 event."""
    data = generate(config)
    flow_config = config.replace(engine="flow")
    engine = make_engine(flow_config, data)
    flow = trace(engine, flow_config, data, watch=True)
    assert flow.event_at is not None, "the problem must fit its noisy sample"
    at = flow.event_at
    around = (at * (1 - EVENT_OFFSET), at, at * (1 + EVENT_OFFSET))
    mp_config = config.replace(engine="mp-flow")
    mp = make_engine(mp_config, data)
    reference = trace(mp, mp_config, data, extra_steps=around, watch=True)
    K_exact = mp.K.astype(float)
    K_rounding = float(np.abs(engine.K - K_exact).max() / np.abs(K_exact).max())
    at_event = state_at(flow_config, data, at)
    return Runs(config, data, engine.statistics, flow, at_event, reference, K_rounding)


#: The problems compared: the default suite runs the first (about 15 s on one core), the
#: ``slow`` selection the second (about 20 s more).
PROBLEMS = [
    pytest.param({}, id="n4-T3"),
    pytest.param({"n": 5, "T": 4, "mu_norm": 3.0, "seed": 1}, id="n5-T4", marks=pytest.mark.slow),
]


@pytest.fixture(scope="module", params=PROBLEMS)
def runs(request) -> Runs:
    return run_all(problem(**request.param))


@pytest.fixture(scope="module")
def comparison(runs) -> Comparison:
    result = compare(runs.config, runs.data, runs.stats, runs.flow, runs.reference)
    print(f"\nfloat64 flow vs mp-flow, n={runs.config.model.n} T={runs.config.model.T}:")
    print(result.table())
    return result


def test_float64_flow_matches_mp_flow_to_1e20_steps(runs, comparison):
    assert runs.K_rounding < 1e-13  # the neglected rounding of the statistics stays small
    assert runs.flow.points[-1].step == runs.reference.points[-1].step == 1e20
    assert len(runs.flow.points) == len(logging_steps(runs.config))
    assert comparison.of(AGREEING).violations == []


def test_selection_disagrees_as_registered_by_the_moments_difference(runs, comparison):
    a_priori = comparison.of((SELECTION,))
    carried = selection_with_moments(comparison, runs.config, runs.flow)
    worst = carried.worst_ratio(SELECTION)
    print(
        f"\n{SELECTION}: a-priori bound exceeded at {len(a_priori.violations)} of "
        f"{len(a_priori.entries)} points (worst ratio "
        f"{a_priori.worst_ratio(SELECTION).ratio:.3g}); with the moments' difference carried "
        f"in: worst ratio {worst.ratio:.3g} at step {worst.step:.3g}"
    )
    assert a_priori.violations, "now agrees with the a-priori bound: update the registration"
    assert carried.violations == []


def event_check(runs: Runs) -> tuple[float, float, float]:
    """(|v_ref - v_flow| at the float64 event, its bound, bound on |s_flow - s_mp|)."""
    event = noisy_margin_event(runs.data)
    at = runs.flow.event_at
    assert at is not None
    ref = runs.reference.extra[at]
    model = ErrorModel.of(runs.config)
    earlier = [p for p in runs.reference.points if p.step <= at] + [ref]
    size_a = np.max([np.abs(p.a) for p in earlier], axis=0)
    size_M = np.max([np.abs(p.M) for p in earlier], axis=0)
    ours = runs.at_event
    e_a = model.state_bound(ours.solver_steps, ref.solver_steps, size_a)
    e_M = model.state_bound(ours.solver_steps, ref.solver_steps, size_M)
    margins = margins_of(runs.data, ref.logits)
    worst = np.flatnonzero(runs.data.noisy)[np.argmin(margins[runs.data.noisy])]
    bound = propagate(runs.stats, runs.data, ref, e_a, e_M).margins[worst]
    value_gap = abs(event(ref.logits) - event(ours.logits))
    low, high = (runs.reference.extra[at * (1 + k * EVENT_OFFSET)] for k in (-1, 1))
    times = [math.log1p(runs.config.training.alpha * p.step) for p in (low, high)]
    slope = (event(high.logits) - event(low.logits)) / (times[1] - times[0])
    time_bound = (bound + abs(event(ours.logits))) / abs(slope)
    return value_gap, bound + abs(event(ours.logits)), time_bound


def test_float64_event_time_matches_mp_flow(runs):
    value_gap, value_bound, time_bound = event_check(runs)
    alpha = runs.config.training.alpha
    assert runs.flow.event_at is not None and runs.reference.event_at is not None
    s_flow, s_mp = (math.log1p(alpha * at) for at in (runs.flow.event_at, runs.reference.event_at))
    relative = abs(runs.flow.event_at - runs.reference.event_at) / runs.reference.event_at
    print(
        f"\nevent 'noisy fitted': float64 at step {runs.flow.event_at:.12g}, mp-flow at "
        f"{runs.reference.event_at:.12g} (relative difference {relative:.3g}); reference "
        f"margin at the float64 time {value_gap:.3g} (bound {value_bound:.3g}); "
        f"|s_flow - s_mp| = {abs(s_flow - s_mp):.3g} (bound {time_bound:.3g})"
    )
    assert value_gap <= value_bound
    assert abs(s_flow - s_mp) <= time_bound + 1e-15 + 4 * np.finfo(float).eps * s_mp


# -- the comparison rejects wrong flows -------------------------------------------------------
#: How much looser than configured the float64 solver runs in the mutation below.
LOOSER = 100


def test_comparison_rejects_a_too_loose_float64_tolerance(runs):
    r"""DOP853 at ``LOOSER`` times the configured rtol and atol, compared against the bounds
    of the configured ones: some quantity must leave its bound."""
    solver = runs.config.solver
    loose = runs.config.replace(
        engine="flow", flow_rtol=LOOSER * solver.flow_rtol, flow_atol=LOOSER * solver.flow_atol
    )
    flow = trace(make_engine(loose, runs.data), loose, runs.data)
    result = compare(runs.config, runs.data, runs.stats, flow, runs.reference).of(AGREEING)
    caught = sorted({e.name for e in result.violations})
    print(f"\ntolerance x{LOOSER}: {len(result.violations)} violations, in {caught}")
    assert caught


def perturbed(entry: Entry, data: Dataset) -> float:
    """``entry``'s float64 value moved away from the reference by twice its bound, or, for
    the share ``noisy_fitted``, by one noisy sample."""
    share_step = 1.0 / int(data.noisy.sum())
    shift = share_step if entry.name == "noisy_fitted" else 2.0 * entry.bound
    return entry.flow + math.copysign(shift, entry.flow - entry.reference)


@pytest.mark.parametrize("name", [n for n in QUANTITIES if n != SELECTION])
def test_comparison_rejects_a_perturbed_float64_history(runs, comparison, name):
    """One quantity of the float64 history, at its worst log point, moved
    (see :func:`perturbed`): exactly that entry must be caught."""
    entry = comparison.worst_ratio(name)
    index = next(i for i, p in enumerate(runs.flow.points) if p.step == entry.step)
    points = list(runs.flow.points)
    row = {**points[index].row, name: perturbed(entry, runs.data)}
    points[index] = replace(points[index], row=row)
    flow = Trace(points, runs.flow.extra, runs.flow.event_at)
    result = compare(runs.config, runs.data, runs.stats, flow, runs.reference)
    assert [(e.name, e.step) for e in result.of(AGREEING).violations] == [(name, entry.step)]
