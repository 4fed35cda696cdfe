"""The ledger's evidence, located and checked: result files with their SHA-256 and the
provenance of the record beside them, the check catalogues a claim can point into, and
:func:`problems`, every way a claim can fail to be linked to evidence that exists."""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from verify.ledger.model import SOURCES, Claim, Reading
from verify.ledger.vocabulary import BASIS_KEYS, BY_KEY


def repository_root() -> Path:
    """Where ``results/`` and ``tests/`` live: the source checkout the package sits in, or,
    for a package installed from a checkout (``pip install .``), the working directory when
    it is that checkout; else the package's parent (the ledger then says which result
    files are not in this tree)."""
    package_parent = Path(__file__).resolve().parents[2]
    here = Path.cwd()
    if not (package_parent / "results").is_dir() and (here / "results").is_dir():
        if (here / "verify" / "ledger").is_dir():
            return here
    return package_parent


#: The repository root (where ``results/`` and ``tests/`` live in a source checkout).
ROOT = repository_root()
#: What a claim id looks like.
CLAIM_ID = re.compile(r"^[a-z][a-z0-9]*([.-][a-z0-9]+)*$")
#: What a check's registered disagreement can mean for a claim.
EFFECTS = ("holds-corrected", "contradicted")


def check_ids() -> set[str]:
    """The ids of ``verify check``'s runnable checks (declared, not left out)."""
    from verify.checks.catalogue import SPECS

    return {spec.id for spec in SPECS if not spec.dropped}


def variant_ids() -> set[str]:
    """The ids of ``verify variants``' checks (the model variants' claims R1-R6)."""
    from verify.checks.variants.catalogue import check_ids as ids

    return ids()


#: The check catalogues a claim can point into, by the command that runs them. A command
#: that adds checks adds its catalogue here.
CATALOGUES: dict[str, Callable[[], set[str]]] = {"check": check_ids, "variants": variant_ids}


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_entry(root: Path, path: Path) -> dict[str, Any]:
    """A file as evidence: its path from the root, SHA-256 and size."""
    return {
        "path": path.relative_to(root).as_posix(),
        "sha256": sha256(path),
        "bytes": path.stat().st_size,
    }


def recorded_command(command: str | None) -> str | None:
    """A recorded command line as a reader would type it: the interpreter's path to the
    package's ``__main__.py`` (``/some/checkout/verify/__main__.py max-margin ...``) as
    ``python -m verify max-margin ...``; the arguments as recorded."""
    if command is None:
        return None
    head, _, rest = command.partition(" ")
    if head.endswith("verify/__main__.py"):
        return f"python -m verify {rest}".rstrip()
    return f"python {command}" if head.endswith(".py") else command


def record_entry(root: Path, reading: Reading) -> dict[str, Any]:
    """The record beside a reading's files: its file entry, and the commit and command
    its provenance names (the code that wrote the results)."""
    path = root / reading.folder / reading.record
    provenance = json.loads(path.read_text(encoding="utf-8")).get("provenance", {})
    return {
        **file_entry(root, path),
        "commit": provenance.get("commit"),
        "package_version": provenance.get("package_version"),
        "command": recorded_command(provenance.get("command")),
    }


def reading_files(root: Path, reading: Reading) -> list[Path]:
    """The record and the files a reading reads."""
    folder = root / reading.folder
    return [folder / reading.record, *(folder / name for name in reading.files)]


def names_a_test(root: Path, node: str) -> bool:
    """Whether ``path::function`` names a test function defined in that file."""
    path, _, function = node.partition("::")
    file = root / path
    if not function or not file.is_file():
        return False
    tree = ast.parse(file.read_text(encoding="utf-8"))
    return any(
        isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name == function
        for item in tree.body
    )


def claim_problems(
    claim: Claim, root: Path, catalogues: dict[str, set[str]], command_ok: Callable[[str], bool]
) -> list[str]:
    """What is wrong with one claim's links (empty when it is linked to evidence that
    exists)."""
    out = []
    if not CLAIM_ID.match(claim.id):
        out.append(f"{claim.id}: the id is not of the form {CLAIM_ID.pattern}")
    if claim.source not in SOURCES or claim.basis not in BASIS_KEYS:
        out.append(f"{claim.id}: source {claim.source!r} or basis {claim.basis!r} unknown")
    if not claim.wording.strip():
        out.append(f"{claim.id}: no wording")
    effects = {claim.on_disagreement, *(ref.effect for ref in claim.checks if ref.effect)}
    if not effects <= set(EFFECTS):
        out.append(f"{claim.id}: a disagreement's effect must be one of {', '.join(EFFECTS)}")
    for ref in claim.checks:
        if ref.id not in catalogues.get(ref.command, set()):
            out.append(f"{claim.id}: check {ref.id!r} is not in the catalogue of {ref.command!r}")
    for reading in claim.readings:
        missing = [p for p in reading_files(root, reading) if not p.is_file()]
        out += [f"{claim.id}: result file {p.relative_to(root)} does not exist" for p in missing]
        if not command_ok(reading.regenerate):
            out.append(f"{claim.id}: {reading.regenerate!r} is not a command that exists")
    out += [
        f"{claim.id}: test {t} does not exist" for t in claim.tests if not names_a_test(root, t)
    ]
    out += [
        f"{claim.id}: {c!r} is not a command that exists"
        for c in claim.commands
        if not command_ok(c)
    ]
    return out + standing_problems(claim, root)


def standing_problems(claim: Claim, root: Path) -> list[str]:
    """A claim without evidence, or a stated status without its reason or cost."""
    standing = claim.standing
    if standing is None:
        return [] if claim.decidable else [f"{claim.id}: no evidence (no check, result or status)"]
    if standing.status not in BY_KEY or not standing.why.strip():
        return [f"{claim.id}: a stated status needs a known key and its reason"]
    if standing.status == "not-run":
        return (
            []
            if standing.cost is not None and standing.cost(root)
            else [f"{claim.id}: not run, but no predicted cost"]
        )
    if standing.status in ("not-testable",) or claim.decidable or claim.tests:
        return []
    return [
        f"{claim.id}: status {standing.status!r} stated without evidence (no check, result or test)"
    ]


def problems(
    claims: Iterable[Claim], root: Path = ROOT, command_ok: Callable[[str], bool] | None = None
) -> list[str]:
    """Every claim's problems (see :func:`claim_problems`), and ids used twice;
    ``command_ok`` says whether a command exists (by default, any does)."""
    claims = list(claims)
    catalogues = {name: ids() for name, ids in CATALOGUES.items()}
    known = command_ok or (lambda command: True)
    out = [p for claim in claims for p in claim_problems(claim, root, catalogues, known)]
    ids = [claim.id for claim in claims]
    return out + [
        f"{i}: the id is used twice" for i in sorted({i for i in ids if ids.count(i) > 1})
    ]


__all__ = [
    "ROOT",
    "repository_root",
    "CLAIM_ID",
    "EFFECTS",
    "CATALOGUES",
    "check_ids",
    "variant_ids",
    "sha256",
    "file_entry",
    "recorded_command",
    "record_entry",
    "reading_files",
    "names_a_test",
    "claim_problems",
    "standing_problems",
    "problems",
]
