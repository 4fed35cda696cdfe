"""Generated from the constraints: every settings class of ``theory`` and ``verify`` (every
:class:`~theory.foundation.validation.Validated` subclass) refuses, for each field, each
value its constraint lists as rejected, with the one message form
``<parameter>=<value> is invalid: allowed <what>``; and a field holding another settings
object refuses ``None``, a dict and an object of another class."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from pathlib import Path

import pytest

import theory
import verify
from theory.foundation.validation import (
    InvalidParameter,
    Sequence,
    Validated,
    _show,
    composite_fields,
    parameter_fields,
)

ROOT = Path(__file__).resolve().parents[2]


def all_subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *all_subclasses(sub)]
    return found


def settings_classes() -> list[type]:
    """Every Validated subclass defined in theory/ or verify/ (every module imported)."""
    for package in (theory, verify):
        for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if not module.name.endswith("__main__"):
                importlib.import_module(module.name)
    found = {
        cls
        for cls in all_subclasses(Validated)
        if cls.__module__.split(".")[0] in ("theory", "verify")
    }
    return sorted(found, key=lambda cls: f"{cls.__module__}.{cls.__qualname__}")


CLASSES = settings_classes()


def test_the_generated_test_covers_the_known_settings_classes():
    names = {cls.__name__ for cls in CLASSES}
    assert {
        "DataModel",
        "Training",
        "Solver",
        "Recording",
        "RunConfig",
        "ExecutorSettings",
        "Protocol",
        "GroupConfig",
        "GridSettings",
        "FactorSettings",
        "ReproduceSettings",
        "BoundarySettings",
        "PhaseDiagramSettings",
        "LongtimeSettings",
        "PrecisionSettings",
        "MaxMarginSettings",
    } <= names


def shown(constraint, value) -> str:
    """How the message shows a refused value."""
    custom = constraint.shown(value)
    inner = getattr(constraint, "inner", None)
    if custom is None and inner is not None and not isinstance(constraint, Sequence):
        custom = inner.shown(value)
    return _show(value) if custom is None else custom


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_every_field_refuses_each_rejected_example_in_the_one_message_form(cls):
    fields = parameter_fields(cls)
    checked = 0
    for spec in fields:
        constraint = spec.metadata["constraint"]
        for bad in constraint.rejected_examples():
            with pytest.raises(InvalidParameter) as failure:
                cls(**{spec.name: bad})
            message = str(failure.value)
            assert "\n" not in message
            assert " is invalid: allowed " in message
            if failure.value.name == spec.name:
                assert message.startswith(f"{spec.name}={shown(constraint, bad)} is invalid: ")
            else:  # refused by a relation with another field, which the message names
                assert message.startswith(f"{failure.value.name}=")
            checked += 1
    assert checked >= len(fields)


@pytest.mark.parametrize(
    "cls", [c for c in CLASSES if composite_fields(c)], ids=lambda cls: cls.__name__
)
def test_a_nested_settings_field_refuses_none_a_dict_and_another_class(cls):
    for name, kind in composite_fields(cls).items():
        other = next(c for c in CLASSES if c is not kind and not issubclass(c, kind))
        for bad in (None, {"d": 10}, other()):
            with pytest.raises(InvalidParameter) as failure:
                cls(**{name: bad})
            assert str(failure.value).startswith(f"{name}=")
            assert f"is invalid: allowed a {kind.__name__} " in str(failure.value)


def test_replace_is_validated_like_construction():
    config = verify.preset("benign")
    with pytest.raises(InvalidParameter, match=r"^model=None is invalid: allowed a DataModel"):
        config.replace(model=None)
    with pytest.raises(InvalidParameter, match=r"^mu_norm=\[20\] is invalid: allowed a finite"):
        verify.preset("benign", mu_norm=[20])
    assert dataclasses.replace(config.model, d=10).d == 10
