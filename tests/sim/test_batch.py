"""Runs trained together equal the same runs trained one by one: every recorded value to
1e-12 of its scale, except the population test loss, whose Gauss-Hermite evaluation carries
a stated error floor (``HERMITE_TABLE_ERROR``, 1e-9) that rounding-level differences in
the query can move it across (measured: up to 1.5e-11). And the memory estimate of runs
trained together bounds their measured peak."""

import tracemalloc

import numpy as np
import pytest

from verify.experiments.settings import PhaseDiagramSettings
from verify.sim.batch import (
    run_signal,
    shared_setup,
    signal_plane_data,
    simulate_batch,
    simulate_group,
    simulate_independent,
)
from verify.sim.config import RunConfig
from verify.sim.data import generate
from verify.sim.engines.base import reduced_setup
from verify.sim.population import HERMITE_TABLE_ERROR
from verify.sim.resources import estimated_bytes
from verify.sim.simulate import simulate

MU_VALUES = (3.0, 8.0, 20.0)
SEEDS = (0, 1)


def small(**changes):
    return RunConfig.build(
        **{
            "d": 80,
            "n": 8,
            "T": 4,
            "test_size": 0,
            "alpha": 0.5,
            "steps": 200,
            "log_every": 50,
            "log_geometric": 8,
            "engine": "reduced",
            **changes,
        }
    )


def numeric_history(result):
    keys = sorted(result.history[0])
    return keys, np.array([[row[key] for key in keys] for row in result.history])


def assert_same_run(together, alone):
    """Every recorded value and every recorded per-token array agrees to 1e-12 of its scale."""
    assert together.status == alone.status == "completed"
    assert together.steps == alone.steps
    keys, a = numeric_history(together)
    keys_alone, b = numeric_history(alone)
    assert keys == keys_alone
    worst = np.max(np.abs(a - b) / np.maximum(np.abs(b), 1.0), axis=0, initial=0.0, where=a == a)
    allowed = [HERMITE_TABLE_ERROR if key == "population_test_loss" else 1e-12 for key in keys]
    assert np.all(worst <= allowed), dict(zip(keys, worst, strict=True))
    assert np.array_equal(np.isnan(a), np.isnan(b))
    for name in ("train_logits", "train_probabilities", "gaps"):
        x, y = np.stack(getattr(together, name)), np.stack(getattr(alone, name))
        assert np.array_equal(np.isnan(x), np.isnan(y)), name
        assert np.nanmax(np.abs(x - y)) <= 1e-12 * max(np.nanmax(np.abs(y)), 1.0), name


@pytest.fixture(scope="module")
def configs():
    return [small(mu_norm=mu, seed=seed) for seed in SEEDS for mu in MU_VALUES]


@pytest.fixture(scope="module")
def alone(configs):
    return [simulate(config) for config in configs]


def test_batched_runs_equal_single_runs(configs, alone):
    """Seeds x ||mu|| of one (d, n, T): set-up shared per seed, each ||mu|| its own signal."""
    for together, single in zip(simulate_batch(configs), alone, strict=True):
        assert_same_run(together, single)


def test_independent_runs_equal_single_runs(configs, alone):
    """Runs with nothing shared (their own data and statistics) trained as one program."""
    datas = [generate(config) for config in configs]
    statistics = [
        reduced_setup(config, data).statistics()
        for config, data in zip(configs, datas, strict=True)
    ]
    together = simulate_independent(configs, datas, statistics)
    for run, single in zip(together, alone, strict=True):
        assert_same_run(run, single)


def test_comparison_tells_runs_apart(alone):
    """The comparison above fails on a different run (another ||mu||, same seed)."""
    with pytest.raises(AssertionError):
        assert_same_run(alone[0], alone[1])


@pytest.mark.parametrize("d, runs", [(1000, 16), (3000, 16)])
def test_the_memory_estimate_of_runs_trained_together_bounds_their_peak(d, runs):
    """Where the d-sized arrays dominate (d >= 1000), the estimate a phase-diagram column is
    checked against before any work lies between the measured peak (tracemalloc) and 1.5
    times it; it grows by the same amount with every run added."""
    settings = PhaseDiagramSettings(steps=20)
    configs = [settings.config(d, 5.0 + 2.5 * k, 0) for k in range(runs)]
    simulate_group(configs[:1])  # imports and caches outside the measurement
    tracemalloc.start()
    try:
        simulate_group(configs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    estimate = estimated_bytes(configs[0], runs=runs)
    assert peak <= estimate <= 1.5 * peak
    per_run = estimated_bytes(configs[0], runs=runs + 1) - estimate
    assert per_run > 0
    assert estimated_bytes(configs[0], runs=runs + 2) - estimate == 2 * per_run


@pytest.mark.parametrize(
    "changes", [{}, {"rho_spread": 0.05, "seed": 3}, {"flip": "bernoulli", "eta": 0.1, "d": 120}]
)
def test_batched_data_with_the_fixed_head_are_the_generated_data(changes):
    """Without tokens, a batched run's labels, flips, groups and scores are the numbers the
    generated tokens give, bit for bit."""
    config = small(mu_norm=8.0, **changes)
    setup = shared_setup(config)
    light = signal_plane_data(config, setup.statistics(run_signal(config)))
    data = generate(config)
    for name in ("y_train", "y_clean", "noisy", "groups", "train_scores"):
        assert np.array_equal(getattr(light, name), getattr(data, name)), name
    assert light.X_test.shape == (0, config.model.T, config.model.d)


def test_recording_the_final_point_only_gives_the_same_final_rows():
    """Runs of a group recorded at their last point only: the same final rows and statuses,
    bit for bit, as recorded at the first point too (the phase diagram's two points; more
    points between would fold the waiting updates of M elsewhere). Its check reads one
    run's first row: at step 0 every run of the group has the same quantities defined (the
    same NaN pattern, whatever ||mu|| and rho)."""
    configs = [
        small(mu_norm=mu, rho_spread=0.05, log_every=200, log_geometric=0)
        for mu in (0.5, 3.0, 20.0)
    ]
    full = simulate_group(configs)
    final = simulate_group(configs, final_only=True)
    for every, last in zip(full, final, strict=True):
        assert last.status == every.status == "completed"
        assert len(last.history) == 1 and last.steps == every.steps[-1:]
        keys = sorted(every.final)
        a = np.array([every.final[key] for key in keys])
        b = np.array([last.final[key] for key in sorted(last.final)])
        assert sorted(last.final) == keys and np.array_equal(a, b, equal_nan=True)
    patterns = {tuple(np.isnan([run.history[0][key] for key in keys])) for run in full}
    assert len(patterns) == 1
