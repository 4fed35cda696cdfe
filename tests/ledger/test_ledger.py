"""The claim ledger: every claim linked to evidence that exists (and a claim without any
fails), the paper's results all present, statuses computed from verdicts and result files,
the schema documented, the documentation's page kept equal to the ledger, the command."""

from __future__ import annotations

import json
import subprocess

import pytest

from verify.cli import build_parser, main
from verify.cli.ledger import command_exists
from verify.ledger.build import (
    AGREES,
    REGISTERED,
    Verdicts,
    all_claims,
    assess,
    build_ledger,
    registered_verdicts,
)
from verify.ledger.evidence import ROOT, problems, reading_files
from verify.ledger.model import Claim, Standing, checks
from verify.ledger.readings import ENCODER_PAPER, ETA_HEATMAP, HARMFUL_BENIGN_D, TABLE_2
from verify.ledger.render import documentation_page
from verify.ledger.schema import FIELDS, paths
from verify.ledger.vocabulary import STATUSES

PARSER = build_parser()
DOCS_PAGE = ROOT / "docs" / "ledger.md"


def exists(command: str) -> bool:
    return command_exists(PARSER, command)


@pytest.fixture(scope="module")
def ledger():
    return build_ledger()


def test_every_claim_is_linked_to_evidence_that_exists():
    """Existing check ids, committed result files, tests and commands that parse."""
    assert problems(all_claims(), command_ok=exists) == []


def test_a_claim_without_evidence_fails():
    bare = Claim("theorem-9.9", "paper", "Theorem 9.9", "Something holds.", "reconstructed")
    assert problems([bare], command_ok=exists) == [
        "theorem-9.9: no evidence (no check, result or status)"
    ]
    broken = Claim(
        "lemma-9.9",
        "paper",
        "Lemma 9.9",
        "Something else holds.",
        "reconstructed",
        checks=checks("benign.no-such-check", "benign.regime-gd", command="variants"),
        tests=("tests/sim/test_data.py::test_that_does_not_exist",),
        commands=("python -m verify no-such-command",),
    )
    found = problems([broken], command_ok=exists)
    assert "lemma-9.9: check 'benign.no-such-check' is not in the catalogue of 'variants'" in found
    assert any("test_that_does_not_exist does not exist" in p for p in found)
    assert any("no-such-command" in p for p in found)
    unpriced = Claim(
        "r9", "rebuttal", "R9", "A neighbour holds.", "quoted", standing=Standing("not-run", "x")
    )
    assert problems([unpriced]) == ["r9: not run, but no predicted cost"]
    assert problems([bare, bare])[-1] == "theorem-9.9: the id is used twice"


def test_a_missing_result_file_fails(tmp_path):
    """A reading whose files are not in the tree (here an empty root) is a problem."""
    claim = Claim("remark-9.9", "paper", "R", "w", "quoted", readings=(HARMFUL_BENIGN_D,))
    found = problems([claim], root=tmp_path)
    assert any("boundary_exponents.csv does not exist" in p for p in found)


def test_result_files_are_committed():
    """Every file a reading reads is tracked by git (not a local leftover)."""
    files = {
        path.relative_to(ROOT).as_posix()
        for claim in all_claims()
        for reading in claim.readings
        for path in reading_files(ROOT, reading)
    }
    done = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "--", *sorted(files)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip("not a git checkout")
    assert set(done.stdout.split()) == files


def test_the_ledger_holds_every_result_asked_for():
    refs = " | ".join(claim.ref for claim in all_claims())
    wanted = [
        "Definition 3.1",
        "(A1)-(A8)",
        "Theorem 4.1, not overfitting",
        "Theorem 4.1, benign overfitting",
        "Theorem 4.1, the SNR condition",
        "Remark 4.2",
        "Remark 4.3",
        *(f"Lemma 4.{k}" for k in (5, 6, 7, 8)),
        *(f"Figure {k}" for k in (1, 2, 3, 4, 5)),
        "Figures 6-7",
        "the phase diagram",
        "Table 2",
        "Table 2 at eta = 0 and 0.2",
        "heat map over eta",
        "Figures 8-9",
        *(f"R{k}:" for k in range(1, 7)),
    ]
    assert [w for w in wanted if w not in refs] == []


def test_statuses_follow_the_verdicts():
    """A claim holds when its checks agree, takes its registered effect when one disagrees
    as registered, is unexpected on an unexpected verdict, and is not run without any."""
    claim = Claim(
        "c",
        "paper",
        "C",
        "w",
        "quoted",
        checks=checks("a.x", "a.y"),
        on_disagreement="contradicted",
    )

    def status(verdicts: dict[str, str]) -> str:
        by_id = {i: {"verdict": v, "name": i, "reason": f"why {i}"} for i, v in verdicts.items()}
        return assess(claim, Verdicts("test", by_id))["status"]

    assert status({"a.x": AGREES, "a.y": AGREES}) == "holds"
    assert status({"a.x": AGREES, "a.y": REGISTERED}) == "contradicted"
    assert status({"a.x": "unexpected: new failure", "a.y": REGISTERED}) == "unexpected"
    assert status({"a.x": AGREES}) == "holds"
    assert status({}) == "not-run"


