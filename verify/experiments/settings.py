"""The settings of every experiment, as validated data.

Each field carries its constraint and help text; the command line builds its flags from
them.

Kept apart from the experiments themselves so that reading them (``--help``) imports no
numerical library.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from theory.foundation.validation import (
    Integer,
    Options,
    Real,
    Validated,
    parameter,
    require,
)
from theory.foundation.validation import Sequence as SequenceOf
from verify.measures.regimes import RegimeThresholds
from verify.sim.config import PRESETS, RunConfig, preset
from verify.sim.engines.registry import REGISTRY, engine_help, engine_traits

#: The presets as (name, d, ||mu||).
PAPER_PRESETS = tuple((name, values["d"], values["mu_norm"]) for name, values in PRESETS.items())
#: The paper's phase-diagram grid: 39 x 39.
PHASE_D = tuple(int(round(250 + 125 * k)) for k in range(39))
PHASE_MU = tuple(5 + 2.5 * k for k in range(39))


@dataclass(frozen=True)
class PhaseDiagramSettings(Validated):
    """The phase diagram: final train and test metrics over a (d, ||mu||) grid."""

    d_values: tuple[int, ...] = parameter(
        PHASE_D, SequenceOf(Integer(2), unique=True), "values of d (columns)"
    )
    mu_values: tuple[float, ...] = parameter(
        PHASE_MU, SequenceOf(Real(0.0, 1e6), unique=True), "values of ||mu|| (rows)"
    )
    steps: int = parameter(1000, Integer(1), "GD steps per run")
    seeds: int = parameter(1, Integer(1, 10_000), "seeds per cell (0..K-1)")
    test_threshold: float = parameter(
        0.95,
        Real(0.0, 1.0, closed="both"),
        "test accuracy from which an overfitting run counts as benign (the practical view)",
    )

    @classmethod
    def quick(cls) -> PhaseDiagramSettings:
        """A 5 x 5 grid at small d, 300 steps (for tests)."""
        return cls(
            d_values=(100, 200, 300, 400, 500),
            mu_values=(5.0, 28.75, 52.5, 76.25, 100.0),
            steps=300,
        )

    def config(self, d: int, mu_norm: float, seed: int) -> RunConfig:
        """A cell's run: the benign preset at (d, ||mu||), population test metrics only."""
        return preset(
            "benign",
            d=d,
            mu_norm=mu_norm,
            seed=seed,
            steps=self.steps,
            test_size=0,
            log_every=self.steps,
            log_geometric=0,
            population="final",
        )


@dataclass(frozen=True)
class ReproduceSettings(Validated):
    """What ``reproduce`` runs: the presets over seeds, and the phase-diagram grid."""

    seeds: int = parameter(5, Integer(1, 10_000), "seeds per preset (0..K-1)")
    steps: int = parameter(1000, Integer(1), "GD steps per run")
    test_size: int = parameter(1000, Integer(1), "clean test sequences per run")
    trajectory_log_every: int = parameter(10, Integer(1), "steps between logged points")
    trajectory_log_geometric: int = parameter(
        40, Integer(0, 10_000), "extra geometrically spaced log points"
    )
    phase_d: tuple[int, ...] = parameter(
        PHASE_D, SequenceOf(Integer(2), unique=True), "phase-diagram values of d"
    )
    phase_mu: tuple[float, ...] = parameter(
        PHASE_MU, SequenceOf(Real(0.0, 1e6), unique=True), "phase-diagram values of ||mu||"
    )
    phase_seeds: int = parameter(1, Integer(1, 10_000), "seeds per phase-diagram cell")
    test_threshold: float = parameter(
        0.95,
        Real(0.0, 1.0, closed="both"),
        "test accuracy from which an overfitting run counts as benign (the practical view)",
    )
    presets: tuple[tuple[str, int, float], ...] = PAPER_PRESETS

    def check_relations(self) -> None:
        names = [name for name, _, _ in self.presets]
        require(set(names) <= set(PRESETS), "presets", names, f"names among {tuple(PRESETS)}")

    @classmethod
    def quick(cls) -> ReproduceSettings:
        """Low resolution for tests: small d, 300 steps, a 5 x 5 grid, 2 seeds."""
        return cls(
            seeds=2,
            presets=(("harmful", 600, 3.0), ("benign", 300, 10.0), ("not-overfitting", 150, 40.0)),
            steps=300,
            test_size=200,
            trajectory_log_every=10,
            trajectory_log_geometric=10,
            phase_d=(100, 200, 300, 400, 500),
            phase_mu=(5.0, 28.75, 52.5, 76.25, 100.0),
        )

    @property
    def thresholds(self) -> RegimeThresholds:
        return RegimeThresholds(test_accuracy=self.test_threshold)

    def preset_config(self, name: str, d: int, mu_norm: float, seed: int) -> RunConfig:
        return preset(
            name,
            d=d,
            mu_norm=mu_norm,
            seed=seed,
            steps=self.steps,
            test_size=self.test_size,
            log_every=self.trajectory_log_every,
            log_geometric=self.trajectory_log_geometric,
        )

    @property
    def phase_diagram(self) -> PhaseDiagramSettings:
        return PhaseDiagramSettings(
            d_values=self.phase_d,
            mu_values=self.phase_mu,
            steps=self.steps,
            seeds=self.phase_seeds,
            test_threshold=self.test_threshold,
        )


