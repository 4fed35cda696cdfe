"""The boundary sweeps of this directory, in priority order, in one process (serial runs).

Each sweep writes its tables and record into ``SCRATCH/<name>``; runs are stored per
horizon in ``SCRATCH/runs-<steps>`` (shared by both rules, so the benign|not runs of the
accuracy rule are the selection rule's). The small files (Markdown, CSV, JSON) are copied
here. A sweep starts only if the clock is before ``--stop`` (UTC, HH:MM).

    python results/boundaries/run_sweeps.py --scratch /work/scratch-bounds --stop 15:50
"""

from __future__ import annotations

import argparse
import datetime as dt
import shutil
from pathlib import Path

from verify.experiments.boundaries import boundary_sweep
from verify.experiments.driver import run_experiment
from verify.experiments.settings import BoundarySettings
from verify.runtime.executors import ExecutorSettings

HERE = Path(__file__).resolve().parent
D_VALUES = (10**2, 10**3, 10**4, 10**5, 10**6, 10**7, 10**8)
N_VALUES = (5, 20, 80, 200)
COMMON = {
    "n_fixed": 20,
    "d_fixed": 10**4,
    "seeds": 3,
    "rounds": 6,
    "bracket_units": "scaled",
    "overfit_bracket": (1.0, 128.0),
}
SELECTION = {"rule": "selection", "harmful_bracket": (0.5, 16.0)}
ACCURACY = {"rule": "accuracy", "harmful_bracket": (0.05, 16.0)}
GD = {"engine": "dfree", "steps": 10**3}
FLOW = {"engine": "dfree-flow", "steps": 10**12}
#: Gradient flow to the GD horizon 1e3 (flow time 5): GD against the flow the theory solves.
FLOW_SHORT = {"engine": "dfree-flow", "steps": 10**3}
SWEEPS = (
    ("gd1e3-selection-d", {**GD, **SELECTION, "d_values": D_VALUES, "n_values": ()}),
    ("gd1e3-accuracy-d", {**GD, **ACCURACY, "d_values": D_VALUES, "n_values": ()}),
    ("flow1e12-selection-d", {**FLOW, **SELECTION, "d_values": D_VALUES, "n_values": ()}),
    ("flow1e3-selection-d", {**FLOW_SHORT, **SELECTION, "d_values": D_VALUES, "n_values": ()}),
    ("gd1e3-selection-n", {**GD, **SELECTION, "d_values": (), "n_values": N_VALUES}),
    ("gd1e3-accuracy-n", {**GD, **ACCURACY, "d_values": (), "n_values": N_VALUES}),
    ("flow1e12-accuracy-d", {**FLOW, **ACCURACY, "d_values": D_VALUES, "n_values": ()}),
)


def run_one(name: str, values: dict, scratch: Path) -> None:
    settings = BoundarySettings(**{**COMMON, **values})
    out = scratch / name
    store = scratch / f"runs-{settings.engine}-{settings.steps}"
    store.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    if not (out / "runs").exists():
        (out / "runs").symlink_to(store)
    record = run_experiment(
        boundary_sweep(settings), out, ExecutorSettings(workers=0), progress=False, figures=False
    )
    target = HERE / name
    target.mkdir(exist_ok=True)
    shutil.copy(out / "boundaries.json", target / "boundaries.json")
    for table in (out / "tables").glob("*"):
        if table.suffix in (".md", ".csv"):
            shutil.copy(table, target / table.name)
    print(f"{name}: {record['runs']} runs, {record['wall_seconds']:.0f} s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scratch", type=Path, required=True)
    parser.add_argument("--stop", required=True, help="UTC HH:MM after which no sweep starts")
    parser.add_argument("--only", default="", help="comma-separated sweep names")
    args = parser.parse_args()
    hour, minute = map(int, args.stop.split(":"))
    only = set(filter(None, args.only.split(",")))
    for name, values in SWEEPS:
        now = dt.datetime.now(dt.UTC)
        if (now.hour, now.minute) >= (hour, minute):
            print(f"{name}: not started (past {args.stop} UTC)", flush=True)
            continue
        if not only or name in only:
            run_one(name, values, args.scratch)


if __name__ == "__main__":
    main()
