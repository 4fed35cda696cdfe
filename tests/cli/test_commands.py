"""The assumptions and check commands."""

import json

from verify.cli import main


def test_assumptions_command_prints_margins(capsys):
    assert main(["assumptions", "--preset", "harmful"]) == 0
    out = capsys.readouterr().out
    assert (
        "A2" in out
        and "NO" in out
        and "predicted regime (theory.stage1.predictions): harmful" in out
    )


def test_quick_check_writes_report(tmp_path, monkeypatch, quick_evidence, capsys):
    """The command on the quick plan (its evidence collected once per session): three
    verdict groups in report.json, exit 0 exactly when nothing is unexpected; report.html
    and the ledger beside it, the ledger's statuses from this run; the summary printed
    once; no carriage return in the progress written to a log."""
    from verify.checks import suite
    from verify.checks.registry import Verdict

    monkeypatch.setattr(suite, "collect", lambda plan, *args: quick_evidence)
    code = main(["check", "--quick", "--out", str(tmp_path)])
    report = json.loads((tmp_path / "report.json").read_text())
    verdicts = [c["verdict"] for c in report["checks"]]
    assert len(verdicts) >= 10
    assert set(verdicts) <= {verdict.value for verdict in Verdict}
    unexpected = sum(Verdict(v).unexpected for v in verdicts)
    assert report["unexpected"] == unexpected
    assert code == (1 if unexpected else 0)
    assert "| check |" in (tmp_path / "report.md").read_text()
    ledger = json.loads((tmp_path / "ledger.json").read_text())
    assert ledger["verdicts_from"].startswith("this run")
    remark = next(c for c in ledger["claims"] if c["id"] == "remark-4.3")
    assert remark["checks"][0]["verdict"] == next(
        c["verdict"] for c in report["checks"] if c["id"] == "benign.delayed-generalisation"
    )
    assert '<table id="ledger-table">' in (tmp_path / "report.html").read_text()
    printed = capsys.readouterr()
    assert printed.out.count(report["summary"]) == 1 and "\r" not in printed.err


def test_a_command_line_builds_only_its_commands_parser():
    """Each command module registers exactly the commands listed for it, and a command line
    imports the module of its command alone (the run path stays cheap to import)."""
    import subprocess
    import sys

    from verify.cli import COMMANDS, build_parser

    for module, commands in COMMANDS.items():
        parser = build_parser([commands[0]], complete=False)
        assert tuple(parser._subparsers._group_actions[0].choices) == commands, module
    assert tuple(build_parser()._subparsers._group_actions[0].choices) == tuple(
        command for commands in COMMANDS.values() for command in commands
    )
    probe = (
        "import sys; from verify.cli import main; main(['assumptions']); "
        "print(sorted(m for m in ('verify.cli.check', 'verify.cli.experiments', "
        "'verify.cli.realworld', 'verify.cli.predict') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_variants_command_exits_0_exactly_when_nothing_is_unexpected(tmp_path, monkeypatch):
    """``verify variants`` on stand-in results (the runs are tested in
    tests/checks/test_variant_checks.py): one agreeing check, then one failing; report.json,
    report.md and the ledger written, the configuration and provenance recorded, the
    variant claim decided by the run."""
    from verify.checks.registry import AGREE, Check, PaperResult, compare
    from verify.checks.variants import suite

    def results(measured: float) -> tuple[list, list, None]:
        check = Check(
            id="r1.regime",
            name="R1: stand-in",
            paper=PaperResult((), "rebuttal R1"),
            horizon="1000 GD steps",
            expected=AGREE,
            measure=lambda ev, claim=None: compare(
                1.0 if claim is None else claim,
                measured,
                (measured - 0.1, measured + 0.1),
                "2 seeds",
                0.0,
                "stand-in",
            ),
        )
        return [check.run(None)], [check], None

    for measured, status in ((1.0, 0), (2.0, 1)):
        monkeypatch.setattr(
            suite, "run_variants", lambda quick, pool, progress, m=measured: results(m)
        )
        out = tmp_path / str(measured)
        assert main(["variants", "--quick", "--no-progress", "--out", str(out)]) == status
        report = json.loads((out / "report.json").read_text())
        assert report["unexpected"] == status and report["command"] == "variants"
        assert report["seeds"] and report["provenance"]["commit"] is not None
        ledger = json.loads((out / "ledger.json").read_text())
        r1 = next(c for c in ledger["claims"] if c["id"] == "rebuttal-r1")
        assert r1["status"] == ("holds" if status == 0 else "unexpected")
        assert "| check |" in (out / "report.md").read_text()