BRACKET = SequenceOf(Real(0.0, 1e6), min_length=2)


def sweep_engines() -> tuple[str, ...]:
    """The engines a boundary sweep can use: those in float64 (an mpmath run is too slow to
    repeat over seeds and bisection rounds) whose step costs the same at every d (the
    sweep's d reaches 8000 and beyond: a d x d step is out)."""
    config = preset("benign")
    wider = config.replace(d=2 * config.model.d)
    return tuple(
        traits.name
        for traits in REGISTRY
        if traits.precision == "float64" and traits.cost(config).step == traits.cost(wider).step
    )


#: Engines of the boundary sweep, and its rules for harmful|benign.
BOUNDARY_ENGINES = sweep_engines()
FLOW_SWEEP_ENGINES = tuple(
    name for name in BOUNDARY_ENGINES if engine_traits(name).integrates == "flow"
)
BOUNDARY_RULES = ("selection", "accuracy")
#: Most GD steps per run of a stepping engine (reduced, dfree).
MAX_GD_STEPS = 10**7


@dataclass(frozen=True)
class BoundarySettings(Validated):
    """Sweep over ``d_values`` at ``n_fixed`` and over ``n_values`` at ``d_fixed``."""

    d_values: tuple[int, ...] = parameter(
        (500, 1000, 2000, 4000, 8000),
        SequenceOf(Integer(2), min_length=0, unique=True),
        "values of d of the d-sweep (empty: no d-sweep)",
    )
    n_values: tuple[int, ...] = parameter(
        (10, 20, 40, 80),
        SequenceOf(Integer(1), min_length=0, unique=True),
        "values of n of the n-sweep (empty: no n-sweep)",
    )
    n_fixed: int = parameter(20, Integer(1), "n of the d-sweep")
    d_fixed: int = parameter(2000, Integer(2), "d of the n-sweep")
    seeds: int = parameter(5, Integer(1, 10_000), "seeds per (d, n) (0..K-1)")
    steps: int = parameter(
        1000, Integer(1, 10**13), "training steps per run (above 1e7 only with a flow engine)"
    )
    engine: str = parameter(
        "reduced",
        Options(BOUNDARY_ENGINES),
        engine_help(BOUNDARY_ENGINES),
    )
    test_size: int = parameter(
        1000, Integer(1), "clean test sequences per run (none with the d-free engines)"
    )
    rule: str = parameter(
        "selection",
        Options(BOUNDARY_RULES),
        "harmful|benign by the mechanism (selection: the population fraction of test "
        "sequences selecting their relevant token crosses selection_level) or the practical "
        "view (accuracy: the test accuracy crosses test_threshold)",
    )
    selection_level: float = parameter(
        0.5,
        Real(0.0, 1.0),
        "harmful|benign (rule selection): the fraction of test sequences selecting R at "
        "which the boundary lies",
    )
    bracket_units: str = parameter(
        "absolute",
        Options(("absolute", "scaled")),
        "brackets in ||mu|| (absolute) or in units of the laws' scales (scaled: "
        "sigma (d/n)^(1/4) for harmful|benign, sigma (d/n)^(1/2) for benign|not)",
    )
    harmful_bracket: tuple[float, ...] = parameter(
        (1.0, 64.0), BRACKET, "initial ||mu|| bracket of the harmful|benign boundary"
    )
    overfit_bracket: tuple[float, ...] = parameter(
        (8.0, 4096.0), BRACKET, "initial ||mu|| bracket of the benign|not boundary"
    )
    rounds: int = parameter(7, Integer(1, 40), "bisection rounds in log ||mu||")
    fitted_level: float = parameter(
        0.5,
        Real(0.0, 1.0),
        "benign|not: the fraction of noisy samples fitted at which the boundary lies",
    )
    test_threshold: float = parameter(
        0.95,
        Real(0.0, 1.0, closed="both"),
        "harmful|benign: the test accuracy at which the boundary lies (practical view)",
    )
    overrides: tuple[tuple[str, Any], ...] = ()

    def check_relations(self) -> None:
        require(
            engine_traits(self.engine).integrates == "flow" or self.steps <= MAX_GD_STEPS,
            "steps",
            self.steps,
            f"at most {MAX_GD_STEPS:.0e} with engine {self.engine} (the flow engines "
            f"{' and '.join(FLOW_SWEEP_ENGINES)} reach longer horizons)",
        )
        for name in ("harmful_bracket", "overfit_bracket"):
            low, high = getattr(self, name)[:2]
            require(low < high, name, getattr(self, name), "two values low,high with low < high")
        require(
            bool(self.d_values or self.n_values),
            "d_values",
            self.d_values,
            "at least one value of d or of n to sweep",
        )

    @classmethod
    def quick(cls) -> BoundarySettings:
        return cls(
            d_values=(200, 400, 800),
            n_values=(10, 20, 40),
            d_fixed=400,
            seeds=2,
            steps=200,
            test_size=200,
            rounds=3,
            harmful_bracket=(1.0, 32.0),
            overfit_bracket=(4.0, 512.0),
        )

    @property
    def thresholds(self) -> RegimeThresholds:
        return RegimeThresholds(
            selects_relevant=self.selection_level, test_accuracy=self.test_threshold
        )

    @property
    def dfree(self) -> bool:
        """Whether the runs sample their statistics in law (no tokens, Gaussian init)."""
        return engine_traits(self.engine).exact == "in law"

    def config(self, d: int, n: int, mu_norm: float, seed: int) -> RunConfig:
        """A run at (d, n, ||mu||, seed): the benign preset's other parameters, population
        test metrics at the final point (Gaussian init and no test set with the d-free
        engines)."""
        dfree = {"init": "gaussian", "test_size": 0} if self.dfree else {}
        return preset(
            "benign",
            **{
                "d": d,
                "n": n,
                "mu_norm": float(mu_norm),
                "seed": seed,
                "steps": self.steps,
                "engine": self.engine,
                "test_size": self.test_size,
                "log_every": self.steps,
                "log_geometric": 0,
                "population": "final",
                **dfree,
                **dict(self.overrides),
            },
        )

    def bracket(self, kind: str, d: int, n: int) -> tuple[float, float]:
        """The initial ||mu|| bracket of boundary ``kind`` ("harmful" or "overfit") at (d, n)."""
        low, high = getattr(self, f"{kind}_bracket")[:2]
        if self.bracket_units == "absolute":
            return low, high
        sigma = self.config(d, n, 1.0, 0).model.sigma_eps
        scale = sigma * (d / n) ** (0.25 if kind == "harmful" else 0.5)
        return low * scale, high * scale

    def cases(self) -> list[tuple[str, int, int]]:
        """(sweep, d, n) pairs: the d-sweep at ``n_fixed`` and the n-sweep at ``d_fixed``."""
        cases = [("d", d, self.n_fixed) for d in self.d_values]
        cases += [("n", self.d_fixed, n) for n in self.n_values]
        return cases


