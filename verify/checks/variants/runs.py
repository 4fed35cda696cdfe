r"""The simulations the variant checks measure: per preset and seed, one run of each variant
the checks need, all on the seed's draws (one set-up with :math:`W_0`, shared).

Run kinds (:data:`KINDS`), each the preset with a few fields changed:

* GD, the paper's protocol (1000 steps, logged at 0, 1, 16 geometric points and the end, a
  clean test set of :data:`TEST_SIZE`): ``base``; ``spread`` (:math:`\rho_i \sim U[\rho - s,
  \rho + s]`, s = :data:`SPREAD`); ``one-step-train`` and ``one-step-clean`` (the one-step
  head on the training set, or on :data:`HEAD_SET` separate clean examples); ``ffn`` (the
  FFN readout); ``trained`` (the head trained with W and p at the step alpha);
* gradient flow to :math:`10^{12}` steps (49 geometric points): ``flow`` (the base model),
  ``flow-exponential`` and ``flow-squared`` (the losses), ``flow-eta-0.05`` and
  ``flow-eta-0.1`` (less label noise);
* boundary scans at the benign preset's (d, n) over a grid of :math:`\|\mu\|` (1000 batched
  GD steps, population test metrics at the end): ``scan`` and ``scan-spread``.

Every run of a seed shares its noise tokens and :math:`W_0` (their products are computed
once, :func:`verify.sim.batch.shared_setup`); each variant adds its own signal, head and
readout. A trained head's run also records its first step (the exact initial velocities of
the head and of the attention, since :math:`p(0) = 0` and :math:`c(0) = 0`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from verify.checks.evidence import Run, run_record
from verify.sim.config import RunConfig, preset

#: The spread s of each example's weak-relevance factor (the largest the paper's factor
#: 0.1 allows: every example's factor stays at or above 0).
SPREAD = 0.1
#: The one-step head's separate clean set.
HEAD_SET = 1000
#: Clean test sequences of a GD run (the variants' test metrics come from a test set).
TEST_SIZE = 200
FLOW_STEPS = 10**12


@dataclass(frozen=True)
class RunKind:
    """A kind of run: GD (``gd``), gradient flow (``flow``) or a boundary scan (``scan``),
    and the fields it changes in the preset."""

    name: str
    integrates: str
    changes: Mapping[str, Any] = field(default_factory=dict)


KINDS: dict[str, RunKind] = {
    kind.name: kind
    for kind in (
        RunKind("base", "gd"),
        RunKind("spread", "gd", {"rho_spread": SPREAD}),
        RunKind("one-step-train", "gd", {"head": "one-step"}),
        RunKind("one-step-clean", "gd", {"head": "one-step", "head_n": HEAD_SET}),
        RunKind("ffn", "gd", {"readout": "ffn"}),
        RunKind("trained", "gd", {"head": "trained"}),
        RunKind("flow", "flow"),
        RunKind("flow-exponential", "flow", {"loss": "exponential"}),
        RunKind("flow-squared", "flow", {"loss": "squared"}),
        RunKind("flow-eta-0.05", "flow", {"eta": 0.05}),
        RunKind("flow-eta-0.1", "flow", {"eta": 0.1}),
        RunKind("scan", "scan"),
        RunKind("scan-spread", "scan", {"rho_spread": SPREAD}),
    )
}


def kind_config(name: str, kind: str, seed: int, **more: Any) -> RunConfig:
    """The run of ``kind`` for preset ``name`` and ``seed``."""
    entry = KINDS[kind]
    if entry.integrates == "flow":
        schedule: dict[str, Any] = {
            "engine": "flow",
            "steps": FLOW_STEPS,
            "log_every": FLOW_STEPS,
            "log_geometric": 49,
            "test_size": 0,
        }
    elif entry.integrates == "gd":
        schedule = {"steps": 1000, "log_every": 1000, "log_geometric": 16, "test_size": TEST_SIZE}
    else:
        schedule = {"steps": 1000, "log_every": 1000, "log_geometric": 2, "test_size": 0}
    return preset(name, seed=seed, population="final", **schedule, **entry.changes, **more)


@dataclass(frozen=True)
class Need:
    """Runs a check needs: ``seeds`` runs of ``kind`` (:data:`KINDS`)."""

    kind: str
    seeds: int

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind={self.kind!r} is invalid: allowed one of {tuple(KINDS)}")


@dataclass(frozen=True)
class VariantPlan:
    """Which runs to make: ``(preset, kind, seeds)`` triples (a scan's preset is the benign
    one, whose (d, n) it scans) and the scans' grid of :math:`\\|\\mu\\|`."""

    runs: tuple[tuple[str, str, int], ...]
    scan_mu: tuple[float, ...] = tuple(float(v) for v in np.geomspace(4.0, 640.0, 23))

    @classmethod
    def from_needs(cls, needs: Sequence[tuple[str, Need]]) -> VariantPlan:
        """The most seeds any check needs of each (preset, kind)."""
        most: dict[tuple[str, str], int] = {}
        for name, need in needs:
            most[(name, need.kind)] = max(most.get((name, need.kind), 0), need.seeds)
        return cls(tuple((name, kind, seeds) for (name, kind), seeds in most.items() if seeds))

    def seeds(self, name: str, kind: str) -> int:
        return max((s for p, k, s in self.runs if (p, k) == (name, kind)), default=0)

    def meets(self, name: str, need: Need) -> bool:
        return self.seeds(name, need.kind) >= 1

    def points(self) -> list[dict[str, Any]]:
        """One point a (preset, seed) with the run kinds of that seed, then one a scan seed."""
        points = []
        presets = dict.fromkeys(p for p, k, _ in self.runs if KINDS[k].integrates != "scan")
        for name in presets:
            kinds = [(k, s) for p, k, s in self.runs if p == name and KINDS[k].integrates != "scan"]
            for seed in range(max(s for _, s in kinds)):
                chosen = [k for k, s in kinds if seed < s]
                points.append({"kind": "seed", "preset": name, "seed": seed, "kinds": chosen})
        scans = [(k, s) for p, k, s in self.runs if KINDS[k].integrates == "scan"]
        for seed in range(max((s for _, s in scans), default=0)):
            chosen = [k for k, s in scans if seed < s]
            points.append({"kind": "scan", "seed": seed, "kinds": chosen, "mu": list(self.scan_mu)})
        return points


