"""``python -m verify encoder`` and ``encoder-grid``: files, exit codes, bad input, the
missing-torch message, interruption, determinism and --data-from."""

import builtins
import json

import numpy as np
import pytest

from verify.cli import main
from verify.encoder.observables import read_encoder_history as read_history

SMALL = ["--d", "40", "--n", "8", "--T", "4", "--mlp-dim", "16", "--steps", "30"]
SMALL += ["--test-size", "12", "--mu-norm", "8", "--no-progress"]


def run(tmp_path, name, *extra):
    out = tmp_path / name
    return main(["encoder", "--out", str(out), *SMALL, *extra]), out


def test_encoder_writes_every_file_with_the_summary_keys(tmp_path, capsys):
    code, out = run(tmp_path, "a")
    assert code == 0
    for name in ("config.json", "summary.json", "history.csv", "attention.csv"):
        assert (out / name).is_file(), name
    for name in ("attention.png", "accuracy.png"):
        assert (out / name).stat().st_size > 1000, name
    summary = json.loads((out / "summary.json").read_text())
    for split in ("clean", "noisy", "test"):
        masses = [summary[f"attention_{split}_{g}"] for g in ("R", "W+", "W-", "I", "cls")]
        assert sum(masses) == pytest.approx(1.0, abs=1e-12)
    for key in ("train_accuracy", "test_accuracy", "noisy_fitted", "regime", "test_set"):
        assert key in summary
    assert "independent" in summary["test_set"]
    record = json.loads((out / "config.json").read_text())
    assert record["provenance"]["package_version"] and "commit" in record["provenance"]
    assert record["config"]["encoder"]["residual"] is True
    history = read_history(out / "history.csv")
    assert history["step"][0] == 0 and history["step"][-1] == 30
    tested = np.isfinite(history["test_accuracy"])
    assert tested[0] and tested[-1] and not tested.all()  # test set at about 10 points
    header = (out / "attention.csv").read_text().splitlines()[0]
    assert header == "step,split,sample,noisy,p_cls,p_t0_R,p_t1_W+,p_t2_W-,p_t3_I"
    assert "train_accuracy" in capsys.readouterr().out


def test_same_seed_same_numbers_and_the_switch_changes_them(tmp_path):
    _, first = run(tmp_path, "first", "--seed", "3")
    _, again = run(tmp_path, "again", "--seed", "3")
    _, other = run(tmp_path, "other", "--seed", "3", "--no-skip")
    assert (first / "history.csv").read_bytes() == (again / "history.csv").read_bytes()
    assert (first / "attention.csv").read_bytes() == (again / "attention.csv").read_bytes()
    assert (first / "history.csv").read_bytes() != (other / "history.csv").read_bytes()
    record = json.loads((other / "config.json").read_text())
    assert record["config"]["encoder"]["residual"] is False


def test_data_from_trains_on_exactly_the_given_tokens(tmp_path):
    from verify.sim.config import RunConfig
    from verify.sim.data import generate, save_npz

    config = RunConfig.build(d=40, n=8, T=4, test_size=12, mu_norm=8.0, seed=2)
    save_npz(tmp_path / "data.npz", generate(config))
    _, generated = run(tmp_path, "generated", "--seed", "2")
    arguments = ["--mlp-dim", "16", "--steps", "30", "--seed", "2", "--no-progress"]
    code = main(
        ["encoder", "--out", str(tmp_path / "loaded"), "--data-from", str(tmp_path / "data.npz")]
        + arguments
    )
    assert code == 0
    first = read_history(generated / "history.csv")
    loaded = read_history(tmp_path / "loaded" / "history.csv")
    assert first.names == loaded.names
    for key in first.names:
        assert np.array_equal(first[key], loaded[key], equal_nan=True), key


BAD = [
    (["--mlp-dim", "0"], "mlp_dim"),
    (["--steps", "-1"], "steps"),
    (["--d", "1"], "d"),
    (["--eta", "0.7"], "eta"),
    (["--model", "half"], "model"),
    (["--log-every", "-2"], "log_every"),
    (["--blas-threads", "0"], "blas_threads"),
    (["--data-from", "{tmp}/missing.npz"], "data_from"),
    (["--data-from", "{tmp}/data.npz", "--d", "40"], "d"),
]


