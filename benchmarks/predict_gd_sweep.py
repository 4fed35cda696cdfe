"""``verify predict`` against the package's GD boundary sweeps (1000 GD steps), before and
after: the boundaries measured in ``results/boundaries/gd1e3-selection-{d,n}`` (seed
geometric means of bisections, each within +-2.7% (harmful | benign) and +-3.8% (benign |
not) of its crossing) against the predictions of a baseline commit (run side by side from
its own tree) and of this tree, for the sweeps' settings (the benign preset's other
parameters, Gaussian init s = 1/sqrt(d), the d-free GD engine).

    python benchmarks/predict_gd_sweep.py [--baseline 75f0c3b] \
        [--out benchmarks/results/predict_gd_sweep]

Writes ``<out>.json`` and ``<out>.md`` (the table: measured/predicted - 1 for both, the
stated errors, and where a prediction abstains, why).
"""

from __future__ import annotations

import argparse
import csv
import json
import tempfile
from pathlib import Path

from benchmarks.predict_timing import extract
from verify.output.files import atomic_write_json, atomic_write_text
from verify.output.provenance import provenance

ROOT = Path(__file__).resolve().parents[1]
SWEEPS = ("gd1e3-selection-d", "gd1e3-selection-n")
KINDS = {
    "harmful|benign": "boundary_harmful_benign",
    "benign|not-overfitting": "boundary_benign_not",
}

#: Printed by a tree: the predictions of ``verify.predict`` for each (d, n) on stdin.
PREDICT = """
import json, sys
from verify.prediction import predict
from verify.sim.config import RunConfig
out = []
for d, n in json.loads(sys.stdin.read()):
    config = RunConfig.build(d=d, n=n, mu_norm=10.0, init="gaussian", engine="dfree",
                             test_size=0, steps=1000)
    out.append(predict(config, 1000).as_dict())
print(json.dumps(out))
"""


def measured() -> list[dict]:
    """Every (kind, d, n) of the GD sweeps with its measured boundary."""
    rows, seen = [], set()
    for sweep in SWEEPS:
        with open(ROOT / "results" / "boundaries" / sweep / "boundary_summary.csv") as f:
            for r in csv.DictReader(f):
                key = (r["kind"], int(float(r["d"])), int(r["n"]))
                if key[1] < 1000 or key in seen:
                    continue  # d = 100 < nT: no mean-field boundary; d = 1e4, n = 20 twice
                seen.add(key)
                rows.append(
                    {
                        "kind": r["kind"],
                        "d": int(float(r["d"])),
                        "n": int(r["n"]),
                        "measured": float(r["mu_star_geomean"]),
                    }
                )
    return rows


def predictions(tree: Path, settings: list[tuple[int, int]]) -> dict[tuple[int, int], dict]:
    """``verify.predict`` of ``tree`` at each setting."""
    import os
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", PREDICT],
        input=json.dumps(settings),
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(zip(settings, json.loads(done.stdout), strict=True))


def cell(record: dict, prefix: str, value: float) -> dict:
    """One prediction of one boundary against the measured ``value``."""
    predicted, error = record.get(f"{prefix}_mu"), record.get(f"{prefix}_error")
    if predicted is None or not predicted > 0:
        reason = record.get(f"{prefix}_validity") or "no boundary"
        return {"predicted": None, "error": None, "ratio": None, "abstains": reason}
    return {"predicted": predicted, "error": error, "ratio": value / predicted - 1, "abstains": ""}


def table(rows: list[dict]) -> str:
    lines = [
        "| boundary | d | n | measured ||mu||* | before: predicted (error) | before: m/p - 1 "
        "| after: predicted (error) | after: m/p - 1 |",
        "|---|---|---|---|---|---|---|---|",
    ]

    def shown(c: dict) -> tuple[str, str]:
        if c["predicted"] is None:
            return f"abstains: {c['abstains']}", "-"
        error = "" if c["error"] is None else f" ({100 * c['error']:.1f}%)"
        return f"{c['predicted']:.4g}{error}", f"{100 * c['ratio']:+.1f}%"

    for r in rows:
        before, after = shown(r["before"]), shown(r["after"])
        lines.append(
            f"| {r['kind']} | {r['d']:.0e} | {r['n']} | {r['measured']:.4g} | {before[0]} | "
            f"{before[1]} | {after[0]} | {after[1]} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default="75f0c3b")
    parser.add_argument("--out", default="benchmarks/results/predict_gd_sweep")
    args = parser.parse_args()
    rows = measured()
    settings = sorted({(r["d"], r["n"]) for r in rows})
    with tempfile.TemporaryDirectory() as scratch:
        before = predictions(extract(args.baseline, Path(scratch)), settings)
    after = predictions(ROOT, settings)
    for r in rows:
        prefix = KINDS[r["kind"]]
        r["before"] = cell(before[(r["d"], r["n"])], prefix, r["measured"])
        r["after"] = cell(after[(r["d"], r["n"])], prefix, r["measured"])
    rows.sort(key=lambda r: (r["kind"], r["n"], r["d"]))
    text = table(rows)
    print(text)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out.with_suffix(".md"), text)
    record = {"baseline": args.baseline, "rows": rows, "provenance": provenance()}
    atomic_write_json(out.with_suffix(".json"), record)


if __name__ == "__main__":
    main()
