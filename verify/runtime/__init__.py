"""The ground floor under the experiments and the checks: how computations run and keep
their results.

:mod:`~verify.runtime.executors` (serial, process pool, Dask), :mod:`~verify.runtime.store`
(one JSON record per finished point, keyed by worker and point),
:mod:`~verify.runtime.interrupts` (SIGTERM handled like Ctrl-C) and
:mod:`~verify.runtime.threads` (one BLAS thread around small-matrix loops).

The rule that keeps it a floor: ``verify.runtime`` imports nothing from
:mod:`verify.sim`, :mod:`verify.checks`, :mod:`verify.experiments`, :mod:`verify.plots`,
:mod:`verify.cli` or :mod:`verify.realworld` (only :mod:`verify.output`,
:mod:`theory.foundation.validation`, the standard library, threadpoolctl and, where it is used, the
optional Dask), so that every one of them, the simulator included, may import it.
``tests/repository/test_layers.py`` checks it.
"""
