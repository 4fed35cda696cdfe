"""Where a result came from: package version, git commit, libraries, command line."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import platform
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

PACKAGE = "benign-attention"


def package_version() -> str:
    """The version of the code that runs: the ``pyproject.toml`` of the source tree the
    package is imported from (an installed copy of another tree may carry another
    version), else the installed distribution's (``0+source`` when neither exists)."""
    source = source_version(Path(__file__).resolve().parents[2] / "pyproject.toml")
    if source is not None:
        return source
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(PACKAGE)
    except PackageNotFoundError:
        return "0+source"


def source_version(pyproject: Path) -> str | None:
    """This package's version in ``pyproject`` (None if the file is absent or names
    another project)."""
    if not pyproject.is_file():
        return None
    import tomllib

    project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    return str(project["version"]) if project.get("name") == PACKAGE else None


#: Held while git is asked, so that a lookup started in the background is not repeated.
_GIT_LOCK = threading.Lock()


def git_commit() -> dict[str, Any]:
    """The commit of the source tree this package is imported from, and whether the tree
    had uncommitted changes (``None`` outside a git checkout, e.g. an installed wheel);
    git is asked once a process."""
    with _GIT_LOCK:
        return _git_commit()


def prefetch_git_commit() -> None:
    """Ask git now, in a background thread (its two processes then run while the caller
    works; :func:`git_commit` waits for the answer)."""
    threading.Thread(target=git_commit, name="git", daemon=True).start()


@functools.cache
def _git_commit() -> dict[str, Any]:
    return source_commit(Path(__file__).resolve().parents[2])


def source_commit(root: Path) -> dict[str, Any]:
    """The git commit of the source tree ``root`` and whether it had uncommitted changes;
    ``None`` for both unless ``root`` holds this package's ``pyproject.toml`` (an installed
    copy sits in site-packages, and a git repository around that, such as an interpreter
    installed from a checkout, is not this package's source)."""
    if source_version(root / "pyproject.toml") is None:
        return {"commit": None, "dirty": None}

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


def library_version(name: str) -> str:
    """The version of library ``name`` without importing it (SciPy alone takes a quarter
    of a second to import): the loaded module's ``__version__``; else the ``version`` its
    package's ``version.py`` defines (where SciPy and NumPy take their ``__version__``
    from), run on its own; else the installed distribution's; else the imported module's."""
    module = sys.modules.get(name)
    if module is not None:
        return str(module.__version__)
    spec = importlib.util.find_spec(name)
    if spec is not None and spec.origin is not None:
        source = Path(spec.origin).with_name("version.py")
        if source.is_file():
            namespace: dict[str, Any] = {}
            exec(compile(source.read_bytes(), str(source), "exec"), namespace)
            if isinstance(namespace.get("version"), str):
                return namespace["version"]
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return str(importlib.import_module(name).__version__)


def provenance() -> dict[str, Any]:
    """Package version, git commit, Python and the numeric libraries' versions, command."""
    record = {
        "package": PACKAGE,
        "package_version": package_version(),
        **git_commit(),
        "python": platform.python_version(),
        "numpy": library_version("numpy"),
        "scipy": library_version("scipy"),
        "command": " ".join(sys.argv),
    }
    for name in ("sympy", "mpmath"):  # recorded when a computation used them
        module = sys.modules.get(name)
        if module is not None:
            record[name] = module.__version__
    return record


__all__ = [
    "package_version",
    "git_commit",
    "source_commit",
    "prefetch_git_commit",
    "library_version",
    "provenance",
]