def test_registered_expectations_and_results_decide_the_paper_claims(ledger):
    by_id = {claim["id"]: claim for claim in ledger["claims"]}
    assert by_id["theorem-4.1-not-overfitting"]["status"] == "contradicted"
    assert by_id["remark-4.3"]["status"] == "holds"
    assert by_id["rebuttal-r1"]["status"] == "holds"  # its checks are registered to agree
    assert by_id["rebuttal-r5"]["status"] == "holds-corrected"  # one registered disagreement
    harmful = by_id["remark-4.2"]["results"][0]
    assert harmful["status"] == "holds" and "d^0.2" in harmful["finding"]
    assert len(harmful["record"]["sha256"]) == 64 and harmful["record"]["commit"]
    assert set(ledger["counts"]) == {s.key for s in STATUSES}
    assert sum(ledger["counts"].values()) == len(ledger["claims"])


def test_the_variants_checks_decide_the_rebuttal_claims():
    """R1-R6 point into the catalogue of ``verify variants``: its verdicts decide them."""
    from verify.checks.variants.catalogue import CLAIM_OF, SPECS
    from verify.ledger.rebuttal import CLAIMS

    claims = {claim.id: claim for claim in CLAIMS}
    for number in range(1, 7):
        claim = claims[f"rebuttal-r{number}"]
        ids = {ref.id for ref in claim.checks}
        assert ids and {ref.command for ref in claim.checks} == {"variants"}
        assert ids == {spec.id for spec in SPECS if CLAIM_OF[spec.id] == f"R{number}"}
        agree = {i: {"verdict": AGREES, "name": i, "reason": ""} for i in ids}
        assert assess(claim, Verdicts("test", agree))["status"] == "holds"
        one = sorted(ids)[0]
        failed = {**agree, one: {"verdict": "unexpected: new failure", "name": one, "reason": ""}}
        assert assess(claim, Verdicts("test", failed))["status"] == "unexpected"
        missing = assess(claim, Verdicts("test", {}))  # a check run only
        assert missing["status"] == "not-run" and "`verify variants` runs them" in missing["why"][0]


def test_a_reading_can_contradict(tmp_path):
    """The exponent reading holds, corrects or contradicts as the interval moves."""
    source = ROOT / HARMFUL_BENIGN_D.folder / "boundary_exponents.csv"
    header, *rows = source.read_text(encoding="utf-8").splitlines()
    folder = tmp_path / "sweep"
    folder.mkdir()

    def judged(low: str, high: str) -> str:
        changed = [header]
        for row in rows:
            cells = row.split(",")
            if cells[1] == "harmful|benign":
                cells[6], cells[7] = low, high
            changed.append(",".join(cells))
        (folder / "boundary_exponents.csv").write_text("\n".join(changed), encoding="utf-8")
        return HARMFUL_BENIGN_D.judge(folder, **HARMFUL_BENIGN_D.params).status

    assert judged("0.24", "0.26") == "holds"
    assert judged("0.240", "0.2449") == "holds-corrected"  # holds 0.2435, not 0.25
    assert judged("0.30", "0.32") == "contradicted"


def test_the_encoder_reading_holds_contradicts_or_was_not_run(tmp_path):
    """Every residual encoder agreeing with the bare model holds; one that does not
    contradicts; the runs without residual connections do not decide; none is not run."""
    source = ROOT / ENCODER_PAPER.folder / "tables" / "encoder_grid.csv"
    header, *lines = source.read_text(encoding="utf-8").splitlines()
    residual, agree = header.split(",").index("residual"), header.split(",").index("agree")
    (tmp_path / "tables").mkdir()

    def judged(*runs: tuple[str, str]) -> str:
        changed = [header]
        for on, agrees in runs:
            cells = lines[0].split(",")
            cells[residual], cells[agree] = on, agrees
            changed.append(",".join(cells))
        (tmp_path / "tables" / "encoder_grid.csv").write_text("\n".join(changed), "utf-8")
        return ENCODER_PAPER.judge(tmp_path, **ENCODER_PAPER.params).status

    assert judged(("True", "True"), ("False", "False")) == "holds"
    assert judged(("True", "True"), ("True", "False")) == "contradicted"
    assert judged(("False", "True")) == "not-run"


