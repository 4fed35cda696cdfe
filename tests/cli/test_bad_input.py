"""Every input error a user can make ends in exit 2 and one line naming the parameter, the
value and what is allowed, before any work starts."""

import time

import numpy as np
import pytest

from verify.cli import main

READ_ONLY = "/proc/benign-attention-out"


def _files(tmp_path):
    (tmp_path / "a_file").write_text("x")
    (tmp_path / "text.npz").write_text("not an archive")
    (tmp_path / "data_dir.npz").mkdir()
    np.save(tmp_path / "array.npy", np.zeros((2, 3, 4)))
    np.savez(
        tmp_path / "two_d.npz",
        X_train=np.zeros((2, 3)),
        y_train=np.ones(2),
        X_test=np.zeros((2, 3)),
        y_test=np.ones(2),
    )
    np.savez(
        tmp_path / "objects.npz",
        X_train=np.array([[1, "a"]], dtype=object),
        y_train=np.ones(1),
        X_test=np.zeros((1, 1, 1)),
        y_test=np.ones(1),
    )
    (tmp_path / "empty").mkdir()
    runs = tmp_path / "damaged" / "runs"
    runs.mkdir(parents=True)
    (runs / "0123456789abcdef0123.json").write_text('{"key": "0123')


RUN = ["run", "--no-progress"]
QUICK = ["--quick", "--no-progress", "--workers", "0"]

