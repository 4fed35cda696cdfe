"""The ledger's fixed vocabulary, as data: a claim's status, and how its wording is known.

A claim's status is the most severe of what decides it (:func:`combine`): ``unexpected``
over ``contradicted`` over ``holds-corrected`` over ``holds`` over ``defined``. A claim
that nothing decides keeps the status the ledger states for it (``not-testable`` or
``not-run``, with why, what would decide it and its predicted cost).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Status:
    """One status: its ``key`` (as written in ``ledger.json``), its ``label`` (as shown),
    what it ``means``, and its ``rank`` (the higher decides when several apply)."""

    key: str
    label: str
    meaning: str
    rank: int


STATUSES: tuple[Status, ...] = (
    Status(
        "unexpected",
        "unexpected in this run",
        "a check that decides the claim came out unexpected in this run (a new failure, or "
        "a registered disagreement that now agrees): open until the registry is re-examined",
        6,
    ),
    Status(
        "contradicted",
        "contradicted, with the mechanism",
        "the simulation or the experiment contradicts the claim as this package reads it; "
        "the mechanism is registered, and each run fills in the numbers that show it",
        5,
    ),
    Status(
        "holds-corrected",
        "holds with a registered correction",
        "the claim holds once a registered correction is made (an exact form for an "
        "approximate one, a term the reconstruction drops, the horizon it refers to); the "
        "correction is given with its numbers",
        4,
    ),
    Status(
        "holds",
        "holds in this reconstruction",
        "every check and experiment that decides the claim agrees with this package's "
        "reconstruction of it",
        3,
    ),
    Status(
        "defined",
        "a definition, implemented",
        "a definition or a setting rather than a claim: the package implements it as far as "
        "it is known, and its tests are named",
        2,
    ),
    Status(
        "not-testable",
        "not testable offline",
        "nothing this package can run offline decides the claim; why is given",
        1,
    ),
    Status(
        "not-run",
        "not run",
        "what would decide the claim is planned or available but has not been run; what "
        "decides it and its predicted cost are given",
        0,
    ),
)
BY_KEY: dict[str, Status] = {status.key: status for status in STATUSES}
#: The statuses that a check or an experiment can give a claim (the others are stated).
DECIDING = ("unexpected", "contradicted", "holds-corrected", "holds", "defined")


@dataclass(frozen=True)
class Basis:
    """How a claim's wording is known: ``key`` and what it means."""

    key: str
    meaning: str


BASES: tuple[Basis, ...] = (
    Basis(
        "quoted",
        "quoted from the paper's summary, abstract and captions, or from the authors' rebuttal "
        "(symbols written in ASCII; [...] marks an omission)",
    ),
    Basis(
        "known in shape",
        "the result is known in shape (from the summary, the rebuttal or the public code); "
        "its exact statement and constants are not available, and the wording is this "
        "package's",
    ),
    Basis(
        "reconstructed",
        "the paper's text is not available: the wording is this package's own "
        "reconstruction of what the result states",
    ),
)
BASIS_KEYS = tuple(basis.key for basis in BASES)


def status(key: str) -> Status:
    """The status of ``key``; ``ValueError`` naming the allowed keys otherwise."""
    if key not in BY_KEY:
        raise ValueError(f"status={key!r} is invalid: allowed {', '.join(BY_KEY)}")
    return BY_KEY[key]


def combine(keys: Iterable[str]) -> str | None:
    """The most severe of ``keys`` (None when there are none)."""
    ranked = [status(key) for key in keys]
    return max(ranked, key=lambda s: s.rank).key if ranked else None


__all__ = [
    "Status",
    "STATUSES",
    "BY_KEY",
    "DECIDING",
    "Basis",
    "BASES",
    "BASIS_KEYS",
    "status",
    "combine",
]
