"""Tidy result tables: CSV (and Parquet), read back as columns, rendered as Markdown.

Tables are written atomically as CSV (always) and Parquet (when pandas and pyarrow are
installed), read back as columns for plotting, and rendered as Markdown.

Figures are drawn from these files, never from in-memory state ("Results are
data, plots are made from results").
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from verify.output.files import atomic_write_bytes, atomic_write_csv


def number(value: Any) -> float:
    """A float from a table or JSON cell ("nan", "inf", "" and None become floats too)."""
    if value is None or value == "":
        return math.nan
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def write_table(
    path: str | Path,
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[str] | None = None,
    parquet: bool = True,
) -> list[Path]:
    """Write ``rows`` (dicts sharing ``columns``) to ``path`` (.csv) and, if possible,
    next to it as .parquet. Returns the files written."""
    path = Path(path).with_suffix(".csv")
    columns = list(columns if columns is not None else (rows[0] if rows else []))
    atomic_write_csv(path, columns, ([row.get(c) for c in columns] for row in rows))
    written = [path]
    if parquet:
        try:
            import pandas as pd
            import pyarrow  # noqa: F401
        except ImportError:
            return written
        frame = pd.DataFrame(
            {c: parquet_column([row.get(c) for row in rows]) for c in columns}, columns=columns
        )
        buffer = io.BytesIO()
        frame.to_parquet(buffer, index=False)
        atomic_write_bytes(path.with_suffix(".parquet"), buffer.getvalue())
        written.append(path.with_suffix(".parquet"))
    return written


def parquet_column(values: list[Any]) -> list[Any] | np.ndarray:
    """A column's cells as Parquet should hold them: numbers (with missing cells) as a
    float64 array (NaN where missing), booleans as they are, anything else as strings
    with missing cells kept missing (null), never the text ``"nan"`` or ``"None"``."""
    present = [v for v in values if not _missing(v)]
    if present and all(isinstance(v, (bool, np.bool_)) for v in present):
        return (
            values
            if len(present) == len(values)
            else [None if _missing(v) else bool(v) for v in values]
        )
    if all(isinstance(v, (int, float, np.integer, np.floating)) for v in present):
        if all(isinstance(v, (int, np.integer)) for v in present) and len(present) == len(values):
            return np.asarray(values, dtype=np.int64)
        return np.array([math.nan if _missing(v) else float(v) for v in values], dtype=np.float64)
    return [None if _missing(v) else str(v) for v in values]


def _missing(value: Any) -> bool:
    """``None``, an empty cell or a NaN."""
    return (
        value is None
        or (isinstance(value, str) and value == "")
        or (isinstance(value, (float, np.floating)) and math.isnan(value))
    )


def _column(values: list[str]) -> np.ndarray:
    try:
        return np.array(
            [
                number(v) if v.strip().lower() in ("", "nan", "inf", "-inf") else float(v)
                for v in values
            ],
            dtype=np.float64,
        )
    except ValueError:
        return np.array(values, dtype=object)


def read_table(path: str | Path) -> dict[str, np.ndarray]:
    """Columns of a CSV written by :func:`write_table`: numeric columns as float arrays,
    others as object arrays of strings."""
    with open(Path(path).with_suffix(".csv"), encoding="utf-8", newline="") as stream:
        reader = csv.reader(stream)
        header = next(reader)
        cells = list(reader)
    return {name: _column([row[i] for row in cells]) for i, name in enumerate(header)}


def select(table: Mapping[str, np.ndarray], **equal: Any) -> dict[str, np.ndarray]:
    """Rows of ``table`` whose columns equal the given values."""
    mask = np.ones(len(next(iter(table.values()))), dtype=bool)
    for name, value in equal.items():
        column = table[name]
        mask &= (column == value) if column.dtype != object else (column == str(value))
    return {name: column[mask] for name, column in table.items()}


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A GitHub-flavoured Markdown table (a ``|`` inside a cell is escaped)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += [
        "| " + " | ".join(str(cell).replace("|", r"\|") for cell in row) + " |" for row in rows
    ]
    return "\n".join(lines) + "\n"


__all__ = ["number", "write_table", "read_table", "select", "markdown_table"]
