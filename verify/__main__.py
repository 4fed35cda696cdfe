"""``python -m verify``: the command line (:mod:`verify.cli`)."""

import gc
import sys

from verify.cli import main

if __name__ == "__main__":
    status = main()
    # Exit without a last collection of what the command left: after a check that is
    # SymPy's caches and the evidence, seconds of work for nothing.
    gc.freeze()
    sys.exit(status)
