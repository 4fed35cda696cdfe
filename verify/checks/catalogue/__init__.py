r"""The registered checks, declared as data: each prediction of :mod:`theory`, its estimator
on the evidence, its a priori tolerance and its expectation.

Horizons are stated per check: *stage 1* (the exact initial velocities, :math:`\tau = 0`;
:mod:`.stage1`), *the paper's horizon* (1000 GD steps, the paper's numbers;
:mod:`.paper_horizon`), *long* (gradient flow to :math:`10^{12}` steps; :mod:`.long_horizon`)
and the boundary scans (:mod:`.boundaries`). Model errors are stated there with where they
came from (derived for the setting from what each derivation drops, or a bound
with its reason; each measurement's ``tolerance_source``); the tolerance adds the 95%
interval of the estimate.

Which kind of check applies to which preset is the table :data:`PER_PRESET` (then
:data:`ACROSS_PRESETS`, the boundary scans at the benign preset's (d, n)); every check has
a stable id (:attr:`CheckSpec.id`); the registered disagreements
(:mod:`.disagreements`) are keyed by it, and the evidence plan is derived from the needs
of the selected checks (:func:`plan_for`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from verify.checks.catalogue.boundaries import OUTCOME_STAGE1, OUTCOME_STAGE2, VELOCITY_SIGN
from verify.checks.catalogue.declare import (
    Applies,
    CheckSpec,
    Claims,
    Disagreement,
    bind,
    expand,
    registered,
)
from verify.checks.catalogue.disagreements import DISAGREEMENTS as DECLARED_DISAGREEMENTS
from verify.checks.catalogue.estimators import draw_check, selection_measurement
from verify.checks.catalogue.long_horizon import (
    ARGMAX_LIMIT,
    CONDITIONAL_ACCURACY,
    DELAYED_GENERALISATION,
    GAP_GROWTH,
    GAP_GROWTH_PRECONDITIONED,
    REGIME_FLOW,
    REGIME_FLOW_CLEAN_SHARE,
    STAGE2_ACCURACY_FLOW,
)
from verify.checks.catalogue.paper_horizon import (
    CLEAN_SELECTION,
    NOISY_SELECTION,
    REGIME_GD,
    REGIME_GD_CLEAN_SHARE,
    STAGE2_ACCURACY_GD,
    TEST_ACCURACY,
    TRAIN_ACCURACY,
    TRAIN_ACCURACY_CLEAN_SHARE,
)
from verify.checks.catalogue.stage1 import (
    CLEAN_VELOCITY,
    CLEAN_VELOCITY_SPREAD,
    NOISY_VELOCITY,
    NOISY_VELOCITY_SPREAD,
    STAGE1_END,
)
from verify.checks.evidence import EvidencePlan, Need
from verify.checks.registry import Check
from verify.sim.config import PRESETS

ALL, HARMFUL, BENIGN = tuple(PRESETS), ("harmful",), ("benign",)

#: Which kind of check applies to which preset, in the report's order within a preset.
PER_PRESET = (
    Applies(TRAIN_ACCURACY, ("harmful", "benign")),
    Applies(TRAIN_ACCURACY_CLEAN_SHARE, ("not-overfitting",)),
    Applies(TEST_ACCURACY, HARMFUL),  # elsewhere the test accuracy is 1.0 already at step 0
    Applies(CLEAN_SELECTION, ALL),
    Applies(NOISY_SELECTION, ("harmful", "not-overfitting")),
    Applies(
        NOISY_SELECTION,
        BENIGN,
        dropped="the stage-1 selection's derived error (the per-token velocity spread of the "
        "dropped terms, as large as W-'s kept lead over I, decides the race) spans the share "
        "on both sides: the check cannot fail",
    ),
    Applies(REGIME_GD, ("harmful", "benign")),
    Applies(REGIME_FLOW, ("harmful", "benign")),
    Applies(REGIME_GD_CLEAN_SHARE, ("not-overfitting",)),
    Applies(REGIME_FLOW_CLEAN_SHARE, ("not-overfitting",)),
    Applies(CLEAN_VELOCITY, ALL),
    Applies(CLEAN_VELOCITY_SPREAD, ALL),
    Applies(NOISY_VELOCITY, ALL),  # every preset flips labels
    Applies(NOISY_VELOCITY_SPREAD, ALL),
    # not overfitting: the theory predicts no stage-1 end; 64 event seeds: the median's
    # interval at 32 moved the verdict only for shifts of 28% (up) and 80% (down)
    Applies(STAGE1_END, HARMFUL + BENIGN, needs=(Need("event", 64),)),
    Applies(CONDITIONAL_ACCURACY, HARMFUL),  # elsewhere both accuracies are 1.0 to within 1e-4
    Applies(ARGMAX_LIMIT, HARMFUL),
    Applies(STAGE2_ACCURACY_GD, HARMFUL),
    Applies(STAGE2_ACCURACY_FLOW, HARMFUL),
    Applies(GAP_GROWTH, BENIGN),
    Applies(GAP_GROWTH_PRECONDITIONED, BENIGN),
    Applies(DELAYED_GENERALISATION, BENIGN),
)
#: The boundary scans, at the benign preset's (d, n) (its predictions), after every preset.
ACROSS_PRESETS = (
    Applies(VELOCITY_SIGN, BENIGN),
    Applies(OUTCOME_STAGE1, BENIGN),
    Applies(OUTCOME_STAGE2, BENIGN),
)

#: Every declared check, in the report's order (dropped ones included).
SPECS: tuple[CheckSpec, ...] = expand(PER_PRESET, ALL) + expand(ACROSS_PRESETS, ALL)
#: The registered disagreements by check id (checked against :data:`SPECS` at import).
DISAGREEMENTS: dict[str, Disagreement] = registered(SPECS, DECLARED_DISAGREEMENTS)
#: Checks left out, with the reason: a check an untrained model passes cannot fail.
DROPPED: dict[str, str] = {spec.id: spec.dropped for spec in SPECS if spec.dropped}


@dataclass(frozen=True)
class Selection:
    """Which checks to run: those of ``presets``, each run kind capped at ``caps`` seeds
    (a cap of 0 leaves out every check that needs that kind)."""

    presets: tuple[str, ...]
    caps: Mapping[str, int] | None = None

    def cap(self, need: Need) -> Need:
        most = (self.caps or {}).get(need.kind, need.seeds)
        return Need(need.kind, min(need.seeds, most), need.path)


def selected(selection: Selection) -> list[CheckSpec]:
    """The declared checks of the selection's presets that are not dropped and whose every
    need survives the caps."""
    return [
        spec
        for spec in SPECS
        if spec.preset in selection.presets
        and not spec.dropped
        and all(selection.cap(need).seeds > 0 for need in spec.needs)
    ]


def plan_for(selection: Selection) -> EvidencePlan:
    """The evidence plan: the union of the selected checks' needs, capped."""
    needs = [
        (spec.preset, selection.cap(need)) for spec in selected(selection) for need in spec.needs
    ]
    return EvidencePlan.from_needs(selection.presets, needs)


