"""What a claim of the ledger is made of, as data.

A :class:`Claim` names its source (the paper, its appendix, the authors' rebuttal), the
result it is (``ref``), its wording and how that wording is known (``basis``), and what
decides it:

* :class:`CheckRef`: a registered check by its stable id, in the catalogue of the command
  that runs it (``check`` for ``verify check``; later catalogues, such as the model
  variants', join :data:`verify.ledger.evidence.CATALOGUES`); a check that agrees makes
  the claim hold, one that disagrees as registered gives the claim the check's ``effect``
  (a correction, or a contradiction), with the check's mechanism;
* :class:`Reading`: an experiment's committed result files under ``results/`` (each
  with its SHA-256), read by a module-level ``judge(folder, **params)`` that returns a
  :class:`Finding`: a status and the numbers it rests on, computed from the files;
* tests (``path::function``) and commands (``python -m ...``) that show it;
* :class:`Standing`: a status the ledger states where nothing runnable decides the claim
  (not testable offline and why; not run, what will decide it and its predicted cost; a
  definition and its tests).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class CheckRef:
    """A check by stable ``id`` in the catalogue of ``command``; ``effect`` overrides the
    claim's ``on_disagreement`` for this check."""

    id: str
    command: str = "check"
    effect: str = ""


def checks(*ids: str, command: str = "check", effect: str = "") -> tuple[CheckRef, ...]:
    """Check references for ``ids`` of one catalogue."""
    return tuple(CheckRef(id, command, effect) for id in ids)


@dataclass(frozen=True)
class Finding:
    """What a reading of result files found: a status key and the numbers, in words."""

    status: str
    text: str


@dataclass(frozen=True)
class Reading:
    """An experiment's result files and how they decide the claim.

    ``folder`` is relative to the repository root; ``record`` the JSON record in it that
    holds the provenance (commit, command); ``files`` the files ``judge`` reads (relative
    to ``folder``); ``regenerate`` the command that writes them again."""

    experiment: str
    folder: str
    record: str
    files: tuple[str, ...]
    regenerate: str
    judge: Callable[..., Finding]
    params: Mapping[str, Any] = field(default_factory=dict)

    def find(self, root: Path) -> Finding:
        return self.judge(root / self.folder, **self.params)


@dataclass(frozen=True)
class Standing:
    """A status the ledger states: ``status``, ``why`` (what would decide the claim, or
    why nothing can), and for a claim not run, ``cost(root)`` computing its predicted
    cost in words."""

    status: str
    why: str
    cost: Callable[[Path], str] | None = None


@dataclass(frozen=True)
class Claim:
    """One claim (see the module docstring)."""

    id: str
    source: str
    ref: str
    wording: str
    basis: str
    checks: tuple[CheckRef, ...] = ()
    readings: tuple[Reading, ...] = ()
    tests: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    standing: Standing | None = None
    on_disagreement: str = "holds-corrected"
    note: str = ""

    @property
    def decidable(self) -> bool:
        """Whether a check or an experiment decides the claim."""
        return bool(self.checks or self.readings)


#: Where a claim comes from.
SOURCES = ("paper", "appendix", "rebuttal")

__all__ = ["CheckRef", "checks", "Finding", "Reading", "Standing", "Claim", "SOURCES"]
