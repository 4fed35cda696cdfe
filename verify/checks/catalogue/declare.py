r"""How a check is declared: as data.

A :class:`CheckKind` is one kind of check: its display name, the paper result it stands
for, its horizon, the runs it needs, and two module-level functions with their parameters
as data: ``prepare(context, **params)``, the theory's side, evaluated once when the
catalogue is bound to the predictions (it returns a small frozen *target* holding what the
check compares with), and ``measure(target, evidence, claim=None)``, the estimator on the
evidence. An :class:`Applies` row says which presets a kind applies to; expanding the rows
gives one :class:`CheckSpec` per (kind, preset), with a stable id that never changes when
the display name does. A :class:`Disagreement` registers, by check id, the mechanism of an
expected disagreement in words and a module-level function computing the numbers that show
it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from theory.quadrature import LOG_SLOPE_PER_DECADE
from theory.stage1.predictions import Stage1Predictions
from verify.checks.evidence import Need
from verify.checks.registry import AGREE, Check, Expected, Measurement, PaperResult
from verify.sim.config import PAPER_ACCURACY

STAGE1 = "stage 1 (tau = 0)"
PAPER = "1000 GD steps (the paper's horizon)"
LONG = "gradient flow to 1e12 steps"

#: The runs most checks read: 32 GD seeds (the selection checks rest on 128 noisy samples)
#: and 12 long flows.
GD_RUNS = Need("gd", 32)
FLOW_RUNS = Need("flow", 12)

#: What a check id looks like: ``<preset or family>.<slug>``, lower case, dashes.
ID_PATTERN = re.compile(r"^[a-z][a-z0-9-]*\.[a-z0-9]+(-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Claims:
    """What the checks compare the simulations with: the theory's predictions per preset,
    the paper's reported accuracies, and the laws' constants."""

    predictions: dict[str, Stage1Predictions]
    paper_accuracy: dict[str, tuple[float, float]] = field(
        default_factory=lambda: dict(PAPER_ACCURACY)
    )
    slope_per_decade: float = LOG_SLOPE_PER_DECADE
    delay_factor: float = 100.0


@dataclass(frozen=True)
class Context:
    """What a check's ``prepare`` reads: its preset, the theory's predictions for it, and
    the claims."""

    preset: str
    prediction: Stage1Predictions
    claims: Claims


@dataclass(frozen=True)
class CheckKind:
    """One kind of check, as data (see the module docstring). ``id`` and ``name`` are
    templates: ``{preset}`` and, in ``name``, the target's fields."""

    id: str
    name: str
    paper: PaperResult
    horizon: str
    needs: tuple[Need, ...]
    prepare: Callable[..., Any]
    measure: Callable[..., Measurement]
    params: Mapping[str, Any] = field(default_factory=dict)
    holds_untrained: str = ""


@dataclass(frozen=True)
class Applies:
    """A row of the table: ``kind`` applies to ``presets``; ``needs`` replaces the kind's
    own (e.g. more event seeds for one preset); ``dropped`` gives the reason when the check
    is declared but left out."""

    kind: CheckKind
    presets: tuple[str, ...]
    needs: tuple[Need, ...] | None = None
    dropped: str = ""


@dataclass(frozen=True)
class CheckSpec:
    """One declared check: a kind on a preset, with its id and the runs it needs."""

    id: str
    preset: str
    kind: CheckKind
    needs: tuple[Need, ...]
    dropped: str = ""

    @property
    def title(self) -> str:
        """The display name with the preset filled in; a field that the predictions would
        fill (a dropped check is never bound to them) is shown as ``<field>``."""
        return self.kind.name.format_map(_Unbound(preset=self.preset))


class _Unbound(dict):
    """Format fields: the given ones, and ``<name>`` for any other."""

    def __missing__(self, key: str) -> str:
        return f"<{key}>"


@dataclass(frozen=True)
class Registration:
    """Where and on what a disagreement was registered: the commit (short hash and date)
    and the run that first measured it, named in words (its numbers are typed nowhere:
    that run's report holds them, and this run's ``numbers`` computes its own)."""

    commit: str
    date: str
    first_measured: str

    def __str__(self) -> str:
        return (
            f"registered at {self.commit} ({self.date}), first measured by "
            f"{self.first_measured}; every run re-tests it"
        )


