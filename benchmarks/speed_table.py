"""Print the README's speed table from the benchmarks' results (``results/speed_*.json``).

One row per result file: what was timed, its median wall and CPU seconds, the baseline's,
and the median of the pair-by-pair ratios (baseline / command) with their range; whether
another process was busy on a core, and the load average the run saw. The phase diagram's
row adds its compute limit and how far above it the command is.

    python benchmarks/speed_table.py
"""

from __future__ import annotations

import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
ORDER = ("run", "check", "check_quick", "phase_diagram")


def seconds(summary: dict[str, float]) -> str:
    return f"{summary['median']:.3g} s"


def row(record: dict) -> str:
    condition = "one other process busy" if record["busy"] else "no other load of ours"
    load = max(record["load_before"][0], record["load_after"][0])
    measured = (
        f"{seconds(record['command_wall'])} wall, {seconds(record['command_cpu'])} CPU "
        f"({condition}; load average up to {load:.1f} on {record['cpus']} cores)"
    )
    ratio = record["ratio_wall"]
    baseline = f"{record['baseline_what']}: {seconds(record['baseline_wall'])}"
    if not record.get("baseline_what"):
        baseline, ratios = "", ""
    else:
        ratios = f"{ratio['median']:.3g}x ({ratio['min']:.3g} to {ratio['max']:.3g})"
    if "limit_seconds" in record:
        measured += (
            f"; compute limit {record['limit_seconds']:.3g} s ({record['steps']:.3g} steps x "
            f"{record['multiply_adds_per_step']:.3g} multiply-adds at "
            f"{record['rate_multiply_adds_per_second'] / 1e9:.3g} G/s on "
            f"{record['workers']} workers): {record['over_limit']:.2f}x the limit"
        )
    return f"| {record['what']} | {measured} | {baseline} | {ratios} |"


def main() -> None:
    print("| what | measured | baseline | ratio (wall, pair by pair) |")
    print("|---|---|---|---|")
    found = {path.stem: path for path in RESULTS.glob("speed_*.json")}
    for name in ORDER:
        for suffix in ("", "_busy"):
            path = found.get(f"speed_{name}{suffix}")
            if path is not None:
                print(row(json.loads(path.read_text())))


if __name__ == "__main__":
    main()
