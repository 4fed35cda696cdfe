"""The head phase's cache (fit once per data set, seed and head settings, read back bit for
bit) and the grid's resumption run by run."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="needs the realworld extra: pip install '.[realworld]'")


@pytest.fixture
def head_cache(tmp_path, monkeypatch):
    """A head cache of its own, nothing remembered by the process."""
    from verify.realworld.features import DIRECTORY_ENVIRONMENT_VARIABLE
    from verify.realworld.heads import forget_heads

    monkeypatch.setenv(DIRECTORY_ENVIRONMENT_VARIABLE, str(tmp_path))
    forget_heads()
    yield tmp_path / "heads"
    forget_heads()


def _problem(rows: int = 40, width: int = 8, seed: int = 0):
    generator = torch.Generator().manual_seed(seed)
    features = torch.randn(rows, width, generator=generator)
    return features, (features[:, 0] > 0).long()


def _config(name: str, **changes):
    from verify.realworld.config import GroupConfig
    from verify.realworld.protocols import protocol

    seeds = changes.pop("seeds", (0, 1, 2))
    return GroupConfig(seeds=seeds, protocol=protocol(name, **changes))


def _same(first, second) -> bool:
    return all(
        (a is None and b is None) or torch.equal(a, b)
        for a, b in zip(first.tensors(), second.tensors(), strict=True)
    )


def test_an_lbfgs_head_is_fit_once_for_every_seed_and_read_back_bit_for_bit(head_cache):
    from verify.realworld.heads import fit_heads, forget_heads

    features, labels = _problem()
    config = _config("fullbatch-adam", head_examples=30)
    first = fit_heads(config, features, labels, 2, None)
    assert first.record["head_seeds_fitted"] == [0, 1, 2] and first.record["head_examples"] == 30
    assert len(set(first.record["head_cache_keys"])) == 1  # the L-BFGS head draws nothing
    assert min(first.record["head_train_accuracy"]) > 0.9
    forget_heads()  # the next call reads the disk
    again = fit_heads(config.replace(n=20, seeds=(4,)), features, labels, 2, None)
    assert again.record["head_seeds_fitted"] == [] and again.record["head_fit_seconds"] == 0
    assert _same(again.heads, first.heads.member(0))
    other_phase_two = config.replace(protocol=config.protocol.replace(epochs=7, init_std=1.0))
    assert fit_heads(other_phase_two, features, labels, 2, None).record["head_seeds_fitted"] == []


@pytest.mark.parametrize(
    "change",
    [
        {"setting": ("head_l2", 1e-2)},
        {"setting": ("head_examples", 20)},
        {"feature": 1e-6},
        {"label": True},
    ],
    ids=["l2", "examples", "features", "labels"],
)
def test_a_head_is_refit_when_anything_it_reads_changes(head_cache, change):
    from verify.realworld.heads import fit_heads

    features, labels = _problem()
    config = _config("fullbatch-adam", head_examples=30)
    fit_heads(config, features, labels, 2, None)
    if "setting" in change:
        name, value = change["setting"]
        config = config.replace(protocol=config.protocol.replace(**{name: value}))
    if "feature" in change:
        features = features.clone()
        features[3, 2] += change["feature"]
    if "label" in change:
        labels = labels.clone()
        labels[5] = 1 - labels[5]
    assert fit_heads(config, features, labels, 2, None).record["head_seeds_fitted"] == [0, 1, 2]


def test_adam_heads_are_cached_per_seed_and_a_seed_fit_alone_equals_it_fit_with_others(
    head_cache, tmp_path, monkeypatch
):
    from verify.realworld.features import DIRECTORY_ENVIRONMENT_VARIABLE
    from verify.realworld.heads import fit_heads, forget_heads

    features, labels = _problem()
    settings = {"head_epochs": 3, "head_examples": 30, "head_pooler": False}
    batched = fit_heads(_config("authors", **settings), features, labels, 2, None)
    assert len(set(batched.record["head_cache_keys"])) == 3
    mixed = fit_heads(_config("authors", seeds=(5, 1), **settings), features, labels, 2, None)
    assert mixed.record["head_seeds_fitted"] == [5]
    assert _same(mixed.heads.member(1), batched.heads.member(1))
    monkeypatch.setenv(DIRECTORY_ENVIRONMENT_VARIABLE, str(tmp_path / "elsewhere"))
    forget_heads()
    alone = fit_heads(_config("authors", seeds=(1,), **settings), features, labels, 2, None)
    assert alone.record["head_seeds_fitted"] == [1]
    assert _same(alone.heads, batched.heads.member(1))
    assert not _same(alone.heads, batched.heads.member(0))


def test_a_damaged_head_file_is_refit(head_cache):
    from verify.realworld.heads import fit_heads, forget_heads

    features, labels = _problem()
    config = _config("fullbatch-adam", seeds=(0,))
    first = fit_heads(config, features, labels, 2, None)
    (stored,) = head_cache.glob("*.pt")
    stored.write_bytes(b"not a tensor file")
    forget_heads()
    again = fit_heads(config, features, labels, 2, None)
    assert again.record["head_seeds_fitted"] == [0] and _same(again.heads, first.heads)


def test_only_the_runs_not_stored_are_run(tmp_path):
    from verify.realworld.config import GroupConfig
    from verify.realworld.grid import not_yet_run
    from verify.realworld.variants import variant
    from verify.runtime.store import ResultStore, canonical

    stored = GroupConfig(n=200, etas=(0.0, 0.1, 0.2), seeds=(0, 1), protocol=variant("gd"))
    ResultStore(tmp_path).save("k", {"config": canonical(stored.to_dict())})
    held = GroupConfig(n=200, etas=(0.0, 0.1), protocol=variant("fullbatch-adam+optimiser"))
    finer = stored.replace(etas=(0.0, 0.05, 0.1), seeds=(0, 1, 2))
    other_n = held.replace(n=20)
    all_held = held.replace(seeds=(1, 0), etas=(0.2, 0.0))
    todo = not_yet_run([held, all_held, finer, other_n], tmp_path)
    assert [(g.seeds, g.etas, g.n) for g in todo] == [
        ((2,), (0.0, 0.1), 200),  # held: only seed 2 is missing
        ((0, 1), (0.05,), 200),  # finer: seeds 0 and 1 miss eta = 0.05 ...
        ((2,), (0.0, 0.05, 0.1), 200),  # ... and seed 2 misses every eta
        ((0, 1, 2), (0.0, 0.1), 20),  # other n: nothing stored
    ]
    assert all(g.protocol == variant("gd") for g in todo)
