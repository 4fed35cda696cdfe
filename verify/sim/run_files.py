r"""A run's files: ``config.json``, ``summary.json``, ``history.csv``, ``attention.csv`` and
``gaps.csv``.

While the run goes on, each log point's history row is appended to
``history.partial.csv`` and flushed as soon as it is complete (log points are completed
in batches of :data:`~verify.sim.simulate.FLUSH_POINTS`), so a run killed outright keeps
everything up to its last completed batch; when the run ends (completed, interrupted or
failed) every file is written atomically and the partial file is removed.

Tables are tidy, one row per log point and sample: ``attention.csv`` has the attention
probability of each token position (columns ``p_t<t>_<group>``), ``gaps.csv`` the gap
of the sample's leader over each token (``gap_t<t>_<group>``; nan at the leader's own
tokens): :math:`\Lambda` for clean samples (leader R), :math:`\Gamma` for noisy ones
(leader :math:`W_-`).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from theory.foundation.data_model import GROUP_NAMES
from verify.output.files import atomic_write_all, json_text, numeric_csv
from verify.output.provenance import provenance
from verify.sim.history import BY_NAME, Column, History
from verify.sim.simulate import RunResult

PARTIAL_HISTORY = "history.partial.csv"
RUN_FILES = ("config.json", "summary.json", "history.csv", "attention.csv", "gaps.csv")


def token_columns(result: RunResult, prefix: str) -> list[str]:
    return [f"{prefix}_t{t}_{GROUP_NAMES[g]}" for t, g in enumerate(result.data.groups)]


def run_record(result: RunResult, data_file: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Full configuration, seed, data source (and, for data read from a file, what
    describes it: ``data_file``) and provenance."""
    record = {
        "config": result.config.to_dict(),
        "seed": result.config.seed,
        "data_source": result.data.source,
    }
    if data_file is not None:
        record["data_file"] = dict(data_file)
    return {**record, "provenance": provenance()}


def attention_table(result: RunResult) -> str:
    """``step, split, sample, p_t0_<g>, ...``: training samples, then the first test ones."""
    blocks, prefixes = [], []
    for split, arrays in (
        ("train", result.train_probabilities),
        ("test", result.test_probabilities),
    ):
        for step, probabilities in zip(result.steps, arrays, strict=True):
            blocks.append(probabilities)
            prefixes += [f"{step:.17g},{split},{i}," for i in range(probabilities.shape[0])]
    header = ["step", "split", "sample", *token_columns(result, "p")]
    values = np.concatenate(blocks) if blocks else np.zeros((0, len(header) - 3))
    return numeric_csv(header, prefixes, values)


def gap_table(result: RunResult) -> str:
    """``step, sample, kind, gap_t0_<g>, ...`` (kind: clean or noisy)."""
    kinds = np.where(result.data.noisy, "noisy", "clean")
    prefixes = [
        f"{step:.17g},{i},{kinds[i]}," for step in result.steps for i in range(result.data.n)
    ]
    header = ["step", "sample", "kind", *token_columns(result, "gap")]
    values = np.concatenate(result.gaps) if result.gaps else np.zeros((0, len(header) - 3))
    return numeric_csv(header, prefixes, values)


class RunWriter:
    """Streams a run's history into ``out`` and writes all its files at the end."""

    def __init__(self, out: str | Path, data_file: Mapping[str, Any] | None = None):
        self.out = Path(out)
        self.data_file = data_file
        self.out.mkdir(parents=True, exist_ok=True)
        self._partial = self.out / PARTIAL_HISTORY
        self._stream: Any = None
        self._writer: Any = None

    def append(self, row: Mapping[str, float]) -> None:
        """One history row, appended and flushed."""
        if self._stream is None:
            self._stream = open(self._partial, "w", encoding="utf-8", newline="")  # noqa: SIM115
            self._writer = csv.writer(self._stream, lineterminator="\n")
            self._writer.writerow(list(row))
        self._writer.writerow(["" if math.isnan(v) else f"{v:.17g}" for v in row.values()])
        self._stream.flush()

    def finish(self, result: RunResult) -> Path:
        """Write every file atomically, then remove the partial history."""
        self.close()
        texts = {
            "config.json": json_text(run_record(result, self.data_file)),
            "summary.json": json_text(result.summary()),
        }
        history = result.history
        if len(history):
            texts["history.csv"] = numeric_csv(history.names, [""] * len(history), history.values)
        texts["attention.csv"] = attention_table(result)
        texts["gaps.csv"] = gap_table(result)
        atomic_write_all({self.out / name: text.encode("utf-8") for name, text in texts.items()})
        self._partial.unlink(missing_ok=True)
        return self.out

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None


def write_run(result: RunResult, out: str | Path) -> Path:
    """Write all result files of a finished ``result`` into ``out`` (created if needed)."""
    return RunWriter(out).finish(result)


def _cell(text: str) -> float:
    """A history cell: a number, or NaN for an empty (missing) cell."""
    return float(text) if text.strip() else math.nan


def read_history(path: str | Path, columns: Mapping[str, Column] = BY_NAME) -> History:
    """A ``history.csv`` (or ``history.partial.csv``) read back as a :class:`History` of
    the declared column set ``columns`` (the bare model's by default); an empty cell is a
    missing value (NaN)."""
    text = Path(path).read_text(encoding="utf-8")
    header = text.split("\n", 1)[0].split(",")
    values = np.loadtxt(
        io.StringIO(text), delimiter=",", skiprows=1, ndmin=2, converters=_cell, dtype=np.float64
    )
    return History(header, values.reshape(-1, len(header)), columns)


__all__ = [
    "RunWriter",
    "write_run",
    "run_record",
    "read_history",
    "attention_table",
    "gap_table",
    "RUN_FILES",
    "PARTIAL_HISTORY",
]
