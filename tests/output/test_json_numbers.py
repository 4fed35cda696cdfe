"""Outputs for other tools: ``json.load`` of every JSON the package writes gives numbers or
``null`` where a number belongs, never a string such as ``"nan"``; CSV cells are empty
where a value is missing; Parquet keeps numeric columns as floats."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from verify.cli import main
from verify.output.files import atomic_write_csv, atomic_write_json, numeric_csv
from verify.output.tables import read_table, write_table

ROOT = Path(__file__).resolve().parents[2]


def number_strings(value: Any, where: str = "") -> list[str]:
    """Every string in a loaded JSON value that spells a number (``"nan"``, ``"inf"``,
    ``"0.5"``): a number written as text, which a reader's arithmetic refuses."""
    if isinstance(value, dict):
        return [hit for k, v in value.items() for hit in number_strings(v, f"{where}.{k}")]
    if isinstance(value, list):
        return [hit for i, v in enumerate(value) for hit in number_strings(v, f"{where}[{i}]")]
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return []
        return [f"{where} = {value!r}"]
    return []


def assert_numbers(path: Path) -> None:
    with open(path, encoding="utf-8") as stream:
        loaded = json.load(stream, parse_constant=lambda name: pytest.fail(f"{path}: {name}"))
    hits = number_strings(loaded)
    assert not hits, f"{path}: {hits[:5]}"


def test_the_writers_spell_missing_values_for_other_tools(tmp_path):
    atomic_write_json(
        tmp_path / "a.json", {"nan": math.nan, "inf": [np.inf], "value": np.float64(np.nan)}
    )
    assert json.loads((tmp_path / "a.json").read_text()) == {
        "nan": None,
        "inf": [None],
        "value": None,
    }
    atomic_write_csv(tmp_path / "b.csv", ["x", "y"], [[1.5, math.nan], [None, math.inf]])
    assert (tmp_path / "b.csv").read_text() == "x,y\n1.5,\n,inf\n"
    text = numeric_csv(["a", "b"], ["", ""], np.array([[np.nan, 1.0], [2.0, np.nan]]))
    assert text == "a,b\n,1\n2,\n"


def test_parquet_keeps_numbers_as_floats_and_text_as_text(tmp_path):
    pd = pytest.importorskip("pandas")
    pyarrow = pytest.importorskip("pyarrow")
    pytest.importorskip("pyarrow.parquet")
    rows = [
        {"paper": None, "noisy_fitted": math.nan, "label": "a", "count": 3, "flag": True},
        {"paper": 0.87, "noisy_fitted": 0.5, "label": None, "count": 4, "flag": False},
    ]
    write_table(tmp_path / "t", rows)
    frame = pd.read_parquet(tmp_path / "t.parquet")
    assert frame["paper"].dtype == np.float64 and frame["noisy_fitted"].dtype == np.float64
    assert frame["count"].dtype == np.int64 and frame["flag"].dtype == bool
    label = pyarrow.parquet.read_table(tmp_path / "t.parquet").column("label")
    assert pyarrow.types.is_string(label.type) or pyarrow.types.is_large_string(label.type)
    assert label.null_count == 1
    assert math.isnan(frame["paper"][0]) and frame["noisy_fitted"].mean() == 0.5
    assert (tmp_path / "t.csv").read_text().splitlines()[1] == ",,a,3,True"
    assert math.isnan(read_table(tmp_path / "t")["paper"][0])


def test_every_json_a_command_writes_holds_numbers_or_null(tmp_path, monkeypatch, quick_evidence):
    from verify.checks import suite

    small = ["--d", "30", "--steps", "20", "--test-size", "10", "--no-progress"]
    assert main(["run", *small, "--out", str(tmp_path / "run")]) == 0
    dfree = ["--engine", "dfree", "--init", "gaussian", "--test-size", "0"]
    assert (
        main(["run", "--steps", "20", "--no-progress", *dfree, "--out", str(tmp_path / "d")]) == 0
    )
    assert json.loads((tmp_path / "d" / "summary.json").read_text())["test_accuracy"] is None
    grid = ["--d-values", "20,30", "--mu-values", "5,50", "--steps", "20", "--workers", "0"]
    assert main(["phase-diagram", "--out", str(tmp_path / "pd"), *grid, "--no-progress"]) == 0
    monkeypatch.setattr(suite, "collect", lambda plan, *args: quick_evidence)
    main(["check", "--quick", "--out", str(tmp_path / "check"), "--no-progress"])
    predicted = subprocess.run(
        [sys.executable, "-m", "verify", "predict", "--json"],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    (tmp_path / "predict.json").write_text(predicted.stdout)
    written = sorted(tmp_path.rglob("*.json"))
    assert len(written) >= 8
    for path in written:
        assert_numbers(path)


def test_numeric_csv_cells_are_each_numbers_17_digit_text():
    """Every cell is ``'%.17g' % value`` (the float64 round trip), a NaN empty and the
    infinities spelled, in every shape: a column, no columns, extreme magnitudes."""
    rng = np.random.default_rng(5)
    for shape in [(7, 5), (4,), (3, 0), (1, 1), (60, 9)]:
        values = rng.standard_normal(shape) * 10.0 ** rng.integers(-320, 300, shape)
        flat = values.reshape(-1)
        for start, value in enumerate([np.nan, np.inf, -np.inf, -0.0, 5e-324, -np.nan]):
            flat[start::6] = value
        prefixes = [f"{i},%s," for i in range(shape[0])]  # a % in a prefix is kept as it is
        text = numeric_csv(["h1", "h2"], prefixes, values)
        rows = values.reshape(shape[0], -1)
        expected = ["h1,h2"] + [
            prefix + ",".join("" if math.isnan(v) else f"{v:.17g}" for v in row)
            for prefix, row in zip(prefixes, rows, strict=True)
        ]
        assert text == "\n".join(expected) + "\n"
