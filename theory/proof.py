r"""Derivation records and their proofs: a proof here is a list of residuals that must be 0.

Each module of :mod:`theory` owns its records (its ``derivations()`` function);
:mod:`theory.derivations` collects them in reading order. A record states a result as a
SymPy object, says where it comes from (:data:`KNOWN`, :data:`DERIVED` or
:data:`RECONSTRUCTION`) and carries its check: a callable returning residuals that
vanish identically when the result holds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import sympy as sp

KNOWN = "KNOWN (from the paper, its public code or the authors' rebuttal)"
DERIVED = "DERIVED (this package; exact, proved symbolically)"
RECONSTRUCTION = (
    "Reconstruction (this package's own derivation; the paper's exact statement is not available)"
)
STATUSES = (KNOWN, DERIVED, RECONSTRUCTION)


def flatten_residuals(residuals: object) -> list[sp.Expr]:
    """Flatten a residual, a matrix of residuals, or nested lists of them, to a flat list."""
    if isinstance(residuals, sp.MatrixBase):
        return [sp.sympify(entry) for entry in residuals]
    if isinstance(residuals, Iterable) and not isinstance(residuals, sp.Basic | str):
        flat: list[sp.Expr] = []
        for item in residuals:
            flat.extend(flatten_residuals(item))
        return flat
    return [sp.sympify(residuals)]


def residuals_vanish(residuals: object) -> bool:
    """True when every residual is identically (structurally) zero after simplification."""
    return all(entry == 0 for entry in flatten_residuals(residuals))


@dataclass(frozen=True)
class Derivation:
    """One derived result: a title, a SymPy statement, its status and its proof check."""

    title: str
    statement: sp.Basic
    status: str
    check: Callable[[], object] | None = None

    def verified(self) -> bool | None:
        """Run the proof check: True if every residual is 0, None if there is no check."""
        return None if self.check is None else residuals_vanish(self.check())


def for_sizes(check: Callable[[int], object], sizes: range = range(2, 9)) -> Callable[[], list]:
    """A proof check that runs ``check(size)`` for every size (e.g. T = 2..8)."""
    return lambda: [check(size) for size in sizes]


def indexed(name: str) -> sp.IndexedBase:
    """A real indexed symbol (``s[t]``, ``gamma[i, t]``)."""
    return sp.IndexedBase(name, real=True)


__all__ = [
    "KNOWN",
    "DERIVED",
    "RECONSTRUCTION",
    "STATUSES",
    "Derivation",
    "flatten_residuals",
    "residuals_vanish",
    "for_sizes",
    "indexed",
]
