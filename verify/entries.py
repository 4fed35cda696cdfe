"""The public functions of :mod:`verify`, with their arguments checked before any work.

``verify.simulate``, ``verify.predict``, ``verify.write_run`` and every other public
function are the package's functions behind :func:`checked`: each argument is compared
with its annotation (a wrong type is a :class:`TypeError` naming the function, the
argument, the expected type and the type given), then the values some entries take are
checked as the command line checks them (:data:`ARGUMENT_CONSTRAINTS`: numeric arguments
against the constraint of the settings field that holds the same quantity;
:data:`VALUE_CHECKS`: a run's ``W0`` and data, the place a run's files go, a history file
that must exist), as :class:`~theory.foundation.validation.InvalidParameter`.
Out-of-range numbers inside a configuration are refused by the settings objects
themselves (every field validated on construction).

Annotations are read as far as they resolve: a name imported only for type checkers
counts as "anything", a parameterised container is checked by its container type (a
string is not taken for a sequence of strings), a ``float`` takes any real number but
not a ``bool``, an ``int`` any integer but not a ``bool``.
"""

from __future__ import annotations

import builtins
import collections.abc
import functools
import inspect
import numbers
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from theory.foundation.data_model import DataModel
from theory.foundation.validation import Constraint, Real, Sequence, parameter_fields, require
from verify.experiments.settings import PrecisionSettings
from verify.sim.config import DELTA


class _AnyForUnknown(dict):
    """Names an annotation uses that resolve nowhere (imported only for type checkers)
    read as ``Any``."""

    def __init__(self, namespace: Mapping[str, Any]):
        super().__init__()
        self.namespace = namespace

    def __missing__(self, key: str) -> Any:
        if key in self.namespace or hasattr(builtins, key):
            raise KeyError(key)
        return Any


def annotations_of(function: Callable[..., Any]) -> dict[str, Any]:
    """Each parameter's annotation, evaluated (unresolvable names as ``Any``)."""
    target = inspect.unwrap(function)
    namespace = getattr(target, "__globals__", {})
    out = {}
    for name, text in getattr(target, "__annotations__", {}).items():
        if name == "return":
            continue
        try:
            out[name] = _evaluated(text, namespace)
        except Exception:  # an annotation that does not evaluate is not checked
            out[name] = Any
    return out


def _evaluated(text: Any, namespace: Mapping[str, Any]) -> Any:
    """An annotation (a string under postponed evaluation) as the object it names."""
    if not isinstance(text, str):
        return text
    return eval(text, dict(namespace), _AnyForUnknown(namespace))


def matches(value: Any, expected: Any) -> bool:
    """Whether ``value`` is of the annotated type ``expected`` (see the module docstring)."""
    if expected is Any or expected is object or isinstance(expected, typing.TypeVar):
        return True
    if expected is None or expected is type(None):
        return value is None
    origin = typing.get_origin(expected)
    if origin in (typing.Union, types.UnionType):
        return any(matches(value, option) for option in typing.get_args(expected))
    if origin is typing.Literal:
        return value in typing.get_args(expected)
    if origin is not None:
        return _matches_container(value, origin)
    if not isinstance(expected, type):
        return True
    return _matches_class(value, expected)


def _matches_container(value: Any, origin: Any) -> bool:
    if origin is collections.abc.Callable:
        return callable(value)
    if (
        isinstance(value, str)
        and origin is not str
        and issubclass(origin, collections.abc.Iterable)
    ):
        return False
    return isinstance(value, origin) if isinstance(origin, type) else True


def _matches_class(value: Any, expected: type) -> bool:
    is_bool = isinstance(value, bool) or type(value).__name__ == "bool_"
    if expected is bool:
        return is_bool
    if expected is float:
        return isinstance(value, numbers.Real) and not is_bool
    if expected is int:
        return isinstance(value, numbers.Integral) and not is_bool
    return isinstance(value, expected)


def spelled(expected: Any) -> str:
    """A type annotation in words (``RunConfig``, ``str, Path or None``)."""
    origin = typing.get_origin(expected)
    if origin in (typing.Union, types.UnionType):
        names = [spelled(option) for option in typing.get_args(expected)]
        return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
    if expected is None or expected is type(None):
        return "None"
    if origin is not None:
        return getattr(origin, "__name__", str(origin))
    return getattr(expected, "__name__", str(expected))


