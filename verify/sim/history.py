r"""A run's history: one float64 column per recorded quantity, one entry per log point.

The columns are declared here (:data:`COLUMNS`: name, unit, meaning), in the order the
simulator records them and ``history.csv`` lists them. A :class:`History` holds any of
them (a sweep's record may keep a subset), in the order it was given; it reads like a
NumPy structured array:

* ``history["test_loss"]`` or ``history.test_loss``: a column (read-only float64 array);
* ``history[i]``: the :class:`Row` of log point ``i`` (a read-only mapping name -> float),
  ``history.final`` the last one; iterating gives the rows;
* ``history[:k]``: the first ``k`` points, a new history; ``len(history)``: the points;
* ``history.items()``: ``(name, column)`` pairs, as a mapping of columns would give.

Rows become plain dictionaries only where they are written (:meth:`History.rows`, for
JSON records); :meth:`History.from_rows` reads such records back, and :func:`row_of` a
record's final row, taking the cells JSON leaves behind (``"nan"``, ``"inf"``, ``None``)
as floats.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np

from verify.output.tables import number


@dataclass(frozen=True)
class Column:
    """One recorded quantity: its name, unit and meaning (one line)."""

    name: str
    unit: str
    meaning: str


def _population(name: str, what: str) -> tuple[Column, Column]:
    return (
        Column(
            f"population_test_{name}",
            "share" if name != "loss" else "nats",
            f"{what} over the data distribution, from the query's moments (NaN where not "
            "computed: see recording.population; and for a head or readout its formulas do not "
            "describe: a one-step or trained head, the FFN readout"
            + (", or another training loss: it is the logistic loss" if name == "loss" else "")
            + "; a spread of rho is averaged over)",
        ),
        Column(
            f"population_test_{name}_error",
            "share" if name != "loss" else "nats",
            f"the stated error of population_test_{name}",
        ),
    )


_POPULATION = [
    _population(name, what)
    for name, what in (
        ("accuracy", "test accuracy"),
        ("loss", "test loss"),
        ("selects_relevant", "share of test sequences whose largest logit is a relevant token"),
    )
]

#: Every quantity the simulator records, in its order.
COLUMNS: tuple[Column, ...] = (
    Column("step", "GD steps", "the log point: GD steps taken (flow engines: flow time / alpha)"),
    Column("time", "flow time", "alpha x step"),
    Column(
        "train_loss",
        "nats",
        "mean training loss l(y f) on the training labels: logistic log(1 + exp(-y f)) unless "
        "the run's loss is another (exponential exp(-y f), squared (1 - y f)^2 / 2)",
    ),
    Column("train_accuracy", "share", "training samples with y f > 0 (a tie f = 0 is wrong)"),
    Column("test_loss", "nats", "mean training loss on the clean test set (NaN without one)"),
    Column("test_accuracy", "share", "test sequences with y f > 0 (NaN without a test set)"),
    Column("clean_fitted", "share", "clean training samples with y f > 0"),
    Column("noisy_fitted", "share", "flipped training samples with y f > 0 (NaN without any)"),
    Column(
        "clean_gap_min",
        "logit",
        "least over clean samples of their smallest gap Lambda (how far the relevant token leads)",
    ),
    Column("clean_gap_mean", "logit", "mean over clean samples of their smallest gap Lambda"),
    Column(
        "noisy_gap_min",
        "logit",
        "least over flipped samples of their smallest gap Gamma (how far the token of the "
        "flipped label's sign leads)",
    ),
    Column("noisy_gap_mean", "logit", "mean over flipped samples of their smallest gap Gamma"),
    Column(
        "saturation_clean_mean",
        "1",
        "mean over clean samples of s_R (1 - s_R), s_R the attention on the relevant token",
    ),
    Column("saturation_noisy_mean", "1", "the same over the flipped samples"),
    Column(
        "test_selects_relevant",
        "share",
        "test sequences whose largest logit is a relevant token (NaN without a test set)",
    ),
    Column("p_norm", "norm", "||p||"),
    Column("weight_change_norm", "norm", "||W - W0||_F"),
    Column(
        "invariant_drift",
        "norm",
        "||(W W^T - p p^T) - W0 W0^T||_F: 0 under gradient flow, O(alpha^2) a GD step (NaN "
        "where not computed)",
    ),
    Column("invariant_drift_relative", "1", "invariant_drift / ||W0 W0^T||_F"),
    Column("q_norm", "norm", "||q||, q = W^T p the effective query"),
    Column(
        "q_signal_plus",
        "norm",
        "<q, mu_+1> / ||mu||: the signal learned (NaN without known signal directions)",
    ),
    Column("q_signal_minus", "norm", "<q, mu_-1> / ||mu||"),
    Column(
        "q_orthogonal_norm",
        "norm",
        "||q_perp|| = (||q||^2 - q_1^2 - q_2^2)^(1/2): the noise memorised",
    ),
    *(pair[0] for pair in _POPULATION),
    *(pair[1] for pair in _POPULATION),
    Column(
        "noisy_gradient_ratio",
        "1",
        "||G_N||_F / ||G_C||_F, G_S = sum over the samples i of S of the gradient of their loss "
        "l(y_i f_i) / n with respect to (W, p), N the flipped samples and C the clean ones: "
        "with h_S the logit gradient restricted to S and G = B h_S, ||G_S||^2 = ||p||^2 ||G||^2 "
        "+ ||W G||^2 (0 without flips; inf when only the clean part vanishes, NaN when both "
        "do, as once every softmax saturates in float64)",
    ),
)
COLUMN_NAMES: tuple[str, ...] = tuple(column.name for column in COLUMNS)
BY_NAME: dict[str, Column] = {column.name: column for column in COLUMNS}


def declared(columns: Iterable[Column]) -> dict[str, Column]:
    """A column set by name (a model other than the bare one declares its own, e.g. the
    encoder's :data:`verify.encoder.observables.ENCODER_COLUMNS`)."""
    return {column.name: column for column in columns}


def require_declared(
    names: Iterable[str], columns: Mapping[str, Column] = BY_NAME
) -> tuple[str, ...]:
    """``names`` as a tuple, if they are distinct columns of the declared set ``columns``."""
    names = tuple(names)
    unknown = [name for name in names if name not in columns]
    if unknown or len(set(names)) != len(names):
        raise ValueError(
            f"history columns {names} are not distinct declared columns (unknown: "
            f"{unknown}); declared: {', '.join(columns)}"
        )
    return names


class Row(Mapping[str, float]):
    """One log point: column name -> value (read-only; also by attribute)."""

    __slots__ = ("_names", "_values", "_index")

    def __init__(self, names: tuple[str, ...], values: np.ndarray):
        self._names, self._values = names, values
        self._index = {name: i for i, name in enumerate(names)}

    def __getitem__(self, name: str) -> float:
        return float(self._values[self._index[name]])

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __getattr__(self, name: str) -> float:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"history row has no column {name!r}") from None

    def __eq__(self, other: object) -> bool:
        """The same columns and values (NaN equals NaN, as for :class:`History`)."""
        if not isinstance(other, Mapping):
            return NotImplemented
        return self.keys() == other.keys() and all(
            _same(self[name], other[name]) for name in self._names
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Row({dict(self)})"


def _same(a: float, b: float) -> bool:
    return a == b or (a != a and b != b)


def row_of(record: Mapping[str, Any]) -> Row:
    """The declared columns of a record that holds a run's last row among other keys (a
    sweep's final state: the row, its status, message, ...), as a :class:`Row`."""
    names = tuple(name for name in record if name in BY_NAME)
    return Row(names, np.array([number(record[name]) for name in names], dtype=np.float64))


class History:
    """Columns of float64 values, one entry per log point (see the module docstring)."""

    def __init__(
        self,
        names: Sequence[str] = COLUMN_NAMES,
        values: Any = None,
        columns: Mapping[str, Column] = BY_NAME,
    ):
        self.columns = columns
        self.names = require_declared(names, columns)
        data = np.zeros((0, len(self.names))) if values is None else values
        self._data = np.array(data, dtype=np.float64, ndmin=2).reshape(-1, len(self.names))
        self._size = len(self._data)

    # -- building ------------------------------------------------------------------------
    def append(self, row: Mapping[str, float]) -> Row:
        """Record one log point (``row`` has every column of this history, no other);
        returns it as a :class:`Row`."""
        if len(row) != len(self.names):
            require_declared(row, self.columns)
            raise ValueError(f"a history row needs the columns {self.names}, got {tuple(row)}")
        if self._size == len(self._data):
            grown = np.empty((max(16, 2 * self._size), len(self.names)))
            grown[: self._size] = self._data[: self._size]
            self._data = grown
        self._data[self._size] = [row[name] for name in self.names]
        self._size += 1
        return self[self._size - 1]

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping[str, Any]]) -> History:
        """From rows as JSON records hold them (the first row's columns, in its order)."""
        rows = list(rows)
        names = tuple(rows[0]) if rows else COLUMN_NAMES
        return cls(names, [[number(row.get(name)) for name in names] for row in rows])

    @classmethod
    def from_columns(cls, columns: Mapping[str, Any]) -> History:
        """From equally long columns (arrays or sequences)."""
        names = tuple(columns)
        return cls(names, np.column_stack([np.asarray(columns[n], dtype=float) for n in names]))

    # -- reading -------------------------------------------------------------------------
    @property
    def values(self) -> np.ndarray:
        """The recorded values, (points, columns), read-only."""
        view = self._data[: self._size]
        view.flags.writeable = False
        return view

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, key: str) -> np.ndarray: ...
    @overload
    def __getitem__(self, key: int) -> Row: ...
    @overload
    def __getitem__(self, key: slice) -> History: ...
    def __getitem__(self, key: str | int | slice) -> np.ndarray | Row | History:
        if isinstance(key, str):
            return (
                self.values[:, self.names.index(key)] if key in self.names else self._missing(key)
            )
        if isinstance(key, slice):
            return History(self.names, self.values[key], self.columns)
        return Row(self.names, self.values[key].copy())

    def _missing(self, name: str) -> np.ndarray:
        raise KeyError(f"{name!r} is not a column of this history ({', '.join(self.names)})")

    def __getattr__(self, name: str) -> np.ndarray:
        if name.startswith("_") or name not in self.columns:
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError as error:
            raise AttributeError(str(error)) from None

    def __iter__(self) -> Iterator[Row]:
        return (self[index] for index in range(self._size))

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def select(self, names: Sequence[str]) -> History:
        """These columns only, in this order."""
        indices = [self.names.index(name) for name in names]
        return History(names, self.values[:, indices], self.columns)

    def keys(self) -> tuple[str, ...]:
        return self.names

    def items(self) -> Iterator[tuple[str, np.ndarray]]:
        return ((name, self[name]) for name in self.names)

    @property
    def final(self) -> Row:
        """The last log point (an empty row when nothing was recorded)."""
        return self[-1] if self._size else Row((), np.zeros(0))

    def rows(self) -> list[dict[str, float]]:
        """Each log point as a plain dictionary (for JSON records)."""
        return [dict(zip(self.names, point, strict=True)) for point in self.values.tolist()]

    def __eq__(self, other: object) -> bool:
        """Same columns and the same values (NaN, a value not computed, equals NaN)."""
        if not isinstance(other, History):
            return NotImplemented
        return self.names == other.names and np.array_equal(
            self.values, other.values, equal_nan=True
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"History({len(self)} points: {', '.join(self.names)})"


def column_table() -> str:
    """The declared columns as a reStructuredText list table (the documentation's)."""
    lines = [
        ".. list-table::",
        "   :header-rows: 1",
        "   :widths: 25 12 63",
        "",
        "   * - column",
        "     - unit",
        "     - meaning",
    ]
    for column in COLUMNS:
        lines += [
            f"   * - ``{column.name}``",
            f"     - {plain(column.unit)}",
            f"     - {plain(column.meaning)}",
        ]
    return "\n".join(lines)


def plain(text: str) -> str:
    """``text`` with reStructuredText's markup characters escaped."""
    for character in "\\`*_|":
        text = text.replace(character, "\\" + character)
    return text


__all__ = [
    "History",
    "Row",
    "Column",
    "COLUMNS",
    "COLUMN_NAMES",
    "row_of",
    "column_table",
]
