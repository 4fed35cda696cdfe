r"""Training protocols for the two phases, as named and recorded settings.

A :class:`Protocol` fixes every choice that the two phases make: the head phase
(which head, fit how, on how many clean examples), the re-initialisation of the
last layer's query and key, the optimiser of the attention phase with its step
size, schedule, batch size, clipping and epochs, the label-noise model, whether
text keeps its special tokens, and the evaluation and early-stopping split.

Three are named (:data:`PROTOCOLS`):

``authors``
    The settings the paper's public code runs (every optimiser value is the
    Hugging Face ``Trainer`` default, the only ones its scripts pass being the
    epochs, batch size 16 and the seed): AdamW with learning rate
    :math:`5\cdot 10^{-5}` decaying linearly to 0 over the run, no warm-up,
    weight decay 0 (so AdamW is Adam), betas (0.9, 0.999), gradient-norm
    clipping at 1.0, batch 16 reshuffled every epoch; head phase 300 epochs on
    3,000 clean examples (their choice for their smaller data sets, TREC, STL-10
    and PneumoniaMNIST; 10,000 on the large ones; MNIST here has 2,000 left after
    the test set and training pool), training the classifier and (text) the
    model's pre-trained pooler; attention phase 2,000 epochs after PyTorch's default
    re-initialisation of the query and key; each label flipped independently
    with probability :math:`\eta` to a uniformly drawn other class; text
    without special tokens (no [CLS]: the first word piece is the query row);
    dropout 0 (the package never uses dropout).
``fullbatch-adam``
    The package's earlier protocol: linear head by L-BFGS on 1,000 clean
    examples; :math:`N(0, 0.02^2)` re-initialisation; full-batch Adam,
    learning rate :math:`10^{-3}`, constant, no clipping, 300 epochs; exactly
    ``noisy_count(n, eta)`` flipped labels; text with [CLS].
``gd``
    As ``fullbatch-adam`` but plain full-batch gradient descent (the theory's
    optimiser) for 300 steps, with the step size chosen by a stated rule
    (:mod:`verify.realworld.step_size`): the largest of a grid of step sizes
    whose full-batch loss on the clean (eta = 0) training set decreases at
    every one of the first ``step_probe_steps`` steps.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from theory.foundation.validation import (
    Boolean,
    Integer,
    Optional,
    Options,
    Real,
    Validated,
    parameter,
    require,
)

OPTIMISERS = ("adam", "sgd")
SCHEDULES = ("constant", "linear")
INITS = ("normal", "linear-default")
NOISE_MODELS = ("exact", "bernoulli")
HEAD_FITS = ("lbfgs", "adam")


@dataclass(frozen=True)
class Protocol(Validated):
    """Every choice of the two phases (see the module docstring for the named ones)."""

    # -- phase 1: the head on clean data, pre-trained attention --------------------------
    head_fit: str = parameter(
        "lbfgs",
        Options(HEAD_FITS),
        "lbfgs: linear head by full-batch L-BFGS on the L2-regularised "
        "cross-entropy; adam: minibatch AdamW as the Hugging Face Trainer "
        "runs it (linear decay to 0, clipping 1.0)",
    )
    head_examples: int | None = parameter(
        1000,
        Optional(Integer(1), "the whole head pool"),
        "clean examples the head is fit on: the first ones of the head pool (all of it if it "
        "holds fewer)",
    )
    head_pooler: bool = parameter(
        False,
        Boolean(),
        "text: train the model's pre-trained pooler (dense + tanh) "
        "with the classifier, as BERT's classification model does",
    )
    head_epochs: int = parameter(300, Integer(1), "head phase epochs (adam head fit)")
    head_learning_rate: float = parameter(
        5e-5, Real(0.0, 10.0), "head phase learning rate (adam head fit)"
    )
    head_batch_size: int = parameter(16, Integer(1), "head phase batch size (adam head fit)")
    head_l2: float = parameter(
        1e-3, Real(0.0, 10.0, closed="left"), "L2 penalty on the head weight (lbfgs head fit)"
    )
    head_iterations: int = parameter(200, Integer(1), "L-BFGS iterations (lbfgs head fit)")
    # -- phase 2: query and key on noisy data -------------------------------------------
    init: str = parameter(
        "normal",
        Options(INITS),
        "query/key re-initialisation: normal: N(0, init_std^2), biases 0; "
        "linear-default: PyTorch's Linear reset, U(-1/sqrt D, 1/sqrt D) for "
        "weights and biases",
    )
    init_std: float = parameter(0.02, Real(0.0, 10.0), "standard deviation of the normal init")
    optimiser: str = parameter(
        "adam",
        Options(OPTIMISERS),
        "adam: Adam with decoupled weight decay (AdamW; weight decay 0 "
        "is Adam); sgd: plain gradient steps (full batch: gradient "
        "descent)",
    )
    learning_rate: float | None = parameter(
        1e-3,
        Optional(Real(0.0, 1e6), "chosen by the step-size rule"),
        "learning rate (initial value under a schedule)",
    )
    schedule: str = parameter(
        "constant",
        Options(SCHEDULES),
        "constant, or linear decay to 0 at the last step (no warm-up)",
    )
    batch_size: int | None = parameter(
        None, Optional(Integer(1), "full batch"), "examples per step (reshuffled every epoch)"
    )
    epochs: int = parameter(300, Integer(1), "passes over the n training examples")
    clip_norm: float | None = parameter(
        None,
        Optional(Real(0.0, 1e6), "no clipping"),
        "clip each run's gradient to this Euclidean norm",
    )
    beta1: float = parameter(0.9, Real(0.0, 1.0, closed="left"), "Adam's first-moment decay")
    beta2: float = parameter(0.999, Real(0.0, 1.0, closed="left"), "Adam's second-moment decay")
    adam_eps: float = parameter(1e-8, Real(0.0, 1.0), "Adam's epsilon")
    weight_decay: float = parameter(
        0.0, Real(0.0, 1.0, closed="left"), "decoupled weight decay (AdamW)"
    )
    step_probe_steps: int = parameter(
        100, Integer(2), "step-size rule: probe length in full-batch steps"
    )
    # -- data --------------------------------------------------------------------------
    noise: str = parameter(
        "exact",
        Options(NOISE_MODELS),
        "exact: noisy_count(n, eta) labels flipped; bernoulli: each label "
        "flipped with probability eta; always to a uniform other class",
    )
    special_tokens: bool = parameter(
        True,
        Boolean(),
        "text: keep the tokenizer's [CLS] ... [SEP]; without them "
        "the first word piece is the query row",
    )
    validation_size: int = parameter(
        200,
        Integer(1),
        "validation examples carved from the training pool, "
        "labels noised like the training set (early stopping)",
    )
    eval_every: int = parameter(10, Integer(1), "epochs between evaluations")

    def check_relations(self) -> None:
        require(
            self.learning_rate is not None or self.optimiser == "sgd",
            "learning_rate",
            None,
            "a number for optimiser 'adam' (only sgd has a step-size rule)",
        )
        require(
            self.head_fit == "adam" or not self.head_pooler,
            "head_pooler",
            True,
            "False with head_fit 'lbfgs' (the L-BFGS head is linear)",
        )

    def steps_per_epoch(self, n: int) -> int:
        r"""Updates per epoch: :math:`\lceil n / b\rceil` (the last batch may be smaller)."""
        return -(-n // self.batch_size) if self.batch_size else 1

    def describe(self) -> dict[str, Any]:
        """The recorded settings, with the derived quantities spelled out."""
        adam = self.optimiser == "adam"
        return {
            **self.to_dict(),
            "optimiser_name": ("AdamW" if self.weight_decay else "Adam (AdamW, weight decay 0)")
            if adam
            else ("gradient descent" if self.batch_size is None else "SGD"),
            "steps_per_epoch": "ceil(n / batch_size)" if self.batch_size else "1 (full batch)",
            "learning_rate_rule": None
            if self.learning_rate is not None
            else "largest stable full-batch step on clean data (verify.realworld.step_size)",
        }


PROTOCOLS: dict[str, Protocol] = {
    "authors": Protocol(
        head_fit="adam",
        head_examples=3000,
        head_pooler=True,
        head_epochs=300,
        head_learning_rate=5e-5,
        head_batch_size=16,
        init="linear-default",
        optimiser="adam",
        learning_rate=5e-5,
        schedule="linear",
        batch_size=16,
        epochs=2000,
        clip_norm=1.0,
        noise="bernoulli",
        special_tokens=False,
        eval_every=50,
    ),
    "fullbatch-adam": Protocol(),
    "gd": Protocol(optimiser="sgd", learning_rate=None),
}
PROTOCOL_NAMES = tuple(PROTOCOLS)

#: The fields a command line may override on top of a named protocol.
OVERRIDABLE = (
    "optimiser",
    "learning_rate",
    "schedule",
    "batch_size",
    "epochs",
    "clip_norm",
    "special_tokens",
    "noise",
    "init",
    "head_fit",
    "head_examples",
    "head_epochs",
    "eval_every",
    "validation_size",
)


def protocol(name: str, **overrides: Any) -> Protocol:
    """The named protocol with some fields changed (validated again)."""
    require(name in PROTOCOLS, "protocol", name, "one of " + ", ".join(map(repr, PROTOCOLS)))
    return dataclasses.replace(PROTOCOLS[name], **overrides)


def protocol_from_dict(values: dict[str, Any]) -> Protocol:
    return Protocol(
        **{f.name: values[f.name] for f in dataclasses.fields(Protocol) if f.name in values}
    )