#: (case, arguments with {tmp} for the test's folder, the parameter the message names)
CASES = [
    ("data-from missing", [*RUN, "--data-from", "{tmp}/missing.npz"], "data_from"),
    ("data-from a directory", [*RUN, "--data-from", "{tmp}/data_dir.npz"], "data_from"),
    ("data-from a text file", [*RUN, "--data-from", "{tmp}/text.npz"], "data_from"),
    ("data-from a .npy", [*RUN, "--data-from", "{tmp}/array.npy"], "data_from"),
    ("data-from a 2-D X_train", [*RUN, "--data-from", "{tmp}/two_d.npz"], "data_from:X_train"),
    ("data-from an object array", [*RUN, "--data-from", "{tmp}/objects.npz"], "data_from"),
    ("data-from with --d", [*RUN, "--data-from", "{tmp}/two_d.npz", "--d", "5"], "d"),
    ("run --out an existing file", [*RUN, "--out", "{tmp}/a_file"], "out"),
    ("run --out read-only", [*RUN, "--out", READ_ONLY], "out"),
    ("check --out an existing file", ["check", "--out", "{tmp}/a_file"], "out"),
    ("check --out read-only", ["check", "--out", READ_ONLY], "out"),
    ("variants --out an existing file", ["variants", "--out", "{tmp}/a_file"], "out"),
    ("variants --workers -1", ["variants", "--out", "{tmp}/v", "--workers", "-1"], "workers"),
    ("precision --out an existing file", ["precision", "--out", "{tmp}/a_file"], "out"),
    ("run --d 1e9", [*RUN, "--d", "1000000000"], "d"),
    (
        "phase-diagram columns beyond memory",
        ["phase-diagram", "--out", "{tmp}/pd", "--d-values", "10000000", "--no-progress"],
        "d",
    ),
    ("run --n 1e9", [*RUN, "--n", "1e9"], "n"),
    ("run --T 1e9", [*RUN, "--T", "1e9"], "T"),
    ("run --test-size 1e12", [*RUN, "--test-size", "1e12"], "test_size"),
    ("run --log-geometric 1e9", [*RUN, "--log-geometric", "1e9"], "log_geometric"),
    ("run --mu-norm 1e300", [*RUN, "--mu-norm", "1e300"], "mu_norm"),
    ("run --alpha 1e300", [*RUN, "--alpha", "1e300"], "alpha"),
    ("run --nu-scale 1e300", [*RUN, "--nu-scale", "1e300"], "nu_scale"),
    ("run --steps 1.5", [*RUN, "--steps", "1.5"], "steps"),
    ("run --eta 0.49 --n 2", [*RUN, "--eta", "0.49", "--n", "2"], "eta"),
    ("run --engine gpu", [*RUN, "--engine", "gpu"], "engine"),
    (
        "run --engine mp-flow, tolerance below the precision",
        [*RUN, "--engine", "mp-flow", "--mp-dps", "20", "--mp-flow-tol", "1e-15"],
        "mp_flow_tol",
    ),
    ("run --engine dfree, uniform init", [*RUN, "--engine", "dfree"], "init"),
    (
        "run --engine dfree --data-from",
        [*RUN, "--data-from", "{tmp}/two_d.npz", "--engine", "dfree", "--init", "gaussian"],
        "engine",
    ),
    ("reproduce --seeds -2", ["reproduce", "--out", "{tmp}/r", "--seeds", "-2"], "seeds"),
    (
        "reproduce --figures-only, empty folder",
        ["reproduce", "--out", "{tmp}/empty", "--figures-only"],
        "out",
    ),
    ("reproduce --workers -1", ["reproduce", "--out", "{tmp}/r", "--workers", "-1"], "workers"),
    (
        "reproduce --scheduler, nothing there",
        ["reproduce", "--out", "{tmp}/r", *QUICK, "--scheduler", "tcp://127.0.0.1:1"],
        "scheduler",
    ),
    (
        "sweep-boundaries --seeds 0",
        ["sweep-boundaries", "--out", "{tmp}/b", "--seeds", "0"],
        "seeds",
    ),
    (
        "sweep-boundaries --rounds -1",
        ["sweep-boundaries", "--out", "{tmp}/b", "--rounds", "-1"],
        "rounds",
    ),
    (
        "sweep-boundaries --test-threshold 7",
        ["sweep-boundaries", "--out", "{tmp}/b", "--test-threshold", "7"],
        "test_threshold",
    ),
    (
        "sweep-boundaries, damaged record",
        ["sweep-boundaries", "--out", "{tmp}/damaged", *QUICK],
        "record",
    ),
    ("longtime --steps 0", ["longtime", "--out", "{tmp}/l", "--steps", "0"], "steps"),
    ("longtime --seeds 0", ["longtime", "--out", "{tmp}/l", "--seeds", "0"], "seeds"),
    ("assumptions --delta 0", ["assumptions", "--delta", "0"], "delta"),
    ("predict --steps 0", ["predict", "--steps", "0"], "steps"),
    ("predict --eta 0", ["predict", "--eta", "0"], "eta"),
    ("precision --gaps nan", ["precision", "--gaps", "nan"], "gaps"),
    ("precision --reference-dps 0", ["precision", "--reference-dps", "0"], "reference_dps"),
    ("unknown flag", ["run", "--dimension", "3"], None),
]


@pytest.mark.parametrize(("case", "arguments", "name"), CASES, ids=[c[0] for c in CASES])
def test_input_errors_exit_2_with_one_line_before_any_work(tmp_path, capsys, case, arguments, name):
    _files(tmp_path)
    started = time.perf_counter()
    code = main([a.replace("{tmp}", str(tmp_path)) for a in arguments])
    elapsed = time.perf_counter() - started
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert code == 2, captured.err
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err
    if name is not None:
        assert f"error: {name}=" in lines[0] and " is invalid: allowed " in lines[0]
    assert captured.out == ""
    assert elapsed < 10.0  # refused before any work
    for folder in ("r", "b", "l"):
        assert not (tmp_path / folder / "runs").exists() or not any(
            (tmp_path / folder / "runs").iterdir()
        )


def test_the_damaged_record_is_named(tmp_path, capsys):
    _files(tmp_path)
    main(["sweep-boundaries", "--out", str(tmp_path / "damaged"), *QUICK])
    err = capsys.readouterr().err
    assert "0123456789abcdef0123.json" in err and "delete it" in err
    assert (
        tmp_path / "damaged" / "runs" / "0123456789abcdef0123.json"
    ).read_text() == '{"key": "0123'