#: (label, category, overrides of the benign preset) scanned for a delay.
DEFAULT_SCAN: tuple[tuple[str, str, tuple[tuple[str, Any], ...]], ...] = (
    ("benign d=2000 |mu|=20", "benign preset", (("d", 2000), ("mu_norm", 20.0))),
    ("harmful d=5000 |mu|=5", "harmful preset", (("d", 5000), ("mu_norm", 5.0))),
    (
        "not-overfitting d=1000 |mu|=100",
        "not-overfitting preset",
        (("d", 1000), ("mu_norm", 100.0)),
    ),
    ("d=2000 |mu|=7", "near harmful|benign", (("d", 2000), ("mu_norm", 7.0))),
    ("d=2000 |mu|=10", "near harmful|benign", (("d", 2000), ("mu_norm", 10.0))),
    ("d=8000 |mu|=8", "near harmful|benign", (("d", 8000), ("mu_norm", 8.0))),
    ("d=8000 |mu|=12", "near harmful|benign", (("d", 8000), ("mu_norm", 12.0))),
    ("d=2000 |mu|=20 eta=0.3", "more label noise", (("d", 2000), ("mu_norm", 20.0), ("eta", 0.3))),
    ("d=2000 |mu|=20 eta=0.4", "more label noise", (("d", 2000), ("mu_norm", 20.0), ("eta", 0.4))),
    ("d=2000 |mu|=12 eta=0.4", "more label noise", (("d", 2000), ("mu_norm", 12.0), ("eta", 0.4))),
    ("d=2000 |mu|=120", "near benign|not", (("d", 2000), ("mu_norm", 120.0))),
    ("d=2000 |mu|=170", "near benign|not", (("d", 2000), ("mu_norm", 170.0))),
    ("d=1000 |mu|=80", "near benign|not", (("d", 1000), ("mu_norm", 80.0))),
    ("d=2000 |mu|=20 rho=0.02", "other", (("d", 2000), ("mu_norm", 20.0), ("rho", 0.02))),
    ("d=2000 |mu|=20 T=16", "other", (("d", 2000), ("mu_norm", 20.0), ("T", 16))),
)