def answerable(plan: EvidencePlan) -> list[CheckSpec]:
    """The declared checks (not dropped) whose every need the plan meets."""
    return [
        spec
        for spec in SPECS
        if not spec.dropped and all(plan.meets(spec.preset, need) for need in spec.needs)
    ]


def bind_checks(specs: Sequence[CheckSpec], claims: Claims) -> list[Check]:
    """The runnable checks: each spec on its preset's predictions, with its registered
    expectation."""
    return [bind(spec, claims, DISAGREEMENTS.get(spec.id)) for spec in specs]


def disagreement_list(claims: Claims) -> str:
    """The registered disagreements as a Markdown list, id, display name, mechanism and
    registration (the README's, kept equal by a test; the numbers are in each run's
    report)."""
    specs = [spec for spec in SPECS if spec.id in DISAGREEMENTS]
    return "\n".join(
        f"- `{check.id}` **{check.name}**: {check.expected.reason} ({check.expected.record})."
        for check in bind_checks(specs, claims)
    )


__all__ = [
    "Claims",
    "CheckSpec",
    "PER_PRESET",
    "ACROSS_PRESETS",
    "SPECS",
    "DISAGREEMENTS",
    "DROPPED",
    "Selection",
    "selected",
    "plan_for",
    "answerable",
    "bind_checks",
    "disagreement_list",
    "draw_check",
    "selection_measurement",
]
