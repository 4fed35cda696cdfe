"""The max-margin experiment: reduced-coordinate cosines equal explicit d-dimensional ones,
a short run writes its tables, figure and record, and bad settings exit 2 at once."""

import json
import time

import numpy as np
import pytest

from theory.max_margin import (
    KKT_TOLERANCE,
    direction_cosine,
    kkt_residuals,
    selected_tokens,
    solve_token_svm,
)
from verify.cli import main
from verify.experiments.driver import run_experiment
from verify.experiments.max_margin import (
    FlowPoint,
    family_cosine,
    follow_flow,
    max_margin,
    metric_projections,
)
from verify.experiments.max_margin_settings import MaxMarginSettings
from verify.runtime.executors import make_executor
from verify.sim.config import RunConfig
from verify.sim.data import generate
from verify.sim.engines import DenseEngine, FlowEngine, ReducedEngine
from verify.sim.engines.base import reduced_setup


def small_config(**changes):
    values = {"d": 60, "n": 6, "T": 4, "mu_norm": 5.0, "test_size": 0, "alpha": 0.5}
    return RunConfig.build(**{**values, "steps": 400, **changes})


def explicit_cosine(q, v):
    return float(q @ v / (np.linalg.norm(q) * np.linalg.norm(v)))


def test_reduced_cosines_equal_the_dense_engines_explicit_query_to_1e10():
    config = small_config()
    data = generate(config)
    dense, reduced = DenseEngine(config, data), ReducedEngine(config, data)
    dense.advance_to(400)
    reduced.advance_to(400)
    B = data.X_train.reshape(-1, data.d).T
    A = dense.W0.T @ dense.W0
    selected = selected_tokens(dense.train_logits())
    stats = reduced.statistics
    l2 = solve_token_svm(stats.gram, selected, data.T)
    metric = solve_token_svm(stats.K, selected, data.T)
    q = dense.query()
    q_sq, _ = reduced.query_moments()
    point = FlowPoint(
        step=400.0,
        logits=reduced.train_logits(),
        A_projections=metric_projections(stats, reduced.a, reduced.M),
        q_sq=q_sq,
        p_norm=0.0,
    )
    cos_l2 = direction_cosine(point.logits.reshape(-1), q_sq, l2.coefficients, stats.gram)
    assert cos_l2 == pytest.approx(explicit_cosine(q, B @ l2.coefficients), abs=1e-10)
    cos_A = family_cosine(point, stats, 0.0, metric.coefficients)
    assert cos_A == pytest.approx(explicit_cosine(q, A @ B @ metric.coefficients), abs=1e-10)
    c = 0.7
    member = solve_token_svm(stats.K + c * stats.gram, selected, data.T)
    P = A + c * np.eye(data.d)
    cos_c = family_cosine(point, stats, c, member.coefficients)
    assert cos_c == pytest.approx(explicit_cosine(q, P @ B @ member.coefficients), abs=1e-10)
    assert abs(cos_l2 - cos_A) > 1e-3  # the candidates are distinguishable here


def test_flow_points_project_like_the_explicit_query():
    config = small_config(engine="flow", steps=10**6)
    data = generate(config)
    setup = reduced_setup(config, data)
    engine = FlowEngine(config, data, setup=setup)
    point = follow_flow(engine, [10.0**6])[0]
    B = data.X_train.reshape(-1, data.d).T
    q = engine.query()
    A_q = setup.C0.T @ q  # C0 = A Z with Z = B here, so C0^T q = B^T A q
    scale = np.abs(A_q).max()
    np.testing.assert_allclose(point.A_projections, A_q, rtol=0, atol=1e-11 * scale)
    assert point.q_sq == pytest.approx(q @ q, rel=1e-11)
    np.testing.assert_allclose(point.logits.reshape(-1), B.T @ q, rtol=0, atol=1e-11 * scale)


TINY = MaxMarginSettings(
    presets=("benign",),
    seeds=1,
    d_factor=0.1,
    log10_horizon=8,
    points_per_decade=2,
    fit_from_log10=4.0,
    stable_decades=3.0,
    milestones=(3, 6, 8),
    family_points=5,
)


def test_short_run_writes_tables_figure_and_record(tmp_path):
    # CPU time, not wall time: the 2-core machine is shared, and wall time measures the load
    started = time.process_time()
    record = run_experiment(max_margin(TINY), tmp_path, make_executor(workers=0), progress=False)
    assert time.process_time() - started < 15
    assert record["provenance"]["package_version"] and record["provenance"]["commit"]
    assert set(record["tables"]) >= {
        "tables/max_margin_history.csv",
        "tables/max_margin_milestones.csv",
        "tables/max_margin_presets.csv",
        "tables/max_margin_summary.md",
    }
    assert "figures/max_margin.png" in record["figures"]
    saved = json.loads((tmp_path / "max_margin.json").read_text())
    assert saved["settings"]["log10_horizon"] == 8
    run = record["presets"][0]
    assert run["kkt_worst_residual"] <= KKT_TOLERANCE
    assert run["selection_stable_all"]
    history = (tmp_path / "tables" / "max_margin_history.csv").read_text().splitlines()
    assert len(history) == 1 + 15  # header + points 10^1 .. 10^8 at 2 per decade
    summary = (tmp_path / "tables" / "max_margin_summary.md").read_text()
    assert "benign: cos l2" in summary


@pytest.mark.parametrize(
    ("flags", "name"),
    [
        (["--d-factor", "0.01"], "d_factor"),
        (["--presets", "mild"], "presets"),
        (["--log10-horizon", "400"], "log10_horizon"),
        (["--fit-from-log10", "50"], "fit_from_log10"),
        (["--family-range", "10,1"], "family_range"),
    ],
)
def test_bad_settings_exit_2_with_one_line(tmp_path, capsys, flags, name):
    code = main(["max-margin", "--out", str(tmp_path / "out"), "--no-progress", *flags])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and name in err
    assert not (tmp_path / "out" / "runs").exists()


def test_kkt_on_a_runs_selected_tokens_and_a_wrong_solution_fails():
    config = small_config(engine="flow", steps=10**8)
    data = generate(config)
    engine = FlowEngine(config, data)
    engine.advance_to(10**8)
    selected = selected_tokens(engine.train_logits())
    for kernel in (engine.statistics.gram, engine.statistics.K):
        svm = solve_token_svm(kernel, selected, data.T)
        good = kkt_residuals(kernel, selected, data.T, svm.coefficients, svm.multipliers)
        assert max(good.values()) <= KKT_TOLERANCE, good
        nudged = svm.coefficients * (1 + 1e-3 * np.cos(np.arange(svm.coefficients.size)))
        bad = kkt_residuals(kernel, selected, data.T, nudged, svm.multipliers)
        assert max(bad.values()) > 100 * KKT_TOLERANCE, bad