def head_start(config: RunConfig, data: Any, engine: Any) -> dict[str, Any]:
    r"""A trained head's first GD step (``engine`` after it): per training sample the margin
    velocities through the head, :math:`y_i\frac1T\sum_t\dot\gamma_{i,t}`, and through the
    attention, :math:`y_i\sum_t\dot s_{i,t}\gamma_{i,t}` (flow time; exact to
    :math:`O(\alpha)`), and the head's velocity along :math:`u = (\mu_{+1} - \mu_{-1})/\|
    \cdot\|` and across it."""
    from verify.sim.kernels import softmax

    alpha, T = config.training.alpha, data.T
    moved = (engine.token_scores() - data.train_scores) / alpha
    attention = (softmax(engine.train_logits()) - 1.0 / T) / alpha
    direction = data.mu_plus - data.mu_minus
    direction = direction / np.linalg.norm(direction)
    step = (engine.head() - data.nu) / alpha
    along = float(step @ direction)
    return {
        "head_velocity": data.y_train * moved.mean(axis=1),
        "attention_velocity": data.y_train * (attention * data.train_scores).sum(axis=1),
        "head_along": along,
        "head_across": math.sqrt(max(float(step @ step) - along * along, 0.0)),
    }


def seed_runs(point: Mapping[str, Any]) -> dict[str, Any]:
    """Worker: every run kind of one (preset, seed), on the seed's shared draws."""
    from verify.sim.batch import shared_setup
    from verify.sim.data import generate, signal_part
    from verify.sim.engines.flow import FlowEngine
    from verify.sim.engines.reduced import ReducedEngine
    from verify.sim.simulate import simulate

    name, seed = point["preset"], point["seed"]
    setup = shared_setup(kind_config(name, "base", seed))
    out: dict[str, Any] = {}
    for kind in point["kinds"]:
        config = kind_config(name, kind, seed)
        data = generate(config, reuse_noise=True)
        signal = signal_part(data.y_clean, config.model, data.rho_train).reshape(-1, 2)
        statistics = setup.statistics(signal)
        engine_class = FlowEngine if KINDS[kind].integrates == "flow" else ReducedEngine
        engine = engine_class(config, data, setup=setup, statistics=statistics, signal=signal)
        result = simulate(config, data=data, engine=engine)
        extras = dict(result.head_summary())
        if config.training.head == "trained":
            first = ReducedEngine(config, data, setup=setup, statistics=statistics, signal=signal)
            first.advance_to(1)
            extras.update(head_start(config, data, first))
        out[kind] = {"run": run_record(result, None), "extras": extras}
    return out


