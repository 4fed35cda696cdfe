"""How the committed experiment results decide claims: each ``judge`` reads result files
under ``results/`` and returns a :class:`~verify.ledger.model.Finding`, its status and
numbers computed from the files (none typed here).

* :func:`boundary_exponent`: a regime boundary's fitted scaling exponent (95% interval)
  against the theory's leading law and the stage-2 flow's prediction;
* :func:`realworld_verdicts`: the real-world grid's paired verdicts (benign, harmful,
  inconclusive, not overfitting) of one protocol's noisy cells;
* :func:`attention_concentrates`: whether the maximum attention probability over the
  training examples rises during fine-tuning, run by run.
"""

from __future__ import annotations

import csv
import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

from verify.ledger.model import Finding, Reading

BOUNDARIES = "results/boundaries"
REALWORLD = "results/realworld"
#: The script that regenerates a boundary sweep's folder (one sweep by name).
SWEEP_SCRIPT = "results/boundaries/run_sweeps.py"
REALWORLD_TABLE = (
    "python -m verify realworld table --out results/realworld "
    "--protocols authors,authors+cls,fullbatch-adam,gd "
    "--datasets mnist,rotten-tomatoes,tweets --ns 20,200,1000 --etas 0,0.1,0.2 --seeds 3"
)


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def boundary_exponent(folder: Path, boundary: str, variable: str) -> Finding:
    """The fitted exponent of ``boundary`` in ``variable`` (``boundary_exponents.csv``):
    ``holds`` when its 95% interval holds the theory's leading exponent; ``holds-corrected``
    when it holds the stage-2 flow's prediction instead (the log factors the leading law
    drops); else ``contradicted``."""
    row = next(
        r
        for r in rows(folder / "boundary_exponents.csv")
        if r["boundary"] == boundary and r["variable"] == variable
    )
    low, high = float(row["ci_low"]), float(row["ci_high"])
    theory, predicted = float(row["theory"]), float(row["predicted_exponent"])
    text = (
        f"{boundary} scales as {variable}^{float(row['exponent']):.3f} "
        f"[{low:.3f}, {high:.3f}] ({row['values']} values of {variable}, {row['fixed']}); "
        f"leading law {theory:g} ({row['theory_basis']}), stage-2 flow {predicted:.3f}"
    )
    if low <= theory <= high:
        return Finding("holds", text)
    if low <= predicted <= high:
        return Finding(
            "holds-corrected",
            text + "; the interval excludes the leading law and holds the stage-2 flow's "
            "exponent, whose log factors the leading law drops",
        )
    return Finding("contradicted", text + "; the interval excludes both")


def realworld_verdicts(folder: Path, protocol: str, etas: Sequence[str]) -> Finding:
    """The paired verdicts of ``protocol``'s cells at noise levels ``etas``
    (``tables/realworld_protocols.csv``): ``holds`` when most cells run are benign,
    ``contradicted`` when harmful cells outnumber benign ones, else ``not-testable``
    (inconclusive at the seeds run)."""
    cells = [r for r in rows(folder / "tables" / "realworld_protocols.csv") if r["eta"] in etas]
    verdicts = Counter(r[f"{protocol}_verdict"] for r in cells if r[f"{protocol}_verdict"])
    run = sum(verdicts.values())
    counts = ", ".join(f"{count} {verdict}" for verdict, count in sorted(verdicts.items()))
    text = (
        f"protocol {protocol}, eta in {{{', '.join(etas)}}}: {run} of {len(cells)} cells run "
        f"(data set x n), verdicts paired by seed: {counts}"
    )
    if 2 * verdicts["benign"] > run:
        return Finding("holds", text)
    if verdicts["harmful"] > verdicts["benign"]:
        return Finding("contradicted", text + "; on offline substitutes of the paper's data")
    return Finding("not-testable", text + "; inconclusive at the seeds run")


