r"""Many runs at once: runs that share their draws share their set-up and train together.

Configurations are grouped by everything their random draws depend on (seed, d, n, T,
the noise level, the label noise and the initialisation); within a group the noise
tokens and :math:`W_0` are drawn once, their products with :math:`W_0` computed once
(:class:`~verify.sim.statistics.ReducedSetup`), and each run adds its own signal
(:math:`\|\mu\|`, :math:`\rho`) in :math:`O(N^2)`; the runs then take their GD steps
on :class:`~verify.sim.engines.independent.IndependentGD`, two at a time on their
matrices' common part (:func:`shared_matrices`). Every run is recorded exactly as
:func:`verify.sim.simulate.simulate` records it, and gives the same numbers to rounding
(the runs' test metrics come from the population, not a finite test set). With the fixed
head, which lies in the signal plane, a run's data are its labels and the scores
:math:`\gamma = (E^\top B)^\top E^\top\nu` (:class:`SignalPlaneData`, the same numbers as
the tokens give), so no run holds a d-sized array.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from theory.foundation.validation import require
from verify.runtime.threads import single_blas_thread
from verify.sim.config import RunConfig
from verify.sim.data import (
    Dataset,
    balanced_labels,
    draw_noise,
    example_rhos,
    generate,
    initial_weight_blocks,
    noise_config,
    noisy_mask,
    position_groups,
    random_streams,
    signal_part,
)
from verify.sim.dfree_data import ReducedData, head_coordinates
from verify.sim.engines.base import NonFiniteError
from verify.sim.engines.independent import IndependentGD, SharedMatrices
from verify.sim.engines.traits import VARIANTS
from verify.sim.simulate import RunResult, RunStatus, check_row, logging_steps, record
from verify.sim.statistics import ReducedSetup, Statistics


def shared_draws_key(config: RunConfig) -> tuple:
    """What a run's noise tokens and :math:`W_0` depend on (runs with equal keys share them)."""
    return (noise_config(config), config.training.init, config.training.init_scale)


def group_by_draws(configs: Sequence[RunConfig]) -> list[list[int]]:
    """Indices of ``configs`` grouped by :func:`shared_draws_key`, in first-seen order."""
    groups: dict[tuple, list[int]] = {}
    for index, config in enumerate(configs):
        groups.setdefault(shared_draws_key(config), []).append(index)
    return list(groups.values())


def shared_setup(config: RunConfig) -> ReducedSetup:
    """The products of :math:`W_0` with the noise tokens of ``config``'s seed."""
    train_noise, _, _ = draw_noise(noise_config(config).replace(test_size=0))
    Z = np.ascontiguousarray(train_noise.reshape(-1, config.model.d).T)
    return ReducedSetup.build(Z, (block for _, block in initial_weight_blocks(config)))


def shared_matrices(setup: ReducedSetup, signals: np.ndarray) -> SharedMatrices:
    r"""The runs' :math:`K` and Gram as the signal-free part and rank-4 terms, for the
    signals ``signals`` (R, N, 2): with :math:`S` a run's signal and :math:`Z_E` the noise on
    the signal directions (:class:`~verify.sim.statistics.ReducedSetup`),

    .. math::

        K = P + [P_E, S] \begin{pmatrix} 0 & I \\ I & P_{EE} \end{pmatrix} [P_E, S]^\top,
        \qquad \mathrm{Gram} = Z^\top Z + [Z_E^\top, S]
        \begin{pmatrix} 0 & I \\ I & I \end{pmatrix} [Z_E^\top, S]^\top."""
    runs = signals.shape[0]
    identity = np.eye(2)
    K_core = np.block([[np.zeros((2, 2)), identity], [identity, setup.P_EE]])
    gram_core = np.block([[np.zeros((2, 2)), identity], [identity, identity]])
    S_T = np.swapaxes(signals, 1, 2)  # (R, 2, N)
    return SharedMatrices(
        K0=setup.P,
        gram0=setup.gram0,
        K_factors=np.concatenate([np.broadcast_to(setup.P_E.T, S_T.shape), S_T], axis=1),
        K_cores=np.ascontiguousarray(np.broadcast_to(K_core, (runs, 4, 4))),
        gram_factors=np.concatenate([np.broadcast_to(setup.Z[:2], S_T.shape), S_T], axis=1),
        gram_cores=np.ascontiguousarray(np.broadcast_to(gram_core, (runs, 4, 4))),
    )