@dataclass(frozen=True)
class Disagreement:
    """A registered disagreement: the check ``id``, the ``mechanism`` in words (no
    measured numbers), ``numbers(context, evidence, measurement)``, a module-level
    function returning the numbers that show it, which ``template`` words, and its
    ``registration`` (commit, date, the measurement that led to it). ``theory(context)``,
    if given, returns the numbers that depend on the theory alone: evaluated once when the
    catalogue is bound to the predictions (while the evidence is still being collected),
    they come first among the numbers."""

    id: str
    mechanism: str
    numbers: Callable[..., Mapping[str, Any]]
    template: str
    registration: Registration
    theory: Callable[[Context], Mapping[str, Any]] | None = None


def expand(rows: Iterable[Applies], presets: Sequence[str]) -> tuple[CheckSpec, ...]:
    """One :class:`CheckSpec` per row and preset, preset by preset (the report's order)."""
    rows = tuple(rows)
    return tuple(
        CheckSpec(
            id=row.kind.id.format(preset=preset),
            preset=preset,
            kind=row.kind,
            needs=row.kind.needs if row.needs is None else row.needs,
            dropped=row.dropped,
        )
        for preset in presets
        for row in rows
        if preset in row.presets
    )


def registered(
    specs: Sequence[CheckSpec], disagreements: Iterable[Disagreement]
) -> dict[str, Disagreement]:
    """The disagreements by check id; ``ValueError`` naming the id when one is registered
    twice or names no declared check (a renamed or removed check never silently loses its
    expectation)."""
    ids = {spec.id for spec in specs}
    out: dict[str, Disagreement] = {}
    for disagreement in disagreements:
        if disagreement.id not in ids or disagreement.id in out:
            problem = "twice" if disagreement.id in out else "for no declared check"
            raise ValueError(f"disagreement {disagreement.id!r} is registered {problem}")
        out[disagreement.id] = disagreement
    return out


def target_fields(target: Any) -> dict[str, Any]:
    """A target's fields by name (for the display name's template)."""
    return {f.name: getattr(target, f.name) for f in dataclasses.fields(target)}


def theory_first(
    theory: Mapping[str, Any], numbers: Callable[..., Mapping[str, Any]], context: Context
) -> Callable[[Any, Measurement], dict[str, Any]]:
    """A disagreement's numbers: ``theory`` (computed already), then
    ``numbers(context, evidence, measurement)``."""

    def both(evidence: Any, measurement: Measurement) -> dict[str, Any]:
        return {**theory, **numbers(context, evidence, measurement)}

    return both


def registered_expectation(disagreement: Disagreement, context: Context) -> Expected:
    """The expectation of a registered disagreement on ``context``, its theory's numbers
    evaluated now (:attr:`Disagreement.theory`)."""
    numbers: Callable[..., Mapping[str, Any]] = partial(disagreement.numbers, context)
    if disagreement.theory is not None:
        numbers = theory_first(dict(disagreement.theory(context)), disagreement.numbers, context)
    return Expected.disagreement(
        disagreement.mechanism,
        numbers,
        disagreement.template,
        str(disagreement.registration),
    )


def bind(spec: CheckSpec, claims: Claims, disagreement: Disagreement | None) -> Check:
    """The runnable check: the theory's side prepared on the preset's predictions, the
    measure bound to it, and the registered expectation."""
    context = Context(spec.preset, claims.predictions[spec.preset], claims)
    kind = spec.kind
    target = kind.prepare(context, **kind.params)
    expected = AGREE if disagreement is None else registered_expectation(disagreement, context)
    return Check(
        id=spec.id,
        name=kind.name.format_map({**target_fields(target), "preset": spec.preset}),
        paper=kind.paper,
        horizon=kind.horizon,
        expected=expected,
        measure=partial(kind.measure, target),
        holds_untrained=kind.holds_untrained,
    )


__all__ = [
    "STAGE1",
    "PAPER",
    "LONG",
    "ID_PATTERN",
    "GD_RUNS",
    "FLOW_RUNS",
    "Claims",
    "Context",
    "CheckKind",
    "Applies",
    "CheckSpec",
    "Registration",
    "Disagreement",
    "expand",
    "registered",
    "target_fields",
    "theory_first",
    "registered_expectation",
    "bind",
]
