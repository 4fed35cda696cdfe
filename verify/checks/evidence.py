r"""The simulations the checks measure: many seeds of the paper's presets, run in parallel,
each reduced to what the checks read.

Three kinds of run per (preset, seed), all on the seed's one draw and its one reduced
set-up (:func:`seed_group`): ``gd``, the paper's protocol (1000 GD steps, logged every 10
steps and at step 1, whose logits give the exact initial velocities since :math:`p(0) =
0`: :math:`a(1) = \alpha\,\dot a(0)`); ``flow``, gradient flow to a long horizon on
log-spaced points; and ``event``, the flow time at which every noisy sample is fitted,
located at full resolution by root-finding on the solver's dense output (the flow stops
there). The long flows of the presets read along their path locate that time too. Test
metrics are the population's (no finite test set).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from typing import Any

import numpy as np

from theory.foundation.data_model import GROUP_NAMES
from verify.output.tables import number
from verify.sim.config import RunConfig, preset
from verify.sim.history import History


def noisy_margin_event(data: Any) -> Any:
    """``min`` over noisy samples of :math:`y_i f_i`, a function of the training logits."""
    from verify.sim.kernels import softmax

    noisy = data.noisy

    def smallest_noisy_margin(logits: np.ndarray) -> float:
        outputs = (softmax(logits) * data.train_scores).sum(axis=-1)
        return float((data.y_train * outputs)[noisy].min()) if noisy.any() else -1.0

    return smallest_noisy_margin


def run_record(result: Any, noisy_fitted_at: float | None) -> dict[str, Any]:
    """A finished run reduced to the arrays the checks read."""
    data = result.data
    return {
        "status": result.status.value,
        "message": result.message,
        "steps": result.steps,
        "history": result.history.rows(),
        "logits": np.stack(result.train_logits),
        "noisy": data.noisy,
        "groups": data.groups,
        "y_train": data.y_train,
        "scores": data.train_scores,
        "noisy_fitted_at": noisy_fitted_at,
        "alpha": result.config.training.alpha,
    }


def fit_time(config: RunConfig, data: Any, setup: Any, statistics: Any) -> float | None:
    """The flow time (in steps) at which every noisy sample is fitted, or ``None`` when
    that does not happen within ``config``'s horizon: the flow watching the event, one
    solver step at a time, stopped once the event is located (the steps after it cannot
    move it, so the time is the one a run to the horizon finds)."""
    from verify.runtime.threads import single_blas_thread
    from verify.sim.engines.base import NonFiniteError
    from verify.sim.engines.flow import FlowEngine

    engine = FlowEngine(config, data, setup=setup, statistics=statistics)
    event = engine.watch("noisy fitted", noisy_margin_event(data))
    horizon = config.training.steps
    try:
        with single_blas_thread():
            while event.at is None and engine.steps_done < horizon:
                engine.step(horizon)
    except NonFiniteError:
        pass  # a run that stops early keeps what it located, as simulate() does
    return event.at


def finished(result: Any) -> Any:
    """``result``, unless Ctrl-C stopped it (a cut-short run is not evidence: the
    interrupt goes on to stop the check)."""
    if result.status.value == "interrupted":
        raise KeyboardInterrupt(result.message)
    return result


def seed_group(point: Mapping[str, Any]) -> dict[str, list[Any]]:
    """Worker: for a group of seeds of one preset, drawn once each and set up once each
    (the reduced set-up every kind of run on that seed reads; a seed whose only run is
    the fit time's, the kernel alone, :func:`~verify.checks.setups.kernel_statistics`),
    the GD runs (trained together on their own statistics), the long flow runs (watching
    when every noisy sample is fitted where the plan reads it, ``fit_time``), and those
    times alone (:func:`fit_time`). Each kind runs on a prefix of the group's seeds."""
    from verify.checks.setups import kernel_statistics
    from verify.sim.batch import simulate_independent
    from verify.sim.data import generate
    from verify.sim.engines.base import reduced_setup
    from verify.sim.engines.flow import FlowEngine
    from verify.sim.simulate import simulate

    draws = [RunConfig.from_dict(values) for values in point["draws"]]
    datas = [generate(config) for config in draws]
    recorded = max(len(point["gd"]), len(point["flow"]))  # seeds whose runs record the query
    pairs = list(zip(draws, datas, strict=True))
    setups = [reduced_setup(c, data) for c, data in pairs[:recorded]]
    statistics = [setup.statistics() for setup in setups]
    statistics += [kernel_statistics(c, data) for c, data in pairs[recorded:]]

    def flow(values: Mapping[str, Any], index: int) -> dict[str, Any]:
        config = RunConfig.from_dict(values)
        engine = FlowEngine(config, datas[index], setup=setups[index], statistics=statistics[index])
        watched = point["fit_time"]
        event = engine.watch("noisy fitted", noisy_margin_event(datas[index])) if watched else None
        result = finished(simulate(config, data=datas[index], engine=engine))
        return run_record(result, event.at if event is not None else None)

    def event(values: Mapping[str, Any], index: int) -> float | None:
        config = RunConfig.from_dict(values)
        setup = setups[index] if index < recorded else None
        return fit_time(config, datas[index], setup, statistics[index])

    gd_configs = [RunConfig.from_dict(values) for values in point["gd"]]
    count = len(gd_configs)
    gd = simulate_independent(gd_configs, datas[:count], statistics[:count]) if count else []
    return {
        "gd": [run_record(finished(result), None) for result in gd],
        "flow": [flow(values, index) for index, values in enumerate(point["flow"])],
        "event": [event(values, index) for index, values in enumerate(point["event"])],
    }


def boundary_scan(point: Mapping[str, Any]) -> dict[str, Any]:
    r"""Worker: for one seed, a grid of :math:`\|\mu\|` at the benign preset's (d, n), all
    sharing the seed's draws (batched): the mean initial noisy gap velocity
    :math:`\dot\Gamma_{W_-,R}(0)` and the fraction of noisy samples fitted after 1000 steps."""
    from verify.sim.batch import simulate_group

    configs = [RunConfig.from_dict(values) for values in point["configs"]]
    results = simulate_group(configs)
    velocities, fitted = [], []
    for result in results:
        run = Run.from_record(run_record(result, None))
        velocities.append(float(run.initial_gap_velocities("W-", "R", noisy=True).mean()))
        fitted.append(float(run.history["noisy_fitted"][-1]))
    return {
        "mu": [c.model.mu_norm for c in configs],
        "noisy_velocity": velocities,
        "noisy_fitted": fitted,
    }


@dataclass(frozen=True)
class Run:
    """One finished evidence run, as arrays."""

    steps: np.ndarray
    history: History
    logits: np.ndarray  # (log points, n, T)
    noisy: np.ndarray
    groups: np.ndarray
    y_train: np.ndarray
    scores: np.ndarray
    noisy_fitted_at: float | None
    alpha: float

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Run:
        return cls(
            steps=np.asarray(record["steps"], dtype=float),
            history=History.from_rows(record["history"]),
            logits=np.asarray(record["logits"], dtype=float),
            noisy=np.asarray(record["noisy"], dtype=bool),
            groups=np.asarray(record["groups"], dtype=int),
            y_train=np.asarray(record["y_train"], dtype=float),
            scores=np.asarray(record["scores"], dtype=float),
            noisy_fitted_at=record["noisy_fitted_at"],
            alpha=record["alpha"],
        )

    def untrained(self, population: Mapping[str, float]) -> Run:
        """This run as if it never trained: every log point is its step-0 point (all logits
        0, uniform attention), the population columns those of the query q = 0."""
        history = History.from_columns(
            {
                key: np.full_like(values, population.get(key, values[0]))
                for key, values in self.history.items()
            }
        )
        logits = np.broadcast_to(self.logits[0], self.logits.shape).copy()
        return replace(self, history=history, logits=logits, noisy_fitted_at=None)

    @cached_property
    def final_row(self) -> dict[str, float]:
        """The last history row (made once: the checks and their power read it often)."""
        return {key: values[-1] for key, values in self.history.items()}

    def at(self, step: float) -> int:
        """Index of the log point ``step``."""
        return int(np.flatnonzero(self.steps == step)[0])

    def selected(self, index: int = -1) -> np.ndarray:
        """Group name of each training sample's argmax token at log point ``index``, or
        ``"tie"`` when the largest logit is shared (as at step 0, where every logit is 0:
        an untrained model selects nothing)."""
        logits = self.logits[index]
        top = logits.max(axis=-1, keepdims=True)
        names = np.array([GROUP_NAMES[g] for g in self.groups[np.argmax(logits, axis=-1)]])
        return np.where((logits == top).sum(axis=-1) > 1, "tie", names)

    def initial_gap_velocities(self, leader: str, other: str, noisy: bool) -> np.ndarray:
        r"""Per sample, :math:`\dot a_{\text{leader}} - \dot a_{\text{other}}` at
        :math:`\tau = 0` (group means), from the logits after one step."""
        velocities = self.logits[self.at(1.0)] / self.alpha
        rows = self.noisy if noisy else ~self.noisy
        lead = GROUP_NAMES.index(leader)
        rest = GROUP_NAMES.index(other)
        return velocities[rows][:, self.groups == lead].mean(axis=1) - velocities[rows][
            :, self.groups == rest
        ].mean(axis=1)


#: The kinds of run a check can need: ``gd`` (1000 GD steps), ``flow`` (gradient flow to a
#: long horizon), ``event`` (a short flow watching "every noisy sample is fitted") and
#: ``scan`` (a boundary scan over the signal at the benign preset's (d, n)).
RUN_KINDS = ("gd", "flow", "event", "scan")


@dataclass(frozen=True)
class Need:
    """Runs a check needs: ``seeds`` runs of ``kind`` (:data:`RUN_KINDS`); for a flow,
    ``path`` when it reads the run along its path: the population metrics at every log
    point, not only the last, and the time every noisy sample is fitted."""

    kind: str
    seeds: int
    path: bool = False

    def __post_init__(self) -> None:
        if self.kind not in RUN_KINDS:
            raise ValueError(f"kind={self.kind!r} is invalid: allowed one of {RUN_KINDS}")
        if self.seeds < 0:
            raise ValueError(f"seeds={self.seeds!r} is invalid: allowed a count >= 0")


@dataclass(frozen=True)
class EvidencePlan:
    """Which runs the checks need: presets, seeds per kind, the flow's horizon
    (:meth:`from_needs` derives it from the checks' :class:`Need`)."""

    presets: tuple[str, ...] = ("harmful", "benign", "not-overfitting")
    gd_seeds: int = 32
    flow_seeds: int = 12
    flow_steps: int = 10**12
    flow_points: int = 49
    scan_seeds: int = 0
    #: Seeds per evidence point: one, so that points are small (the workers finish
    #: together, and an interrupted check keeps all but the points in flight); the runs on
    #: a seed give the same numbers in a group of any size.
    group_size: int = 1
    event_seeds: tuple[tuple[str, int], ...] = (("harmful", 32), ("benign", 64))
    event_steps: int = 10**4
    #: Presets whose flows record the population metrics at every log point and the time
    #: every noisy sample is fitted (the delayed generalisation reads the test loss along
    #: the path against that time); the others record them at the end only and do not
    #: watch for it (watching evaluates the solver's dense output at every step).
    path_presets: tuple[str, ...] = ("benign",)
    scan_mu: tuple[float, ...] = tuple(float(v) for v in np.geomspace(5.0, 640.0, 29))

    @classmethod
    def from_needs(
        cls, presets: Sequence[str], needs: Sequence[tuple[str, Need]], **horizons: Any
    ) -> EvidencePlan:
        """The plan for ``presets`` that meets every (preset, need) of ``needs``: GD and
        flow seeds are the largest count any check needs (every preset runs as many), event
        seeds the largest per preset, scan seeds the largest over all; the presets whose
        flows record the population metrics along the path are those a ``path`` need names.
        ``horizons`` sets the remaining fields (flow horizon and points, group size, ...)."""

        def most(kind: str, preset: str | None = None) -> int:
            return max(
                (n.seeds for p, n in needs if n.kind == kind and preset in (None, p)), default=0
            )

        events = tuple((p, most("event", p)) for p in presets if most("event", p))
        path = tuple(p for p in presets if any(n.path for q, n in needs if q == p))
        return cls(
            presets=tuple(presets),
            gd_seeds=most("gd"),
            flow_seeds=most("flow"),
            scan_seeds=most("scan"),
            event_seeds=events,
            path_presets=path,
            **horizons,
        )

    def meets(self, preset: str, need: Need) -> bool:
        """Whether the plan runs at least one seed of what ``need`` asks of ``preset``."""
        if preset not in self.presets:
            return False
        if need.kind == "scan":
            return self.scan_seeds > 0
        return self.seeds(preset, need.kind) > 0 and (not need.path or preset in self.path_presets)

    def scan_configs(self, seed: int) -> list[RunConfig]:
        """The benign preset's (d, n) over :attr:`scan_mu`, 1000 GD steps, test size 0."""
        return [
            preset(
                "benign",
                mu_norm=mu,
                seed=seed,
                test_size=0,
                steps=1000,
                log_every=1000,
                log_geometric=2,
                population="none",
            )
            for mu in self.scan_mu
        ]

    def config(self, name: str, kind: str, seed: int) -> RunConfig:
        """The run of ``kind``: ``gd`` (1000 steps), ``flow`` (to :attr:`flow_steps`) or
        ``event`` (a flow to :attr:`event_steps`, recorded at its ends only)."""
        if kind == "event":
            return preset(
                name,
                seed=seed,
                test_size=0,
                engine="flow",
                steps=self.event_steps,
                log_every=self.event_steps,
                log_geometric=0,
                population="none",
            )
        if kind == "gd":
            return preset(
                name,
                seed=seed,
                test_size=0,
                steps=1000,
                log_every=1000,
                log_geometric=16,
                population="final",
            )
        return preset(
            name,
            seed=seed,
            test_size=0,
            engine="flow",
            steps=self.flow_steps,
            log_every=self.flow_steps,
            log_geometric=self.flow_points,
            population="all" if name in self.path_presets else "final",
        )

    def seeds(self, name: str, kind: str) -> int:
        """How many seeds of preset ``name`` run ``kind``."""
        if kind == "event":
            return dict(self.event_seeds).get(name, 0)
        return self.gd_seeds if kind == "gd" else self.flow_seeds

    def points(self) -> list[dict[str, Any]]:
        """Seed groups of :attr:`group_size` per preset (each kind on its prefix of the
        seeds; ``fit_time``: whether its long flows locate when every noisy sample is
        fitted), then one boundary scan per scan seed: the same point objects at every
        call (made once per plan; read them, do not change them)."""
        return list(_plan_points(self))

    def _points(self) -> list[dict[str, Any]]:
        bases: dict[tuple[str, str], dict[str, Any]] = {}

        def config(name: str, kind: str, seed: int) -> dict[str, Any]:
            """``self.config(name, kind, seed).to_dict()``: built once per (preset, kind);
            the seed is the dictionary's own field, which nothing else depends on."""
            if (name, kind) not in bases:
                bases[(name, kind)] = self.config(name, kind, 0).to_dict()
            return {**bases[(name, kind)], "seed": seed}

        groups = []
        for name in self.presets:
            total = max(self.seeds(name, kind) for kind in ("gd", "flow", "event"))
            for first in range(0, total, self.group_size):
                seeds = range(first, min(first + self.group_size, total))
                groups.append(
                    {
                        "preset": name,
                        "kind": "seeds",
                        "fit_time": name in self.path_presets,
                        "draws": [config(name, "gd", seed) for seed in seeds],
                        **{
                            kind: [
                                config(name, kind, seed)
                                for seed in seeds
                                if seed < self.seeds(name, kind)
                            ]
                            for kind in ("gd", "flow", "event")
                        },
                    }
                )
        grid = [c.to_dict() for c in self.scan_configs(0)] if self.scan_seeds else []
        scans = [
            {
                "preset": "benign",
                "kind": "scan",
                "seed": seed,
                "configs": [{**values, "seed": seed} for values in grid],
            }
            for seed in range(self.scan_seeds)
        ]
        return groups + scans


@lru_cache(maxsize=16)
def _plan_points(plan: EvidencePlan) -> tuple[dict[str, Any], ...]:
    return tuple(plan._points())


@dataclass
class Evidence:
    """The finished runs by (preset, kind), in seed order."""

    plan: EvidencePlan
    runs: dict[tuple[str, str], list[Run]] = field(default_factory=dict)
    scans: list[dict[str, Any]] = field(default_factory=list)
    #: Per preset, in seed order: the flow time (in steps) at which every noisy sample is
    #: fitted, or None when that does not happen within the event horizon.
    events: dict[str, list[float | None]] = field(default_factory=dict)
    #: What :meth:`derived` computed, by key.
    _derived: dict[Any, np.ndarray] = field(default_factory=dict, repr=False, compare=False)

    def __call__(self, name: str, kind: str) -> list[Run]:
        return self.runs[(name, kind)]

    def derived(self, key: Any, compute: Callable[[], np.ndarray]) -> np.ndarray:
        """``compute()``, a function of this evidence named by ``key``, computed once (a
        check's power measures it again at every trial claim); read-only."""
        if key not in self._derived:
            values = np.array(compute(), dtype=float)
            values.setflags(write=False)
            self._derived[key] = values
        return self._derived[key]

    @classmethod
    def from_records(
        cls, plan: EvidencePlan, points: Sequence[Mapping[str, Any]], records: Sequence[Any]
    ) -> Evidence:
        """The evidence of ``plan`` from each point's record (``points`` in plan order, as
        :meth:`EvidencePlan.points` gives them, and their records)."""
        evidence = cls(plan)
        for point, record in zip(points, records, strict=True):
            if point["kind"] == "scan":
                evidence.scans.append({key: [number(v) for v in record[key]] for key in record})
                continue
            for kind in ("gd", "flow"):
                evidence.runs.setdefault((point["preset"], kind), []).extend(
                    Run.from_record(run) for run in record[kind]
                )
            evidence.events.setdefault(point["preset"], []).extend(record["event"])
        return evidence


def untrained(evidence: Evidence) -> Evidence:
    """The evidence of models that never trained (:meth:`Run.untrained`; boundary scans
    with zero velocity and nothing fitted): a perturbed simulation that every check of
    what training does must reject."""
    from verify.sim.population import population_columns

    out = Evidence(evidence.plan)
    for (name, kind), runs in evidence.runs.items():
        population = population_columns(preset(name).model, 0.0, np.zeros(2), has_signal=True)
        out.runs[(name, kind)] = [run.untrained(population) for run in runs]
    out.events = {name: [None] * len(times) for name, times in evidence.events.items()}
    out.scans = [
        {**scan, "noisy_velocity": [0.0] * len(scan["mu"]), "noisy_fitted": [0.0] * len(scan["mu"])}
        for scan in evidence.scans
    ]
    return out


def evidence_point(point: Mapping[str, Any]) -> dict[str, Any]:
    """Worker: a seed group or a boundary scan, by the point's kind."""
    return boundary_scan(point) if point["kind"] == "scan" else seed_group(point)


def stack(runs: Sequence[Run], key: str, index: int = -1) -> np.ndarray:
    """History column ``key`` at log point ``index`` of every run."""
    return np.array([run.history[key][index] for run in runs])


__all__ = [
    "Evidence",
    "EvidencePlan",
    "Need",
    "RUN_KINDS",
    "Run",
    "seed_group",
    "run_record",
    "evidence_point",
    "boundary_scan",
    "noisy_margin_event",
    "stack",
    "untrained",
]
