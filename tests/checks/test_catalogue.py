"""The declared catalogue: stable ids, disagreements keyed by them, the evidence plans
derived from the checks' needs, and the disagreements' numbers computed from evidence.

The numbers are shown on a tiny plan of every preset (two seeds of each run kind, one
boundary scan: seconds), derived from the same needs with the seeds capped.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re

import pytest

from verify.checks.catalogue import (
    DISAGREEMENTS,
    DROPPED,
    SPECS,
    Claims,
    Selection,
    answerable,
    bind_checks,
    plan_for,
    selected,
)
from verify.checks.catalogue.declare import ID_PATTERN, Disagreement, Registration, registered
from verify.checks.catalogue.disagreements import DISAGREEMENTS as DECLARED
from verify.checks.evidence import EvidencePlan, Need
from verify.checks.suite import (
    FULL,
    FULL_SELECTION,
    QUICK,
    QUICK_SELECTION,
    checks_for,
    predictions_for,
)
from verify.sim.config import PRESETS


def test_every_check_id_is_unique_and_a_slug():
    ids = [spec.id for spec in SPECS]
    assert len(set(ids)) == len(ids) == 40
    for spec in SPECS:
        assert ID_PATTERN.match(spec.id), spec.id
        assert spec.id.split(".")[0] in (spec.preset, "boundary")


def test_ids_stay_when_display_names_change():
    """A check's id is fixed at import, from its declaration; its display name follows the
    predictions. With the not-overfitting noisy samples predicted to select W-, not R, the
    check's name changes and its id (and the disagreement keyed by it) does not."""
    predictions = predictions_for(FULL)
    changed = {
        **predictions,
        "not-overfitting": dataclasses.replace(
            predictions["not-overfitting"], noisy_selection={"W-": 1.0, "R": 0.0}
        ),
    }
    specs = [spec for spec in SPECS if spec.id == "not-overfitting.noisy-selection"]
    (before,) = bind_checks(specs, Claims(predictions))
    (after,) = bind_checks(specs, Claims(changed))
    assert (before.name, after.name) == (
        "noisy samples select R [not-overfitting]",
        "noisy samples select W- [not-overfitting]",
    )
    assert before.id == after.id == "not-overfitting.noisy-selection"
    assert not after.expected.agree


def test_every_registered_disagreement_names_a_declared_check():
    assert set(DISAGREEMENTS) <= {spec.id for spec in SPECS}
    assert set(DROPPED) <= {spec.id for spec in SPECS}
    assert not set(DROPPED) & set(DISAGREEMENTS)


def test_a_disagreement_keyed_by_a_missing_id_fails_at_registration():
    record = Registration("0000000", "2026-01-01", "a measurement")
    ghost = Disagreement("benign.noisy-selects-w-minus", "a mechanism", lambda *_: {}, "", record)
    with pytest.raises(ValueError, match="'benign.noisy-selects-w-minus'.*no declared check"):
        registered(SPECS, [*DECLARED, ghost])
    with pytest.raises(ValueError, match="twice"):
        registered(SPECS, [*DECLARED, DECLARED[0]])
    assert registered(SPECS, DECLARED) == DISAGREEMENTS


def test_the_planner_derives_the_full_and_quick_plans_exactly():
    """The plans the checks' needs give are the ones the suite ran with before they were
    derived: same fields (the quick plan lists the events of its own preset only) and the
    same runs."""
    assert FULL == EvidencePlan(
        presets=("harmful", "benign", "not-overfitting"),
        gd_seeds=32,
        flow_seeds=12,
        scan_seeds=16,
        event_seeds=(("harmful", 64), ("benign", 64)),
    )
    literal_quick = EvidencePlan(presets=("benign",), gd_seeds=25, flow_seeds=6, scan_seeds=0)
    assert QUICK == EvidencePlan(
        presets=("benign",),
        gd_seeds=25,
        flow_seeds=6,
        scan_seeds=0,
        event_seeds=(("benign", 64),),
    )
    assert QUICK.points() == literal_quick.points()


@pytest.mark.parametrize("which", ["full", "quick"])
def test_a_plan_answers_exactly_the_checks_selected_for_it(which):
    selection, plan = (FULL_SELECTION, FULL) if which == "full" else (QUICK_SELECTION, QUICK)
    ids = [spec.id for spec in selected(selection)]
    assert [spec.id for spec in answerable(plan)] == ids
    assert [check.id for check in checks_for(plan)] == ids
    assert not set(DROPPED) & set(ids)