@dataclass(frozen=True)
class LongtimeSettings(Validated):
    """Gradient-flow runs of the scanned configurations on log-spaced points."""

    steps: int = parameter(10**13, Integer(10), "GD-equivalent horizon of the flow")
    log_points: int = parameter(91, Integer(3, 10_000), "log-spaced points per run")
    seeds: int = parameter(3, Integer(1, 10_000), "seeds per scanned configuration (0..K-1)")
    benign_seeds: int = parameter(
        5, Integer(1, 10_000), "seeds of the first (benign) configuration (0..K-1)"
    )
    test_size: int = parameter(1000, Integer(1), "clean test sequences per run")
    slope_from: float = parameter(
        1e4, Real(1.0, 1e300, closed="left"), "first step of the gap-slope fits"
    )
    accuracy_tolerance: float = parameter(
        0.01, Real(0.0, 1.0), "test accuracy settles within this of its final value"
    )
    loss_tolerance: float = parameter(
        1e-3, Real(0.0, 1.0), "test loss settles within this of its final value"
    )
    gd_check_steps: int = parameter(
        100_000, Integer(1, 10**8), "steps of the GD-vs-flow comparison"
    )
    scan: tuple[tuple[str, str, tuple[tuple[str, Any], ...]], ...] = DEFAULT_SCAN

    def check_relations(self) -> None:
        require(
            self.slope_from < self.steps,
            "slope_from",
            self.slope_from,
            f"a step below the horizon steps = {self.steps:g}",
        )

    @classmethod
    def quick(cls) -> LongtimeSettings:
        return cls(
            steps=10**8,
            log_points=25,
            seeds=1,
            benign_seeds=1,
            scan=(
                (
                    "benign d=300 |mu|=10 n=10",
                    "benign preset",
                    (("d", 300), ("mu_norm", 10.0), ("n", 10)),
                ),
                (
                    "d=600 |mu|=3 n=10",
                    "near harmful|benign",
                    (("d", 600), ("mu_norm", 3.0), ("n", 10)),
                ),
            ),
            test_size=200,
            slope_from=1e3,
            gd_check_steps=500,
        )

    def config(
        self,
        overrides: tuple[tuple[str, Any], ...],
        seed: int,
        engine: str = "flow",
        steps: int | None = None,
    ) -> RunConfig:
        steps = self.steps if steps is None else steps
        return preset(
            "benign",
            **{
                **dict(overrides),
                "seed": seed,
                "engine": engine,
                "steps": steps,
                "test_size": self.test_size,
                "log_every": steps,
                "log_geometric": self.log_points,
            },
        )

    def points(self) -> list[dict[str, Any]]:
        points = []
        for index, (label, category, overrides) in enumerate(self.scan):
            seeds = self.benign_seeds if index == 0 else self.seeds
            points += [
                {
                    "label": label,
                    "category": category,
                    "config": self.config(overrides, seed).to_dict(),
                }
                for seed in range(seeds)
            ]
        return points


#: Gaps at which float64 still represents the leader's update (e^-gap underflows near 745).
MAX_GAP = 740.0


@dataclass(frozen=True)
class PrecisionSettings(Validated):
    """Where the precision study looks."""

    gaps: tuple[float, ...] = parameter(
        (5, 10, 15, 17, 20, 30, 37, 40, 100, 300, 700),
        SequenceOf(Real(0.0, MAX_GAP, closed="right")),
        "attention gaps of the leader over its competitors",
    )
    reference_dps: int = parameter(
        60, Integer(30, 10_000), "decimal digits of the mpmath reference"
    )


__all__ = [
    "PhaseDiagramSettings",
    "ReproduceSettings",
    "BoundarySettings",
    "LongtimeSettings",
    "PrecisionSettings",
    "DEFAULT_SCAN",
    "PAPER_PRESETS",
    "PHASE_D",
    "PHASE_MU",
]
