r"""The paper's two-phase protocol on a pre-trained backbone, from cached last-layer inputs.

Phase 1 (head): with every backbone weight frozen and the pre-trained attention,
a linear head :math:`\nu` on the [CLS] output is fit to the *clean* labels of a
separate head pool by full-batch L-BFGS on the L2-regularised cross-entropy.

Phase 2 (attention): the last layer's query and key projections are
re-initialised (:math:`W_Q, W_K \sim N(0, \sigma_0^2)`, biases 0) and only they
are trained, full batch with Adam, on ``n`` examples of which exactly
:math:`\lfloor \eta n + 1/2 \rfloor` carry a symmetric noisy label. Recorded per
epoch: training loss (noisy labels), fraction of clean and of noisy examples
fitted, test accuracy, and the mean over examples and heads of the maximum
[CLS] attention probability. Training stops at ``epochs`` or, if
``stop_loss > 0``, once the training loss is below it (the epoch is recorded).
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from theory.validation import Integer, InvalidParameter, Real
from verify.realworld.datasets import (
    DATASETS,
    MODALITY,
    inject_symmetric_noise,
    noisy_count,
    split_pools,
)


def _check_int(name: str, value: Any, minimum: int) -> None:
    Integer(minimum).check(name, value)


def _check_real(name: str, value: Any, low: float, high: float, low_open: bool = True) -> None:
    Real(low, high, closed="neither" if low_open else "left").check(name, value)


@dataclass(frozen=True)
class RealWorldConfig:
    """One run of the two-phase protocol; every field is validated on construction."""

    dataset: str
    n: int
    eta: float
    seed: int = 0
    epochs: int = 300
    learning_rate: float = 1e-3
    init_std: float = 0.02
    stop_loss: float = 0.0
    eval_every: int = 10
    head_pool: int = 1000
    train_pool: int = 2000
    test_size: int = 1000
    pool_seed: int = 0
    head_l2: float = 1e-3
    head_iterations: int = 200
    image_size: int = 112
    max_tokens: int = 64

    def __post_init__(self) -> None:
        if self.dataset not in DATASETS:
            raise InvalidParameter("dataset", self.dataset, f"one of {sorted(DATASETS)}")
        for name, minimum in (
            ("n", 1),
            ("seed", 0),
            ("epochs", 1),
            ("head_pool", 1),
            ("train_pool", 1),
            ("test_size", 1),
            ("pool_seed", 0),
            ("head_iterations", 1),
            ("eval_every", 1),
            ("image_size", 14),
            ("max_tokens", 2),
        ):
            _check_int(name, getattr(self, name), minimum)
        if self.n > self.train_pool:
            raise InvalidParameter("n", self.n, f"an integer <= train_pool = {self.train_pool}")
        if self.image_size % 14:
            raise InvalidParameter("image_size", self.image_size, "a multiple of the patch size 14")
        _check_real("eta", self.eta, 0.0, 0.5, low_open=False)
        _check_real("learning_rate", self.learning_rate, 0.0, 1.0)
        _check_real("init_std", self.init_std, 0.0, 10.0, low_open=False)
        _check_real("stop_loss", self.stop_loss, 0.0, 10.0, low_open=False)
        _check_real("head_l2", self.head_l2, 0.0, 10.0, low_open=False)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> RealWorldConfig:
        return cls(**values)

    @property
    def backbone_options(self) -> tuple[tuple[str, int], ...]:
        modality = MODALITY[self.dataset]
        return (
            (("image_size", self.image_size),)
            if modality == "image"
            else (("max_tokens", self.max_tokens),)
        )


# -- per-process context: backbone, data, cached last-layer inputs -------------------------


@dataclass
class Context:
    """What every run on one data set shares: the backbone, the pools and their cached inputs."""

    backbone: Any
    data: Any
    pools: Any
    inputs: dict[str, Any]  # "head" / "train" / "test" -> LastLayerInputs
    pristine_last_layer: dict[str, torch.Tensor]


_CONTEXTS: dict[tuple, Context] = {}


def context_for(config: RealWorldConfig, progress: bool = False) -> Context:
    """The backbone, the data set and its cached last-layer inputs, loaded once per process."""
    from verify.realworld.backbones import backbone_for
    from verify.realworld.datasets import load_dataset
    from verify.realworld.features import cached_last_layer_inputs

    key = (
        config.dataset,
        config.head_pool,
        config.train_pool,
        config.test_size,
        config.pool_seed,
        config.backbone_options,
    )
    if key not in _CONTEXTS:
        data = load_dataset(config.dataset)
        backbone = backbone_for(data, **dict(config.backbone_options))
        pools = split_pools(
            len(data.labels),
            config.head_pool,
            config.train_pool,
            config.test_size,
            config.pool_seed,
        )
        inputs = {
            name: cached_last_layer_inputs(backbone, data, getattr(pools, name), progress)
            for name in ("head", "train", "test")
        }
        pristine = {k: v.detach().clone() for k, v in backbone.last_layer.state_dict().items()}
        _CONTEXTS[key] = Context(backbone, data, pools, inputs, pristine)
    return _CONTEXTS[key]


def release_contexts() -> None:
    """Forget every loaded context (the feature cache on disk stays)."""
    _CONTEXTS.clear()


# -- the two phases -----------------------------------------------------------------------


def freeze_all_but_query_key(model: torch.nn.Module, head: torch.nn.Module, query, key) -> None:
    for parameter in list(model.parameters()) + list(head.parameters()):
        parameter.requires_grad_(False)
    for parameter in (query.weight, query.bias, key.weight, key.bias):
        parameter.requires_grad_(True)


def fit_head(readout, prepared, labels: torch.Tensor, l2: float, iterations: int) -> None:
    """Phase 1: L-BFGS on the L2-regularised cross-entropy of the head over fixed features."""
    with torch.no_grad():
        attention = readout.attention(prepared)
        features = readout.cls_output(prepared, attention)
    head = readout.head
    torch.nn.init.zeros_(head.weight)
    torch.nn.init.zeros_(head.bias)
    head.weight.requires_grad_(True)
    head.bias.requires_grad_(True)
    optimiser = torch.optim.LBFGS(
        head.parameters(),
        lr=1.0,
        max_iter=iterations,
        line_search_fn="strong_wolfe",
        tolerance_grad=1e-9,
    )

    def closure():
        optimiser.zero_grad()
        loss = F.cross_entropy(head(features), labels) + l2 * head.weight.pow(2).sum()
        loss.backward()
        return loss

    optimiser.step(closure)
    head.weight.requires_grad_(False)
    head.bias.requires_grad_(False)


def reinitialise(query, key, std: float, generator: torch.Generator) -> None:
    with torch.no_grad():
        for projection in (query, key):
            projection.weight.copy_(torch.randn(projection.weight.shape, generator=generator) * std)
            projection.bias.zero_()


def attention_optimiser(query, key, learning_rate: float) -> torch.optim.Optimizer:
    """Adam over the last layer's query and key weights and biases, and nothing else."""
    return torch.optim.Adam([query.weight, query.bias, key.weight, key.bias], lr=learning_rate)


