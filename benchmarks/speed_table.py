"""The speed table from the benchmarks' results (``results/speed_*.json`` and
``results/predict_timing.json``), printed, or written into the speed page.

One row per result file: what was timed, its median wall and CPU seconds, the baseline's,
and the median of the pair-by-pair ratios (baseline / command) with their range; whether
another process was busy on a core, and the load average the run saw. The phase diagram's
row adds its compute limit and how far above it the command is; the prediction's row its
call after the first and its command. ``--write`` replaces the table between the page's
``<!-- speed-table -->`` markers (the rest of the page is kept), with the date and commit
the results record.

    python benchmarks/speed_table.py [--write docs/speed.md]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from verify.output.files import atomic_write_text

RESULTS = Path(__file__).resolve().parent / "results"
ORDER = ("run", "check", "check_quick", "phase_diagram")
START, END = "<!-- speed-table -->", "<!-- /speed-table -->"


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


def predict_row(record: dict, busy: bool) -> str:
    """The prediction's row (:mod:`predict_timing`: medians over its rounds); ``busy``: it
    ran with one other process spinning on a core (``predict_timing_busy.json``)."""
    current, base = record["medians"]["current"], record["medians"]["baseline"]
    ratios = record["ratios"]
    loads = [r["load_average_1min"] for side in record["rounds"].values() for r in side]
    settings = len(current["per_setting_cpu"])
    what = (
        f"`verify.predict`, a call after the first ({settings} settings not seen before; CPU), "
        "and `python -m verify predict --preset benign` as a whole process "
        f"(`benchmarks/predict_timing.py`, {len(record['rounds']['current'])} rounds)"
    )

    def side(medians: dict) -> str:
        return (
            f"{medians['call_cpu'] * 1e3:.0f} ms a call; the command "
            f"{medians['command_wall']:.3g} s wall, {medians['command_cpu']:.3g} s CPU"
        )

    condition = "one other process busy" if busy else "no other load of ours"
    measured = f"{side(current)} ({condition}; load average {min(loads):.1f}-{max(loads):.1f})"
    ratio = f"{ratios['call_cpu']:.3g}x a call, {ratios['command_wall']:.3g}x the command"
    return (
        f"| {what} | {measured} | the same at commit {record['baseline']}: {side(base)} | {ratio} |"
    )


def table() -> list[str]:
    """The table's lines from the result files present."""
    lines = ["| what | measured | baseline | ratio (wall, pair by pair) |", "|---|---|---|---|"]
    found = {path.stem: path for path in RESULTS.glob("speed_*.json")}
    for name in ORDER:
        for suffix in ("", "_busy"):
            path = found.get(f"speed_{name}{suffix}")
            if path is not None:
                lines.append(row(json.loads(path.read_text())))
    for name in ("predict_timing", "predict_timing_busy"):
        path = RESULTS / f"{name}.json"
        if path.is_file():
            record = json.loads(path.read_text())
            lines.append(predict_row(record, record.get("busy", name.endswith("_busy"))))
    return lines


def stamp() -> str:
    """When and at which commit the results were measured (their provenance)."""
    records = [json.loads(path.read_text()) for path in sorted(RESULTS.glob("*.json"))]
    commits = sorted({(r["provenance"].get("commit") or "?")[:7] for r in records})
    dates = sorted(
        {time.strftime("%Y-%m-%d", time.gmtime(p.stat().st_mtime)) for p in RESULTS.glob("*.json")}
    )
    return (
        f"Measured at commit {', '.join(commits)}"
        + (f" on {', '.join(dates)}" if dates else "")
        + " (`python benchmarks/speed_table.py --write docs/speed.md`)."
    )


def write(page: Path) -> None:
    """Replace the table between the page's markers, atomically."""
    text = page.read_text(encoding="utf-8")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    block = "\n".join([START, stamp(), "", *table(), END])
    atomic_write_text(page, head + block + tail)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="the page whose table to replace")
    args = parser.parse_args()
    if args.write:
        write(args.write)
    else:
        print("\n".join(table()))


if __name__ == "__main__":
    main()
