"""The engines agree: dense vs reduced (to rounding), reduced vs mp, flow vs GD (O(alpha))."""

import numpy as np
import pytest

from verify.sim.config import RunConfig, preset
from verify.sim.data import generate, initial_weights
from verify.sim.engines import DenseEngine, FlowEngine, MpEngine, ReducedEngine, make_engine
from verify.sim.engines.base import NonFiniteError
from verify.sim.simulate import logging_steps, simulate


def small(**changes):
    return RunConfig.build(
        **{
            "d": 60,
            "n": 6,
            "T": 4,
            "mu_norm": 5.0,
            "test_size": 12,
            "alpha": 0.5,
            "steps": 200,
            **changes,
        }
    )


def test_reduced_trajectory_equals_dense_to_rounding():
    config = small()
    data = generate(config)
    dense, reduced = DenseEngine(config, data), ReducedEngine(config, data)
    for step in (1, 5, 50, 200):
        dense.advance_to(step)
        reduced.advance_to(step)
        scale = np.abs(dense.train_logits()).max()
        assert np.abs(dense.train_logits() - reduced.train_logits()).max() <= 1e-12 * scale
        np.testing.assert_allclose(
            reduced.query(), dense.query(), rtol=0, atol=1e-12 * np.abs(dense.query()).max()
        )
        np.testing.assert_allclose(
            reduced.test_logits(), dense.test_logits(), rtol=1e-10, atol=1e-13
        )
    dense_norms, reduced_norms = dense.parameter_norms(), reduced.parameter_norms()
    for key in dense_norms:
        assert reduced_norms[key] == pytest.approx(dense_norms[key], rel=1e-9)


def test_dense_vs_reduced_on_benign_preset_attention_within_1e8():
    """Benign preset, 1000 steps: every recorded attention probability within 1e-8."""
    config = preset("benign", test_size=50, engine="dense")
    data = generate(config)
    dense = simulate(config, data)
    reduced = simulate(config.replace(engine="reduced"), data)
    assert dense.status == reduced.status == "completed"
    for split in ("train_probabilities", "test_probabilities"):
        d_probs = np.stack(getattr(dense, split))
        r_probs = np.stack(getattr(reduced, split))
        relative = np.abs(d_probs - r_probs) / r_probs
        assert relative.max() <= 1e-8, f"{split}: {relative.max():.2e}"


def test_mp_engine_agrees_with_float_engines():
    config = small(d=16, n=4, T=3, steps=30, mp_dps=40)
    data = generate(config)
    W0 = initial_weights(config)
    mp, reduced = MpEngine(config, data, W0), ReducedEngine(config, data, W0)
    mp.advance_to(30)
    reduced.advance_to(30)
    mp_logits = mp.train_logits().astype(float)
    assert np.abs(mp_logits - reduced.train_logits()).max() <= 1e-12 * np.abs(mp_logits).max()
    assert mp.parameter_norms()["p_norm"] == pytest.approx(
        reduced.parameter_norms()["p_norm"], rel=1e-12
    )


def _max_gap_difference(config, data, setup, steps):
    gd = ReducedEngine(config, data, setup=setup)
    flow = FlowEngine(config, data, setup=setup)
    worst = 0.0
    for step in np.linspace(0, steps, 11)[1:]:
        gd.advance_to(step)
        flow.advance_to(step)
        worst = max(worst, np.abs(gd.train_logits() - flow.train_logits()).max())
    return worst


def test_flow_tracks_gd_with_error_linear_in_alpha():
    """The GD - flow distance at a fixed time t halves when alpha halves (O(alpha))."""
    config = small(alpha=0.02, steps=2000)
    data = generate(config)
    setup = ReducedEngine(config, data).setup
    horizon = config.training.alpha * config.training.steps
    errors = []
    for alpha in (0.02, 0.01):
        errors.append(
            _max_gap_difference(config.replace(alpha=alpha), data, setup, round(horizon / alpha))
        )
    assert errors[1] < errors[0]
    assert 1.6 < errors[0] / errors[1] < 2.5