def test_the_plan_follows_the_needs():
    """Capping a kind changes the plan; capping it to zero leaves out the checks that need
    it and its runs."""
    no_events = Selection(("benign",), caps={"event": 0, "scan": 0})
    assert "benign.stage1-end" not in {spec.id for spec in selected(no_events)}
    assert plan_for(no_events).event_seeds == ()
    assert plan_for(Selection(("benign",), caps={"gd": 3})).gd_seeds == 3
    harmful = plan_for(Selection(("harmful",)))
    assert harmful.path_presets == () and harmful.scan_seeds == 0
    assert harmful.event_seeds == (("harmful", 64),)


def test_needs_are_validated():
    with pytest.raises(ValueError, match="kind='sweep'"):
        Need("sweep", 2)
    with pytest.raises(ValueError, match="seeds=-1"):
        Need("gd", -1)


#: Notation allowed in a mechanism: names and exponents, not numbers.
NOTATION = re.compile(
    r"theory(\.\w+)+|W0|kappa0|kappa_p|\^\d|ln 10|tau = 0|stage[- ][12]|2 kappa0|Lemma 4\.8"
    r"|t -> infinity"
)


def test_every_disagreement_records_its_registration():
    """Each registered disagreement names a commit of this repository, its date and the
    measurement that led to it, and says it is re-tested by every run."""
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    for disagreement in DISAGREEMENTS.values():
        record = disagreement.registration
        assert re.fullmatch(r"[0-9a-f]{7}", record.commit) and record.first_measured
        shown = subprocess.run(
            ["git", "show", "-s", "--format=%ad", "--date=short", record.commit],
            cwd=root,
            capture_output=True,
            text=True,
        )
        if shown.returncode == 0:  # a checkout without history cannot show it
            assert shown.stdout.strip() == record.date
        assert "every run re-tests it" in str(record)


def test_no_mechanism_quotes_a_number():
    for disagreement in DISAGREEMENTS.values():
        words = NOTATION.sub("", disagreement.mechanism)
        assert not re.search(r"\d", words), (disagreement.id, words)


@pytest.fixture(scope="module")
def tiny():
    """Every preset's checks on a tiny plan derived from their needs, two seeds a kind."""
    from verify.checks.suite import collect

    caps = {"gd": 2, "flow": 2, "event": 2, "scan": 1}
    plan = plan_for(Selection(tuple(PRESETS), caps=caps))
    return checks_for(plan), collect(plan)


def test_every_disagreements_numbers_come_from_the_evidence(tiny):
    checks, evidence = tiny
    shown = {}
    for check in checks:
        result = check.run(evidence)
        assert bool(result.reason) == (check.id in DISAGREEMENTS)
        if check.id in DISAGREEMENTS:
            shown[check.id] = result
    assert set(shown) == set(DISAGREEMENTS)
    for result in shown.values():
        mechanism = DISAGREEMENTS[result.check.id].mechanism
        assert result.reason.startswith(mechanism + "; in numbers: ")
        assert result.numbers and all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in result.numbers.values()
        ), result.numbers
        json.dumps(result.as_dict())  # plain numbers
        m = result.measurement
        assert result.numbers["measured"] == m.measured or math.isnan(m.measured)


def test_the_numbers_follow_the_evidence(tiny):
    """A number read off the evidence changes with it: an untrained model selects no token
    (every logit ties), so no noisy sample selects W- or R."""
    from verify.checks.evidence import untrained

    checks, evidence = tiny
    check = next(c for c in checks if c.id == "not-overfitting.noisy-selection")
    trained = check.run(evidence).numbers
    blank = check.run(untrained(evidence)).numbers
    assert trained["selects_lead"] + trained["selects_r"] > 0
    assert blank["selects_lead"] == blank["selects_r"] == 0
    assert blank["samples"] == trained["samples"]


def test_a_disagreements_theory_numbers_come_first_and_are_computed_when_bound(tiny):
    """The moving boundary's stage-2 numbers depend on the theory alone: computed when the
    check is bound, shown before the numbers of the evidence."""
    from verify.checks.catalogue.disagreements import boundary_horizons

    checks, evidence = tiny
    check = next(c for c in checks if c.id == "not-overfitting.regime-flow")
    numbers = check.run(evidence).numbers
    theory = boundary_horizons(_context("not-overfitting"))
    assert list(numbers)[: len(theory)] == list(theory) and all(
        numbers[key] == value for key, value in theory.items()
    )
    assert numbers["seeds"] == len(evidence("not-overfitting", "flow"))


def _context(name: str):
    from verify.checks.catalogue.declare import Context

    claims = Claims(predictions_for(FULL))
    return Context(name, claims.predictions[name], claims)
