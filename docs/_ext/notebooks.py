"""Sphinx extension: the notebooks, executed at build time in quick mode and rendered with
their outputs.

The notebooks are committed without outputs. Before Sphinx reads its sources, each
``notebooks/*.ipynb`` is executed headless with nbclient on a ``python3`` kernel that runs
this interpreter (its kernel spec written to a temporary folder, never to the user's Jupyter
paths), from the repository root (the notebooks read ``results/`` from there), with
``BENIGN_ATTENTION_QUICK=1`` (smaller problems, same code) and one BLAS thread. The executed
copies go to ``docs/_generated/notebooks/``, which myst-nb renders as they are (it executes
nothing itself). A cell that raises fails the build. Two notebooks run at a time.

``BENIGN_ATTENTION_DOCS_EXECUTE=0`` copies the notebooks unexecuted instead (a quick local
build of the other pages; CI never sets it).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
TARGET = ROOT / "docs" / "_generated" / "notebooks"
KERNEL_NAME = "python3"
CELL_TIMEOUT = 600  # seconds
WORKERS = 2


def kernel_environment() -> dict[str, str]:
    """The kernel's environment: quick mode, this source tree first on the path, one BLAS
    thread (quick mode works on small matrices)."""
    env = dict(os.environ, BENIGN_ATTENTION_QUICK="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(name, "1")
    return env


def execute(source: Path, kernels: Path) -> float:
    """Run ``source`` top to bottom and write it with its outputs under :data:`TARGET`;
    the wall time in seconds."""
    import nbclient
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    notebook = nbformat.read(source, as_version=4)
    manager = KernelManager(
        kernel_name=KERNEL_NAME,
        kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernels)]),
        transport="ipc",  # local sockets in the temporary folder, not TCP ports
        ip=str(kernels / source.stem),
    )
    client = nbclient.NotebookClient(
        notebook,
        km=manager,
        timeout=CELL_TIMEOUT,
        allow_errors=False,
        resources={"metadata": {"path": str(ROOT)}},
    )
    started = time.perf_counter()
    try:
        client.execute(env=kernel_environment())
    finally:
        if manager.has_kernel and manager.is_alive():
            manager.shutdown_kernel(now=True)
    nbformat.write(notebook, TARGET / source.name)
    return time.perf_counter() - started


def prepare(app) -> None:
    """Fill :data:`TARGET` with the notebooks (executed unless switched off)."""
    from ipykernel.kernelspec import write_kernel_spec

    shutil.rmtree(TARGET, ignore_errors=True)
    TARGET.mkdir(parents=True)
    sources = sorted(NOTEBOOKS.glob("*.ipynb"))
    if os.environ.get("BENIGN_ATTENTION_DOCS_EXECUTE", "1") == "0":
        for source in sources:
            shutil.copy(source, TARGET / source.name)
        return
    with tempfile.TemporaryDirectory() as folder:
        kernels = Path(folder)
        write_kernel_spec(path=str(kernels / KERNEL_NAME))
        started = time.perf_counter()
        with ThreadPoolExecutor(WORKERS) as pool:
            seconds = pool.map(lambda source: execute(source, kernels), sources)
            times = dict(zip(sources, seconds, strict=True))
    for source, taken in times.items():
        print(f"notebook {source.name}: {taken:.1f} s", file=sys.stderr)
    print(f"notebooks executed in {time.perf_counter() - started:.1f} s", file=sys.stderr)


def setup(app) -> dict[str, object]:
    app.connect("builder-inited", prepare)
    return {"parallel_read_safe": True}
