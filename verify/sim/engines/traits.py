r"""What an engine is, as data: how it advances, how exact it is, what it needs and costs.

An :class:`EngineTraits` is declared once per engine (in
:mod:`verify.sim.engines.registry`) and read without importing the engine's module:
the command line's choices and help, the configuration's validation, the memory check,
the choice of engines for a sweep and the README's table all derive from it.

Costs are counted in multiply-adds of three kinds and turned into seconds at stated
rates (one core; assumptions of the order of what these engines reach, not
measurements):

* float64, in the products of small matrices: :data:`FLOAT64_RATE`;
* mpmath numbers: :data:`MPMATH_RATE`, about constant from 15 to 1000 digits (Python's
  cost per number dominates the arithmetic's);
* fixed-point Python integers (the ``mp-flow`` engine's linear algebra):
  :data:`INTEGER_RATE`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from theory.foundation.data_model import DataModel, Training


class Configuration(Protocol):
    """What the traits read of a run's configuration (:class:`verify.sim.config.RunConfig`
    has it): typed by its shape, so that the engines' traits do not import the
    configuration, which reads its engine choices from them."""

    @property
    def model(self) -> DataModel: ...

    @property
    def training(self) -> Training: ...

    @property
    def solver(self) -> Any: ...

    @property
    def recording(self) -> Any: ...

    def flat(self) -> dict[str, Any]: ...


#: Bytes of a float64, and those of an mpmath number made from a float64 with its slot
#: in an object array (about 240 bytes at 15 to 50 digits).
FLOAT = 8
MP_NUMBER = 240
#: Assumed multiply-adds a second (see the module docstring).
FLOAT64_RATE = 1e9
MPMATH_RATE = 1e6
INTEGER_RATE = 2e6


@dataclass(frozen=True)
class Operations:
    """Multiply-adds of each kind (see the module docstring)."""

    float64: float = 0.0
    mpmath: float = 0.0
    integer: float = 0.0

    def __add__(self, other: Operations) -> Operations:
        return Operations(
            self.float64 + other.float64, self.mpmath + other.mpmath, self.integer + other.integer
        )

    def times(self, count: float) -> Operations:
        return Operations(self.float64 * count, self.mpmath * count, self.integer * count)

    @property
    def seconds(self) -> float:
        """At the stated rates."""
        return self.float64 / FLOAT64_RATE + self.mpmath / MPMATH_RATE + self.integer / INTEGER_RATE


@dataclass(frozen=True)
class Cost:
    """A run's work before its first step (``setup``), per step (a GD step, or one step
    of the flow solver) and its number of steps (for a flow solver, an estimate);
    recording excluded."""

    setup: Operations
    step: Operations
    steps: float

    @property
    def total(self) -> Operations:
        return self.setup + self.step.times(self.steps)

    @property
    def seconds(self) -> float:
        return self.total.seconds


@dataclass(frozen=True)
class Refusal:
    """Why an engine does not take a configuration: the field (flat name) whose value it
    refuses, and what it takes instead."""

    parameter: str
    allowed: str

    def __str__(self) -> str:
        return f"{self.parameter}: {self.allowed}"


@dataclass(frozen=True)
class Variant:
    """A model variant an engine may or may not take: its ``name``, the configuration field
    (flat name) that turns it on, the value that does (``None``: any value but the base
    one) and the field's base value, as the refusal shows it."""

    name: str
    field: str
    value: Any
    base: Any

    def active(self, config: Configuration) -> bool:
        value = config.flat()[self.field]
        return value != self.base if self.value is None else value == self.value


#: The model variants (:mod:`theory.variants`), each off at its base value.
VARIANTS: tuple[Variant, ...] = (
    Variant("loss", "loss", None, "logistic"),
    Variant("rho spread", "rho_spread", None, 0.0),
    Variant("one-step head", "head", "one-step", "fixed"),
    Variant("trained head", "head", "trained", "fixed"),
    Variant("FFN readout", "readout", "ffn", "linear"),
)
VARIANT_NAMES: tuple[str, ...] = tuple(variant.name for variant in VARIANTS)


