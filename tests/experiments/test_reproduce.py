"""``python -m verify reproduce --quick``, ``sweep-boundaries`` and ``longtime``: every table
and figure is written, figures are redrawn from the tables alone, reruns resume."""

import json
import shutil

from verify.cli import main
from verify.experiments.driver import run_experiment
from verify.experiments.reproduce import reproduction
from verify.experiments.settings import ReproduceSettings
from verify.output.tables import read_table
from verify.plots.reproduce import figure_training
from verify.runtime.executors import SerialExecutor

FIGURES = (
    "fig1_selection",
    "fig2_saturation",
    "fig3_harmful",
    "fig4_benign",
    "fig5_not-overfitting",
    "phase_diagram",
)
TABLES = (
    "presets_history",
    "presets_attention",
    "presets_saturation",
    "presets_selection",
    "preset_accuracy",
    "phase_diagram",
)


def assert_figures(directory, names):
    for name in names:
        for suffix in (".png", ".pdf"):
            path = directory / f"{name}{suffix}"
            assert path.is_file() and path.stat().st_size > 1000, path


def test_reproduce_quick_writes_every_table_and_figure(tmp_path, capsys):
    out = tmp_path / "reproduce"
    assert main(["reproduce", "--out", str(out), "--quick", "--no-progress"]) == 0
    for name in TABLES:
        assert (out / "tables" / f"{name}.csv").is_file()
    assert_figures(out / "figures", FIGURES)
    record = json.loads((out / "reproduce.json").read_text())
    assert record["provenance"]["package_version"] and record["settings"]["seeds"] == 2
    markdown = (out / "tables" / "preset_accuracy.md").read_text()
    assert "0.87" in markdown and "±" in markdown
    accuracy = read_table(out / "tables" / "preset_accuracy")
    assert set(accuracy["n_seeds"]) == {2.0}
    phase = read_table(out / "tables" / "phase_diagram")
    assert phase["d"].size == 25 and set(phase["regime"]) <= {
        "harmful",
        "benign",
        "not-overfitting",
    }
    runs = len(list((out / "runs").glob("*.json")))
    assert runs == 3 * 2 + 5  # six preset runs, five phase-diagram columns

    again = run_experiment(
        reproduction(ReproduceSettings.quick()),
        out,
        SerialExecutor(),
        progress=False,
        figures=False,
    )
    assert again["sweeps"]["columns_computed"] == 0

    shutil.rmtree(out / "figures")
    shutil.rmtree(out / "runs")  # figures need nothing but the tables
    figure_training(out / "tables", out / "figures", "benign")
    assert_figures(out / "figures", ("fig4_benign",))


def test_boundaries_and_longtime_commands(tmp_path, capsys):
    out = tmp_path / "beyond"
    assert (
        main(
            [
                "sweep-boundaries",
                "--out",
                str(out),
                "--quick",
                "--seeds",
                "1",
                "--rounds",
                "2",
                "--d-values",
                "100,200",
                "--n-values",
                "10,20",
                "--d-fixed",
                "100",
                "--steps",
                "100",
                "--test-size",
                "50",
                "--workers",
                "0",
                "--no-progress",
            ]
        )
        == 0
    )
    for name in ("boundary_points", "boundary_estimates", "boundary_summary", "boundary_exponents"):
        assert (out / "tables" / f"{name}.csv").is_file()
    assert "theory b" in (out / "tables" / "boundary_exponents.md").read_text()
    assert json.loads((out / "boundaries.json").read_text())["provenance"]
    assert (
        main(
            [
                "longtime",
                "--out",
                str(out),
                "--quick",
                "--steps",
                "100000",
                "--workers",
                "0",
                "--no-progress",
            ]
        )
        == 0
    )
    summary = read_table(out / "tables" / "longtime_summary")
    assert summary["final_step"][0] == 1e5
    assert (out / "tables" / "longtime_gd_check.csv").is_file()
    assert_figures(out / "figures", ("boundaries", "longtime_benign", "longtime_scan"))


def test_reused_noise_gives_generate_data_bit_for_bit():
    import numpy as np

    from verify.sim.config import preset
    from verify.sim.data import generate

    cases = [
        dict(d=50, mu_norm=3.0),
        dict(d=50, mu_norm=7.5, rho=0.3),
        dict(
            d=60,
            mu_norm=7.5,
            eta=0.3,
            flip="bernoulli",
            seed=4,
            sigma_eps=1.5,
            T=6,
            n_weak_opposite=2,
        ),
    ]
    for overrides in cases:
        config = preset("benign", test_size=30, **overrides)
        expected, reused = generate(config), generate(config, reuse_noise=True)
        for name in (
            "X_train",
            "y_train",
            "y_clean",
            "X_test",
            "y_test",
            "nu",
            "groups",
            "mu_plus",
            "mu_minus",
        ):
            assert np.array_equal(getattr(expected, name), getattr(reused, name)), name
