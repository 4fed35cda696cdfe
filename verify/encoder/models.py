"""The two implementations of the encoder behind one small interface.

A model holds the parameters and the data and offers ``train_pass()`` (outputs and [CLS]
attention on the training sequences at the current parameters), ``step(alpha)`` (one
full-batch gradient-descent step on the mean logistic loss) and ``test_pass()``.
:class:`FastModel` computes the [CLS] row only (:mod:`verify.encoder.fast`, NumPy);
:class:`FullModel` sends every token through every layer (:mod:`verify.encoder.reference`,
PyTorch float64). Both start from the same :class:`EncoderParameters` and train the same
function, so their trajectories agree to rounding.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from verify.encoder.deferred import DeferredMatrix
from verify.encoder.fast import (
    LOW_RANK,
    ClsPass,
    apply_gradients,
    cls_attention,
    cls_backward,
    cls_forward,
)
from verify.encoder.layers import normalise
from verify.encoder.parameters import EncoderParameters
from verify.sim.data import Dataset

#: Test sequences evaluated at once (bounds the test pass's memory).
TEST_CHUNK = 500

Pass = tuple[np.ndarray, np.ndarray]


class EncoderModel(Protocol):
    def train_pass(self) -> Pass: ...

    def step(self, alpha: float) -> None: ...

    def test_pass(self) -> Pass: ...

    def test_attention(self) -> np.ndarray: ...

    @property
    def parameters(self) -> EncoderParameters: ...


def chunked(evaluate: Any, count: int) -> Pass:
    """``evaluate(rows)`` over slices of ``TEST_CHUNK`` rows, concatenated."""
    parts = [evaluate(slice(start, start + TEST_CHUNK)) for start in range(0, count, TEST_CHUNK)]
    if not parts:
        return np.zeros(0), np.zeros((0, 0))
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


#: Steps of updates a large matrix defers before folding them in (see
#: :mod:`verify.encoder.deferred`).
DEFERRED_STEPS = 8


class FastModel:
    """The [CLS]-row model; the data tokens are normalised once, and the large matrices'
    updates are folded in every :data:`DEFERRED_STEPS` steps."""

    def __init__(self, parameters: EncoderParameters, data: Dataset, residual: bool):
        self._parameters, self.residual = parameters, residual
        capacity = max(DEFERRED_STEPS * data.n, 32)
        self.matrices = {
            name: DeferredMatrix(getattr(parameters, name), capacity) for name in LOW_RANK
        }
        self.train_hat = normalise(data.X_train)[0]
        self.test_tokens = data.X_test
        self.labels = data.y_train.astype(np.float64)
        self._test_hat: np.ndarray | None = None
        self._pass: ClsPass | None = None

    @property
    def parameters(self) -> EncoderParameters:
        """The current parameters (pending updates folded in)."""
        for matrix in self.matrices.values():
            matrix.flush()
        return self._parameters

    def forward(self, tokens: np.ndarray) -> ClsPass:
        return cls_forward(self._parameters, tokens, self.residual, self.matrices)

    def train_pass(self) -> Pass:
        self._pass = self.forward(self.train_hat)
        return self._pass.outputs, self._pass.probabilities

    def step(self, alpha: float) -> None:
        forward = self._pass or self.forward(self.train_hat)
        parameters, matrices = self._parameters, self.matrices
        gradients = cls_backward(
            parameters, forward, self.train_hat, self.labels, self.residual, matrices
        )
        apply_gradients(parameters, gradients, alpha, matrices)
        self._pass = None

    @property
    def test_hat(self) -> np.ndarray:
        """The normalised test tokens (computed on first use)."""
        if self._test_hat is None:
            self._test_hat = normalise(self.test_tokens)[0]
        return self._test_hat

    def test_attention(self) -> np.ndarray:
        """The [CLS] attention on the test sequences (no pass beyond the attention)."""
        tokens = self.test_hat
        rows = [
            cls_attention(
                self._parameters, tokens[start : start + TEST_CHUNK], self.matrices
            ).probabilities
            for start in range(0, tokens.shape[0], TEST_CHUNK)
        ]
        return np.concatenate(rows) if rows else np.zeros((0, tokens.shape[1] + 1))

    def test_pass(self) -> Pass:
        tokens = self.test_hat

        def evaluate(rows: slice) -> Pass:
            forward = self.forward(tokens[rows])
            return forward.outputs, forward.probabilities

        return chunked(evaluate, tokens.shape[0])


class FullModel:
    """The full encoder in PyTorch float64 (autograd), trained by the same GD."""

    def __init__(self, parameters: EncoderParameters, data: Dataset, residual: bool):
        from verify.encoder.reference import require_torch, to_tensors

        self.torch = torch = require_torch()
        self.tensors = to_tensors(parameters)
        self.residual = residual
        self.X_train = torch.as_tensor(data.X_train, dtype=torch.float64)
        self.X_test = torch.as_tensor(data.X_test, dtype=torch.float64)
        self.labels = torch.as_tensor(data.y_train, dtype=torch.float64)
        self._loss: Any = None

    @property
    def parameters(self) -> EncoderParameters:
        return EncoderParameters(
            **{name: t.detach().numpy().copy() for name, t in self.tensors.items()}
        )

    def train_pass(self) -> Pass:
        from verify.encoder.reference import full_loss

        self._loss, (outputs, attention) = full_loss(
            self.tensors, self.X_train, self.labels, self.residual
        )
        return outputs.detach().numpy().copy(), attention.detach().numpy().copy()

    def step(self, alpha: float) -> None:
        if self._loss is None:
            self.train_pass()
        self._loss.backward()
        with self.torch.no_grad():
            for tensor in self.tensors.values():
                tensor -= alpha * tensor.grad
                tensor.grad = None
        self._loss = None

    def test_attention(self) -> np.ndarray:
        return self.test_pass()[1]

    def test_pass(self) -> Pass:
        from verify.encoder.reference import full_forward

        def evaluate(rows: slice) -> Pass:
            with self.torch.no_grad():
                outputs, attention = full_forward(self.tensors, self.X_test[rows], self.residual)
            return outputs.numpy().copy(), attention.numpy().copy()

        return chunked(evaluate, int(self.X_test.shape[0]))


def make_model(name: str, parameters: EncoderParameters, data: Dataset, residual: bool) -> Any:
    """``fast`` or ``full`` (see the module docstring)."""
    return (FastModel if name == "fast" else FullModel)(parameters, data, residual)


__all__ = ["EncoderModel", "FastModel", "FullModel", "make_model", "TEST_CHUNK"]
