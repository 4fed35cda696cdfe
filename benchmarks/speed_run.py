"""``verify run`` as a whole process against a PyTorch training loop on the same inputs.

The inputs (d = 2000, n = 20, T = 8, 1000 test sequences, W0 and the head) are written
once to an ``.npz``; ``python -m verify run --data-from`` (1000 steps, the reduced engine,
the default recording and every file written) runs against ``benchmarks/authors_loop.py
--bare`` (float32 SGD on the dense d x d matrix, no evaluation: the bare training loop of
the paper's public code, rewritten here) in turn, side by side (:mod:`pairs`).

    python benchmarks/speed_run.py [--runs 3] [--busy]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from pairs import ROOT, arguments, package_env, paired, save

from verify.sim.config import preset
from verify.sim.data import generate, initial_weights, save_npz


def main() -> None:
    args = arguments(__doc__.splitlines()[0]).parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="speed-run-"))
    config = preset("benign")
    data = scratch / "inputs.npz"
    save_npz(data, generate(config), initial_weights(config))
    command = [sys.executable, "-m", "verify", "run", "--data-from", str(data)]
    command += ["--out", str(scratch / "run"), "--overwrite", "--no-progress"]
    baseline = [sys.executable, str(ROOT / "benchmarks" / "authors_loop.py"), str(data), "--bare"]
    record = paired(command, baseline, args.runs, args.warmup, args.busy, env=package_env())
    record["what"] = "verify run --data-from (d = 2000, n = 20, T = 8, 1000 steps)"
    record["baseline_what"] = "PyTorch float32 SGD loop, no evaluation (benchmarks/authors_loop.py)"
    save("run", record)


if __name__ == "__main__":
    main()