def scan_runs(point: Mapping[str, Any]) -> dict[str, Any]:
    r"""Worker: for one seed, each scan kind over the grid of :math:`\|\mu\|` at the benign
    preset's (d, n), batched on the seed's draws: the mean initial noisy gap velocity
    :math:`\dot\Gamma_{W_-,R}(0)`, the share of noisy samples fitted and the population share
    of test sequences selecting R after 1000 steps."""
    from verify.sim.batch import simulate_group

    kinds, seed = point["kinds"], point["seed"]
    configs = [kind_config("benign", k, seed, mu_norm=mu) for k in kinds for mu in point["mu"]]
    results = simulate_group(configs)
    out: dict[str, Any] = {}
    for index, kind in enumerate(kinds):
        chosen = results[index * len(point["mu"]) : (index + 1) * len(point["mu"])]
        runs = [Run.from_record(run_record(result, None)) for result in chosen]
        out[kind] = {
            "mu": list(point["mu"]),
            "noisy_velocity": [
                float(run.initial_gap_velocities("W-", "R", noisy=True).mean()) for run in runs
            ],
            "noisy_fitted": [float(run.history["noisy_fitted"][-1]) for run in runs],
        }
    return out


def variant_point(point: Mapping[str, Any]) -> dict[str, Any]:
    """Worker: a seed's runs or a scan, by the point's kind."""
    return scan_runs(point) if point["kind"] == "scan" else seed_runs(point)


@dataclass
class VariantEvidence:
    """The finished runs by (preset, kind) in seed order, their extras (the head's summary, a
    trained head's first step) and the scans by kind in seed order."""

    plan: VariantPlan
    runs: dict[tuple[str, str], list[Run]] = field(default_factory=dict)
    extras: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    scans: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def __call__(self, name: str, kind: str) -> list[Run]:
        return self.runs[(name, kind)]

    def extra(self, name: str, kind: str) -> list[dict[str, Any]]:
        return self.extras[(name, kind)]

    @classmethod
    def collect(cls, plan: VariantPlan, executor: Any, progress: Any = None) -> VariantEvidence:
        """Run every point of ``plan`` on ``executor`` (``map_unordered``)."""
        points = plan.points()
        records: list[Any] = [None] * len(points)
        for done, (index, record) in enumerate(
            executor.map_unordered(variant_point, points), start=1
        ):
            records[index] = record
            if progress:
                progress(done, len(points))
        evidence = cls(plan)
        for point, record in zip(points, records, strict=True):
            for kind, value in record.items():
                if point["kind"] == "scan":
                    evidence.scans.setdefault(kind, []).append(value)
                    continue
                key = (point["preset"], kind)
                evidence.runs.setdefault(key, []).append(Run.from_record(value["run"]))
                evidence.extras.setdefault(key, []).append(value["extras"])
        return evidence


def untrained(evidence: VariantEvidence) -> VariantEvidence:
    """The evidence of models that never trained: every run's log points its step-0 point
    (:meth:`verify.checks.evidence.Run.untrained`, population metrics as recorded then), the
    head as it started, a trained head's first step without motion, and scans with zero
    velocity and nothing fitted or selected."""
    out = VariantEvidence(evidence.plan)
    for key, runs in evidence.runs.items():
        out.runs[key] = [run.untrained(run.history[0]) for run in runs]
    for key, extras in evidence.extras.items():
        out.extras[key] = [still(extra) for extra in extras]
    for kind, scans in evidence.scans.items():
        out.scans[kind] = [
            {**scan, **{k: [0.0] * len(scan["mu"]) for k in scan if k != "mu"}} for scan in scans
        ]
    return out


def still(extra: Mapping[str, Any]) -> dict[str, Any]:
    """A run's extras had it not moved: the head at its start, no velocity."""
    out = {key: value for key, value in extra.items() if not key.endswith("_start")}
    for key in ("head_alignment", "head_scale"):
        if f"{key}_start" in extra:
            out[key] = out[f"{key}_start"] = extra[f"{key}_start"]
    for key in ("head_velocity", "attention_velocity"):
        if key in extra:
            out[key] = np.zeros_like(np.asarray(extra[key], dtype=float))
    for key in ("head_along", "head_across"):
        if key in extra:
            out[key] = 0.0
    return out


__all__ = [
    "SPREAD",
    "HEAD_SET",
    "TEST_SIZE",
    "KINDS",
    "RunKind",
    "Need",
    "VariantPlan",
    "VariantEvidence",
    "kind_config",
    "seed_runs",
    "scan_runs",
    "variant_point",
    "untrained",
]
