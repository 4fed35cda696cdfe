r"""The float64 gradient flow against the same flow in mpmath, out to :math:`10^{20}` GD steps.

The long-horizon checks read the ``flow`` engine (DOP853 in float64, log time). Here its
recorded history is compared, log point by log point, with the ``mp-flow`` engine's (the
same ODE by extrapolation in mpmath) on small problems.

Error model, fixed before any comparison was run. For the state :math:`y = (a, M)`:

* DOP853 accepts a step when its error estimate, scaled by :math:`\text{atol} +
  \text{rtol}\,|y_i|`, has norm at most one; read componentwise, each accepted step adds
  at most :math:`\text{atol} + \text{rtol}\,|y_i|` to component :math:`i` (the estimate is
  that of DOP853's embedded lower-order pair, an upper estimate of its 8th-order error);
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
  e_v^\top|\mathrm{Gram}|e_v`, plus the rounding of :math:`\|q\|^2` in both runs; the
  signal coordinates :math:`E^\top q`: :math:`|E^\top AB| e_a + |E^\top B| e_v`;
* population metrics (quasi-Monte Carlo from the query's moments): the two runs' stated
  errors added.

The event "every noisy sample is fitted" (root-finding on the dense output) is checked by
value: at the float64 flow's event time the reference's smallest noisy margin must lie
within its bound of the float64 flow's own value there (zero up to the root finder's
tolerance); the reference's own event time must then agree to that bound over the slope.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pytest

from verify.checks.evidence import noisy_margin_event
from verify.sim.config import RunConfig
from verify.sim.data import Dataset, generate
from verify.sim.engines import make_engine
from verify.sim.kernels import (
    KernelOutput,
    logistic_derivative,
    naive_logit_gradient,
    score_differences,
    softmax,
)
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
    q_norm = point.row["q_norm"]
    rounding = 2 * gamma(len(a) + 3) * terms / q_norm if q_norm > 0 else math.inf
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
@dataclass
class Comparison:
    """Per quantity: the worst absolute and relative differences, the worst ratio of the
    difference to its bound (each with its step), and every violation."""

    worst: dict[str, dict[str, tuple[float, float]]] = field(default_factory=dict)
    violations: list[tuple[str, float, float, float]] = field(default_factory=list)

    def note(self, name: str, step: float, difference: float, reference: float, bound: float):
        entry = self.worst.setdefault(name, {})
        relative = difference / abs(reference) if reference else math.inf
        for kind, value in (("abs", difference), ("rel", relative), ("ratio", difference / bound)):
            if value > entry.get(kind, (-1.0, 0.0))[0]:
                entry[kind] = (value, step)
        if not difference <= bound:
            self.violations.append((name, step, difference, bound))

    def table(self) -> str:
        lines = [
            f"{'quantity':<34}{'max |diff|':>12}{'at step':>10}{'max rel':>12}"
            f"{'at step':>10}{'max diff/bound':>16}"
        ]
        for name, entry in self.worst.items():
            (a, a_at), (r, r_at), (b, _) = entry["abs"], entry["rel"], entry["ratio"]
            lines.append(f"{name:<34}{a:>12.3g}{a_at:>10.3g}{r:>12.3g}{r_at:>10.3g}{b:>16.3g}")
        return "\n".join(lines)


def difference(flow: float, reference: float) -> float:
    """:math:`|x - y|`; 0 when both are NaN, infinite when one is."""
    if math.isnan(flow) and math.isnan(reference):
        return 0.0
    if math.isnan(flow) or math.isnan(reference):
        return math.inf
    return abs(flow - reference)


def compare(
    config: RunConfig, data: Dataset, stats: Statistics, flow: Trace, reference: Trace
) -> Comparison:
    """Every quantity of every log point against its bound (module docstring)."""
    model = ErrorModel.of(config)
    out = Comparison()
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
        for name in QUANTITIES:
            gap = difference(ours.row[name], ref.row[name])
            out.note(name, ref.step, gap, ref.row[name], bounds[name])
    return out


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


def run_all(config: RunConfig) -> Runs:
    """The float64 flow (watching the event), a second one stopped at that event, and the
    mp flow through the log points and around the float64 event."""
    data = generate(config)
    flow_config = config.replace(engine="flow")
    engine = make_engine(flow_config, data)
    flow = trace(engine, flow_config, data, watch=True)
    assert flow.event_at is not None, "the problem must fit its noisy sample"
    at = flow.event_at
    again = trace(make_engine(flow_config, data), flow_config, data, extra_steps=(at,))
    around = (at * (1 - EVENT_OFFSET), at, at * (1 + EVENT_OFFSET))
    mp_config = config.replace(engine="mp-flow")
    mp = make_engine(mp_config, data)
    reference = trace(mp, mp_config, data, extra_steps=around, watch=True)
    K_exact = mp.K.astype(float)
    K_rounding = float(np.abs(engine.K - K_exact).max() / np.abs(K_exact).max())
    return Runs(config, data, engine.statistics, flow, again.extra[at], reference, K_rounding)


@pytest.fixture(scope="module")
def runs() -> Runs:
    return run_all(problem())


def check_agreement(runs: Runs) -> Comparison:
    result = compare(runs.config, runs.data, runs.stats, runs.flow, runs.reference)
    print(f"\nfloat64 flow vs mp-flow, n={runs.config.model.n} T={runs.config.model.T}:")
    print(result.table())
    return result


def test_float64_flow_matches_mp_flow_to_1e20_steps(runs):
    assert runs.K_rounding < 1e-13  # the neglected rounding of the statistics stays small
    assert runs.flow.points[-1].step == runs.reference.points[-1].step == 1e20
    assert len(runs.flow.points) == len(logging_steps(runs.config))
    result = check_agreement(runs)
    assert result.violations == []


def event_check(runs: Runs) -> tuple[float, float, float]:
    """(|v_ref - v_flow| at the float64 event, its bound, bound on |s_flow - s_mp|)."""
    event = noisy_margin_event(runs.data)
    at = runs.flow.event_at
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
def textbook_kernel(logits, scores, differences, labels, arithmetic=None):
    """The flow's kernel with :math:`\\gamma_t - f` computed the textbook way."""
    h = naive_logit_gradient(logits, scores, labels)
    return KernelOutput(softmax(logits), np.zeros(0), np.zeros(0), h)


def solver_ignoring_tolerances(*args, rtol, atol, **kwargs):
    """DOP853 at SciPy's default tolerances, whatever the configuration says."""
    from scipy.integrate import DOP853

    return DOP853(*args, **kwargs)


@pytest.mark.parametrize(
    ("target", "replacement"),
    [
        ("verify.sim.engines.flow.logit_gradient", textbook_kernel),
        ("verify.sim.engines.flow.DOP853", solver_ignoring_tolerances),
    ],
    ids=["textbook kernel", "tolerances not passed to the solver"],
)
def test_comparison_rejects_a_wrong_float64_flow(runs, monkeypatch, target, replacement):
    monkeypatch.setattr(target, replacement)
    flow_config = runs.config.replace(engine="flow")
    flow = trace(make_engine(flow_config, runs.data), flow_config, runs.data)
    result = compare(runs.config, runs.data, runs.stats, flow, runs.reference)
    first = result.violations[0] if result.violations else None
    print(f"\n{len(result.violations)} violations; first (quantity, step, diff, bound): {first}")
    assert result.violations