def test_flow_reaches_1e12_steps_on_benign_preset():
    config = preset("benign", engine="flow", steps=10**12, test_size=50, log_geometric=30)
    result = simulate(config)
    assert result.status == "completed", result.message
    assert result.steps[-1] == 1e12
    gaps = [row["clean_gap_min"] for row in result.history]
    assert np.all(np.isfinite(gaps))
    assert result.history[-1]["train_loss"] < result.history[10]["train_loss"]
    assert result.solver_steps < 2000


@pytest.mark.parametrize("changes", [{"alpha": 1e90}, {"nu_scale": 1e99, "alpha": 1e10}])
def test_non_finite_values_stop_the_run_with_a_message(changes):
    config = small(steps=5, **changes)
    with np.errstate(all="ignore"):
        result = simulate(config)
    assert result.status == "failed"
    assert "non-finite" in result.message and "step" in result.message
    assert len(result.history) >= 1  # the finished part is kept


def test_a_run_far_from_gradient_flow_carries_warnings():
    config = small(alpha=1e6, steps=20)
    warnings = []
    with np.errstate(all="ignore"):
        result = simulate(config, on_warning=warnings.append)
    assert any("A5" in text for text in result.warnings)
    assert any("invariant drift" in text for text in result.warnings)
    assert warnings == result.warnings
    assert simulate(small(steps=20, alpha=0.05)).warnings == []  # a small step: no warning


def test_keyboard_interrupt_keeps_finished_part(monkeypatch):
    config = small(steps=100, log_every=10, log_geometric=0)
    data = generate(config)
    engine = make_engine(config, data)
    original = engine.advance_to

    def interrupt_at_50(step):
        if step >= 50:
            raise KeyboardInterrupt
        original(step)

    monkeypatch.setattr(engine, "advance_to", interrupt_at_50)
    result = simulate(config, data, engine=engine)
    assert result.status == "interrupted"
    assert result.steps == [0.0, 10.0, 20.0, 30.0, 40.0]


def test_same_seed_same_numbers():
    config = small(steps=50)
    first, second = simulate(config), simulate(config)
    assert first.history == second.history


def test_logging_steps_are_linear_plus_geometric():
    steps = logging_steps(RunConfig.build(steps=1000, log_every=100, log_geometric=4))
    assert list(steps) == [0, 1, 10, 100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]


def test_flow_cannot_go_back():
    config = small(engine="flow")
    engine = make_engine(config, generate(config))
    engine.advance_to(10)
    with pytest.raises(ValueError, match="cannot go back"):
        engine.advance_to(5)


def test_non_finite_check_is_named():
    config = small()
    engine = ReducedEngine(config, generate(config))
    engine.a[:] = np.inf
    with np.errstate(all="ignore"), pytest.raises(NonFiniteError, match="training logits"):
        engine.step(1)


def test_finished_flow_engine_is_freed_without_the_cycle_collector():
    """The solver holds only the fixed matrices, not the engine (no reference cycle)."""
    import gc
    import weakref

    config = small(engine="flow", steps=10**6)
    engine = make_engine(config, generate(config))
    engine.advance_to(10**6)
    reference = weakref.ref(engine)
    gc.disable()
    try:
        del engine
        assert reference() is None
    finally:
        gc.enable()


def test_a_run_does_not_depend_on_the_blas_thread_count():
    """A run uses one BLAS thread throughout: the same numbers whatever the number of
    threads allowed around it (a product split over threads rounds differently: at d = 400
    the set-up and the test logits did)."""
    from threadpoolctl import threadpool_limits

    config = preset("benign", d=400, steps=100, test_size=100)
    runs = []
    for threads in (1, 2):
        with threadpool_limits(limits=threads, user_api="blas"):
            runs.append(simulate(config))
    assert runs[0].history == runs[1].history
    np.testing.assert_array_equal(runs[0].final_test_logits, runs[1].final_test_logits)


