"""The derivation registry and ``python -m theory``."""

from __future__ import annotations

import subprocess
import sys

import sympy as sp

from theory import derivations as dv
from theory.__main__ import main


def test_registry_lists_titled_statements_with_a_status():
    items = dv.derivation_list()
    assert len(items) >= 20
    titles = [title for title, _, _ in items]
    assert len(set(titles)) == len(titles)
    for title, statement, status in items:
        assert title and isinstance(statement, sp.Basic)
        assert status in dv.STATUSES
    assert any(status == dv.RECONSTRUCTION for _, _, status in items)


def test_cheap_checks_pass():
    """The expensive T = 2..8 proofs run in the module tests; here the quick ones."""
    quick = [
        item
        for item in dv.all_derivations()
        if item.check is not None and "T = 2..8" not in item.title
    ]
    assert quick
    for item in quick:
        assert item.verified(), item.title


def test_cli_pretty_and_latex(capsys):
    assert main([]) == 0
    pretty = capsys.readouterr().out
    assert "status: Reconstruction (this package's own derivation" in pretty
    assert "[1] Model output and loss" in pretty
    assert main(["--latex"]) == 0
    latex = capsys.readouterr().out
    assert r"\cosh" in latex and r"\sum_{t=1}^{T}" in latex


def test_module_entry_point_runs():
    completed = subprocess.run(
        [sys.executable, "-m", "theory"], capture_output=True, text=True, check=True
    )
    assert "quadrature" in completed.stdout.lower()