def test_the_eta_sweep_reading_holds_contradicts_or_was_not_run(tmp_path):
    """The heat map's reading: benign at most levels of every data set holds; harmful
    outnumbering benign on one data set contradicts; neither is not testable; a data set
    with fewer levels (or without its clean level) is not run."""
    params = ETA_HEATMAP.params
    header = "protocol,dataset,n,eta,seeds,test_accuracy,final_change,noisy_fitted,"
    header += "early_stopped_noisy_fitted,final_verdict"
    (tmp_path / "tables").mkdir()

    def judged(verdicts: dict[str, list[str]], levels: int = params["levels"]) -> str:
        lines = [header]
        for dataset in params["datasets"]:
            lines.append(f"{params['protocol']},{dataset},{params['n']},0.0,2,0.9,0.0,,,clean")
            for k in range(levels):
                verdict = verdicts.get(dataset, ["benign"])[k % len(verdicts.get(dataset, [0]))]
                change = -0.001 * (k + 1) if verdict == "benign" else -0.05
                row = f"{params['protocol']},{dataset},{params['n']},{(k + 1) / 100},2,"
                lines.append(row + f"{0.9 + change},{change},1.0,1.0,{verdict}")
        path = tmp_path / "tables" / "realworld_eta_sweep.csv"
        path.write_text("\n".join(lines), encoding="utf-8")
        return ETA_HEATMAP.judge(tmp_path, **params).status

    assert judged({}) == "holds"
    assert judged({"tweets": ["harmful", "harmful", "benign"]}) == "contradicted"
    assert judged({"tweets": ["inconclusive", "benign"]}) == "not-testable"
    assert judged({}, levels=params["levels"] - 1) == "not-run"


def test_table_2_counts_the_authors_cells(ledger):
    entry = next(c for c in ledger["claims"] if c["id"] == "table-2")["results"][0]
    assert entry["experiment"] == TABLE_2.experiment
    assert "protocol authors" in entry["finding"] and "harmful" in entry["finding"]


def test_the_schema_documents_every_field():
    written = set(paths(build_ledger(registered_verdicts(), provenance={"commit": "x"})))
    assert written == {path for path, _ in FIELDS}


def test_the_documentation_page_is_the_ledger(ledger):
    """docs/ledger.md is generated (``python -m verify ledger --docs-page docs/ledger.md``)."""
    assert DOCS_PAGE.read_text(encoding="utf-8") == documentation_page(ledger)


def test_the_command_prints_and_writes_the_ledger(tmp_path, capsys):
    report = {
        "checks": [{"id": "benign.delayed-generalisation", "verdict": "unexpected: new failure"}]
    }
    (tmp_path / "report.json").write_text(json.dumps(report))
    out = tmp_path / "ledger"
    code = main(["ledger", "--check", "--out", str(out), "--report", str(tmp_path / "report.json")])
    assert code == 0
    printed = capsys.readouterr().out
    assert "remark-4.3" in printed and "claims:" in printed.splitlines()[-1]
    written = json.loads((out / "ledger.json").read_text())
    assert written["schema_version"] == 1 and written["provenance"]["package_version"]
    remark = next(c for c in written["claims"] if c["id"] == "remark-4.3")
    assert remark["status"] == "unexpected"
    assert (out / "ledger.md").read_text().startswith("# Claim ledger")
    assert main(["ledger", "--out", str(out)]) == 2  # an earlier ledger is not replaced


def test_commands_are_recognised():
    assert exists("python -m verify check --quick")
    assert not exists("python -m verify check --no-such-flag")
    assert not exists("python -m verify run --preset nowhere --out DIR")
    assert exists("python -m theory --check") and not exists("python -m theory --bogus")
    assert exists("python results/boundaries/run_sweeps.py --scratch DIR")
    assert not exists("python results/no_such_script.py")


def test_the_ledger_is_plain_json(ledger):
    """Every number is a number or null (no NaN), every status a known key."""
    text = json.dumps(ledger, allow_nan=False)
    assert json.loads(text) == ledger
    assert {c["status"] for c in ledger["claims"]} <= {s.key for s in STATUSES}


def test_recorded_commands_read_as_typed():
    from verify.ledger.evidence import recorded_command

    assert recorded_command("/x/y/verify/__main__.py max-margin --out d") == (
        "python -m verify max-margin --out d"
    )
    assert recorded_command("results/boundaries/run_sweeps.py --only a") == (
        "python results/boundaries/run_sweeps.py --only a"
    )
    assert recorded_command(None) is None


def test_a_tree_without_the_results_still_gives_a_ledger(tmp_path):
    """An installed package without its repository's results (``pip install .`` run
    elsewhere): the readings say their files are not here and the cost says why it
    cannot be computed, instead of raising."""
    ledger = build_ledger(root=tmp_path)
    heatmap = next(c for c in ledger["claims"] if c["id"] == "rebuttal-heatmap-eta")
    assert heatmap["cost"].startswith("not computable here")
    table = next(c for c in ledger["claims"] if c["id"] == "table-2")
    assert "is not in this tree" in table["results"][0]["finding"]
