r"""Phase 2: train the members' query and key on their noisy labels, and evaluate them.

An epoch is one pass over each member's ``n`` examples: with a batch size ``b``,
:math:`\lceil n/b \rceil` updates on batches of a fresh per-seed permutation (the
last batch may be smaller), each on the mean cross-entropy of its batch; full batch,
one update on the mean over all ``n`` (computed in chunks, gradients accumulated).
The members' losses are summed before the backward pass; as no parameter is shared,
each member's gradient is the gradient of its own loss.

At the evaluation epochs (:func:`evaluation_epochs`) every member is evaluated on its
training subset (noisy labels: loss, accuracy, fraction of clean and of flipped
examples fitted), its validation split (accuracy on the noisy labels, which picks
the early-stopping epoch, and on the clean ones), and the test set.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F

from verify.realworld.epochs import evaluation_epochs
from verify.realworld.members import MemberData, stream
from verify.realworld.optimise import MemberOptimiser
from verify.realworld.readout import Heads, LastLayer, PreparedInputs, QueryKey, max_attention
from verify.runtime.progress import progress_iter

CHUNK = 200  # examples per group and forward pass in evaluation and full-batch training


def member_losses(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Cross-entropy per member and example ``[M, B]`` of logits ``[M, B, C]``."""
    return F.cross_entropy(logits.transpose(1, 2), labels, reduction="none")


def _labels_at(labels: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """Labels ``[S, E, n]`` at per-seed positions ``[S, B]`` as ``[S E, B]``."""
    seeds, etas, _ = labels.shape
    picked = labels.gather(2, positions[:, None, :].expand(-1, etas, -1))
    return picked.reshape(seeds * etas, -1)


class MemberTrainer:
    """The members of one group: their weights, heads, data and optimiser."""

    def __init__(
        self,
        last: LastLayer,
        pool: PreparedInputs,
        weights: QueryKey,
        heads: Heads,
        data: MemberData,
        optimiser: MemberOptimiser,
        batch_size: int | None,
        seeds: tuple[int, ...],
    ) -> None:
        self.last, self.pool, self.weights, self.heads = last, pool, weights, heads
        self.data, self.optimiser, self.batch_size = data, optimiser, batch_size
        self.orders = [stream(seed, "order") for seed in seeds]
        self.n = data.train_index.shape[1]

    def _losses(self, positions: torch.Tensor, denominator: int) -> torch.Tensor:
        """Per member: the summed cross-entropy at ``positions`` ``[S, B]`` / ``denominator``."""
        batch = self.pool.select(self.data.train_index.gather(1, positions))
        logits, _ = self.last(self.weights, self.heads, batch)
        losses = member_losses(logits, _labels_at(self.data.train_labels, positions))
        return losses.sum(dim=1) / denominator

    def _chunks(self) -> list[torch.Tensor]:
        seeds = len(self.orders)
        return [
            torch.arange(start, min(start + CHUNK, self.n)).expand(seeds, -1)
            for start in range(0, self.n, CHUNK)
        ]

    def full_batch_losses(self) -> torch.Tensor:
        """Each member's mean training loss ``[M]`` at the current state."""
        with torch.no_grad():
            return sum(self._losses(positions, self.n) for positions in self._chunks())

    def epoch(self) -> torch.Tensor | None:
        """One pass over every member's examples; full batch, returns the members' losses
        ``[M]`` at the state before the update."""
        if self.batch_size is None:
            self.optimiser.zero_grad()
            total = 0.0
            for positions in self._chunks():
                losses = self._losses(positions, self.n)
                losses.sum().backward()
                total = total + losses.detach()
            self.optimiser.step()
            return total
        order = torch.as_tensor(np.stack([rng.permutation(self.n) for rng in self.orders]))
        for start in range(0, self.n, self.batch_size):
            positions = order[:, start : start + self.batch_size]
            self.optimiser.zero_grad()
            self._losses(positions, positions.shape[1]).sum().backward()
            self.optimiser.step()
        return None

    @torch.no_grad()
    def outputs(
        self, pool: PreparedInputs, index: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits ``[M, N, C]`` and mean maximum attention ``[M]`` on ``pool`` examples
        ``index`` (``[S, N]``: per seed, or ``[1, N]``: the same examples for every member)."""
        logits, attention, total = [], 0.0, index.shape[1]
        for start in range(0, total, CHUNK):
            part = index[:, start : start + CHUNK]
            out, probabilities = self.last(self.weights, self.heads, pool.select(part))
            logits.append(out)
            attention = attention + max_attention(probabilities) * part.shape[1] / total
        return torch.cat(logits, dim=1), attention

    def evaluate(self, test: PreparedInputs, test_labels: torch.Tensor) -> list[dict]:
        """One row per member at the current state (see the module docstring)."""
        data = self.data
        logits, attention = self.outputs(self.pool, data.train_index)
        labels = data.train_labels.reshape(len(self.weights), -1)
        flipped = data.flipped.reshape(len(self.weights), -1)
        losses = member_losses(logits, labels)
        fitted = logits.argmax(-1) == labels
        validation, _ = self.outputs(self.pool, data.validation_index)
        predicted = validation.argmax(-1)
        clean = data.clean_validation_labels.repeat_interleave(data.train_labels.shape[1], 0)
        test_logits, test_attention = self.outputs(test, torch.arange(len(test))[None])
        test_losses = member_losses(test_logits, test_labels.expand(len(self.weights), -1))
        rows = []
        for m in range(len(self.weights)):
            rows.append(
                {
                    "train_loss": float(losses[m].mean()),
                    "train_accuracy": float(fitted[m].float().mean()),
                    "clean_fitted": _fraction(fitted[m][~flipped[m]]),
                    "noisy_fitted": _fraction(fitted[m][flipped[m]]),
                    "max_attention_train": float(attention[m]),
                    "validation_accuracy": float(
                        (predicted[m] == data.validation_labels.reshape(len(self.weights), -1)[m])
                        .float()
                        .mean()
                    ),
                    "validation_accuracy_clean": float((predicted[m] == clean[m]).float().mean()),
                    "test_accuracy": float(
                        (test_logits[m].argmax(-1) == test_labels).float().mean()
                    ),
                    "test_loss": float(test_losses[m].mean()),
                    "max_attention_test": float(test_attention[m]),
                }
            )
        return rows


def _fraction(values: torch.Tensor) -> float:
    return float(values.float().mean()) if values.numel() else math.nan


def train_and_record(
    trainer: MemberTrainer,
    test: PreparedInputs,
    test_labels: torch.Tensor,
    epochs: int,
    every: int,
    progress: bool = False,
    on_epoch: Callable[[int], None] | None = None,
) -> list[list[dict]]:
    """Train for ``epochs`` and return each member's history (one row per evaluation)."""
    histories: list[list[dict]] = [[] for _ in range(len(trainer.weights))]
    evaluated = set(evaluation_epochs(epochs, every))
    for epoch in progress_iter(range(epochs + 1), "epochs", "epoch", enabled=progress, leave=False):
        if epoch in evaluated:
            for history, row in zip(histories, trainer.evaluate(test, test_labels), strict=True):
                history.append({"epoch": epoch, **row})
        if epoch == epochs:
            break
        trainer.epoch()
        if on_epoch is not None:
            on_epoch(epoch + 1)
    return histories