#: What to do instead, for a few wrong types users give.
ADVICE = {
    ("RunConfig", str): " (verify.preset(name) builds the paper's setting called name)",
    ("RunConfig", dict): " (verify.RunConfig.build(**flat_fields) or RunConfig.from_dict)",
}


def check_types(name: str, arguments: Mapping[str, Any], hints: Mapping[str, Any]) -> None:
    """:class:`TypeError` for the first argument that is not of its annotated type."""
    for parameter, value in arguments.items():
        expected = hints.get(parameter, Any)
        if not matches(value, expected):
            wanted = spelled(expected)
            advice = ADVICE.get((wanted, type(value)), "")
            raise TypeError(
                f"{name}() argument {parameter!r} must be {wanted}, not "
                f"{type(value).__name__} ({value!r:.60}){advice}"
            )


def checked(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` with its arguments checked (see the module docstring) before the call."""
    signature = inspect.signature(function)
    hints = annotations_of(function)
    values = VALUE_CHECKS.get(name)

    @functools.wraps(function)
    def entry(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as error:
            raise TypeError(f"{name}(): {error}") from None
        arguments = {
            key: value
            for key, value in bound.arguments.items()
            if signature.parameters[key].kind
            not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        }
        check_types(name, arguments, hints)
        check_ranges(name, arguments)
        if values is not None:
            values(arguments)
        return function(*args, **kwargs)

    return entry


# -- the values some entries take ---------------------------------------------------------


def _simulate_values(arguments: Mapping[str, Any]) -> None:
    from verify.sim.inputs import check_dataset, check_initial_weights
    from verify.sim.resources import check_runnable

    config = arguments["config"]
    check_runnable(config)
    if arguments.get("W0") is not None:
        check_initial_weights(arguments["W0"], config)
    data = arguments.get("data")
    if data is not None and hasattr(data, "X_train"):
        check_dataset(data, config)


def _output_place(arguments: Mapping[str, Any]) -> None:
    from verify.output.files import prepare_output_dir

    prepare_output_dir(arguments["out"], "out")


def _existing_file(arguments: Mapping[str, Any]) -> None:
    path = arguments["path"]
    require(Path(path).is_file(), "path", str(path), "an existing file (a history.csv)")


#: Value checks by entry name, after the types.
VALUE_CHECKS: dict[str, Callable[[Mapping[str, Any]], None]] = {
    "simulate": _simulate_values,
    "write_run": _output_place,
    "read_history": _existing_file,
}


def _field(cls: type, name: str) -> Constraint:
    return next(f for f in parameter_fields(cls) if f.name == name).metadata["constraint"]


#: The allowed values of the numeric arguments of some entries, as constraints (each taken
#: from the settings field that holds the same quantity on the command line).
ARGUMENT_CONSTRAINTS: dict[str, dict[str, Constraint]] = {
    "assumption_status": {"delta": DELTA},
    "breakdown_gap": {
        "threshold": Real(0.0),
        "T": _field(DataModel, "T"),
        "reference_dps": _field(PrecisionSettings, "reference_dps"),
    },
    "precision_table": {
        # any positive gap: the table is where one sees float64 fail past the command's limit
        "gaps": Sequence(Real(0.0)),
        "T": _field(DataModel, "T"),
        "reference_dps": _field(PrecisionSettings, "reference_dps"),
    },
}


def check_ranges(name: str, arguments: Mapping[str, Any]) -> None:
    """:class:`InvalidParameter` for an argument outside its declared range
    (:data:`ARGUMENT_CONSTRAINTS`)."""
    for parameter, constraint in ARGUMENT_CONSTRAINTS.get(name, {}).items():
        if parameter in arguments and arguments[parameter] is not None:
            constraint.check(parameter, arguments[parameter])


__all__ = [
    "checked",
    "matches",
    "spelled",
    "annotations_of",
    "check_types",
    "check_ranges",
    "VALUE_CHECKS",
    "ARGUMENT_CONSTRAINTS",
]
