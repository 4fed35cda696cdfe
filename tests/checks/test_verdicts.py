"""The quick check's verdicts against the registry, and every check on wrong inputs.

The quick evidence (the benign preset's seeds) is collected once per session
(``conftest``). A change in theory or simulation that flips any verdict fails here: every
check must agree or disagree exactly as registered, and each must fail on a wrong
prediction and (unless it is a conditional statement that holds at any query) on an
untrained simulation.
"""

from __future__ import annotations

import pytest

from verify.checks.catalogue import DISAGREEMENTS, DROPPED, SPECS
from verify.checks.registry import Verdict
from verify.checks.suite import FULL, QUICK, checks_for, judge, mutations, mutations_ok


@pytest.fixture(scope="module")
def quick(quick_evidence):
    checks = checks_for(QUICK)
    return checks, quick_evidence, judge(checks, quick_evidence)


def test_quick_check_verdicts_are_the_registered_ones(quick):
    _, _, results = quick
    verdicts = {r.name: r.verdict for r in results}
    expected = {
        r.name: (Verdict.DISAGREES_AS_REGISTERED if r.check.id in DISAGREEMENTS else Verdict.AGREES)
        for r in results
    }
    assert verdicts == expected


@pytest.mark.parametrize("kind", ["quick", "full"])
def test_every_registered_disagreement_and_exclusion_names_a_check(kind):
    """The registry's ids are checks of the full plan (no stale entries), and a check is
    never both excluded and registered."""
    ids = {check.id for check in checks_for(FULL if kind == "full" else QUICK)}
    if kind == "full":
        assert set(DISAGREEMENTS) <= ids
        assert {spec.id for spec in SPECS if spec.kind.holds_untrained} <= ids
    assert not set(DROPPED) & ids


def test_every_quick_check_fails_on_wrong_inputs(quick):
    checks, evidence, _ = quick
    rows = mutations(checks, evidence)
    failing = [row for row in rows if not mutations_ok(row)]
    assert not failing, failing
    assert {row["id"] for row in rows} == {check.id for check in checks}


def test_quick_results_state_their_statistics(quick):
    """Each measurement names its estimator and samples and has a finite tolerance built
    from its model error and interval."""
    _, _, results = quick
    for r in results:
        m = r.measurement
        assert m.estimator and m.samples
        low, high = m.interval
        assert low <= m.measured <= high or m.at_least, (r.name, m)
        if not m.at_least:
            assert m.tolerance == pytest.approx(m.model_error + (high - low) / 2)