def descend(optimiser: torch.optim.Optimizer, logits: torch.Tensor, labels: torch.Tensor) -> None:
    """One full-batch update from the logits of the current state."""
    optimiser.zero_grad()
    F.cross_entropy(logits, labels).backward()
    optimiser.step()


@torch.no_grad()
def evaluate(readout, prepared, labels: torch.Tensor) -> dict[str, Any]:
    logits, attention = readout(prepared)
    return {
        "loss": float(F.cross_entropy(logits, labels)),
        "correct": (logits.argmax(dim=1) == labels).numpy(),
        "max_attention": float(attention.max(dim=-1).values.mean()),
    }


def run(config: RealWorldConfig, progress: bool = False) -> dict[str, Any]:
    """Both phases for one configuration; returns the history and the final numbers.

    The backbone's last layer is the pre-trained one before and after the call (the
    trained query/key live in it only during the run), so runs in one process do not
    see each other.
    """
    started = time.perf_counter()
    ctx = context_for(config, progress)
    ctx.backbone.last_layer.load_state_dict(ctx.pristine_last_layer)
    try:
        return {**_two_phases(config, ctx, progress), "seconds": time.perf_counter() - started}
    finally:
        ctx.backbone.last_layer.load_state_dict(ctx.pristine_last_layer)


