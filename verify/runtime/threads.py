"""One BLAS thread around small-matrix loops (threadpoolctl).

The matrices of a training step are small: several BLAS threads only contend for the
cores, so the step loops run inside :func:`single_blas_thread`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from functools import cache

from threadpoolctl import ThreadpoolController


@cache
def _thread_controller() -> ThreadpoolController:
    """The controller of the native thread pools, built on first use (it inspects the
    libraries loaded by then)."""
    return ThreadpoolController()


@contextlib.contextmanager
def single_blas_thread() -> Iterator[None]:
    """Within the block, BLAS uses one thread (small matrix loops; threadpoolctl)."""
    with _thread_controller().limit(limits=1, user_api="blas"):
        yield


__all__ = ["single_blas_thread"]