def attention_concentrates(folder: Path, protocols: Sequence[str]) -> Finding:
    """Run by run (``tables/realworld_history.csv``), whether the mean over the training
    examples of the largest attention probability rises from the first evaluated epoch to
    the last: ``holds`` when it does in every run of ``protocols``."""
    first: dict[tuple[str, ...], tuple[int, float]] = {}
    last: dict[tuple[str, ...], tuple[int, float]] = defaultdict(lambda: (-1, 0.0))
    for row in rows(folder / "tables" / "realworld_history.csv"):
        if row["protocol"] not in protocols:
            continue
        key = tuple(row[k] for k in ("protocol", "dataset", "n", "eta", "seed"))
        epoch, value = int(row["epoch"]), float(row["max_attention_train"])
        if key not in first or epoch < first[key][0]:
            first[key] = (epoch, value)
        if epoch > last[key][0]:
            last[key] = (epoch, value)
    rising = sum(last[key][1] > first[key][1] for key in first)
    text = (
        f"{', '.join(protocols)}: the largest attention probability (mean over the training "
        f"examples) rises in {rising} of {len(first)} runs, median "
        f"{statistics.median(v for _, v in first.values()):.3f} at the first evaluated epoch "
        f"-> {statistics.median(last[key][1] for key in first):.3f} at the last"
    )
    return Finding("holds" if first and rising == len(first) else "contradicted", text)


def sweep(name: str, boundary: str, variable: str, what: str) -> Reading:
    """A boundary sweep's exponent as a reading."""
    return Reading(
        experiment=f"{what} ({name})",
        folder=f"{BOUNDARIES}/{name}",
        record="boundaries.json",
        files=("boundary_exponents.csv", "boundary_summary.csv"),
        regenerate=f"python {SWEEP_SCRIPT} --scratch DIR --only {name}",
        judge=boundary_exponent,
        params={"boundary": boundary, "variable": variable},
    )


HARMFUL_BENIGN_D = sweep(
    "flow1e12-selection-d",
    "harmful|benign",
    "d",
    "harmful | benign boundary over d = 1e2..1e8, gradient flow to 1e12 steps",
)
HARMFUL_BENIGN_N = sweep(
    "gd1e3-selection-n",
    "harmful|benign",
    "n",
    "harmful | benign boundary over n = 5..200 at d = 1e4, 1000 GD steps",
)
BENIGN_NOT_D = sweep(
    "flow1e12-selection-d",
    "benign|not-overfitting",
    "d",
    "benign | not-overfitting boundary over d = 1e2..1e8, gradient flow to 1e12 steps",
)


def realworld(etas: tuple[str, ...], what: str) -> Reading:
    """The real-world grid's verdicts under the authors' protocol as a reading."""
    return Reading(
        experiment=what,
        folder=REALWORLD,
        record="realworld.json",
        files=("tables/realworld_protocols.csv", "tables/realworld_summary.csv"),
        regenerate=REALWORLD_TABLE,
        judge=realworld_verdicts,
        params={"protocol": "authors", "etas": etas},
    )


TABLE_2 = realworld(("0.1",), "the real-world grid at eta = 0.1, the authors' protocol")
TABLE_2_ETA = realworld(
    ("0.1", "0.2"), "the real-world grid at eta = 0.1 and 0.2, the authors' protocol"
)
ATTENTION_DYNAMICS = Reading(
    experiment="attention over the epochs of the real-world runs, named protocols",
    folder=REALWORLD,
    record="realworld.json",
    files=("tables/realworld_history.csv", "figures/realworld_over_epochs.png"),
    regenerate=REALWORLD_TABLE,
    judge=attention_concentrates,
    params={"protocols": ("authors", "fullbatch-adam", "gd")},
)

__all__ = [
    "boundary_exponent",
    "realworld_verdicts",
    "attention_concentrates",
    "sweep",
    "realworld",
    "HARMFUL_BENIGN_D",
    "HARMFUL_BENIGN_N",
    "BENIGN_NOT_D",
    "TABLE_2",
    "TABLE_2_ETA",
    "ATTENTION_DYNAMICS",
]
