r"""Memory a run needs, estimated before it starts, against what the machine has free.

Also the table of engines (:func:`engine_table`): each engine's traits, and what a run of
the benign preset would take on it.

Every run holds its data: :math:`(n + m) T d` float64 (8 bytes) for :math:`n` training
and :math:`m` test sequences when its engine has tokens, else the statistics it samples
in law (:math:`7 N^2`); the per-log-point records,
:math:`L(3N + aT)` numbers (:math:`L` log points, :math:`a` test sequences whose
attention is recorded) and a history row; up to 16 captured points waiting to be
completed, each with an :math:`N \times N` snapshot (engines with a test set); and its
engine's own arrays, declared with the engine (:mod:`verify.sim.engines.registry`).
When the run ends these are freed and the files are written: the text of the attention
and gap tables takes their place; the estimate is the larger of the two phases. The
estimate is compared with the measured peak of every engine at three sizes by
``benchmarks/memory_guard.py``.

The memory available is the smallest of what the machine has available, what the
address-space limit leaves and what the control group's limit leaves
(:func:`available_memory`).

Runs trained together on shared draws (:func:`verify.sim.batch.simulate_group`: one
:math:`W_0` and noise, many :math:`\|\mu\|`) share the :math:`d`-sized set-up (plus the
noise draw, :math:`dN`, and the squares of a block of :math:`W_0`, :math:`512\,d`), its
:math:`N \times N` products and the recording's :math:`N \times N` temporaries
(:math:`7N^2`), and each hold their records, :math:`K`, Gram, :math:`Q`, the copies of
:math:`K` and Gram the steps read and :math:`M` (:math:`6N^2`), the score differences
(:math:`nT^2`) and, unless the head is the fixed one (whose scores need no tokens), their
tokens.

A run whose estimate exceeds the memory available now is refused before any work, with
the parameter whose value drives the estimate named in the message.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Callable
from pathlib import Path

from theory.foundation.validation import InvalidParameter
from verify.sim.config import RunConfig, preset
from verify.sim.engines.registry import DENSE_DRIFT_MAX_D, REGISTRY, engine_traits
from verify.sim.engines.traits import FLOAT, EngineTraits


def available_memory() -> int:
    """Bytes a new allocation of this process can take: the smallest of the memory the
    machine has available (``MemAvailable`` on Linux), what the address-space limit
    (``RLIMIT_AS``, ``ulimit -v``) leaves above this process's current size, and what
    the memory limit of its control group (cgroup v2 ``memory.max``, v1
    ``memory.limit_in_bytes``, at every level up to the root) leaves above the group's
    current use."""
    return min(memory_limits().values())


def memory_limits() -> dict[str, int]:
    """Each limit on a new allocation that applies here, in bytes (see
    :func:`available_memory`): ``"available"`` always, ``"address space"`` and
    ``"cgroup"`` when set."""
    limits = {"available": machine_available()}
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        limits["address space"] = max(soft - status_bytes("VmSize"), 0)
    group = cgroup_headroom()
    if group is not None:
        limits["cgroup"] = group
    return limits


def machine_available() -> int:
    """``MemAvailable`` (Linux), else the free physical pages."""
    try:
        with open("/proc/meminfo", encoding="ascii") as stream:
            for line in stream:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def status_bytes(field: str) -> int:
    """A size from ``/proc/self/status`` (``VmSize``, ``VmRSS``, ``VmHWM``) in bytes (0
    where there is no such file)."""
    try:
        with open("/proc/self/status", encoding="ascii") as stream:
            for line in stream:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def resident_bytes() -> int:
    """This process's resident size now."""
    return status_bytes("VmRSS")


def peak_resident_bytes() -> int:
    """This process's peak resident size (since start, or since ``/proc/self/clear_refs``
    was written ``5``)."""
    return status_bytes("VmHWM")


#: A cgroup limit at or above this is no limit.
UNLIMITED = 2**60
CGROUP_ROOT = Path("/sys/fs/cgroup")


def cgroup_headroom(root: Path = CGROUP_ROOT) -> int | None:
    """The least ``limit - use`` over this process's memory cgroup and its ancestors
    (``None`` when no limit is set, or outside Linux)."""
    try:
        lines = Path("/proc/self/cgroup").read_text(encoding="ascii").splitlines()
    except OSError:
        return None
    headrooms = []
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":  # v2: one unified hierarchy
            files, base = ("memory.max", "memory.current"), root
        elif "memory" in controllers.split(","):  # v1
            files, base = ("memory.limit_in_bytes", "memory.usage_in_bytes"), root / "memory"
        else:
            continue
        headrooms += _headrooms(base, path, files)
    return min(headrooms) if headrooms else None


