"""The notebooks in ``notebooks/`` run top to bottom on a fresh kernel, and are committed clean.

Each notebook is executed headless with nbclient in quick mode (``BENIGN_ATTENTION_QUICK=1``:
smaller problems, same code path), from the repository root (where Hypothesis already keeps its
``.hypothesis`` cache for the property tests), on a ``python3`` kernel
that runs THIS interpreter: the kernel spec is written to a temporary directory (never to the
user's Jupyter paths), so a fresh ``pip install ".[test]"`` environment needs no kernel
installation step and an unrelated ``python3`` kernel elsewhere on the machine is never used.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat", reason="notebook tests need the test extra")
nbclient = pytest.importorskip("nbclient", reason="notebook tests need the test extra")
pytest.importorskip("ipykernel", reason="notebook tests need the test extra")

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
EXPECTED = (
    "01_derivations.ipynb",
    "02_three_regimes.ipynb",
    "03_exponential_time.ipynb",
    "04_assumptions.ipynb",
    "05_precision.ipynb",
    "06_realworld.ipynb",
    "07_boundaries.ipynb",
    "08_variants.ipynb",
    "09_encoder.ipynb",
)
CELL_TIMEOUT = 300  # seconds per cell
KERNEL_NAME = "python3"


def _ids(path: Path) -> str:
    return path.stem


def test_every_notebook_is_present():
    assert [path.name for path in NOTEBOOKS] == sorted(EXPECTED)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids)
def test_committed_notebook_is_valid_and_has_no_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    assert notebook.metadata.get("kernelspec", {}).get("name") == KERNEL_NAME
    assert "widgets" not in notebook.metadata
    dirty = [
        index
        for index, cell in enumerate(notebook.cells)
        if cell.cell_type == "code"
        and (
            cell.get("outputs")
            or cell.get("execution_count") is not None
            or "execution" in cell.get("metadata", {})
        )
    ]
    assert not dirty, f"{path.name}: cells {dirty} carry outputs or execution counts; clear them"


@pytest.fixture(scope="module")
def kernel_manager_class(tmp_path_factory):
    """A kernel manager whose only kernel, ``python3``, runs this interpreter."""
    from ipykernel.kernelspec import write_kernel_spec
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import default

    root = tmp_path_factory.mktemp("kernels")
    write_kernel_spec(path=str(root / KERNEL_NAME))

    class ThisInterpreterKernelManager(AsyncKernelManager):
        @default("kernel_spec_manager")
        def _this_interpreter_only(self):
            return KernelSpecManager(kernel_dirs=[str(root)])

    spec = ThisInterpreterKernelManager(kernel_name=KERNEL_NAME).kernel_spec
    assert spec.argv[0] == sys.executable, spec.argv
    return ThisInterpreterKernelManager


def _kernel_environment() -> dict[str, str]:
    env = dict(os.environ)
    env["BENIGN_ATTENTION_QUICK"] = "1"
    # The package is importable from the source tree even when it is not installed.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    # Quick mode works on small matrices (N = nT <= 160), where a multithreaded BLAS only
    # adds contention, badly so when the suite shares the machine with other jobs.
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(name, "1")
    return env


@pytest.mark.parametrize("path", NOTEBOOKS, ids=_ids)
def test_notebook_runs_in_quick_mode(path, kernel_manager_class):
    from nbclient.exceptions import CellExecutionError

    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        kernel_name=KERNEL_NAME,
        kernel_manager_class=kernel_manager_class,
        timeout=CELL_TIMEOUT,
        allow_errors=False,
        resources={"metadata": {"path": str(ROOT)}},
    )
    started = time.perf_counter()
    try:
        client.execute(env=_kernel_environment())
    except CellExecutionError as error:
        pytest.fail(f"{path.name} failed in quick mode:\n{error}", pytrace=False)
    elapsed = time.perf_counter() - started
    errors = [
        output
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    ]
    assert not errors, errors
    print(f"{path.name}: {elapsed:.1f} s in quick mode")