def completed_in_turn(config, data):
    """The run recorded the plain way: each batch of points evaluated and completed when
    it is full, in the run's thread."""
    from verify.runtime.threads import single_blas_thread
    from verify.sim import simulate as module

    result = module.RunResult(config=config, data=data)
    with single_blas_thread():
        engine = make_engine(config, data)
        batch = []
        for step in logging_steps(config):
            engine.advance_to(step)
            batch.append(module.capture(result, engine))
            if len(batch) == module.FLUSH_POINTS:
                module.complete(result, batch, engine)
                batch = []
        module.complete(result, batch, engine)
    return result


def test_batches_evaluated_in_the_background_record_what_batches_in_turn_record():
    config = small(steps=300)
    data = generate(config)
    streamed = []
    result = simulate(config, data, on_record=streamed.append)
    expected = completed_in_turn(config, data)
    assert len(result.history) > 3 * 16 and result.history == expected.history
    assert [dict(row) for row in streamed] == [dict(row) for row in expected.history]
    for name in ("train_logits", "train_probabilities", "test_probabilities", "gaps"):
        for got, want in zip(getattr(result, name), getattr(expected, name), strict=True):
            np.testing.assert_array_equal(got, want)


def test_a_non_finite_value_found_in_a_background_batch_keeps_the_points_before_it():
    """A test-side quantity that turns infinite at the 20th point (found when its batch is
    completed, while the run has gone on) ends the run there: 20 points kept, the ones
    captured after them dropped."""
    config = small(steps=300)
    data = generate(config)
    engine = make_engine(config, data)
    evaluate = engine.evaluate
    seen = []

    def infinite_from_the_twentieth(snapshots):
        out = evaluate(snapshots)
        for index, (_, norms) in enumerate(out):
            if len(seen) + index >= 19:
                norms["p_norm"] = np.inf
        seen.extend(out)
        return out

    engine.evaluate = infinite_from_the_twentieth
    result = simulate(config, data, engine=engine)
    assert result.status == "failed" and "p_norm" in result.message
    assert len(result.history) == 20 and len(result.gaps) == 20
    assert result.steps == list(logging_steps(config)[:20])


def test_the_set_up_does_not_depend_on_how_many_blocks_run_at_once():
    from dataclasses import fields

    from verify.runtime.threads import single_blas_thread
    from verify.sim.statistics import ReducedSetup

    config = small(d=700)
    data = generate(config)
    W0 = initial_weights(config)
    Z = np.ascontiguousarray(data.X_train.reshape(-1, config.model.d).T)
    with single_blas_thread():
        setups = [
            ReducedSetup.build(Z, (W0[r : r + 128] for r in range(0, 700, 128)), workers)
            for workers in (1, 2, 3)
        ]
    for setup in setups[1:]:
        for field in fields(ReducedSetup):
            np.testing.assert_array_equal(
                getattr(setup, field.name), getattr(setups[0], field.name)
            )


def test_products_on_two_blas_threads_change_a_run_only_at_rounding_level():
    """What one BLAS thread changed: the set-up's products on two threads (as runs had them
    on a two-core machine) round differently, and a run from them differs from the
    one-thread run only in the last digits; every share (accuracy, fitted, selection) and
    the regime are the same."""
    from threadpoolctl import threadpool_limits

    from verify.measures.regimes import regimes_of

    config = preset("benign", d=400, steps=300, test_size=100)
    data = generate(config)
    with threadpool_limits(limits=2, user_api="blas"):
        engine = make_engine(config, data)
    two, one = simulate(config, data, engine=engine), simulate(config, data)
    for name in one.history.names:
        x, y = one.history[name], two.history[name]
        if name.endswith(("accuracy", "fitted", "selects_relevant")) or name in ("step", "time"):
            np.testing.assert_array_equal(x, y)
        else:
            np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-14, err_msg=name)
    assert regimes_of(one.final) == regimes_of(two.final)