def _headrooms(base: Path, path: str, files: tuple[str, str]) -> list[int]:
    """``limit - use`` at every level of ``path`` under ``base`` that sets a limit (a
    namespaced mount shows the group at ``base`` itself)."""
    out = []
    parts = [part for part in path.split("/") if part]
    for depth in range(len(parts), -1, -1):
        directory = base.joinpath(*parts[:depth])
        try:
            limit_text = (directory / files[0]).read_text(encoding="ascii").strip()
            use = int((directory / files[1]).read_text(encoding="ascii").strip())
        except (OSError, ValueError):
            continue
        if limit_text != "max" and int(limit_text) < UNLIMITED:
            out.append(max(int(limit_text) - use, 0))
    return out


def estimated_bytes(config: RunConfig, log_points: int | None = None, runs: int = 1) -> int:
    """Peak memory of a run of ``config`` as the command line runs it (trained, then its
    files written), or of ``runs`` such runs trained together on shared draws (see the
    module docstring), in bytes above what the process held before."""
    m = config.model
    d, N, test = m.d, m.n_tokens, config.recording.test_size
    points = log_points if log_points is not None else log_point_bound(config)
    traits = engine_traits(config.solver.engine)
    if traits.tokens:
        data = FLOAT * ((m.n + test) * m.T * d + 2 * d)
    else:  # the statistics sampled in law, held by the result until its files are written
        data = FLOAT * SAMPLED_STATISTICS * N * N
    attention = min(config.recording.attention_test_samples, test)
    records = FLOAT * points * (3 * N + attention * m.T + HISTORY_COLUMNS)
    files = TEXT_CELL * points * (2 * N + attention * m.T)
    pending = FLOAT * 2 * FLUSH_POINTS * (N * N + N) if traits.test_set else 0
    state = traits.state_bytes(config)
    if runs > 1:  # the set-up once: Z, C0 and the noise draw (3dN), a block of W0 and its
        # squares (2 x 512 d), its N x N products and the recording's temporaries (7 N^2);
        # per run: tokens (unless the head is fixed), records, 6 N^2 and score differences
        shared = FLOAT * (3 * d * N + 2 * 512 * d + 7 * N * N)
        fixed = config.training.head == "fixed" and m.readout == "linear"
        tokens = 0 if fixed else data
        return int(shared + runs * (tokens + records + FLOAT * (6 * N * N + m.n * m.T**2)))
    # the engine's arrays are freed when the run ends, before the files are written
    return int(data + records + max(state + pending, files))


