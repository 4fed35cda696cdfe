"""The claim ledger: every claim of the paper, its appendix and the authors' rebuttal, with
a status from a fixed vocabulary, what decides it and the evidence.

The claims are data (:mod:`.paper`, :mod:`.rebuttal`; :mod:`.model` says what a claim is
made of); :mod:`.readings` reads the committed experiment results that decide some of
them; :mod:`.costs` predicts what the claims not run would cost; :mod:`.build` computes
each claim's status from check verdicts (a run's, a report's, or the registered
expectations) and the results; :mod:`.evidence` finds every claim not linked to evidence
that exists; :mod:`.render` writes ``ledger.md`` and :mod:`.schema` documents
``ledger.json``. ``python -m verify ledger`` prints and writes it; ``python -m verify
check`` writes it next to its report, with statuses from that run's verdicts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from verify.ledger.render import markdown
from verify.output.files import atomic_write_json, atomic_write_text

LEDGER_FILES = ("ledger.json", "ledger.md")


def write_ledger(ledger: dict[str, Any], out_dir: str | Path) -> None:
    """``ledger.json`` and ``ledger.md`` into ``out_dir`` (atomically)."""
    out = Path(out_dir)
    atomic_write_json(out / "ledger.json", ledger)
    atomic_write_text(out / "ledger.md", markdown(ledger))


__all__ = ["LEDGER_FILES", "write_ledger"]
