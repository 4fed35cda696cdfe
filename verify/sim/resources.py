r"""Memory a run needs, estimated before it starts, against what the machine has free.

Each engine's largest arrays, in float64 (8 bytes):

* every engine: the data, :math:`(n + m) T d` for :math:`n` training and :math:`m` test
  sequences, and the per-log-point records, about :math:`L\,n T` (:math:`L` log points);
* ``dense``: :math:`W` and :math:`W_0` (:math:`2d^2`) and the step's :math:`d \times d`
  temporaries (:math:`2d^2`);
* ``reduced`` and ``flow``: :math:`C` and :math:`B` (:math:`2dN`, :math:`N = nT`), a block of
  :math:`W_0` (:math:`512\,d`), :math:`K`, Gram and :math:`M` (:math:`3N^2`); the flow
  solver keeps about 16 copies of its :math:`N^2` state;
* ``mp``: the reduced arrays, the whole :math:`W_0` (:math:`d^2`) and :math:`N^2` mpmath
  numbers of about 100 bytes each, twice;
* ``dfree`` and ``dfree-flow``: no d-dimensional array at all; the statistics, their
  factors and the state, about :math:`12 N^2` (plus the flow solver's :math:`16 N^2`).

Runs trained together on shared draws (:func:`verify.sim.batch.simulate_group`: one
:math:`W_0` and noise, many :math:`\|\mu\|`) share the :math:`d`-sized set-up (plus the
cached noise draw, :math:`dN`, and the squares of a block of :math:`W_0`, :math:`512\,d`)
and each hold their own data, records and :math:`K`, Gram, :math:`Q`, :math:`M`
(:math:`4N^2`).

A run whose estimate exceeds the memory available now is refused before any work, with
the parameter whose value drives the estimate named in the message.
"""

from __future__ import annotations

import os

from theory.foundation.validation import InvalidParameter
from verify.sim.config import DFREE_ENGINES, FLOW_ENGINES, RunConfig

FLOAT = 8
MP_NUMBER = 100


def available_memory() -> int:
    """Bytes of memory available to a new allocation (``MemAvailable`` on Linux)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as stream:
            for line in stream:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def estimated_bytes(config: RunConfig, log_points: int | None = None, runs: int = 1) -> int:
    """Peak memory of a run of ``config``, or of ``runs`` such runs trained together on
    shared draws (see the module docstring), in bytes."""
    m = config.model
    d, N, test = m.d, m.n_tokens, config.recording.test_size
    points = (
        log_points
        if log_points is not None
        else (min(config.training.steps, 100) + config.recording.log_geometric + 2)
    )
    data = FLOAT * ((m.n + test) * m.T * d + 2 * d)
    records = FLOAT * points * (4 * N + 2 * config.recording.attention_test_samples * m.T)
    engine = config.solver.engine
    if engine in DFREE_ENGINES:
        data, state = FLOAT * 4 * N, FLOAT * 12 * N * N
    elif engine == "dense":
        state = FLOAT * 4 * d * d
    else:
        state = FLOAT * (2 * d * N + 512 * d + 3 * N * N)
        if engine == "mp":
            state += FLOAT * d * d + 2 * MP_NUMBER * N * N
    if engine in FLOW_ENGINES:
        state += FLOAT * 16 * N * N
    if runs > 1:  # the set-up once (with the cached noise draw and a block's squares);
        # data, records and the N x N statistics and state per run
        shared = state + FLOAT * (d * N + 512 * d)
        return int(shared + runs * (data + records + FLOAT * 4 * N * N))
    return int(data + records + state)


SIZES = ("d", "n", "T", "test_size", "log_geometric")


def check_memory(config: RunConfig, available: int | None = None, runs: int = 1) -> None:
    """:class:`InvalidParameter` when the run (or ``runs`` of them trained together) would
    not fit in the available memory, naming the size whose reduction to its default
    shrinks the estimate most."""
    need = estimated_bytes(config, runs=runs)
    free = available_memory() if available is None else available
    if need <= free:
        return
    defaults = RunConfig()
    savings = {}
    for name in SIZES:
        smaller = min(config.flat()[name], defaults.flat()[name])
        try:
            savings[name] = need - estimated_bytes(config.replace(**{name: smaller}), runs=runs)
        except InvalidParameter:
            continue
    culprit = max(savings, key=savings.__getitem__)
    raise InvalidParameter(
        culprit,
        config.flat()[culprit],
        f"a value for which the {config.solver.engine} engine's "
        f"{'run fits' if runs == 1 else f'{runs} runs trained together fit'} "
        f"in memory (about {need / 2**30:.3g} GiB needed; "
        f"{free / 2**30:.3g} GiB are available)",
    )


__all__ = ["available_memory", "estimated_bytes", "check_memory"]
