"""Small helpers for symbolic proofs: a proof here is a list of residuals that must be 0."""

from __future__ import annotations

from collections.abc import Iterable

import sympy as sp


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
