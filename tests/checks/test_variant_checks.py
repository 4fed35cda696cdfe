"""The model variants' checks (verify.checks.variants): declared per claim R1-R6 with stable
ids, registered disagreements keyed by declared ids, and every check able to fail: on a
small collection (2 seeds of every run kind, 2 scans), a wrong prediction flips each
verdict, each check rejects the claims twice its tolerance away, and each check of what
training does rejects the untrained simulation."""

from __future__ import annotations

import pytest

from verify.checks.catalogue.declare import ID_PATTERN
from verify.checks.variants import catalogue
from verify.checks.variants.runs import KINDS, VariantPlan, untrained
from verify.checks.variants.suite import claims, collect, mutations

CLAIMS = ("R1", "R2", "R3", "R4", "R5", "R6")


def test_every_claim_has_checks_with_stable_ids_that_name_it():
    assert sorted(set(catalogue.CLAIM_OF.values())) == list(CLAIMS)
    for spec in catalogue.SPECS:
        assert ID_PATTERN.match(spec.id), spec.id
    for check in catalogue.checks_for(claims()):
        assert check.name.startswith(catalogue.CLAIM_OF[check.id] + ":"), check.name


def test_disagreements_are_keyed_by_declared_ids_and_dated():
    ids = {spec.id for spec in catalogue.SPECS}
    assert set(catalogue.DISAGREEMENTS) <= ids
    for disagreement in catalogue.DISAGREEMENTS.values():
        assert disagreement.registration.date == "2026-12-02"


def test_quick_plan_is_smaller_and_every_need_is_met():
    for plan in (catalogue.QUICK, catalogue.FULL):
        for spec in catalogue.SPECS:
            assert all(plan.meets(spec.preset, need) for need in spec.kind.needs), spec.id
    assert len(catalogue.QUICK.points()) < len(catalogue.FULL.points())
    assert {kind for _, kind, _ in catalogue.FULL.runs} <= set(KINDS)


@pytest.fixture(scope="module")
def small():
    """Two seeds of every run kind the checks need and two scans, in this process."""
    from verify.runtime.executors import make_executor

    caps = {"gd": 2, "flow": 2, "scan": 2}
    plan = catalogue.plan(caps)
    plan = VariantPlan(plan.runs, plan.scan_mu[::2])
    executor = make_executor(workers=0)
    try:
        evidence = collect(plan, executor)
    finally:
        executor.close()
    return catalogue.checks_for(claims()), evidence


def claims_either_side(m):
    """A claim the measurement accepts and one it rejects (a one-sided check: below and
    above its interval; a two-sided one: the estimate, and three tolerances past it)."""
    if m.at_least:
        return m.interval[0] - 1.0, m.interval[1] + 1.0
    return m.measured, m.measured + 3 * m.tolerance + 1e-6 * (1 + abs(m.measured))


def test_each_check_flips_its_verdict_on_a_wrong_prediction(small):
    checks, evidence = small
    for check in checks:
        accept, reject = claims_either_side(check.run(evidence).measurement)
        accepted, rejected = check.run(evidence, accept), check.run(evidence, reject)
        assert accepted.measurement.within and not rejected.measurement.within, check.id
        assert accepted.verdict != rejected.verdict, check.id


def test_each_check_rejects_claims_beyond_its_tolerance_and_the_untrained_model(small):
    checks, evidence = small
    for row in mutations(checks, evidence):
        assert row["rejected"], row
        if row["untrained_applies"]:
            assert row["untrained_rejected"], row["id"]


def test_a_shifted_measurement_flips_an_agreement(small):
    """A trained-head check on the untrained simulation (the same runs, nothing moved): its
    estimate moves to 0 and the check no longer agrees."""
    checks, evidence = small
    check = next(c for c in checks if c.id == "r6.head-memorisation")
    moved = check.run(evidence).measurement
    assert moved.measured > 0
    still = check.run(untrained(evidence)).measurement
    assert still.measured == 0 and not still.within
