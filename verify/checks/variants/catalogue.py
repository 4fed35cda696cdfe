r"""The variants' checks, declared as data like :mod:`verify.checks.catalogue`: one row a
check (each at the benign preset, the paper's benign setting, where every claim can be
seen), stable ids ``r<claim>.<slug>``, the registered disagreements keyed by id, and the
plans the selected checks' needs give (:data:`FULL`, :data:`QUICK`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verify.checks.catalogue.declare import (
    Applies,
    CheckSpec,
    Claims,
    Disagreement,
    Registration,
    bind,
    expand,
    registered,
)
from verify.checks.registry import Check, Measurement
from verify.checks.variants import dynamics, heads, selection
from verify.checks.variants.runs import KINDS, Need, VariantPlan

PRESET = "benign"
ROWS = tuple(
    Applies(kind, (PRESET,))
    for kind in (
        selection.R1_VELOCITY_SIGN,
        selection.R1_BOUNDARY,
        selection.R1_REGIME,
        heads.R2_ALIGNMENT_TRAIN,
        heads.R2_ALIGNMENT_CLEAN,
        heads.R2_SCALE_CLEAN,
        heads.R2_HEAD_FITS,
        heads.R2_REGIME,
        selection.R3_REGIME,
        selection.R3_CLEAN_SELECTION,
        dynamics.R4_EXPONENTIAL,
        dynamics.R4_SQUARED,
        dynamics.R4_LEVEL_EXPONENTIAL,
        dynamics.R4_LEVEL_SQUARED,
        dynamics.R5_INITIAL,
        dynamics.R5_LARGEST_01,
        dynamics.R5_DOMINANCE_01,
        dynamics.R5_LARGEST_005,
        dynamics.R5_DOMINANCE_005,
        heads.R6_HEAD_NOISE,
        heads.R6_HEAD_MEMORISES,
        heads.R6_FITS,
        heads.R6_SELECTION,
    )
)
#: Every declared check, in the report's order.
SPECS: tuple[CheckSpec, ...] = expand(ROWS, (PRESET,))
#: The claim each check tests, by check id (``R1`` ... ``R6``, from the id's family).
CLAIM_OF: dict[str, str] = {spec.id: spec.id.split(".")[0].upper() for spec in SPECS}

#: Registered before any variant run, from the theory's prediction (2026-12-02).
BEFORE_ANY_RUN = Registration(
    "26ce1b0", "2026-12-02", "no run: registered from the theory's prediction before any run"
)


def few_noisy_samples(context: Any, ev: Any, m: Measurement) -> Mapping[str, float]:
    """The eta = 0.05 runs' noisy samples per seed and the flow's largest ratio."""
    runs = ev(context.preset, "flow-eta-0.05")
    return {
        "noisy": float(runs[0].noisy.sum()),
        "n": float(runs[0].noisy.size),
        "predicted": dynamics.largest_target(context, "flow-eta-0.05").predicted,
        "measured": float(m.measured),
        "low": float(m.interval[0]),
        "high": float(m.interval[1]),
    }


DISAGREEMENTS = registered(
    SPECS,
    (
        Disagreement(
            "r5.noisy-dominate-eta-0p05",
            "at eta = 0.05 the training set holds a single noisy sample; along the "
            "mean-field flow its gradient, which falls too once it is fitted, never outweighs "
            "the clean samples' summed gradient, so the largest ratio stays below 1: R5's "
            "'even when eta is very small' fails at this eta (it holds from eta = 0.1)",
            few_noisy_samples,
            "{noisy:.0f} noisy of {n:.0f} samples; the mean-field flow's largest ratio "
            "{predicted:.3f}; measured {measured:.3f} [{low:.3f}, {high:.3f}]",
            BEFORE_ANY_RUN,
        ),
    ),
)

#: Seeds per kind of run for the full and the quick command. The quick command keeps the
#: full run's flows: the one-sided R5 check at eta = 0.1 (two noisy samples a seed) needs
#: them for its power (the report's power column shows it).
FULL_CAPS = {"gd": 24, "flow": 12, "scan": 8}
QUICK_CAPS = {"gd": 8, "flow": 12, "scan": 4}


def capped(need: Need, caps: Mapping[str, int]) -> Need:
    return Need(need.kind, min(need.seeds, caps[KINDS[need.kind].integrates]))


def plan(caps: Mapping[str, int]) -> VariantPlan:
    """The runs the declared checks need, each kind capped at ``caps`` seeds."""
    return VariantPlan.from_needs(
        [(s.preset, capped(n, caps)) for s in SPECS for n in s.kind.needs]
    )


FULL, QUICK = plan(FULL_CAPS), plan(QUICK_CAPS)


def checks_for(claims: Claims) -> list[Check]:
    """Every declared check bound to the preset's predictions, with its expectation."""
    return [bind(spec, claims, DISAGREEMENTS.get(spec.id)) for spec in SPECS]


def check_ids() -> set[str]:
    """The ids of ``verify variants``' checks (for the claim ledger)."""
    return {spec.id for spec in SPECS}


__all__ = [
    "PRESET",
    "ROWS",
    "SPECS",
    "CLAIM_OF",
    "DISAGREEMENTS",
    "FULL",
    "QUICK",
    "FULL_CAPS",
    "QUICK_CAPS",
    "plan",
    "checks_for",
    "check_ids",
]
