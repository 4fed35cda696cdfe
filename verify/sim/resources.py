r"""Memory a run needs, estimated before it starts, against what the machine has free.

Also the table of engines (:func:`engine_table`): each engine's traits, and what a run of
the benign preset would take on it.

Every run holds its data, :math:`(n + m) T d` float64 (8 bytes) for :math:`n` training
and :math:`m` test sequences when its engine has tokens, and the per-log-point records,
about :math:`L\,n T` (:math:`L` log points); its engine adds its own arrays, declared
with the engine (:mod:`verify.sim.engines.registry`).

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
from verify.sim.config import RunConfig, preset
from verify.sim.engines.registry import REGISTRY, engine_traits, estimated_log_points
from verify.sim.engines.traits import FLOAT, EngineTraits


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
    points = log_points if log_points is not None else estimated_log_points(config)
    traits = engine_traits(config.solver.engine)
    data = FLOAT * ((m.n + test) * m.T * d + 2 * d) if traits.tokens else FLOAT * 4 * N
    records = FLOAT * points * (4 * N + 2 * config.recording.attention_test_samples * m.T)
    state = traits.state_bytes(config)
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


def significant(value: float) -> str:
    """Two significant digits, without an exponent (``0.52``, ``14``, ``250``)."""
    return f"{value:.0f}" if value >= 10 else f"{value:.2g}"


def duration(seconds: float) -> str:
    """``"0.52 s"``, ``"14 s"``, ``"3.5 min"``, ``"2.1 h"``."""
    if seconds >= 7200:
        return f"{significant(seconds / 3600)} h"
    if seconds >= 120:
        return f"{significant(seconds / 60)} min"
    return f"{significant(seconds)} s"


def size(count: int) -> str:
    """Bytes as ``"12 MiB"`` or ``"1.5 GiB"``."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20)):
        if count >= scale:
            return f"{significant(count / scale)} {unit}"
    return f"{significant(count / 2**10)} KiB"


def engine_row(traits: EngineTraits, config: RunConfig) -> tuple[str, ...]:
    on = config.replace(engine=traits.name, init=traits.inits[0])
    if not traits.test_set:
        on = on.replace(test_size=0)
    return (
        f"`{traits.name}`",
        "GD steps" if traits.integrates == "gd" else "gradient flow",
        traits.exact,
        "float64" if traits.precision == "float64" else "mpmath, `--mp-dps` digits",
        ", ".join(traits.inits),
        ", ".join(
            name for name, has in (("tokens", traits.tokens), ("test set", traits.test_set)) if has
        )
        + (", query" if traits.query else "")
        or "statistics only",
        traits.scaling,
        f"{duration(traits.cost(on).seconds)}, {size(estimated_bytes(on))}",
        traits.description,
    )


ENGINE_COLUMNS = (
    "engine",
    "advances by",
    "exact",
    "arithmetic",
    "W0 init",
    "holds",
    "cost",
    "benign preset, 1000 steps (estimated)",
    "what",
)


def engine_table() -> str:
    """The engines as a Markdown table, from :mod:`verify.sim.engines.registry` (the
    README's): traits, cost, and the estimated time (one core, at the rates of
    :mod:`verify.sim.engines.traits`) and memory of the benign preset on each."""
    config = preset("benign")
    lines = ["| " + " | ".join(ENGINE_COLUMNS) + " |", "|" + "---|" * len(ENGINE_COLUMNS)]
    lines += ["| " + " | ".join(engine_row(traits, config)) + " |" for traits in REGISTRY]
    return "\n".join(lines)


__all__ = ["available_memory", "estimated_bytes", "check_memory", "engine_table"]
