"""``python -m theory``: print every derived equation and identity, with its status and proof.

Each record shows its source status and, separately, its kind of proof (symbolic, partial,
numeric only, none), then its links: the numeric twin, the simulator quantity it is compared
with and its test; ``--check`` runs every symbolic check."""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from theory.derivations import all_derivations, render
from theory.foundation.proof import PROOFS, Derivation


def check_line(item: Derivation) -> tuple[str, bool]:
    """Run a record's check; the line to print and whether it failed."""
    if item.check is None:
        return f"  check: no symbolic check ({item.proof})", False
    verdict = item.verified()
    if verdict:
        return f"  check: residuals vanish ({item.proof} proof)", False
    return f"  check: FAILED (a residual does not vanish; the record claims {item.proof})", True


def main(argv: list[str] | None = None) -> int:
    """Print the derivations (pretty by default, ``--latex`` for LaTeX, ``--check`` to also
    run every symbolic check), each with its source status and its kind of proof; the last
    line counts the records by kind of proof. Returns the exit status (1 if a check fails)."""
    parser = argparse.ArgumentParser(prog="python -m theory", description=__doc__)
    parser.add_argument("--latex", action="store_true", help="print LaTeX instead of pretty text")
    parser.add_argument("--check", action="store_true", help="run the symbolic proofs as well")
    arguments = parser.parse_args(argv)
    failures = 0
    records = all_derivations()
    for number, item in enumerate(records, start=1):
        print(f"[{number}] " + render(item, latex=arguments.latex))
        if arguments.check:
            line, failed = check_line(item)
            print(line + "\n")
            failures += failed
    counts = Counter(item.proof for item in records)
    summary = ", ".join(f"{counts[kind]} {kind}" for kind in PROOFS)
    failure_note = f"; {failures} FAILED" if failures else ""
    print(f"{len(records)} records by proof: {summary}{failure_note}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