def active_variants(config: Configuration) -> tuple[str, ...]:
    """The names of the variants ``config`` turns on."""
    return tuple(variant.name for variant in VARIANTS if variant.active(config))


def spoken(names: Sequence[str]) -> str:
    """``"a, b or c"``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


@dataclass(frozen=True)
class EngineTraits:
    """One engine, as data.

    ``integrates``: ``"gd"`` (GD steps) or ``"flow"`` (gradient flow, time
    :math:`\\alpha k`). ``exact``: ``"per draw"`` (the trajectory of the drawn tokens and
    :math:`W_0`, to the engine's precision) or ``"in law"`` (statistics sampled in law:
    the law of a run, not its numbers). ``precision``: ``"float64"`` or ``"mpmath"`` (at
    ``mp_dps`` digits). ``tokens``, ``test_set``, ``query``: whether a run has the
    d-dimensional tokens, a finite test set, the query vector :math:`q = W^\\top p`.
    ``state_bytes`` and ``cost`` are functions of a :class:`~verify.sim.config.RunConfig`:
    the engine's own arrays (the data and records are counted by
    :func:`verify.sim.resources.estimated_bytes`), and its work."""

    name: str
    #: ``"module:Class"``, imported on first use.
    location: str
    integrates: Literal["gd", "flow"]
    exact: Literal["per draw", "in law"]
    precision: Literal["float64", "mpmath"]
    #: Initialisations of :math:`W_0` it takes (``training.init``).
    inits: tuple[str, ...]
    tokens: bool
    test_set: bool
    query: bool
    #: One line: what it computes (the command line's help).
    description: str
    #: How its cost grows, in words.
    scaling: str
    state_bytes: Callable[[Configuration], int]
    cost: Callable[[Configuration], Cost]
    #: Why the initialisations are restricted (when they are).
    init_note: str = ""
    #: The model variants it runs (:data:`VARIANT_NAMES`), and why not the others.
    variants: tuple[str, ...] = VARIANT_NAMES
    variant_note: str = ""

    def cannot_run(
        self, config: Configuration, engines: Sequence[EngineTraits] = ()
    ) -> Refusal | None:
        """``None`` when this engine runs ``config``; else why not (a variant's refusal
        names the ``engines`` that take it)."""
        if config.training.init not in self.inits:
            return Refusal(
                "init", f"{' or '.join(self.inits)} with engine {self.name} ({self.init_note})"
            )
        for variant in VARIANTS:
            if variant.active(config) and variant.name not in self.variants:
                return self._variant_refusal(variant, engines)
        return None

    def _variant_refusal(self, variant: Variant, engines: Sequence[EngineTraits]) -> Refusal:
        """The field at its base value (or another variant of it this engine takes)."""
        values = [repr(variant.base) if isinstance(variant.base, str) else f"{variant.base:g}"]
        values += [
            repr(other.value)
            for other in VARIANTS
            if other.field == variant.field
            and other.value is not None
            and other.name in self.variants
        ]
        takers = [e.name for e in engines if variant.name in e.variants]
        parts = [self.variant_note] if self.variant_note else []
        if takers:
            engines_word = "engines" if len(takers) > 1 else "engine"
            parts.append(f"the {variant.name} runs on {engines_word} {spoken(takers)}")
        note = f" ({'; '.join(parts)})" if parts else ""
        return Refusal(variant.field, f"{spoken(values)} with engine {self.name}{note}")


__all__ = [
    "Configuration",
    "EngineTraits",
    "Variant",
    "VARIANTS",
    "VARIANT_NAMES",
    "active_variants",
    "spoken",
    "Cost",
    "Operations",
    "Refusal",
    "FLOAT",
    "MP_NUMBER",
    "FLOAT64_RATE",
    "MPMATH_RATE",
    "INTEGER_RATE",
]
