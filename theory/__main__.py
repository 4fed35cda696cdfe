"""``python -m theory``: print every derived equation and identity, with its status."""

from __future__ import annotations

import argparse
import sys

from theory.derivations import all_derivations, render


def main(argv: list[str] | None = None) -> int:
    """Print the derivations (pretty by default, ``--latex`` for LaTeX, ``--check`` to also
    run every symbolic proof). Returns the exit status (1 if a proof check fails)."""
    parser = argparse.ArgumentParser(prog="python -m theory", description=__doc__)
    parser.add_argument("--latex", action="store_true", help="print LaTeX instead of pretty text")
    parser.add_argument("--check", action="store_true", help="run the symbolic proofs as well")
    arguments = parser.parse_args(argv)
    failures = 0
    for number, item in enumerate(all_derivations(), start=1):
        print(f"[{number}] " + render(item, latex=arguments.latex))
        if arguments.check:
            verdict = item.verified()
            label = {True: "proved (residuals are 0)", False: "FAILED", None: "no symbolic check"}
            print(f"  check: {label[verdict]}\n")
            failures += verdict is False
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