@dataclass(frozen=True)
class SignalPlaneData(ReducedData):
    """A batched run's data with the fixed head (:class:`~verify.sim.dfree_data.ReducedData`
    of its draws, no tokens) and the head's coordinates ``nu`` on the signal directions."""

    nu: np.ndarray | None = None


def has_fixed_head(config: RunConfig) -> bool:
    """The run's head is the fixed one in the signal plane and its readout linear."""
    return config.training.head == "fixed" and config.model.readout == "linear"


def run_signal(config: RunConfig) -> np.ndarray:
    """The signal part of the run's training tokens on the signal directions, (N, 2), drawn
    as :func:`verify.sim.data.generate` draws it (the labels and each example's rho)."""
    m = config.model
    rhos = example_rhos(random_streams(config.seed)["rho"], m.n, m)
    return signal_part(balanced_labels(m.n), m, rhos).reshape(-1, 2)


def signal_plane_data(config: RunConfig, statistics: Statistics) -> SignalPlaneData:
    r"""The run's labels, flips and scores :math:`\gamma_j = \nu_1 (E^\top B)_{1j} + \nu_2
    (E^\top B)_{2j}` from its statistics: the fixed head has no other coordinates, so these
    are the numbers :func:`verify.sim.data.generate` gives (its tokens times the head)."""
    m = config.model
    y_clean = balanced_labels(m.n)
    flipped = noisy_mask(y_clean, m, random_streams(config.seed)["flips"])
    nu = head_coordinates(m)
    tokens = statistics.signal_B
    return SignalPlaneData(
        y_train=np.where(flipped, -y_clean, y_clean),
        y_clean=y_clean,
        train_scores=(tokens[0] * nu[0] + tokens[1] * nu[1]).reshape(m.n, m.T),
        groups=position_groups(m),
        statistics=statistics,
        d=m.d,
        mu_plus=np.array([m.mu_norm, 0.0]),
        mu_minus=np.array([0.0, m.mu_norm]),
        source="generated",
        nu=nu,
    )


def simulate_group(configs: Sequence[RunConfig], final_only: bool = False) -> list[RunResult]:
    """Train runs that share their draws (one :func:`shared_draws_key`) together;
    ``final_only``: record each run at its last log point only (:func:`train_together`)."""
    first = configs[0]
    require_same_schedule(configs)
    for config in configs:
        require(
            shared_draws_key(config) == shared_draws_key(first),
            "configs",
            config.seed,
            "runs that share seed, d, n, T, noise, label noise and initialisation",
        )
        require(
            config.recording.test_size == 0,
            "test_size",
            config.recording.test_size,
            "0 in batched runs (their test metrics come from the population)",
        )
    started = time.perf_counter()
    setup = shared_setup(first)
    signals = np.stack([run_signal(config) for config in configs])
    statistics = [setup.statistics(S) for S in signals]
    datas: list[Dataset | ReducedData] = [
        signal_plane_data(config, s) if has_fixed_head(config) else generate(config, True)
        for config, s in zip(configs, statistics, strict=True)
    ]
    engine = IndependentGD(
        statistics,
        np.stack([data.train_scores for data in datas]),
        np.stack([data.y_train for data in datas]),
        np.array([config.training.alpha for config in configs]),
        shared_matrices(setup, signals),
    )
    return train_together(engine, configs, datas, started, final_only)


#: The model variants batched runs take: those that change only the data (the compiled step
#: has the logistic loss, the linear readout and a fixed head).
BATCHED_VARIANTS = ("rho spread", "one-step head")


