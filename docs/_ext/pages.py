"""Sphinx extension: the pages generated at build time, from the code, into
``docs/_generated/`` (never committed, never stale).

* ``theory.md``: every derivation record of :mod:`theory.derivations`, in reading order,
  its statement as ``python -m theory --latex`` prints it, with its source status, its kind
  of proof and its links (numeric twin, simulated quantity, test).

The claim ledger page (``docs/ledger.md``) is committed: ``python -m verify ledger
--docs-page docs/ledger.md`` writes it, and a test keeps it equal to the ledger.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ROOT / "docs" / "_generated"


def api_link(dotted: str) -> str:
    """A cross-reference to the API reference (plain text when the name has none)."""
    return f"{{py:obj}}`{dotted}`"


def theory_record(number: int, item) -> str:
    """One derivation record as a MyST section."""
    import sympy as sp

    from theory.foundation.proof import PROOFS

    def link(value: str, text: str, code: bool) -> str:
        if not value:
            return text
        return api_link(value) if code else f"`{value}`"

    evidence = f"; evidence: {item.evidence}" if item.evidence else ""
    fields = [
        ("status", item.status),
        ("proof", f"{PROOFS[item.proof]}{evidence}"),
        ("numeric twin", link(item.twin, "none (no numeric twin in theory)", True)),
        ("simulated quantity", link(item.simulated, "none (no simulator counterpart)", True)),
        ("test", link(item.test, "none", False)),
    ]
    listed = "\n".join(f"- **{name}**: {value}" for name, value in fields)
    return f"## {number}. {item.title}\n\n$$\n{sp.latex(item.statement)}\n$$\n\n{listed}\n"


def theory_page() -> str:
    """Every derivation record, in reading order, with a count by kind of proof."""
    from collections import Counter

    from theory.derivations import all_derivations
    from theory.foundation.proof import PROOFS

    records = all_derivations()
    counts = Counter(item.proof for item in records)
    summary = ", ".join(f"{counts[kind]} {kind}" for kind in PROOFS)
    sections = "\n".join(theory_record(n, item) for n, item in enumerate(records, start=1))
    return f"{len(records)} records by kind of proof: {summary}.\n\n{sections}"


def write_if_changed(path: Path, text: str) -> None:
    """Write ``text`` unless the file already holds it (Sphinx then keeps its cache)."""
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def generate(app) -> None:
    GENERATED.mkdir(parents=True, exist_ok=True)
    write_if_changed(GENERATED / "theory.md", theory_page())


def setup(app) -> dict[str, object]:
    app.connect("builder-inited", generate)
    return {"parallel_read_safe": True}
