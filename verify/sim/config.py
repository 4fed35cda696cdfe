r"""A run's configuration: what to solve, how to solve it and what to record.

:class:`RunConfig` composes the theory's :class:`~theory.foundation.data_model.DataModel` (the data
and the fixed head) and :class:`~theory.foundation.data_model.Training` (GD from :math:`p(0) = 0`)
with a :class:`Solver` (which engine, at what precision) and a :class:`Recording` (test
set and log points), plus the seed of every random stream. Every field is validated on
construction with one message form (:class:`~theory.foundation.validation.InvalidParameter`).

Fields are reached through their component (``config.model.d``,
``config.training.alpha``); :func:`preset`, :meth:`RunConfig.build` and
:meth:`RunConfig.replace` take the flat field names (``d=500, alpha=1e-3``) and route
each to its component.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from theory.foundation.data_model import DataModel, Training, check_variant_combination
from theory.foundation.validation import (
    Integer,
    InvalidParameter,
    Options,
    Real,
    Validated,
    parameter,
    parameter_fields,
    require,
)
from verify.sim.engines.registry import (
    cannot_run,
    engine_help,
    engine_names,
    engines_where,
)

#: Decimal digits the mp-flow tolerance must stay above the working precision's.
MP_FLOW_GUARD_DIGITS = 10

#: Most log points a run may record (each holds per-sample attention and gaps).
MAX_LOG_POINTS = 100_000

#: Smallest initial preconditioner s^2 d (a normal float64 number, squares included).
MIN_KAPPA0 = 1e-150

#: The failure probability delta of assumptions A1, A3 and A7.
DELTA = Real(0.0, 1.0)

#: Decimal exponent of float64's largest number (about 1.8e308).
FLOAT64_DECADES = 308.0
#: The paper's scales of the head, the noise and the signal (the benign setting).
PAPER_SCALE = {"nu_scale": 1.0, "sigma_eps": 1.0, "mu_norm": 20.0}


@dataclass(frozen=True)
class Solver(Validated):
    """Which engine advances the training, and its numerical settings."""

    engine: str = parameter("reduced", Options(engine_names()), engine_help())
    mp_dps: int = parameter(
        50,
        Integer(15, 10_000),
        f"decimal digits of the {' and '.join(engines_where(precision='mpmath'))} engines",
    )
    flow_rtol: float = parameter(1e-10, Real(0.0, 1.0), "relative tolerance of the flow solver")
    flow_atol: float = parameter(1e-12, Real(0.0, 1.0), "absolute tolerance of the flow solver")
    mp_flow_tol: float = parameter(
        1e-20,
        Real(0.0, 1e-6, closed="right"),
        "local tolerance of the mp-flow solver (relative, and absolute below size one)",
    )

    def check_relations(self) -> None:
        if self.engine == "mp-flow":
            floor = 10.0 ** (MP_FLOW_GUARD_DIGITS - self.mp_dps)
            require(
                self.mp_flow_tol >= floor,
                "mp_flow_tol",
                self.mp_flow_tol,
                f"a tolerance >= 1e{MP_FLOW_GUARD_DIGITS - self.mp_dps} at mp_dps = "
                f"{self.mp_dps} ({MP_FLOW_GUARD_DIGITS} digits above the working precision, so "
                "that rounding stays far below it), or a larger mp_dps",
            )


@dataclass(frozen=True)
class Recording(Validated):
    """What a run records, and when."""

    test_size: int = parameter(1000, Integer(0), "clean test sequences, drawn independently")
    log_every: int = parameter(
        0, Integer(0), "steps between linear log points (0: about 100 points)"
    )
    log_geometric: int = parameter(
        60, Integer(0, MAX_LOG_POINTS), "geometrically spaced log points (for log-time plots)"
    )
    attention_test_samples: int = parameter(
        20, Integer(0), "test sequences whose attention is recorded"
    )
    population: str = parameter(
        "all",
        Options(("all", "final", "none")),
        "log points at which the population test metrics (over the data distribution, a few "
        "milliseconds each) are computed",
    )


COMPONENTS: dict[str, type[Validated]] = {
    "model": DataModel,
    "training": Training,
    "solver": Solver,
    "recording": Recording,
}


@dataclass(frozen=True)
class RunConfig(Validated):
    """One training run of the one-layer attention model on the paper's data model."""

    model: DataModel = field(default_factory=DataModel)
    training: Training = field(default_factory=Training)
    solver: Solver = field(default_factory=Solver)
    recording: Recording = field(default_factory=Recording)
    seed: int = parameter(
        0,
        Integer(0, 2**63 - 1),
        "seed of every random stream (training data, test data, W0, flips)",
    )

    def check_relations(self) -> None:
        self._check_scores()
        check_variant_combination(self.model, self.training)
        if self.training.head == "one-step" and self.training.head_step is None:
            from theory.variants.head import default_one_step  # SymPy (derivation records)

            default_one_step(self.model, self.training)  # its initial scale leaves room
        refusal = cannot_run(self)
        if refusal is not None:
            raise InvalidParameter(
                refusal.parameter, self.flat()[refusal.parameter], refusal.allowed
            )
        scale = self.training.init_scale
        if scale is not None:
            require(
                MIN_KAPPA0 <= scale * scale * self.model.d <= 1e100,
                "init_scale",
                scale,
                f"a scale s with {MIN_KAPPA0:g} <= s^2 d <= 1e100 (here d = {self.model.d}), "
                "so that the initial preconditioner and the scale of W0 W0^T stay finite "
                "and nonzero in float64",
            )

        steps, every = self.training.steps, self.recording.log_every
        if every:
            require(
                steps // every <= MAX_LOG_POINTS,
                "log_every",
                every,
                f"an integer >= steps / {MAX_LOG_POINTS} = {-(-steps // MAX_LOG_POINTS)} "
                "(at most 1e5 linear log points), or 0 for about 100 points",
            )

    def _check_scores(self) -> None:
        r"""The token scores' noise :math:`\sigma_\epsilon s_\nu / \|\mu\|` must keep its
        square times :math:`10^6 d` finite in float64 (as the token norms must): otherwise
        the scores, the logits and the population metrics overflow. The refusal names the
        field furthest from the paper's value in the direction that grows the noise."""
        m = self.model
        log_noise = math.log10(m.sigma_eps) + math.log10(m.nu_scale) - math.log10(m.mu_norm)
        if 2 * log_noise + math.log10(m.d) + 6 < FLOAT64_DECADES:
            return
        excess = {
            "mu_norm": math.log10(PAPER_SCALE["mu_norm"] / m.mu_norm),
            "sigma_eps": math.log10(m.sigma_eps / PAPER_SCALE["sigma_eps"]),
            "nu_scale": math.log10(m.nu_scale / PAPER_SCALE["nu_scale"]),
        }
        name = max(excess, key=excess.__getitem__)
        bound = 10 ** ((FLOAT64_DECADES - 6 - math.log10(m.d)) / 2 - log_noise)
        value = getattr(m, name)
        limit = value / bound if name == "mu_norm" else value * bound
        relation = ">=" if name == "mu_norm" else "<="
        raise InvalidParameter(
            name,
            value,
            f"a value {relation} {limit:.3g} here (the token scores' noise sigma_eps nu_scale "
            f"/ mu_norm must have a square times 1e6 d finite in float64; d = {m.d})",
        )

    # -- flat names ----------------------------------------------------------------
    @classmethod
    def build(cls, **values: Any) -> RunConfig:
        """A configuration from flat field names (``d=500, steps=10``); the rest default."""
        return cls().replace(**values)

    def replace(self, **changes: Any) -> RunConfig:
        """A copy with some fields changed, by flat name or component (validated again)."""
        grouped: dict[str, dict[str, Any]] = {name: {} for name in COMPONENTS}
        top: dict[str, Any] = {}
        for name, value in changes.items():
            owner = FIELD_OWNER.get(name)
            if owner is None:
                if name not in COMPONENTS and name != "seed":
                    raise InvalidParameter(
                        name, value, "a configuration field: " + ", ".join(sorted(FIELD_OWNER))
                    )
                top[name] = value
            else:
                grouped[owner][name] = value
        for owner, fields in grouped.items():
            if fields:
                top[owner] = dataclasses.replace(top.get(owner, getattr(self, owner)), **fields)
        return dataclasses.replace(self, **top)

    def flat(self) -> dict[str, Any]:
        """Every field by its flat name."""
        out = {name: getattr(getattr(self, owner), name) for name, owner in FIELD_OWNER.items()}
        out["seed"] = self.seed
        return out

    def to_dict(self) -> dict[str, Any]:
        """Nested: ``{"model": {...}, "training": {...}, ..., "seed": ...}``."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> RunConfig:
        """From :meth:`to_dict`'s nested form (or flat names)."""
        flat: dict[str, Any] = {}
        for key, value in values.items():
            if key in COMPONENTS and isinstance(value, dict):
                flat.update(value)
            else:
                flat[key] = value
        return cls.build(**flat)

    # -- derived quantities ------------------------------------------------------------
    @property
    def linear_log_interval(self) -> int:
        """Steps between linear log points (``log_every``; 0 means about 100 points)."""
        if self.recording.log_every:
            return self.recording.log_every
        return max(1, -(-self.training.steps // 100))

    @property
    def init_scale(self) -> float:
        r"""The initialisation scale :math:`s` of :math:`W(0)` (default :math:`1/\sqrt d`)."""
        return self.training.scale(self.model.d)

    @property
    def kappa0(self) -> float:
        r"""The initial preconditioner :math:`\kappa_0 = \sigma_0^2 d`."""
        return self.training.kappa0(self.model.d)


#: Flat field name -> the component that owns it.
FIELD_OWNER: dict[str, str] = {
    spec.name: owner for owner, cls in COMPONENTS.items() for spec in parameter_fields(cls)
}


def parameter_specs() -> list[tuple[str, dataclasses.Field]]:
    """``(owner, field)`` for every flat field, in declaration order (for the command line)."""
    specs = [(owner, spec) for owner, cls in COMPONENTS.items() for spec in parameter_fields(cls)]
    seed = next(spec for spec in parameter_fields(RunConfig) if spec.name == "seed")
    return [*specs, ("run", seed)]


#: The paper's three synthetic settings (Figures 3-5): n = 20, T = 8, rho = 0.1,
#: eta = 0.2, sigma_eps = 1, alpha = 5e-3, 1000 steps, 1000 test samples.
PRESETS: dict[str, dict[str, Any]] = {
    "harmful": {"d": 5000, "mu_norm": 5.0},
    "benign": {"d": 2000, "mu_norm": 20.0},
    "not-overfitting": {"d": 1000, "mu_norm": 100.0},
}

#: The paper's reported (train accuracy, test accuracy) for each preset.
PAPER_ACCURACY: dict[str, tuple[float, float]] = {
    "harmful": (1.0, 0.87),
    "benign": (1.0, 1.0),
    "not-overfitting": (0.8, 1.0),
}


def preset(name: str, **overrides: Any) -> RunConfig:
    """The paper's setting ``name`` (one of :data:`PRESETS`), with flat-named overrides."""
    require(name in PRESETS, "preset", name, Options(tuple(PRESETS)).describe())
    return RunConfig.build(**{**PRESETS[name], **overrides})


__all__ = [
    "RunConfig",
    "Solver",
    "Recording",
    "DataModel",
    "Training",
    "PRESETS",
    "PAPER_ACCURACY",
    "COMPONENTS",
    "FIELD_OWNER",
    "preset",
    "parameter_specs",
    "MAX_LOG_POINTS",
    "DELTA",
]