def require_batchable(config: RunConfig) -> None:
    """A run's variants are ones the compiled step takes (:data:`BATCHED_VARIANTS`)."""
    for variant in VARIANTS:
        if variant.active(config) and variant.name not in BATCHED_VARIANTS:
            require(
                False,
                variant.field,
                config.flat()[variant.field],
                f"{variant.base!r} in batched runs (their compiled step has the logistic loss, "
                f"the linear readout and a fixed head; the {variant.name} runs with engine "
                "reduced)",
            )


def require_same_schedule(configs: Sequence[RunConfig]) -> None:
    """Runs trained together take the same steps and are recorded at the same points, and
    take no variant the compiled step does not (:func:`require_batchable`)."""
    for config in configs:
        require_batchable(config)
        require(
            config.training.steps == configs[0].training.steps
            and config.recording == configs[0].recording,
            "steps",
            config.training.steps,
            "the same steps and recording for every run trained together",
        )


def train_together(
    engine: IndependentGD,
    configs: Sequence[RunConfig],
    datas: Sequence[Dataset | ReducedData],
    started: float,
    final_only: bool = False,
) -> list[RunResult]:
    """Advance ``engine``'s runs to each log point of ``configs[0]`` and record every run
    there, as :func:`verify.sim.simulate.simulate` does; a run whose recorded values stop
    being finite (or whose training logits do) is marked failed and no longer recorded.

    ``final_only``: only the last log point is recorded, and checked against the first run's
    first row (at step 0 every run of a group has :math:`a = 0, M = 0`, zero logits, and
    the same quantities defined)."""
    results = [
        RunResult(config=config, data=data) for config, data in zip(configs, datas, strict=True)
    ]
    views = [engine.view(run, data.noisy) for run, data in enumerate(datas)]
    alive = list(range(len(configs)))
    points = logging_steps(configs[0])
    first = None
    if final_only:
        with single_blas_thread():
            first = record(RunResult(config=configs[0], data=datas[0]), views[0])
        points = points[-1:]
    for step in points:
        for run, message in engine.advance_to(step).items():
            if run in alive:
                results[run].status, results[run].message = RunStatus.FAILED, message
                alive.remove(run)
        with single_blas_thread():  # small products (norms, population metrics)
            for run in list(alive):
                row = record(results[run], views[run])
                try:
                    check_row(row, first if first is not None else results[run].history[0])
                except NonFiniteError as error:
                    results[run].status, results[run].message = RunStatus.FAILED, str(error)
                    alive.remove(run)
    elapsed = (time.perf_counter() - started) / len(configs)
    for result in results:
        result.wall_seconds = elapsed
    return results


def simulate_independent(
    configs: Sequence[RunConfig],
    datas: Sequence[Dataset],
    statistics: Sequence[Statistics],
) -> list[RunResult]:
    """Train runs that share nothing but their shapes and recording (other seeds; each with
    its data and :class:`~verify.sim.statistics.Statistics`) together on
    :class:`~verify.sim.engines.independent.IndependentGD`."""
    require_same_schedule(configs)
    started = time.perf_counter()
    engine = IndependentGD(
        statistics,
        np.stack([data.train_scores for data in datas]),
        np.stack([data.y_train for data in datas]),
        np.array([config.training.alpha for config in configs]),
    )
    return train_together(engine, configs, datas, started)


def simulate_batch(
    configs: Sequence[RunConfig], progress: Callable[[int, int], None] | None = None
) -> list[RunResult]:
    """Train every configuration (test_size 0), batching the runs that share their draws;
    results in the order of ``configs``."""
    results: list[RunResult | None] = [None] * len(configs)
    groups = group_by_draws(configs)
    for done, group in enumerate(groups, start=1):
        for index, result in zip(group, simulate_group([configs[i] for i in group]), strict=True):
            results[index] = result
        if progress:
            progress(done, len(groups))
    return [result for result in results if result is not None]


__all__ = [
    "simulate_batch",
    "simulate_group",
    "simulate_independent",
    "train_together",
    "group_by_draws",
    "shared_draws_key",
    "shared_setup",
    "shared_matrices",
    "signal_plane_data",
    "run_signal",
    "SignalPlaneData",
]
