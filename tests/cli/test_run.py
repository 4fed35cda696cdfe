import importlib.metadata
import json
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from verify.cli import main
from verify.sim.config import RunConfig
from verify.sim.data import generate, initial_weights, save_npz
from verify.sim.run_files import read_history


def test_run_writes_all_files(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(
        [
            "run",
            "--preset",
            "benign",
            "--d",
            "80",
            "--steps",
            "40",
            "--test-size",
            "30",
            "--seed",
            "3",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 0
    record = json.loads((out / "config.json").read_text())
    assert record["config"]["model"]["d"] == 80 and record["seed"] == 3
    assert record["provenance"]["package_version"] and "commit" in record["provenance"]
    summary = json.loads((out / "summary.json").read_text())
    for key in (
        "train_accuracy",
        "test_accuracy",
        "train_loss",
        "test_loss",
        "steps",
        "engine",
        "wall_seconds",
        "noisy_count",
        "test_selects_relevant",
        "warnings",
    ):
        assert key in summary
    assert summary["noisy_count"] == 4 and summary["status"] == "completed"
    history = read_history(out / "history.csv")
    assert history["step"][0] == 0 and history["step"][-1] == 40 and len(history["step"]) > 10
    attention = (out / "attention.csv").read_text().splitlines()
    assert attention[0] == (
        "step,split,sample,p_t0_R,p_t1_W+,p_t2_W-,p_t3_I,p_t4_I,p_t5_I,p_t6_I,p_t7_I"
    )
    rows = np.array([line.split(",")[3:] for line in attention[1:]], dtype=float)
    np.testing.assert_allclose(rows.sum(axis=1), 1.0, rtol=1e-12)
    gaps = (out / "gaps.csv").read_text().splitlines()
    assert gaps[0].startswith("step,sample,kind,gap_t0_R")
    assert not list(out.glob(".*.tmp")) and not (out / "history.partial.csv").exists()


def test_an_earlier_run_is_not_replaced_without_overwrite(tmp_path, capsys):
    arguments = [
        "run",
        "--d",
        "30",
        "--steps",
        "5",
        "--test-size",
        "5",
        "--no-progress",
        "--out",
        str(tmp_path),
    ]
    assert main(arguments) == 0
    before = (tmp_path / "summary.json").read_text()
    assert main(arguments) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert (tmp_path / "summary.json").read_text() == before
    assert main([*arguments, "--overwrite"]) == 0


def test_data_from_npz_gives_identical_run(tmp_path):
    config = RunConfig.build(d=30, n=6, T=4, test_size=10, steps=20, mu_norm=4.0, seed=5)
    data = generate(config)
    path = tmp_path / "data.npz"
    save_npz(path, data, initial_weights(config))
    out_a, out_b = tmp_path / "a", tmp_path / "b"
    common = ["--preset", "benign", "--steps", "20", "--mu-norm", "4.0", "--no-progress"]
    assert (
        main(["run", *common, "--data-from", str(path), "--seed", "99", "--out", str(out_a)]) == 0
    )
    assert (
        main(
            [
                "run",
                *common,
                "--d",
                "30",
                "--n",
                "6",
                "--T",
                "4",
                "--test-size",
                "10",
                "--seed",
                "5",
                "--out",
                str(out_b),
            ]
        )
        == 0
    )
    a, b = read_history(out_a / "history.csv"), read_history(out_b / "history.csv")
    np.testing.assert_allclose(a["train_loss"], b["train_loss"], rtol=1e-12)
    np.testing.assert_allclose(a["test_loss"], b["test_loss"], rtol=1e-12)
    assert json.loads((out_a / "config.json").read_text())["data_source"] == str(path)


def test_help_shows_the_presets_own_defaults_choices_and_no_markup(capsys):
    assert main(["run", "--preset", "harmful", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "token dimension; default: 5000" in text  # the harmful preset's d and ||mu||
    assert "signal norm ||mu||; default: 5 " in text
    assert "choices: dense, reduced, mp, flow" in text and "choices: exact, bernoulli" in text
    assert ":math:" not in text and "%%" not in text and "``" not in text


def test_module_help_is_fast_and_run_imports_no_sympy():
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "verify", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0 and "run" in done.stdout
    probe = (
        "import sys; from verify.cli import main; "
        "main(['run', '--d', '20', '--steps', '3', '--test-size', '3', '--no-progress']);"
        "print(sorted(m for m in ('sympy', 'matplotlib', 'pandas', 'scipy.integrate') "
        "if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert time.perf_counter() - started < 20


def test_a_run_on_a_data_file_imports_only_what_it_uses(tmp_path):
    """``run --data-from`` with its files written (no population metrics: no SciPy) loads
    none of SciPy, SymPy, matplotlib, pandas or numba, and records SciPy's version all
    the same."""
    config = RunConfig.build(d=20, n=6, T=4, test_size=4)
    save_npz(tmp_path / "data.npz", generate(config))
    probe = (
        "import sys; from verify.cli import main; "
        f"main(['run', '--data-from', {str(tmp_path / 'data.npz')!r}, '--steps', '3', "
        f"'--no-progress', '--out', {str(tmp_path / 'out')!r}]);"
        "print(sorted(m for m in ('scipy', 'sympy', 'matplotlib', 'pandas', 'numba') "
        "if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
    provenance = json.loads((tmp_path / "out" / "config.json").read_text())["provenance"]
    assert provenance["scipy"] == importlib.metadata.version("scipy")


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_sigterm_keeps_the_finished_log_points(tmp_path, stop):
    """A long run stopped with SIGTERM (what timeout and batch schedulers send) or SIGHUP
    (a closed terminal) exits 128 + the signal and keeps every log point it finished,
    written atomically."""
    out = tmp_path / "run"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "verify",
            "run",
            "--d",
            "50",
            "--n",
            "6",
            "--T",
            "4",
            "--steps",
            "1e8",
            "--log-every",
            "1000",
            "--test-size",
            "5",
            "--no-progress",
            "--yes",  # a long run on purpose: the signal stops it
            "--out",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 60
    while time.time() < deadline and not (out / "history.partial.csv").exists():
        time.sleep(0.1)
    time.sleep(2.0)
    process.send_signal(stop)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 128 + stop, err
    assert stop.name in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["message"] == f"stopped by {stop.name}"
    history = read_history(out / "history.csv")
    assert len(history["step"]) >= 2 and history["step"][-1] == summary["steps"]
    assert not (out / "history.partial.csv").exists()


def test_run_with_the_mp_flow_engine_records_its_settings_and_mpmath(tmp_path, capsys):
    out = tmp_path / "mp-flow"
    arguments = "--d 16 --n 4 --T 3 --mu-norm 5 --steps 1e3 --log-geometric 4 --test-size 0"
    solver = "--engine mp-flow --mp-dps 30 --mp-flow-tol 1e-14"
    code = main(["run", *arguments.split(), *solver.split(), "--out", str(out), "--no-progress"])
    assert code == 0
    record = json.loads((out / "config.json").read_text())
    assert record["config"]["solver"] == {
        **record["config"]["solver"],
        "engine": "mp-flow",
        "mp_dps": 30,
        "mp_flow_tol": 1e-14,
    }
    assert record["provenance"]["mpmath"] and "commit" in record["provenance"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["steps"] == 1e3
    assert summary["solver_steps"] > 0


def test_a_partial_history_left_by_a_killed_run_is_moved_aside(tmp_path, capsys):
    """A rerun into the place of a run killed outright keeps that run's partial history
    under a new name (announced), never overwriting it."""
    (tmp_path / "history.partial.csv").write_text("step,train_loss\n0,0.69\n")
    arguments = ["run", "--d", "20", "--steps", "5", "--test-size", "4", "--no-progress"]
    assert main([*arguments, "--out", str(tmp_path)]) == 0
    kept = list(tmp_path.glob("history.partial.*.csv"))
    assert len(kept) == 1 and kept[0].read_text() == "step,train_loss\n0,0.69\n"
    assert "moved to" in capsys.readouterr().err
    assert not (tmp_path / "history.partial.csv").exists()


def test_the_cost_is_shown_before_the_run_and_a_long_run_needs_yes(capsys):
    """mp-flow on the benign preset is estimated above the threshold: refused without
    --yes (exit 2, one line naming the engine and the estimate); a short run prints its
    estimate first."""
    assert main(["run", "--engine", "mp-flow", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: engine='mp-flow' is invalid: allowed an engine whose run")
    assert "or --yes to run it anyway" in err and "\n" not in err
    assert main(["run", "--d", "20", "--steps", "2", "--test-size", "4", "--no-progress"]) == 0
    assert capsys.readouterr().err.startswith("estimate: about ")


def test_data_from_a_file_is_described_and_flipped_labels_warned(tmp_path, capsys):
    config = RunConfig.build(d=20, n=6, T=4, eta=0.0, test_size=4)
    data = generate(config)
    flipped = type(data)(**{**data.__dict__, "y_clean": -data.y_train})
    save_npz(tmp_path / "flipped.npz", flipped)
    out = tmp_path / "out"
    arguments = ["run", "--data-from", str(tmp_path / "flipped.npz"), "--steps", "3"]
    assert main([*arguments, "--no-progress", "--out", str(out)]) == 0
    assert "half or more flipped" in capsys.readouterr().err
    described = json.loads((out / "config.json").read_text())["data_file"]
    assert described["noisy_count"] == 6 and described["noisy_fraction"] == 1.0
    assert (
        len(described["sha256"]) == 64 and "mu_norm" in described["fields_not_describing_the_file"]
    )
