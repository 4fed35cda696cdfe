"""The ledger as Markdown: ``ledger.md`` (and the documentation's page, which adds the
schema), the console's summary, and the counts line."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verify.ledger import schema

INTRO = (
    "Every claim of the paper, its appendix and the authors' rebuttal, with its status, "
    "what decides it and the evidence: the registered checks of `verify check` by stable "
    "id, the committed experiment results under `results/` with their SHA-256, the commit "
    "of the code that wrote them and the command that writes them again, and the tests "
    "and commands that show the rest. The paper's full text is not available: each claim "
    "says how its wording is known."
)


def cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def counts_line(ledger: Mapping[str, Any]) -> str:
    """``36 claims: 7 holds in this reconstruction, ...`` (statuses with claims only)."""
    labels = {s["key"]: s["label"] for s in ledger["statuses"]}
    parts = [f"{n} {labels[key]}" for key, n in ledger["counts"].items() if n]
    return f"{len(ledger['claims'])} claims: " + "; ".join(parts)


def decided_by(claim: Mapping[str, Any]) -> str:
    """What decides a claim, in a few words."""
    parts = []
    if claim["checks"]:
        parts.append(f"{len(claim['checks'])} check{'s' * (len(claim['checks']) > 1)}")
    if claim["results"]:
        parts.append(f"{len(claim['results'])} result set{'s' * (len(claim['results']) > 1)}")
    if claim["tests"]:
        parts.append(f"{len(claim['tests'])} test{'s' * (len(claim['tests']) > 1)}")
    return ", ".join(parts) or "stated (see below)"


def summary_table(ledger: Mapping[str, Any]) -> str:
    rows = [
        f"| `{c['id']}` | {cell(c['ref'])} | {cell(c['status_label'])} | {decided_by(c)} |"
        for c in ledger["claims"]
    ]
    return "| claim | result | status | decided by |\n|---|---|---|---|\n" + "\n".join(rows)


def status_table(ledger: Mapping[str, Any]) -> str:
    rows = [
        f"| `{s['key']}` | {s['label']} | {cell(s['meaning'])} | {ledger['counts'][s['key']]} |"
        for s in ledger["statuses"]
    ]
    return "| status | label | meaning | claims |\n|---|---|---|---|\n" + "\n".join(rows)


def result_lines(result: Mapping[str, Any]) -> list[str]:
    lines = [f"- {result['experiment']}: {result['finding']}"]
    if result.get("record"):
        record = result["record"]
        lines.append(
            f"  - record `{record['path']}` (SHA-256 `{record['sha256']}`), written at commit "
            f"`{record['commit']}` by `{record['command']}`"
        )
        lines += [f"  - `{f['path']}` SHA-256 `{f['sha256']}`" for f in result["files"]]
    lines.append(f"  - regenerate: `{result['regenerate']}`")
    return lines


def claim_section(claim: Mapping[str, Any]) -> list[str]:
    """One claim: wording, status and why, and its evidence."""
    lines = [
        f"### `{claim['id']}`: {claim['ref']}",
        "",
        f"> {claim['wording']}",
        "",
        f"Wording: {claim['basis']} ({claim['source']}). **Status: {claim['status_label']}.**",
        "",
        *(f"- {why}" for why in claim["why"]),
    ]
    if claim["note"]:
        lines += ["", claim["note"]]
    if claim["cost"]:
        lines += ["", f"Predicted cost: {claim['cost']}."]
    if claim["checks"]:
        lines += ["", "Checks:", ""]
        lines += [
            f"- `{c['id']}` ({c['command']}): {c['verdict'] or 'not in this run'}"
            for c in claim["checks"]
        ]
    if claim["results"]:
        lines += ["", "Results:", ""]
        for result in claim["results"]:
            lines += result_lines(result)
    for title, key in (("Tests", "tests"), ("Commands", "commands")):
        if claim[key]:
            lines += ["", f"{title}:", "", *(f"- `{item}`" for item in claim[key])]
    return [*lines, ""]


def markdown(ledger: Mapping[str, Any], title: str = "# Claim ledger") -> str:
    """``ledger.md``: the counts, the vocabulary, one table, then each claim."""
    lines = [title, "", INTRO, "", f"Check verdicts: {ledger['verdicts_from']}.", ""]
    provenance = ledger.get("provenance")
    if provenance:
        lines += [
            f"Package version {provenance.get('package_version')}, commit "
            f"`{provenance.get('commit')}`.",
            "",
        ]
    lines += [counts_line(ledger) + ".", "", "## Statuses", "", status_table(ledger), ""]
    lines += ["## Claims", "", summary_table(ledger), "", "## Each claim", ""]
    for claim in ledger["claims"]:
        lines += claim_section(claim)
    return "\n".join(lines)


def documentation_page(ledger: Mapping[str, Any]) -> str:
    """The documentation's page: the ledger from the registered expectations and the
    committed results, and ``ledger.json``'s schema."""
    return (
        markdown(ledger)
        + "\n## The schema of `ledger.json`\n\n"
        + f"Schema `{ledger['schema']}`, version {ledger['schema_version']}. "
        + "Lists are written `[]`.\n\n"
        + schema.markdown()
        + "\n"
    )


def console(ledger: Mapping[str, Any]) -> str:
    """The ledger for a terminal: one line a claim, then the counts."""
    width = max(len(c["id"]) for c in ledger["claims"])
    lines = [f"{c['id'].ljust(width)}  {c['status_label']}" for c in ledger["claims"]]
    return "\n".join([*lines, "", counts_line(ledger)])


__all__ = ["INTRO", "counts_line", "markdown", "documentation_page", "console"]
