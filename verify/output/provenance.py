"""Where a result came from: package version, git commit, libraries, command line."""

from __future__ import annotations

import functools
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

PACKAGE = "benign-attention"


def package_version() -> str:
    """The installed distribution's version (``+source`` when run from an uninstalled tree)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(PACKAGE)
    except PackageNotFoundError:
        return "0+source"


@functools.cache
def git_commit() -> dict[str, Any]:
    """The commit of the source tree this package is imported from, and whether the tree
    had uncommitted changes (``None`` outside a git checkout, e.g. an installed wheel)."""
    root = Path(__file__).resolve().parents[2]

    def git(*arguments: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(root), *arguments],
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return {"commit": None, "dirty": None}
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": bool(status) if status is not None else None}


def provenance() -> dict[str, Any]:
    """Package version, git commit, Python and the numeric libraries' versions, command."""
    import numpy
    import scipy

    record = {
        "package": PACKAGE,
        "package_version": package_version(),
        **git_commit(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "command": " ".join(sys.argv),
    }
    sympy = sys.modules.get("sympy")
    if sympy is not None:
        record["sympy"] = sympy.__version__
    return record


__all__ = ["package_version", "git_commit", "provenance"]
