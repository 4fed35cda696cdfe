"""``encoder-grid`` as an experiment of the package's driver: the sweep over the grid's
runs (resumable, in ``OUT/runs``), the tables in ``OUT/tables``, the figures in
``OUT/figures`` and the record ``OUT/encoder_grid.json`` (settings, regime counts, wall
time, provenance)."""

from __future__ import annotations

from pathlib import Path

from verify.encoder.grid import GridSettings, grid_point, grid_points
from verify.encoder.grid_tables import (
    grid_rows,
    plot_regimes,
    plot_trajectories,
    regime_counts,
    trajectory_rows,
)
from verify.experiments.driver import Experiment, ExperimentOutput
from verify.experiments.sweep import run_sweep
from verify.output.tables import read_table
from verify.runtime.executors import Executor
from verify.runtime.store import ResultStore
from verify.sim.config import RunConfig


def compute(
    settings: GridSettings,
    store: ResultStore,
    executor: Executor,
    progress: bool,
    limit: int | None = None,
) -> ExperimentOutput:
    """Run the grid's missing points (at most ``limit`` of them) and tabulate every
    finished one."""
    report = run_sweep(
        grid_points(settings),
        grid_point,
        store,
        executor,
        limit=limit,
        progress=progress,
        desc="encoder grid",
    )
    rows = grid_rows(report.records)
    return ExperimentOutput(
        tables={"encoder_grid": rows, "encoder_trajectories": trajectory_rows(report.records)},
        record={
            "regime_counts": regime_counts(rows),
            "runs": len(report.records),
            "computed": report.computed,
            "reused": report.skipped,
            "pending": report.pending,
            "run_seconds": sum(float(r.get("wall_seconds", 0.0)) for r in report.records),
        },
    )


def draw(tables: Path, figures: Path) -> list[Path]:
    grid = read_table(tables / "encoder_grid.csv")
    if "d" not in grid:  # no finished encoder run yet
        return []
    rows = [{key: column[i] for key, column in grid.items()} for i in range(len(grid["d"]))]
    for row in rows:
        row["residual"] = str(row["residual"]) == "True"
    written = plot_regimes(regime_counts(rows), figures)
    return written + plot_trajectories(read_table(tables / "encoder_trajectories.csv"), figures)


def encoder_grid(settings: GridSettings, limit: int | None = None) -> Experiment:
    """The grid experiment for ``settings`` (computing at most ``limit`` new runs: 0
    tabulates the finished ones only); its largest run (the largest d) is checked against
    the machine's memory before any work."""
    largest = max(d for d, _ in settings.settings())
    return Experiment(
        name="encoder_grid",
        settings=settings,
        compute=lambda store, executor, progress: compute(
            settings, store, executor, progress, limit
        ),
        draw=draw,
        largest_run=RunConfig.build(d=largest),
    )


__all__ = ["encoder_grid", "compute", "draw"]
