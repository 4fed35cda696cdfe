r"""Constraints as data, and one message form for every invalid parameter.

A settings object is a frozen dataclass whose fields are declared with :func:`parameter`:
a default, a constraint and a one-line help text. :class:`Validated` checks every field
against its constraint on construction and then calls ``check_relations`` for the
conditions that tie fields together. Every violation raises :class:`InvalidParameter`
with the message

    ``{name}={value!r} is invalid: allowed {what is allowed}``

so that the command line can print it as one line and exit 2, and a test generated
from the constraints can try a rejected value for every field of every settings object
(each constraint lists a few values it rejects, :meth:`Constraint.rejected_examples`).

The constraint vocabulary follows scikit-learn's parameter validation: :class:`Integer`
and :class:`Real` intervals, :class:`Options`, :class:`Boolean`, :class:`Text`,
:class:`Optional` and :class:`Sequence`.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Callable
from numbers import Integral
from numbers import Real as RealNumber
from typing import Any, ClassVar


class InvalidParameter(ValueError):
    """A parameter value outside what is allowed; the message names all three (the value
    as ``shown`` when given, else in the package's short form)."""

    def __init__(self, name: str, value: Any, allowed: str, shown: str | None = None):
        self.name, self.value, self.allowed = name, value, allowed
        super().__init__(
            f"{name}={_show(value) if shown is None else shown} is invalid: allowed {allowed}"
        )


def _show(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}" if math.isfinite(value) else str(value)
    if isinstance(value, tuple | list):
        return ",".join(_show(v) for v in value) if value else "(empty)"
    return repr(value)


def _is_bool(value: Any) -> bool:
    """``bool`` or NumPy's ``bool_`` (neither counts as a number here)."""
    return isinstance(value, bool) or type(value).__name__ == "bool_"


def _number(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


class Constraint:
    """What a parameter may be: :meth:`convert` returns the accepted (normalised) value or
    ``None`` when the value is not allowed; :meth:`describe` says what is allowed."""

    def convert(self, value: Any) -> Any | None:
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError

    def rejected_examples(self) -> tuple[Any, ...]:
        """A few values this constraint rejects (for the generated tests)."""
        raise NotImplementedError

    def check(self, name: str, value: Any) -> Any:
        """The accepted value, or :class:`InvalidParameter`."""
        accepted = self.convert(value)
        if accepted is None:
            raise InvalidParameter(name, value, self.describe(), shown=self.shown(value))
        return accepted

    def shown(self, value: Any) -> str | None:
        """How a refused ``value`` is shown (``None``: the short form). A list given
        where one value belongs is shown as a list (``[20]``, not ``20``)."""
        return repr(value) if isinstance(value, list | tuple | dict | set) else None


@dataclasses.dataclass(frozen=True)
class Integer(Constraint):
    """An integer in ``[low, high]`` (either end may be open-ended with ``None``). An
    integral float such as ``1e13`` is accepted and returned as an ``int``."""

    low: int | None = None
    high: int | None = None

    def convert(self, value: Any) -> int | None:
        if _is_bool(value):
            return None
        if isinstance(value, Integral):
            number = int(value)
        elif (
            isinstance(value, RealNumber)
            and math.isfinite(float(value))
            and float(value).is_integer()
            and abs(float(value)) < 2**63
        ):
            number = int(float(value))
        else:
            return None
        if (self.low is not None and number < self.low) or (
            self.high is not None and number > self.high
        ):
            return None
        return number

    def describe(self) -> str:
        if self.low is not None and self.high is not None:
            return f"an integer in [{self.low}, {self.high}]"
        if self.low is not None:
            return f"an integer >= {self.low}"
        if self.high is not None:
            return f"an integer <= {self.high}"
        return "an integer"

    def rejected_examples(self) -> tuple[Any, ...]:
        examples: list[Any] = [2.5, "3", True, None]
        if self.low is not None:
            examples.append(self.low - 1)
        if self.high is not None:
            examples.append(self.high + 1)
        return tuple(examples)


@dataclasses.dataclass(frozen=True)
class Real(Constraint):
    """A finite real number in an interval; ``closed`` is ``"neither"``, ``"left"``,
    ``"right"`` or ``"both"``. Returned as a ``float``."""

    low: float | None = None
    high: float | None = None
    closed: str = "neither"

    def convert(self, value: Any) -> float | None:
        if _is_bool(value) or not isinstance(value, RealNumber):
            return None
        number = float(value)
        if not math.isfinite(number):
            return None
        low_ok = self.low is None or (
            number >= self.low if self.closed in ("left", "both") else number > self.low
        )
        high_ok = self.high is None or (
            number <= self.high if self.closed in ("right", "both") else number < self.high
        )
        return number if low_ok and high_ok else None

    def describe(self) -> str:
        left = self.closed in ("left", "both")
        right = self.closed in ("right", "both")
        if self.low is not None and self.high is not None:
            return (
                f"a finite real number in {'[' if left else '('}{_number(self.low)}, "
                f"{_number(self.high)}{']' if right else ')'}"
            )
        if self.low is not None:
            return f"a finite real number {'>=' if left else '>'} {_number(self.low)}"
        if self.high is not None:
            return f"a finite real number {'<=' if right else '<'} {_number(self.high)}"
        return "a finite real number"

    def rejected_examples(self) -> tuple[Any, ...]:
        examples: list[Any] = [math.nan, math.inf, "1.0", None, True]
        if self.low is not None:
            examples.append(self.low if self.closed in ("neither", "right") else self.low - 1)
        if self.high is not None:
            examples.append(self.high if self.closed in ("neither", "left") else self.high + 1)
        return tuple(examples)


@dataclasses.dataclass(frozen=True)
class Options(Constraint):
    """One of a fixed set of strings."""

    choices: tuple[str, ...]

    def convert(self, value: Any) -> str | None:
        return value if isinstance(value, str) and value in self.choices else None

    def describe(self) -> str:
        return "one of " + ", ".join(repr(choice) for choice in self.choices)

    def rejected_examples(self) -> tuple[Any, ...]:
        return ("no-such-option", None, 1)


@dataclasses.dataclass(frozen=True)
class Boolean(Constraint):
    """``True`` or ``False``."""

    def convert(self, value: Any) -> bool | None:
        return bool(value) if _is_bool(value) else None

    def describe(self) -> str:
        return "True or False"

    def rejected_examples(self) -> tuple[Any, ...]:
        return ("yes", 1, None)


@dataclasses.dataclass(frozen=True)
class Text(Constraint):
    """A string (non-empty unless ``empty`` is allowed)."""

    empty: bool = False

    def convert(self, value: Any) -> str | None:
        if not isinstance(value, str) or (not self.empty and not value):
            return None
        return value

    def describe(self) -> str:
        return "a string" if self.empty else "a non-empty string"

    def rejected_examples(self) -> tuple[Any, ...]:
        return (None, 3) if self.empty else ("", None, 3)


@dataclasses.dataclass(frozen=True)
class Optional(Constraint):
    """``None``, or a value that ``inner`` allows."""

    inner: Constraint
    meaning: str = ""

    def convert(self, value: Any) -> Any:
        if value is None:
            return _NONE
        return self.inner.convert(value)

    def check(self, name: str, value: Any) -> Any:
        accepted = self.convert(value)
        if accepted is None:
            raise InvalidParameter(name, value, self.describe(), shown=self.inner.shown(value))
        return None if accepted is _NONE else accepted

    def describe(self) -> str:
        meaning = f" ({self.meaning})" if self.meaning else ""
        return f"{self.inner.describe()}, or None{meaning}"

    def rejected_examples(self) -> tuple[Any, ...]:
        return tuple(v for v in self.inner.rejected_examples() if v is not None)


_NONE = object()


@dataclasses.dataclass(frozen=True)
class Sequence(Constraint):
    """A tuple of values each allowed by ``inner``, at least ``min_length`` long, with no
    repeated value when ``unique``. Lists are accepted and returned as tuples."""

    inner: Constraint
    min_length: int = 1
    unique: bool = False

    def convert(self, value: Any) -> tuple[Any, ...] | None:
        if isinstance(value, str | bytes) or not (
            isinstance(value, tuple | list) or hasattr(value, "tolist")
        ):
            return None
        if hasattr(value, "tolist"):  # a NumPy array
            value = value.tolist()
        items = []
        for item in value:
            accepted = self.inner.convert(item)
            if accepted is None:
                return None
            items.append(accepted)
        if len(items) < self.min_length:
            return None
        if self.unique and len(set(items)) != len(items):
            return None
        return tuple(items)

    def shown(self, value: Any) -> str | None:
        return None  # a list is what belongs here: shown comma-separated

    def describe(self) -> str:
        size = (
            "a non-empty list"
            if self.min_length == 1
            else ("a list" if self.min_length == 0 else f"a list of at least {self.min_length}")
        )
        unique = " distinct" if self.unique else ""
        return f"{size} of{unique} values each {self.inner.describe()}"

    def rejected_examples(self) -> tuple[Any, ...]:
        bad_items = [v for v in self.inner.rejected_examples() if v is not None][:1]
        examples: list[Any] = ["1,2", None, tuple(bad_items)]
        if self.min_length >= 1:
            examples.append(())
        return tuple(examples)


# -- dataclass integration ------------------------------------------------------------


def parameter(
    default: Any,
    constraint: Constraint,
    help: str,
    *,
    default_factory: Callable[[], Any] | None = None,
) -> Any:
    """A dataclass field with its constraint and help text (read by the command line)."""
    metadata = {"constraint": constraint, "help": help}
    if default_factory is not None:
        return dataclasses.field(default_factory=default_factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def parameter_fields(cls_or_obj: Any) -> list[dataclasses.Field]:
    """The fields declared with :func:`parameter` (those that carry a constraint)."""
    return [f for f in dataclasses.fields(cls_or_obj) if "constraint" in f.metadata]


class Validated:
    """Mixin for frozen dataclasses: checks every :func:`parameter` field on construction
    (normalising accepted values, e.g. ``1e3`` -> ``1000`` for an integer field), then
    calls :meth:`check_relations` for conditions between fields."""

    #: Name used in messages for a field of a nested settings object (``""``: bare name).
    prefix: ClassVar[str] = ""

    def __post_init__(self) -> None:
        for name, kind in composite_fields(type(self)).items():
            value = getattr(self, name)
            if not isinstance(value, kind):
                raise InvalidParameter(
                    name, value, f"a {kind.__name__} ({kind.__module__}.{kind.__name__})"
                )
        for spec in parameter_fields(self):
            value = getattr(self, spec.name)
            accepted = spec.metadata["constraint"].check(spec.name, value)
            if accepted is not value:
                object.__setattr__(self, spec.name, accepted)
        self.check_relations()

    def check_relations(self) -> None:
        """Conditions between fields; raise :class:`InvalidParameter` (default: none)."""

    def replace(self, **changes: Any) -> Any:
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)  # type: ignore[call-overload]


def composite_fields(cls: type) -> dict[str, type]:
    """The fields of a settings class that hold another settings object (declared with a
    :class:`Validated` type and no constraint), by name: their values must be instances
    of that type (``None`` or a dict is refused). Read once per class."""
    if cls not in _COMPOSITES:
        hints = typing.get_type_hints(cls)
        _COMPOSITES[cls] = {
            spec.name: hints[spec.name]
            for spec in dataclasses.fields(cls)
            if "constraint" not in spec.metadata
            and isinstance(hints.get(spec.name), type)
            and issubclass(hints[spec.name], Validated)
        }
    return _COMPOSITES[cls]


_COMPOSITES: dict[type, dict[str, type]] = {}


def require(condition: bool, name: str, value: Any, allowed: str) -> None:
    """Raise :class:`InvalidParameter` (name, value, allowed) unless ``condition``."""
    if not condition:
        raise InvalidParameter(name, value, allowed)


__all__ = [
    "InvalidParameter",
    "Constraint",
    "Integer",
    "Real",
    "Options",
    "Boolean",
    "Text",
    "Optional",
    "Sequence",
    "parameter",
    "parameter_fields",
    "Validated",
    "composite_fields",
    "require",
]
