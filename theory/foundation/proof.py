r"""Derivation records and their proofs: a symbolic proof is a list of residuals that must
be 0.

Each module of :mod:`theory` owns its records (its ``derivations()`` function);
:mod:`theory.derivations` collects them in reading order. A record states a result as a
SymPy object and keeps two things apart:

* its source (``status``): :data:`KNOWN` (from the paper, its code or the authors),
  :data:`DERIVED` (exact, this package) or :data:`RECONSTRUCTION` (this package's own
  version of a statement the paper does not give);
* its proof (``proof``): :data:`SYMBOLIC` (the record's check returns residuals that vanish
  identically, and they prove the statement as written, within the scope the
  ``evidence`` states), :data:`PARTIAL` (the check proves the identities the argument
  rests on; the remaining steps are written out by hand in the module's docstring and
  tested numerically), :data:`NUMERIC` (the evidence is a numeric test, named in
  ``evidence``) or :data:`NO_PROOF` (a definition, or a result taken from the paper).

A record may claim :data:`SYMBOLIC` or :data:`PARTIAL` only with a check, and
:data:`NUMERIC` only with the evidence named; ``python -m theory --check`` runs every check
and prints the proof status of every record.

A record also names where its formula lives on: ``twin``, the dotted path of its numeric
twin in :mod:`theory` (``theory.softmax_cosh.saturation_equal_gaps``); ``simulated``, the
dotted path of the simulator quantity it is compared with
(``verify.sim.observables.relevant_saturation``; empty when there is none); and ``test``,
the test that checks it (``tests/theory/test_softmax_cosh.py::test_name``). They are
strings: :mod:`theory` never imports :mod:`verify`, and a test resolves every link.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

import sympy as sp

KNOWN = "KNOWN (from the paper, its public code or the authors' rebuttal)"
DERIVED = "DERIVED (this package; exact)"
RECONSTRUCTION = (
    "Reconstruction (this package's own derivation; the paper's exact statement is not available)"
)
STATUSES = (KNOWN, DERIVED, RECONSTRUCTION)

SYMBOLIC = "symbolic"
PARTIAL = "partial"
NUMERIC = "numeric"
NO_PROOF = "none"
#: What a record's proof is, with the phrase ``python -m theory`` prints for it.
PROOFS = {
    SYMBOLIC: "symbolic (the check's residuals vanish identically and prove the statement)",
    PARTIAL: "partial (the check proves the identities the argument rests on; the other "
    "steps are by hand and tested numerically)",
    NUMERIC: "numeric only (no symbolic proof; evidence: a numeric test)",
    NO_PROOF: "none (a definition, or a result taken from the paper)",
}


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


_NAME = r"[A-Za-z_]\w*"
#: What a link must look like (a string: the paths are resolved by a test).
LINK_FORMS = {
    "twin": rf"theory(?:\.{_NAME})+",
    "simulated": rf"verify(?:\.{_NAME})+",
    "test": r"tests/[\w/]+\.py::test_\w+",
}
LINK_TEXT = {
    "twin": "a dotted path in theory (theory.module.name)",
    "simulated": "a dotted path in verify (verify.module.name)",
    "test": "tests/<path>.py::test_<name>",
}


@dataclass(frozen=True)
class Derivation:
    """One derived result: a title, a SymPy statement, its source status, its proof check,
    what kind of proof it has (:data:`PROOFS`) and the evidence (what the check covers, or
    the numeric test); and its links: the numeric twin, the simulated quantity and the
    test (see the module docstring)."""

    title: str
    statement: sp.Basic
    status: str
    check: Callable[[], object] | None = None
    proof: str = NO_PROOF
    evidence: str = ""
    #: Dotted path of the numeric twin in :mod:`theory` (empty: none).
    twin: str = ""
    #: Dotted path of the simulator quantity it is compared with (empty: none).
    simulated: str = ""
    #: The test that checks it, ``tests/...py::test_name``.
    test: str = ""

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status={self.status!r} is invalid: allowed one of {STATUSES}")
        if self.proof not in PROOFS:
            raise ValueError(f"proof={self.proof!r} is invalid: allowed one of {tuple(PROOFS)}")
        if (self.check is not None) != (self.proof in (SYMBOLIC, PARTIAL)):
            raise ValueError(
                f"proof={self.proof!r} is invalid for {self.title!r}: a check goes with "
                "'symbolic' or 'partial' proofs, and those need a check"
            )
        if self.proof in (PARTIAL, NUMERIC) and not self.evidence:
            raise ValueError(f"evidence is missing for {self.title!r} (proof {self.proof!r})")
        for name, form in LINK_FORMS.items():
            value = getattr(self, name)
            if value and not re.fullmatch(form, value):
                raise ValueError(
                    f"{name}={value!r} is invalid for {self.title!r}: allowed {LINK_TEXT[name]}"
                )

    def links(self) -> list[tuple[str, str]]:
        """``(name, value)`` of the twin, the simulated quantity and the test, for printing
        (an empty link reads ``none``)."""
        return [
            ("twin", self.twin or "none (no numeric twin in theory)"),
            ("simulated", self.simulated or "none (no simulator counterpart)"),
            ("test", self.test or "none"),
        ]

    def verified(self) -> bool | None:
        """Run the proof check: True if every residual is 0, None if there is no check."""
        return None if self.check is None else residuals_vanish(self.check())


@dataclass(frozen=True)
class SizedCheck:
    """A proof check run for every size (e.g. T = 2..8): each of ``parts`` at each size, and
    the size-free ``fixed`` checks once. :meth:`upto` gives the same check on the smaller
    sizes only (a quick run of an expensive proof)."""

    parts: tuple[Callable[[int], object], ...]
    sizes: range
    fixed: tuple[Callable[[], object], ...] = ()

    def __call__(self) -> list:
        return [check() for check in self.fixed] + [
            [part(size) for size in self.sizes] for part in self.parts
        ]

    def upto(self, largest: int) -> SizedCheck:
        """The check on the sizes up to ``largest``."""
        return replace(self, sizes=range(self.sizes.start, min(self.sizes.stop, largest + 1)))


def for_sizes(check: Callable[[int], object], sizes: range = range(2, 9)) -> SizedCheck:
    """A proof check that runs ``check(size)`` for every size (e.g. T = 2..8)."""
    return SizedCheck((check,), sizes)


def indexed(name: str) -> sp.IndexedBase:
    """A real indexed symbol (``s[t]``, ``gamma[i, t]``)."""
    return sp.IndexedBase(name, real=True)


__all__ = [
    "KNOWN",
    "DERIVED",
    "RECONSTRUCTION",
    "STATUSES",
    "SYMBOLIC",
    "PARTIAL",
    "NUMERIC",
    "NO_PROOF",
    "PROOFS",
    "Derivation",
    "LINK_FORMS",
    "SizedCheck",
    "flatten_residuals",
    "residuals_vanish",
    "for_sizes",
    "indexed",
]
