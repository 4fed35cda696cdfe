"""The ledger built: each claim's status from the verdicts of its checks, the findings of
its result files and the status stated for it, combined by
:func:`verify.ledger.vocabulary.combine`.

The verdicts come from a run of ``verify check`` (:func:`run_verdicts`), from a written
``report.json`` (:func:`report_verdicts`), or, without either, from the registered
expectations (:func:`registered_verdicts`: what the registry says each check will find).
A check that agrees makes its claim hold; one that disagrees as registered gives it the
check's effect (a correction or a contradiction) with the check's mechanism; an unexpected
verdict makes it ``unexpected``. A claim none of whose evidence is in the run is ``not
run``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verify.ledger import paper, rebuttal
from verify.ledger.evidence import ROOT, file_entry, reading_files, record_entry
from verify.ledger.model import Claim, Reading
from verify.ledger.vocabulary import BASES, BY_KEY, STATUSES, combine

#: ``ledger.json``'s schema name and version (see :mod:`verify.ledger.schema`).
SCHEMA = "benign-attention.ledger"
SCHEMA_VERSION = 1

AGREES, REGISTERED = "agrees", "disagrees as registered"


@dataclass(frozen=True)
class Verdicts:
    """Check verdicts by id (each a mapping with ``verdict``, ``name`` and ``reason``),
    and where they come from."""

    source: str
    by_id: Mapping[str, Mapping[str, str]]


def registered_verdicts() -> Verdicts:
    """What the registry expects of every runnable check of ``verify check`` and
    ``verify variants``."""
    from verify.checks import catalogue
    from verify.checks.variants import catalogue as variants

    by_id = {}
    for specs, disagreements in (
        (catalogue.SPECS, catalogue.DISAGREEMENTS),
        (variants.SPECS, variants.DISAGREEMENTS),
    ):
        for spec in specs:
            if spec.dropped:
                continue
            disagreement = disagreements.get(spec.id)
            by_id[spec.id] = {
                "verdict": REGISTERED if disagreement else AGREES,
                "name": spec.id,
                "reason": disagreement.mechanism if disagreement else "",
            }
    return Verdicts(
        "the registered expectations (no run; `verify check` and `verify variants` compute them)",
        by_id,
    )


def run_verdicts(results: Iterable[Any], source: str) -> Verdicts:
    """The verdicts of a run's check results."""
    return Verdicts(
        source,
        {
            r.check.id: {"verdict": r.verdict.value, "name": r.name, "reason": r.reason}
            for r in results
        },
    )


def run_then_registered(results: Iterable[Any], source: str) -> Verdicts:
    """A run's verdicts, and the registered expectations for the checks it did not run
    (those of the other command)."""
    ran, expected = run_verdicts(results, source), registered_verdicts()
    return Verdicts(f"{source}; elsewhere {expected.source}", {**expected.by_id, **ran.by_id})


def report_verdicts(reports: Sequence[Mapping[str, Any]], source: str) -> Verdicts:
    """The verdicts written in ``report.json`` files."""
    by_id = {
        entry["id"]: {
            "verdict": entry["verdict"],
            "name": entry.get("name", entry["id"]),
            "reason": entry.get("reason", ""),
        }
        for report in reports
        for entry in report.get("checks", [])
    }
    return Verdicts(source, by_id)


def check_status(verdict: str, effect: str) -> str:
    """A claim's status from one of its checks' verdict."""
    if verdict == AGREES:
        return "holds"
    return effect if verdict == REGISTERED else "unexpected"


def check_entries(claim: Claim, verdicts: Verdicts) -> list[dict[str, Any]]:
    """Each check of the claim with its verdict in ``verdicts`` (None when absent) and
    the status it gives the claim."""
    out = []
    for ref in claim.checks:
        found = verdicts.by_id.get(ref.id)
        entry: dict[str, Any] = {"id": ref.id, "command": ref.command, "verdict": None}
        if found is not None:
            status = check_status(found["verdict"], ref.effect or claim.on_disagreement)
            entry.update(
                verdict=found["verdict"], name=found["name"], reason=found["reason"], status=status
            )
        out.append(entry)
    return out


