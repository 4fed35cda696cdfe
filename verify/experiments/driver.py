"""One driver for every experiment: executor, sweeps, tables, record and figures.

The driver owns the executor, runs the experiment's sweeps, and writes its tables, its
record (settings, provenance, timings) and its figures.

An :class:`Experiment` says what to compute (``compute(store, executor, progress)``, which
returns an :class:`ExperimentOutput`: tables as rows, Markdown summaries, extra record
fields) and how to draw (``draw(tables_dir, figures_dir)``). :func:`run_experiment`
does the rest, in this order: executor up, compute (resumable: finished runs live in
``OUT/runs/<key>.json``), executor down, tables (CSV, and Parquet when pandas and
pyarrow are installed), figures from those tables, then ``OUT/<name>.json`` last, so a
record on disk always describes complete tables.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from theory.foundation.validation import InvalidParameter, Validated
from verify.output.files import atomic_write_json, atomic_write_text, prepare_output_dir
from verify.output.provenance import provenance
from verify.output.tables import write_table
from verify.runtime.executors import Executor, ExecutorSettings, make_executor
from verify.runtime.store import ResultStore
from verify.sim.config import RunConfig
from verify.sim.resources import available_memory, check_memory


@dataclass
class ExperimentOutput:
    """What an experiment computed: ``tables`` (name -> rows), ``markdown`` (name -> text,
    written to ``tables/<name>.md``) and ``record`` (extra fields of the JSON record)."""

    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    markdown: dict[str, str] = field(default_factory=dict)
    record: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Experiment:
    """A named experiment: its validated settings, how to compute it and how to draw it;
    ``largest_run`` is its most memory-hungry run, trained ``runs_together`` at a time on
    shared draws (checked against the machine first)."""

    name: str
    settings: Validated
    compute: Callable[[ResultStore, Executor, bool], ExperimentOutput]
    draw: Callable[[Path, Path], list[Path]] | None = None
    largest_run: RunConfig | None = None
    runs_together: int = 1


def check_records(runs: Path) -> None:
    """Every finished record in ``runs`` must read as JSON (they are written atomically, so
    a damaged one was changed from outside); the first that does not is named."""
    for path in sorted(runs.glob("*.json")) if runs.is_dir() else ():
        try:
            json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise InvalidParameter(
                "record",
                str(path),
                f"a sweep record that reads as JSON ({error}); delete it to recompute that run",
            ) from None


def check_before_work(experiment: Experiment, out: Path, executor: Any) -> None:
    """What an experiment needs, checked before its first run: records that read, an
    executor that can start, and memory for its largest run in every worker."""
    check_records(out / "runs")
    if isinstance(executor, ExecutorSettings):
        executor.check_reachable()
    if experiment.largest_run is not None:
        workers = executor.workers if isinstance(executor, ExecutorSettings) else 1
        check_memory(
            experiment.largest_run,
            available_memory() // max(workers, 1),
            runs=experiment.runs_together,
        )


def write_tables(out: Path, output: ExperimentOutput) -> list[Path]:
    tables = out / "tables"
    written: list[Path] = []
    for name, rows in output.tables.items():
        written += write_table(tables / name, rows)
    for name, text in output.markdown.items():
        atomic_write_text(tables / f"{name}.md", text)
        written.append(tables / f"{name}.md")
    return written


def run_experiment(
    experiment: Experiment,
    out: str | Path,
    executor: ExecutorSettings | Executor | None = None,
    progress: bool = True,
    figures: bool = True,
) -> dict[str, Any]:
    """Run (or resume) ``experiment`` into ``out``; returns the record written to
    ``out/<name>.json``. Ctrl-C or SIGTERM propagates after the finished runs are saved."""
    out = prepare_output_dir(out)
    check_before_work(experiment, out, executor)
    settings = executor if isinstance(executor, ExecutorSettings) else None
    started = time.perf_counter()
    active = settings.make() if settings is not None else executor or make_executor()
    owned = settings is not None or executor is None
    try:
        output = experiment.compute(ResultStore(out / "runs"), active, progress)
    finally:
        if owned:
            active.close()
    written = write_tables(out, output)
    record: dict[str, Any] = {
        "experiment": experiment.name,
        "settings": experiment.settings.to_dict(),
        "executor": getattr(active, "name", type(active).__name__),
        "wall_seconds": time.perf_counter() - started,
        **output.record,
        "provenance": provenance(),
        "tables": [str(p.relative_to(out)) for p in written],
    }
    if figures and experiment.draw is not None:
        drawn = experiment.draw(out / "tables", out / "figures")
        record["figures"] = [str(p.relative_to(out)) for p in drawn]
    atomic_write_json(out / f"{experiment.name}.json", record)
    return record


__all__ = ["ExecutorSettings", "Experiment", "ExperimentOutput", "run_experiment", "write_tables"]
