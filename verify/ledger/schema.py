"""``ledger.json``, documented: every field, as data (:data:`FIELDS`; a test keeps it equal
to what :func:`verify.ledger.build.build_ledger` writes), and as a Markdown table.

Paths use ``[]`` for the items of a list; ``provenance`` is the package's provenance
record (package version, commit, libraries, command) and is documented as one field.
The schema's version (``schema_version``) grows by one whenever a field changes meaning or
goes; a new field leaves it as it is.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

FIELDS: tuple[tuple[str, str], ...] = (
    ("schema", "the schema's name: `benign-attention.ledger`"),
    ("schema_version", "the schema's version (an integer)"),
    ("verdicts_from", "where the check verdicts come from: a run, a report, or the registry"),
    ("provenance", "package version, git commit, libraries and command (written files only)"),
    ("statuses[]", "the status vocabulary, most severe first"),
    ("statuses[].key", "a status as claims carry it"),
    ("statuses[].label", "the status in words"),
    ("statuses[].meaning", "what the status means"),
    ("bases[]", "how a claim's wording can be known"),
    ("bases[].key", "a basis as claims carry it"),
    ("bases[].meaning", "what the basis means"),
    ("counts", "the number of claims of each status, by status key"),
    ("claims[]", "every claim, the paper's first, then the rebuttal's"),
    ("claims[].id", "the claim's stable id"),
    ("claims[].source", "`paper`, `appendix` or `rebuttal`"),
    ("claims[].ref", "the result it is (e.g. `Theorem 4.1, benign overfitting`)"),
    ("claims[].wording", "the claim's wording as far as this package knows it"),
    ("claims[].basis", "how the wording is known (a `bases` key)"),
    ("claims[].status", "the claim's status (a `statuses` key)"),
    ("claims[].status_label", "the status in words"),
    ("claims[].why[]", "the mechanisms, findings or reasons behind the status"),
    ("claims[].note", "what qualifies the reading (may be empty)"),
    ("claims[].checks[]", "the registered checks that decide the claim"),
    ("claims[].checks[].id", "the check's stable id"),
    ("claims[].checks[].command", "the command whose catalogue holds it (`check`: verify check)"),
    ("claims[].checks[].verdict", "its verdict, or null when it is not in the run"),
    ("claims[].checks[].name", "its display name (when in the run)"),
    ("claims[].checks[].reason", "a registered disagreement's mechanism, with the run's numbers"),
    ("claims[].checks[].status", "the status this verdict gives the claim"),
    ("claims[].results[]", "the committed experiment results that decide the claim"),
    ("claims[].results[].experiment", "what was run"),
    ("claims[].results[].regenerate", "the command that writes the files again"),
    ("claims[].results[].status", "the status the files give the claim (null: files absent)"),
    ("claims[].results[].finding", "what the files show, with numbers computed from them"),
    ("claims[].results[].record", "the record beside the files (JSON with provenance)"),
    ("claims[].results[].record.path", "its path from the repository root"),
    ("claims[].results[].record.sha256", "its SHA-256"),
    ("claims[].results[].record.bytes", "its size in bytes"),
    ("claims[].results[].record.commit", "the git commit of the code that wrote the results"),
    ("claims[].results[].record.package_version", "that code's package version"),
    (
        "claims[].results[].record.command",
        "the command line recorded with the results (a path to `verify/__main__.py` "
        "written `python -m verify`)",
    ),
    ("claims[].results[].files[]", "the files the finding is read from"),
    ("claims[].results[].files[].path", "a file's path from the repository root"),
    ("claims[].results[].files[].sha256", "its SHA-256"),
    ("claims[].results[].files[].bytes", "its size in bytes"),
    ("claims[].tests[]", "tests (`path::function`) that show the claim's implementation"),
    ("claims[].commands[]", "commands that show or redraw what the claim is about"),
    ("claims[].cost", "for a claim not run: its predicted cost, computed; else null"),
)


def paths(value: Any, prefix: str = "") -> Iterator[str]:
    """Every field path in ``value``: a list as ``name[]``, its items' fields under it;
    ``provenance`` and ``counts`` as one field each."""
    if isinstance(value, list):
        for item in value:
            yield from paths(item, prefix)
        return
    if not isinstance(value, dict):
        return
    for key, item in value.items():
        path = (f"{prefix}.{key}" if prefix else key) + ("[]" if isinstance(item, list) else "")
        yield path
        if key not in ("provenance", "counts"):
            yield from paths(item, path)


def markdown() -> str:
    """The fields as a Markdown table."""
    rows = "\n".join(f"| `{path}` | {meaning} |" for path, meaning in FIELDS)
    return "| field | meaning |\n|---|---|\n" + rows


__all__ = ["FIELDS", "paths", "markdown"]
