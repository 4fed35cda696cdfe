r"""Every derived equation and identity of ``theory``, collected in reading order.

Each module owns its records (its ``derivations()``); this module lists them for
``python -m theory`` and the notebooks: :func:`all_derivations` gives the
:class:`~theory.foundation.proof.Derivation` records, :func:`derivation_list` the
``(title, statement, status)`` tuples, :func:`render` one record as text (with its source
status and, separately, its kind of proof).
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from theory import baselines, invariants, max_margin, model, softmax_cosh
from theory.foundation.proof import (
    DERIVED,
    KNOWN,
    NO_PROOF,
    NUMERIC,
    PARTIAL,
    PROOFS,
    RECONSTRUCTION,
    STATUSES,
    SYMBOLIC,
    Derivation,
)
from theory.quadrature import asymptotics, g, gd
from theory.stage1 import moments, variance
from theory.stage2 import discrete, laws, preconditioner, predictions
from theory.variants import gradients, head, loss, noise_ratio, readout, rho

#: The modules whose records are collected, in reading order.
MODULES = (
    model,
    invariants,
    softmax_cosh,
    g,
    asymptotics,
    gd,
    moments,
    variance,
    preconditioner,
    laws,
    predictions,
    discrete,
    baselines,
    max_margin,
    gradients,
    loss,
    rho,
    head,
    readout,
    noise_ratio,
)


def all_derivations() -> list[Derivation]:
    """All derivations of the package, in reading order (built once; records are frozen)."""
    return list(_records())


@lru_cache(maxsize=1)
def _records() -> tuple[Derivation, ...]:
    return tuple(record for module in MODULES for record in module.derivations())


def derivation_list() -> list[tuple[str, sp.Basic, str]]:
    """``(title, statement, status)`` for every derivation (for notebooks)."""
    return [(item.title, item.statement, item.status) for item in all_derivations()]


def render(item: Derivation, latex: bool = False) -> str:
    """One derivation as text: title, source status, proof kind and its evidence, the
    links (numeric twin, simulated quantity, test), and the statement (pretty or LaTeX)."""
    body = sp.latex(item.statement) if latex else sp.pretty(item.statement, use_unicode=True)
    evidence = f"\n  evidence: {item.evidence}" if item.evidence else ""
    proof = f"  proof: {PROOFS[item.proof]}{evidence}"
    links = "".join(f"\n  {name}: {value}" for name, value in item.links())
    return f"{item.title}\n  status: {item.status}\n{proof}{links}\n\n{body}\n"


__all__ = [
    "DERIVED",
    "KNOWN",
    "RECONSTRUCTION",
    "STATUSES",
    "SYMBOLIC",
    "PARTIAL",
    "NUMERIC",
    "NO_PROOF",
    "PROOFS",
    "Derivation",
    "MODULES",
    "derivation_list",
    "all_derivations",
    "render",
]