def result_entry(reading: Reading, root: Path) -> dict[str, Any]:
    """A reading's finding and its files (SHA-256), the record's provenance and the
    command that regenerates them; status None when the files are not here."""
    entry: dict[str, Any] = {"experiment": reading.experiment, "regenerate": reading.regenerate}
    paths = reading_files(root, reading)
    if not all(path.is_file() for path in paths):
        return {**entry, "status": None, "finding": f"{reading.folder} is not in this tree"}
    finding = reading.find(root)
    return {
        **entry,
        "status": finding.status,
        "finding": finding.text,
        "record": record_entry(root, reading),
        "files": [file_entry(root, path) for path in paths[1:]],
    }


def reasons(status: str, checks: list[dict], results: list[dict]) -> list[str]:
    """Why a claim has its status: the mechanisms and findings behind it (for agreeing
    checks, how many)."""
    matching = [c for c in checks if c.get("status") == status]
    absent = sum(c["verdict"] is None for c in checks)
    if status == "holds" and matching:
        agree = "its check agrees" if len(matching) == 1 else f"its {len(matching)} checks agree"
        found = [agree + f" ({absent} not in this run)" * bool(absent)]
    else:
        found = [f"`{c['id']}`: {c['reason']}" for c in matching]
    return found + [f"{r['experiment']}: {r['finding']}" for r in results if r["status"] == status]


def assess(claim: Claim, verdicts: Verdicts, root: Path = ROOT) -> dict[str, Any]:
    """One claim's entry of the ledger (see :mod:`verify.ledger.schema`)."""
    checks = check_entries(claim, verdicts)
    results = [result_entry(reading, root) for reading in claim.readings]
    standing = claim.standing
    decided = [c["status"] for c in checks if c["verdict"] is not None]
    decided += [r["status"] for r in results if r["status"] is not None]
    status = combine(decided + ([standing.status] if standing else []))
    why = reasons(status, checks, results) if status else []
    if standing is not None and status == standing.status:
        why.append(standing.why)
    if status is None:
        commands = " and ".join(sorted({f"`verify {c.command}`" for c in claim.checks}))
        status, why = "not-run", [f"none of its checks is in this run ({commands} runs them)"]
    return {
        "id": claim.id,
        "source": claim.source,
        "ref": claim.ref,
        "wording": claim.wording,
        "basis": claim.basis,
        "status": status,
        "status_label": BY_KEY[status].label,
        "why": why,
        "note": claim.note,
        "checks": checks,
        "results": results,
        "tests": list(claim.tests),
        "commands": list(claim.commands),
        "cost": standing.cost(root) if standing and standing.cost else None,
    }


def all_claims() -> tuple[Claim, ...]:
    """The paper's claims, then the rebuttal's."""
    return paper.CLAIMS + rebuttal.CLAIMS


def build_ledger(
    verdicts: Verdicts | None = None,
    claims: Sequence[Claim] | None = None,
    root: Path = ROOT,
    provenance: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ledger as one JSON object (see :mod:`verify.ledger.schema`)."""
    verdicts = verdicts or registered_verdicts()
    entries = [assess(claim, verdicts, root) for claim in claims or all_claims()]
    counts = {s.key: sum(e["status"] == s.key for e in entries) for s in STATUSES}
    ledger: dict[str, Any] = {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "verdicts_from": verdicts.source,
        "statuses": [{"key": s.key, "label": s.label, "meaning": s.meaning} for s in STATUSES],
        "bases": [{"key": b.key, "meaning": b.meaning} for b in BASES],
        "counts": counts,
        "claims": entries,
    }
    if provenance is not None:
        ledger["provenance"] = dict(provenance)
    return ledger


__all__ = [
    "SCHEMA",
    "SCHEMA_VERSION",
    "Verdicts",
    "registered_verdicts",
    "run_verdicts",
    "run_then_registered",
    "report_verdicts",
    "check_status",
    "check_entries",
    "result_entry",
    "reasons",
    "assess",
    "all_claims",
    "build_ledger",
]