def log_point_bound(config: RunConfig) -> int:
    """At most how many points a run records (:func:`verify.sim.simulate.logging_steps`):
    the linear ones, the geometric ones, the first and the last."""
    steps = config.training.steps
    linear = min(steps // config.linear_log_interval + 1, steps + 1)
    return linear + config.recording.log_geometric + 2


#: Columns of a history row (a bound).
HISTORY_COLUMNS = 64
#: Log points captured before they are completed together, each with an N x N snapshot
#: (engines with a test set; the others evaluate a point when it is captured); a batch is
#: evaluated while the next is captured, so twice this many are held.
FLUSH_POINTS = 16
#: Bytes a number of the attention and gap tables takes while the files are written (its
#: text, about 24 characters, held a few times over: formatted, split into lines, joined).
TEXT_CELL = 80
#: N x N arrays of the statistics a d-free run samples (K, Gram, Q and their factors).
SAMPLED_STATISTICS = 7


#: The fields whose values size a run, in the order a refusal looks for the culprit.
SIZES = (
    "d",
    "n",
    "T",
    "test_size",
    "attention_test_samples",
    "log_geometric",
    "log_every",
    "steps",
    "mp_dps",
)


def culprit(config: RunConfig, measure: Callable[[RunConfig], float]) -> str:
    """The size field (:data:`SIZES`) whose change to its default (or, for a larger
    value, to the default) lowers ``measure`` most; ``"engine"`` when none lowers it."""
    defaults, values, need = RunConfig().flat(), config.flat(), measure(config)
    savings = {}
    for name in SIZES:
        # log_every's default, 0, means about 100 points: the fewest it can mean
        moved = defaults[name] if name == "log_every" else min(values[name], defaults[name])
        if moved == values[name]:
            continue
        try:
            savings[name] = need - measure(config.replace(**{name: moved}))
        except InvalidParameter:
            continue
    best = max(savings, key=savings.__getitem__, default=None)
    return best if best is not None and savings[best] > 0 else "engine"


def check_memory(config: RunConfig, available: int | None = None, runs: int = 1) -> None:
    """:class:`InvalidParameter` when the run (or ``runs`` of them trained together) would
    not fit in the available memory (:func:`available_memory`), naming the size whose
    reduction to its default shrinks the estimate most."""
    need = estimated_bytes(config, runs=runs)
    limits = memory_limits() if available is None else {"available": available}
    free = min(limits.values())
    if need <= free:
        return
    name = culprit(config, lambda c: estimated_bytes(c, runs=runs))
    which = min(limits, key=limits.__getitem__)
    bound = "are available" if which == "available" else f"are left under the {which} limit"
    raise InvalidParameter(
        name,
        config.flat()[name],
        f"a value for which the {config.solver.engine} engine's "
        f"{'run fits' if runs == 1 else f'{runs} runs trained together fit'} "
        f"in memory (about {need / 2**30:.3g} GiB needed; {free / 2**30:.3g} GiB {bound})",
    )


#: Most steps a GD engine takes: its step count is exact in float64 up to 2^53.
MAX_GD_STEPS = 2**53


def check_runnable(config: RunConfig) -> None:
    """:class:`InvalidParameter` when the engine cannot take the run's steps: a GD engine
    counts its steps exactly up to :data:`MAX_GD_STEPS`; a flow engine reaches any
    horizon. (A configuration may hold more steps, for a flow engine to take later.)"""
    engine = config.solver.engine
    if engine_traits(engine).integrates != "gd" or config.training.steps <= MAX_GD_STEPS:
        return
    flows = ", ".join(t.name for t in REGISTRY if t.integrates == "flow")
    raise InvalidParameter(
        "steps",
        config.training.steps,
        f"an integer in [0, 2^53] with engine {engine} (GD steps are counted exactly up to "
        f"2^53); the flow engines ({flows}) reach any horizon",
    )


#: Estimated seconds above which a run waits for a confirmation (``--yes``).
CONFIRM_SECONDS = 600.0


def estimated_seconds(config: RunConfig) -> float:
    """A run's estimated time on one core: its engine's cost
    (:attr:`~verify.sim.engines.traits.EngineTraits.cost`, at the rates of
    :mod:`verify.sim.engines.traits`) and its recording's (:func:`recording_seconds`)."""
    return engine_traits(config.solver.engine).cost(config).seconds + recording_seconds(config)


#: Seconds the population metrics of one log point take (SciPy's special functions), and
#: multiply-adds a second of the recording's large matrix products (BLAS on one core):
#: assumed rates of the order they reach, like the engines' rates.
POPULATION_SECONDS = 3e-3
BLAS_RATE = 5e9


def recording_seconds(config: RunConfig) -> float:
    r"""What the log points cost, at :data:`BLAS_RATE`: per
    point the parameter norms (stacked :math:`N \times N` products, :math:`2N^3`), the
    test logits of an engine with a test set (:math:`(mT + 2N) d`), the dense engine's
    exact invariant drift (:math:`2d^3` up to
    :data:`~verify.sim.engines.registry.DENSE_DRIFT_MAX_D`), and the population metrics
    (:data:`POPULATION_SECONDS` a point where they are computed)."""
    m, engine = config.model, config.solver.engine
    N, d, points = m.n_tokens, m.d, log_point_bound(config)
    per_point = 2 * N**3
    if engine_traits(engine).test_set:
        per_point += (config.recording.test_size * m.T + 2 * N) * d
    if engine == "dense" and d <= DENSE_DRIFT_MAX_D:
        per_point += 2 * d**3
    population = {"all": points, "final": 1, "none": 0}[config.recording.population]
    return points * per_point / BLAS_RATE + population * POPULATION_SECONDS


def cost_line(config: RunConfig) -> str:
    """What a run will take, in one line: time and memory, each an estimate."""
    cost = engine_traits(config.solver.engine).cost(config)
    integrates = engine_traits(config.solver.engine).integrates
    unit = "solver steps (estimated)" if integrates == "flow" else "GD steps"
    return (
        f"estimate: about {duration(estimated_seconds(config))} on one core "
        f"({config.solver.engine} engine: set-up {duration(cost.setup.seconds)}, "
        f"{cost.steps:.3g} {unit} of {duration(cost.step.seconds)}, recording "
        f"{duration(recording_seconds(config))}) and {size(estimated_bytes(config))} of "
        f"memory ({size(available_memory())} available)"
    )


def check_cost(config: RunConfig, confirmed: bool, limit: float = CONFIRM_SECONDS) -> None:
    """:class:`InvalidParameter` when the run is estimated to take longer than ``limit``
    seconds and was not ``confirmed`` (``--yes``), naming the size that drives the
    estimate (or the engine)."""
    seconds = estimated_seconds(config)
    if confirmed or seconds <= limit:
        return
    name = culprit(config, estimated_seconds)
    engine = config.solver.engine
    what = (
        f"an engine whose run at this setting is estimated under {duration(limit)}"
        if name == "engine"
        else f"a value for which the {engine} engine's run is estimated under {duration(limit)}"
    )
    raise InvalidParameter(
        name,
        config.flat()[name],
        f"{what} ({engine}: about {duration(seconds)} estimated here), or --yes to run it anyway",
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


__all__ = [
    "available_memory",
    "memory_limits",
    "resident_bytes",
    "peak_resident_bytes",
    "estimated_bytes",
    "check_memory",
    "check_runnable",
    "MAX_GD_STEPS",
    "estimated_seconds",
    "recording_seconds",
    "cost_line",
    "check_cost",
    "CONFIRM_SECONDS",
    "engine_table",
]