def _two_phases(config: RealWorldConfig, ctx: Context, progress: bool) -> dict[str, Any]:
    from verify.realworld.readout import CLSReadout

    torch.manual_seed(config.seed)
    backbone = ctx.backbone
    readout = CLSReadout(backbone, ctx.data.num_classes)
    query, key = backbone.query_key()
    labels = {
        name: torch.as_tensor(ctx.data.labels[getattr(ctx.pools, name)])
        for name in ("head", "train", "test")
    }

    # Phase 1: the head on clean data, pre-trained attention.
    for parameter in backbone.model.parameters():
        parameter.requires_grad_(False)
    fit_head(
        readout,
        readout.prepare(ctx.inputs["head"]),
        labels["head"],
        config.head_l2,
        config.head_iterations,
    )
    test = readout.prepare(ctx.inputs["test"])
    pretrained_test = evaluate(readout, test, labels["test"])

    # Phase 2: re-initialised query/key on n noisy examples.
    rng = np.random.default_rng(config.seed)
    chosen = np.sort(rng.choice(len(ctx.pools.train), size=config.n, replace=False))
    clean = labels["train"][chosen]
    noisy_labels, flipped = inject_symmetric_noise(
        clean.numpy(), ctx.data.num_classes, config.eta, rng
    )
    noisy_labels = torch.as_tensor(noisy_labels)
    train = readout.prepare(ctx.inputs["train"].select(chosen))
    reinitialise(query, key, config.init_std, torch.Generator().manual_seed(config.seed))
    freeze_all_but_query_key(backbone.model, readout.head, query, key)
    optimiser = attention_optimiser(query, key, config.learning_rate)

    history = []

    def record(epoch: int, logits: torch.Tensor, attention: torch.Tensor) -> bool:
        """Append the row for the state after ``epoch`` updates; True if training stops."""
        fitted = (logits.argmax(dim=1) == noisy_labels).numpy()
        row = {
            "epoch": epoch,
            "train_loss": float(F.cross_entropy(logits, noisy_labels)),
            "train_accuracy": float(fitted.mean()),
            "clean_fitted": float(fitted[~flipped].mean()) if (~flipped).any() else math.nan,
            "noisy_fitted": float(fitted[flipped].mean()) if flipped.any() else math.nan,
            "max_attention_train": float(attention.max(dim=-1).values.mean()),
            "test_accuracy": math.nan,
            "test_loss": math.nan,
            "max_attention_test": math.nan,
        }
        converged = config.stop_loss > 0 and row["train_loss"] < config.stop_loss
        last = epoch == config.epochs or converged
        if epoch % config.eval_every == 0 or last:
            on_test = evaluate(readout, test, labels["test"])
            row.update(
                test_accuracy=float(on_test["correct"].mean()),
                test_loss=on_test["loss"],
                max_attention_test=on_test["max_attention"],
            )
        history.append(row)
        return last

    for epoch in tqdm(
        range(config.epochs + 1), desc="epochs", disable=not progress, unit="epoch", leave=False
    ):
        logits, attention = readout(train)  # the state after `epoch` updates
        if record(epoch, logits.detach(), attention.detach()):
            break
        descend(optimiser, logits, noisy_labels)
    final = history[-1]
    return {
        "history": history,
        "final": {
            **final,
            "mean_max_attention_over_training": float(
                np.mean([h["max_attention_train"] for h in history[1:] or history])
            ),
        },
        "pretrained_test_accuracy": float(pretrained_test["correct"].mean()),
        "pretrained_max_attention_test": pretrained_test["max_attention"],
        "noisy_examples": int(flipped.sum()),
        "expected_noisy": noisy_count(config.n, config.eta),
        "stopped_early": final["epoch"] < config.epochs,
        "epochs_run": final["epoch"],
        "backbone": {**backbone.identity, "paper_model": backbone.paper_model},
        "dataset": {
            "name": ctx.data.name,
            "source": ctx.data.source,
            "stands_in_for": ctx.data.stands_in_for,
            "classes": list(ctx.data.classes),
        },
        "versions": library_versions(),
    }


def library_versions() -> dict[str, str]:
    """Versions of torch, transformers and onnx, and torch's thread count: the same seed gives
    bit-identical numbers at the same thread count (another count changes the reduction order,
    ~1e-7 relative)."""
    import onnx
    import transformers

    return {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "onnx": onnx.__version__,
        "torch_threads": torch.get_num_threads(),
    }


def run_point(point: dict[str, Any]) -> dict[str, Any]:
    """Sweep worker: one grid point ``{"config": RealWorldConfig.to_dict()}``."""
    return run(RealWorldConfig.from_dict(dict(point["config"])))
