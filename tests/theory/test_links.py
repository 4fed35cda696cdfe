"""Every derivation record's links resolve: its numeric twin imports from ``theory``, the
simulator quantity it is compared with imports from ``verify``, and its test file exists
and defines the named test. For the formulas a reader looks for first (the softmax/cosh
identity, g and its inverse, the harmful | benign boundary) the twin is one hop from the
record: in the record's module or in a module it imports."""

from __future__ import annotations

import ast
import importlib
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from theory import derivations
from theory.__main__ import main
from theory.foundation.proof import Derivation

ROOT = Path(__file__).resolve().parents[2]
RECORDS = [(module, record) for module in derivations.MODULES for record in module.derivations()]
IDS = [record.title[:50] for _, record in RECORDS]

#: The formulas of the hop count, by title prefix.
FIRST_LOOKS = (
    "Softmax saturation as a cosh",
    "The quadrature function and its derivatives",
    "Symmetries of g",
    "Harmful | benign boundary",
)


def resolve(dotted: str) -> Any:
    """The object at ``dotted``: the longest importable module prefix, then attributes."""
    parts = dotted.split(".")
    for size in range(len(parts), 0, -1):
        name = ".".join(parts[:size])
        try:
            found: Any = importlib.import_module(name)
        except ModuleNotFoundError as error:
            if not (error.name and f"{name}.".startswith(f"{error.name}.")):
                raise  # a module that exists failed to import
            continue
        for attribute in parts[size:]:
            found = getattr(found, attribute)
        return found
    raise ModuleNotFoundError(dotted)


@cache
def defined_functions(path: str) -> frozenset[str]:
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    return frozenset(node.name for node in tree.body if isinstance(node, ast.FunctionDef))


def imported_modules(module: ModuleType) -> set[str]:
    """Every module ``module``'s source imports (also inside functions), by full name."""
    found = set()
    for node in ast.walk(ast.parse(Path(module.__file__ or "").read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize(("module", "record"), RECORDS, ids=IDS)
def test_every_link_resolves(module, record):
    assert record.test, f"{record.title!r} names no test"
    path, _, name = record.test.partition("::")
    assert (ROOT / path).is_file(), record.test
    assert name in defined_functions(path), record.test
    assert record.twin or record.simulated, f"{record.title!r} has neither twin nor simulation"
    if record.twin:
        assert record.twin.startswith("theory.") and resolve(record.twin) is not None
    if record.simulated:
        assert record.simulated.startswith("verify.") and resolve(record.simulated) is not None


def test_a_broken_link_does_not_resolve():
    with pytest.raises(AttributeError):
        resolve("theory.softmax_cosh.no_such_saturation")
    with pytest.raises(AttributeError):
        resolve("verify.sim.no_such_module.quantity")
    assert "test_no_such_test" not in defined_functions("tests/theory/test_softmax_cosh.py")


def test_a_malformed_link_is_refused():
    with pytest.raises(ValueError, match="test='tests/theory/x.py' is invalid"):
        Derivation("t", derivations.sp.Integer(0), derivations.KNOWN, test="tests/theory/x.py")
    with pytest.raises(ValueError, match="twin='verify.sim.x' is invalid"):
        Derivation("t", derivations.sp.Integer(0), derivations.KNOWN, twin="verify.sim.x")


@pytest.mark.parametrize("prefix", FIRST_LOOKS)
def test_the_first_formulas_are_one_hop_from_their_twin_and_test(prefix):
    ((module, record),) = [(m, r) for m, r in RECORDS if r.title.startswith(prefix)]
    twin_module = record.twin.rpartition(".")[0]
    assert twin_module == module.__name__ or twin_module in imported_modules(module)
    assert record.test.startswith("tests/")


def test_python_m_theory_prints_the_links_under_each_record(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.count("\n  twin: ") == out.count("\n  test: ") == len(RECORDS)
    assert "simulated: verify.sim.observables.relevant_saturation" in out
    assert "simulated: none (no simulator counterpart)" in out
