"""The figures' common ground: matplotlib without a display, and how a figure is saved.

Every figure module (here and in :mod:`verify.realworld`) draws with :func:`pyplot` and
writes with :func:`save_figure`. matplotlib is imported on the first figure, so that
importing a figure module costs no matplotlib.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

#: Resolution of the PNG files (the PDF files are vector).
DPI = 130


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the non-interactive Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(figure: Any, directory: Path, name: str) -> list[Path]:
    """Save ``figure`` as PNG and PDF (temporary name, then rename) and close it."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for suffix in (".png", ".pdf"):
        path = directory / f"{name}{suffix}"
        temporary = directory / f".{name}.tmp{suffix}"
        figure.savefig(temporary, dpi=DPI)
        os.replace(temporary, path)
        written.append(path)
    pyplot().close(figure)
    return written


__all__ = ["DPI", "pyplot", "save_figure"]
