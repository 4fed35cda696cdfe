import json
import subprocess
import sys

import numpy as np

from verify.cli import main
from verify.sim.config import RunConfig
from verify.sim.data import generate, initial_weights, save_npz


def test_run_writes_all_files(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["run", "--preset", "benign", "--d", "80", "--steps", "40", "--test-size", "30",
                 "--seed", "3", "--out", str(out), "--no-progress"])
    assert code == 0
    record = json.loads((out / "config.json").read_text())
    assert record["config"]["d"] == 80 and record["seed"] == 3
    assert record["provenance"]["package_version"]
    summary = json.loads((out / "summary.json").read_text())
    for key in ("train_accuracy", "test_accuracy", "train_loss", "test_loss", "steps", "engine",
                "wall_seconds"):
        assert key in summary
    history = (out / "history.csv").read_text().splitlines()
    assert history[0].startswith("step,time,train_loss")
    assert len(history) > 10
    attention = (out / "attention.csv").read_text().splitlines()
    assert attention[0] == "step,split,sample,token,group,probability"
    gaps = (out / "gaps.csv").read_text().splitlines()
    assert gaps[0] == "step,sample,kind,token,group,gap"
    assert not list(out.glob(".*.tmp"))  # no temporary leftovers


def test_bad_flag_value_names_parameter(capsys):
    assert main(["run", "--eta", "0.6", "--no-progress"]) == 2
    assert "eta=0.6 is invalid" in capsys.readouterr().err


def test_data_from_npz_gives_identical_run(tmp_path):
    config = RunConfig(d=30, n=6, T=4, test_size=10, steps=20, mu_norm=4.0, seed=5)
    data = generate(config)
    path = tmp_path / "data.npz"
    save_npz(path, data, initial_weights(config))
    out_a, out_b = tmp_path / "a", tmp_path / "b"
    common = ["--preset", "benign", "--steps", "20", "--mu-norm", "4.0", "--no-progress"]
    assert main(["run", *common, "--data-from", str(path), "--seed", "99", "--out",
                 str(out_a)]) == 0
    assert main(["run", *common, "--d", "30", "--n", "6", "--T", "4", "--test-size", "10",
                 "--seed", "5", "--out", str(out_b)]) == 0
    a = np.genfromtxt(out_a / "history.csv", delimiter=",", names=True)
    b = np.genfromtxt(out_b / "history.csv", delimiter=",", names=True)
    np.testing.assert_allclose(a["train_loss"], b["train_loss"], rtol=1e-12)
    np.testing.assert_allclose(a["test_loss"], b["test_loss"], rtol=1e-12)


def test_module_entry_point_runs():
    done = subprocess.run([sys.executable, "-m", "verify", "run", "--d", "40", "--steps", "5",
                           "--test-size", "5", "--no-progress"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "train_accuracy" in done.stdout
