"""The derivation registry and ``python -m theory``: source status and proof kind apart, and
no record claims a symbolic (or partial) proof without a check whose residuals vanish."""

from __future__ import annotations

import subprocess
import sys

import pytest
import sympy as sp

from theory import derivations as dv
from theory.__main__ import main
from theory.foundation.proof import (
    NUMERIC,
    PARTIAL,
    PROOFS,
    SYMBOLIC,
    Derivation,
    SizedCheck,
    residuals_vanish,
)

#: Sized proofs (e.g. T = 2..8) run here on the sizes up to this one; the module tests run
#: every size (tests/theory/test_model.py, test_softmax_cosh.py).
QUICK_LARGEST_SIZE = 3


def quick(check):
    return check.upto(QUICK_LARGEST_SIZE) if isinstance(check, SizedCheck) else check


def test_registry_lists_titled_statements_with_a_status_and_a_proof_kind():
    records = dv.all_derivations()
    assert len(records) >= 25
    titles = [item.title for item in records]
    assert len(set(titles)) == len(titles)
    for item in records:
        assert item.title and isinstance(item.statement, sp.Basic)
        assert item.status in dv.STATUSES and item.proof in PROOFS
    assert {item.proof for item in records} == set(PROOFS)


def test_no_record_claims_a_proof_without_a_check_whose_residuals_vanish():
    proved = [item for item in dv.all_derivations() if item.proof in (SYMBOLIC, PARTIAL)]
    assert len(proved) >= 15
    for item in proved:
        assert item.check is not None, item.title
        assert residuals_vanish(quick(item.check)()), item.title


def test_the_two_records_that_claimed_too_much_now_say_numeric():
    by_title = {item.title: item for item in dv.all_derivations()}
    assert by_title["Effective gap bounds"].proof == NUMERIC
    order_one = [t for t in by_title if t.startswith("Order-1 error bound of the series")]
    assert [by_title[t].proof for t in order_one] == [NUMERIC]
    assert "proved" not in order_one[0]


def test_stage1_records_are_present():
    proofs = {item.title: item.proof for item in dv.all_derivations()}
    kept = [t for t in proofs if t.startswith("Stage-1 token velocity from the exact gradient")]
    assert [proofs[t] for t in kept] == [SYMBOLIC]
    dropped = sorted(proofs[t] for t in proofs if t.startswith("Stage-1 velocity, dropped"))
    assert dropped == [NUMERIC, SYMBOLIC]


def test_a_record_cannot_claim_a_proof_it_does_not_have():
    with pytest.raises(ValueError, match="a check goes with"):
        Derivation("claim", sp.Eq(sp.Symbol("a"), 1), dv.RECONSTRUCTION, proof=SYMBOLIC)
    with pytest.raises(ValueError, match="evidence is missing"):
        Derivation("claim", sp.Eq(sp.Symbol("a"), 1), dv.RECONSTRUCTION, proof=NUMERIC)
    with pytest.raises(ValueError, match="a check goes with"):
        Derivation("claim", sp.Eq(sp.Symbol("a"), 1), dv.RECONSTRUCTION, lambda: [0])


def test_a_failing_check_is_reported_and_fails_the_command(monkeypatch, capsys):
    wrong = Derivation(
        "a wrong identity",
        sp.Eq(sp.Symbol("a"), 1),
        dv.RECONSTRUCTION,
        lambda: [sp.Symbol("a") - 1],
        SYMBOLIC,
        "residual a - 1",
    )
    monkeypatch.setattr("theory.__main__.all_derivations", lambda: [wrong])
    assert main(["--check"]) == 1
    output = capsys.readouterr().out
    assert "check: FAILED" in output and "1 FAILED" in output


def test_cli_prints_status_and_proof_for_every_record(capsys):
    assert main([]) == 0
    pretty = capsys.readouterr().out
    records = dv.all_derivations()
    assert pretty.count("\n  status: ") == len(records)
    assert pretty.count("\n  proof: ") == len(records)
    assert "status: Reconstruction (this package's own derivation" in pretty
    assert "proof: numeric only" in pretty and "proof: partial" in pretty
    assert "[1] Model output and loss" in pretty
    assert f"{len(records)} records by proof:" in pretty
    assert main(["--latex"]) == 0
    latex = capsys.readouterr().out
    assert r"\cosh" in latex and r"\sum_{t=1}^{T}" in latex


def test_module_entry_point_runs():
    completed = subprocess.run(
        [sys.executable, "-m", "theory"], capture_output=True, text=True, check=True
    )
    assert "quadrature" in completed.stdout.lower()
