r"""Every derived equation and identity of ``theory``, collected in reading order.

Each module owns its records (its ``derivations()``); this module lists them for
``python -m theory`` and the notebooks: :func:`all_derivations` gives the
:class:`~theory.proof.Derivation` records, :func:`derivation_list` the
``(title, statement, status)`` tuples, :func:`render` one record as text.
"""

from __future__ import annotations

import sympy as sp

from theory import (
    baselines,
    gd_quadrature,
    invariants,
    model,
    quadrature,
    quadrature_asymptotics,
    softmax_cosh,
)
from theory.proof import DERIVED, KNOWN, RECONSTRUCTION, STATUSES, Derivation

#: The modules whose records are collected, in reading order.
MODULES = (model, invariants, softmax_cosh, quadrature, quadrature_asymptotics, gd_quadrature,
           baselines)


def all_derivations() -> list[Derivation]:
    """All derivations of the package, in reading order."""
    return [record for module in MODULES for record in module.derivations()]


def derivation_list() -> list[tuple[str, sp.Basic, str]]:
    """``(title, statement, status)`` for every derivation (for notebooks)."""
    return [(item.title, item.statement, item.status) for item in all_derivations()]


def render(item: Derivation, latex: bool = False) -> str:
    """One derivation as text: title, status and the statement (pretty or LaTeX)."""
    body = sp.latex(item.statement) if latex else sp.pretty(item.statement, use_unicode=True)
    return f"{item.title}\n  status: {item.status}\n\n{body}\n"


__all__ = [
    "DERIVED",
    "KNOWN",
    "RECONSTRUCTION",
    "STATUSES",
    "Derivation",
    "MODULES",
    "derivation_list",
    "all_derivations",
    "render",
]
