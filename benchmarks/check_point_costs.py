"""What the evidence of one ``verify check`` cost, point by point, from its kept records.

Each record in ``OUT/evidence`` holds the CPU seconds its worker spent on it (and the wall
seconds); the points are grouped by what they run (preset, the kinds of run on the seed,
d, n, their steps) and each group's count, CPU seconds (total, median) and wall seconds
are printed and written to ``benchmarks/results/check_point_costs.json``; the groups
are ordered by their total CPU seconds, the largest first.

    python benchmarks/check_point_costs.py OUT/evidence
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from pairs import RESULTS

KINDS = ("gd", "flow", "event")


def group_of(point: dict[str, Any]) -> tuple:
    """(preset, kinds, d, n, steps of each kind) of an evidence point."""
    if point["kind"] == "scan":
        first = point["configs"][0]
        runs = f"scan x{len(point['configs'])}"
        return point["preset"], runs, first["model"]["d"], first["model"]["n"], "1000"
    first = point["draws"][0]
    kinds = [kind for kind in KINDS if point[kind]]
    steps = "/".join(f"{point[kind][0]['training']['steps']:.0e}" for kind in kinds)
    return point["preset"], "+".join(kinds), first["model"]["d"], first["model"]["n"], steps


def costs(directory: Path) -> list[dict[str, Any]]:
    groups: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for path in directory.glob("*.json"):
        record = json.loads(path.read_text(encoding="utf-8"))
        groups[group_of(record["point"])].append(record)
    rows = []
    for (preset, runs, d, n, steps), records in groups.items():
        cpu = [r.get("cpu_seconds", float("nan")) for r in records]
        rows.append(
            {
                "preset": preset,
                "runs": runs,
                "d": d,
                "n": n,
                "steps": steps,
                "points": len(records),
                "cpu_seconds": sum(cpu),
                "cpu_median": statistics.median(cpu),
                "wall_seconds": sum(r["wall_seconds"] for r in records),
            }
        )
    return sorted(rows, key=lambda row: -row["cpu_seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("evidence", type=Path, help="a check's OUT/evidence directory")
    args = parser.parse_args()
    rows = costs(args.evidence)
    header = ("preset", "runs", "d", "n", "steps", "points", "CPU s", "median", "wall s")
    print("{:16s} {:14s} {:>5s} {:>3s} {:14s} {:>6s} {:>7s} {:>7s} {:>7s}".format(*header))
    for r in rows:
        cells = (r["preset"], r["runs"], r["d"], r["n"], r["steps"], r["points"])
        times = (r["cpu_seconds"], r["cpu_median"], r["wall_seconds"])
        print("{:16s} {:14s} {:5d} {:3d} {:14s} {:6d}".format(*cells), end=" ")
        print("{:7.1f} {:7.3f} {:7.1f}".format(*times))
    total = sum(r["cpu_seconds"] for r in rows)
    print(f"total CPU seconds of the points: {total:.1f}")
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "check_point_costs.json"
    path.write_text(json.dumps({"evidence": str(args.evidence), "groups": rows}, indent=2) + "\n")
    print(f"written {path}")


if __name__ == "__main__":
    main()
