"""The assumptions and check commands."""

import json

from verify.cli import main


def test_assumptions_command_prints_margins(capsys):
    assert main(["assumptions", "--preset", "harmful"]) == 0
    out = capsys.readouterr().out
    assert "A2" in out and "NO" in out and "predicted regime (theory.predictions): harmful" in out


def test_quick_check_writes_report(tmp_path):
    code = main(["check", "--quick", "--out", str(tmp_path), "--no-progress"])
    report = json.loads((tmp_path / "report.json").read_text())
    assert len(report["checks"]) >= 10
    assert {c["verdict"] for c in report["checks"]} <= {"pass", "fail"}
    assert code == (0 if all(c["verdict"] == "pass" for c in report["checks"]) else 1)
    assert "| check | paper reference |" in (tmp_path / "report.md").read_text()
