"""The run history: declared columns, written by the simulator in their order, read back
typed (from history.csv and from JSON records), documented in docs/columns.rst."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from verify.output.files import atomic_write_json
from verify.sim.config import RunConfig
from verify.sim.history import COLUMN_NAMES, COLUMNS, History, Row, column_table, row_of
from verify.sim.run_files import read_history, write_run
from verify.sim.simulate import simulate

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def run():
    config = RunConfig.build(
        d=40, n=4, T=4, mu_norm=6.0, steps=30, test_size=8, log_geometric=5, population="final"
    )
    return simulate(config)


def test_the_simulator_records_exactly_the_declared_columns_in_order(run):
    assert run.history.names == COLUMN_NAMES
    assert len(run.history) == len(run.steps) and list(run.history.step) == run.steps
    assert len(set(COLUMN_NAMES)) == len(COLUMNS)
    assert all(column.unit and column.meaning for column in COLUMNS)


def test_columns_rows_slices_and_the_final_point(run):
    history = run.history
    column = history["train_loss"]
    assert column.dtype == np.float64 and column.shape == (len(history),)
    assert history.train_loss is not None and np.array_equal(history.train_loss, column)
    with pytest.raises(ValueError):
        column[0] = 0.0  # columns are read-only views
    row = history[3]
    assert isinstance(row, Row) and row["train_loss"] == column[3] == row.train_loss
    assert list(row) == list(COLUMN_NAMES) and dict(row)["step"] == run.steps[3]
    assert [r["step"] for r in history] == run.steps
    first = history[:4]
    assert isinstance(first, History) and len(first) == 4 and first.final == history[3]
    assert history.final == history[-1] == run.final
    assert dict(history.items())["q_norm"] is not None
    with pytest.raises(KeyError, match="not a column"):
        history["no_such_column"]
    with pytest.raises(AttributeError):
        _ = history.no_such_column
    assert len(History()) == 0 and dict(History().final) == {}


def test_rows_survive_a_json_record_and_come_back_typed(run, tmp_path):
    atomic_write_json(tmp_path / "record.json", {"history": run.history.rows()})
    rows = json.loads((tmp_path / "record.json").read_text())["history"]
    assert any(value == "nan" for row in rows for value in row.values())  # NaN as text
    back = History.from_rows(rows)
    assert back == run.history and back.names == run.history.names
    subset = History.from_rows(
        [{"step": "1", "test_loss": None}, {"step": 2.0, "test_loss": "inf"}]
    )
    assert subset.names == ("step", "test_loss")
    np.testing.assert_array_equal(subset.test_loss, [math.nan, math.inf])
    final = row_of({"status": "completed", "noisy_fitted": "0.5", "message": ""})
    assert dict(final) == {"noisy_fitted": 0.5}


def test_history_csv_reads_back_bit_for_bit(run, tmp_path):
    write_run(run, tmp_path)
    assert read_history(tmp_path / "history.csv") == run.history


def test_only_declared_columns_and_complete_rows_are_taken():
    with pytest.raises(ValueError, match="declared"):
        History(("step", "stepp"))
    with pytest.raises(ValueError, match="declared"):
        History.from_rows([{"step": 0.0, "loss": 1.0}])
    history = History(("step", "time"))
    history.append({"step": 0.0, "time": 0.0})
    with pytest.raises(ValueError, match="columns"):
        history.append({"step": 1.0})


def test_equality_is_exact_with_nan_equal_to_nan():
    one = History.from_columns({"step": [0.0, 1.0], "test_loss": [math.nan, 0.5]})
    assert one == History.from_columns({"step": [0.0, 1.0], "test_loss": [math.nan, 0.5]})
    assert one != History.from_columns({"step": [0.0, 1.0], "test_loss": [math.nan, 0.6]})
    assert one != History.from_columns({"test_loss": [math.nan, 0.5], "step": [0.0, 1.0]})


def test_the_documentation_lists_the_declared_columns():
    text = (ROOT / "docs" / "columns.rst").read_text(encoding="utf-8")
    block = text.split(".. columns\n", 1)[1].split(".. /columns", 1)[0]
    assert block.strip() == column_table(), (
        "docs/columns.rst is stale; its table should read:\n" + (column_table())
    )
    assert "columns" in (ROOT / "docs" / "index.rst").read_text(encoding="utf-8")