@pytest.mark.parametrize(("extra", "name"), BAD, ids=[b[1] + str(i) for i, b in enumerate(BAD)])
def test_bad_input_exits_2_with_one_line_before_any_work(tmp_path, capsys, extra, name):
    np.savez(tmp_path / "data.npz", X_train=np.zeros((2, 3, 4)))
    out = tmp_path / "out"
    code = main(["encoder", "--out", str(out), *[e.replace("{tmp}", str(tmp_path)) for e in extra]])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith(f"error: {name}=") and "allowed" in err[0]
    assert not (out / "summary.json").exists()


def test_an_earlier_result_is_kept_unless_overwrite(tmp_path, capsys):
    code, out = run(tmp_path, "kept")
    assert code == 0
    code, _ = run(tmp_path, "kept")
    assert code == 2 and "--overwrite" in capsys.readouterr().err
    code, _ = run(tmp_path, "kept", "--overwrite")
    assert code == 0


def test_full_model_without_torch_exits_2_saying_how_to_install(tmp_path, capsys, monkeypatch):
    real_import = builtins.__import__

    def no_torch(name, *args, **kwargs):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("No module named 'torch'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_torch)
    code, out = run(tmp_path, "full", "--model", "full")
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert 'pip install ".[realworld]"' in err[0] and "download.pytorch.org/whl/cpu" in err[0]
    assert not out.exists() or not any(out.iterdir())


def test_interrupt_keeps_the_finished_log_points(tmp_path, capsys, monkeypatch):
    from verify.encoder.models import FastModel

    original, calls = FastModel.step, []

    def interrupted(self, alpha):
        calls.append(alpha)
        if len(calls) == 13:
            raise KeyboardInterrupt
        original(self, alpha)

    monkeypatch.setattr(FastModel, "step", interrupted)
    code, out = run(tmp_path, "stopped", "--log-every", "5")
    assert code == 130
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["steps"] == 12
    assert list(read_history(out / "history.csv")["step"]) == [0, 3, 5, 6, 9, 10, 12]
    assert not (out / "history.partial.csv").exists()
    assert "saved" in capsys.readouterr().err


def test_encoder_grid_writes_tables_and_figures_and_resumes(tmp_path, capsys):
    arguments = ["encoder-grid", "--out", str(tmp_path / "g"), "--d-values", "24,32"]
    arguments += ["--mu-values", "3", "--seeds", "2", "--steps", "20", "--mlp-dim", "8"]
    arguments += ["--residual", "both", "--workers", "0", "--no-progress"]
    assert main(arguments) == 0
    record = json.loads((tmp_path / "g" / "encoder_grid.json").read_text())
    assert record["runs"] == 2 * 2 * 3 and record["computed"] == 12
    table = (tmp_path / "g" / "tables" / "encoder_grid.csv").read_text().splitlines()
    assert len(table) == 1 + 2 * 2 * 2 and "bare_regime" in table[0]
    for name in ("regimes.png", "trajectories.png"):
        assert (tmp_path / "g" / "figures" / name).is_file()
    assert main(arguments) == 0
    again = json.loads((tmp_path / "g" / "encoder_grid.json").read_text())
    assert again["computed"] == 0 and again["reused"] == 12


@pytest.mark.slow
def test_sigterm_exits_143_and_keeps_the_finished_part(tmp_path):
    """The real signal path, in a subprocess (slow: a fresh interpreter and a run)."""
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "long"
    arguments = ["--d", "16", "--n", "6", "--T", "4", "--mlp-dim", "8", "--steps", "1e7"]
    arguments += ["--log-every", "200", "--test-size", "5", "--no-progress"]
    process = subprocess.Popen(
        [sys.executable, "-m", "verify", "encoder", "--out", str(out), *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 60
    while time.time() < deadline and not (out / "history.partial.csv").exists():
        time.sleep(0.1)
    time.sleep(1.0)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143, err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "interrupted" and summary["message"] == "stopped by SIGTERM"
    history = read_history(out / "history.csv")
    assert len(history["step"]) >= 2 and history["step"][-1] == summary["steps"]
    assert not (out / "history.partial.csv").exists()


def test_encoder_grid_tables_only_computes_nothing(tmp_path):
    arguments = ["encoder-grid", "--out", str(tmp_path / "g"), "--d-values", "24"]
    arguments += ["--mu-values", "3", "--seeds", "2", "--steps", "10", "--mlp-dim", "8"]
    arguments += ["--workers", "0", "--no-progress"]
    assert main([*arguments, "--tables-only"]) == 0
    record = json.loads((tmp_path / "g" / "encoder_grid.json").read_text())
    assert record["computed"] == 0 and record["pending"] == 4 and record["runs"] == 0
