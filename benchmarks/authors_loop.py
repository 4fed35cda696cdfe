"""An authors-style training loop, the baseline the package's speed is measured against.

The paper's public code trains the one-layer attention model with PyTorch in float32 on
the dense d x d weight matrix: full-batch SGD on (W, p) with the head fixed, and the train
and test accuracy and loss evaluated every ``--log-every`` steps. This script does the same
on a package-written ``.npz`` (``X_train``, ``y_train``, ``X_test``, ``y_test``, ``W0``,
``nu``), so that both programs see identical inputs. Needs the ``realworld`` extra (torch).

    python benchmarks/authors_loop.py DATA.npz --steps 1000 [--bare]

``--bare`` evaluates nothing while training (only the final metrics, once): the bare loop.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch


def metrics(
    X: torch.Tensor, y: torch.Tensor, W: torch.Tensor, p: torch.Tensor, nu: torch.Tensor
) -> tuple[float, float]:
    """Accuracy and mean logistic loss of f(X) = sum_t softmax(X W p)_t <x_t, nu>."""
    with torch.no_grad():
        output = (torch.softmax(X @ W @ p, dim=1) * (X @ nu)).sum(dim=1)
        return float((y * output > 0).float().mean()), float(
            torch.nn.functional.softplus(-y * output).mean()
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", help=".npz written by verify.sim.data.save_npz (with W0)")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--alpha", type=float, default=5e-3)
    parser.add_argument("--log-every", type=int, default=10)
    parser.add_argument(
        "--bare", action="store_true", help="no evaluation at all (the bare training loop)"
    )
    args = parser.parse_args()
    started = time.perf_counter()
    with np.load(args.data) as archive:
        arrays = {key: torch.tensor(archive[key], dtype=torch.float32) for key in archive.files}
    X, y = arrays["X_train"], arrays["y_train"]
    X_test, y_test = arrays["X_test"], arrays["y_test"]
    nu = arrays["nu"]
    W = arrays["W0"].T.contiguous().requires_grad_(True)  # logits X W p: W0's transpose
    p = torch.zeros(X.shape[2], requires_grad=True)
    optimiser = torch.optim.SGD([W, p], lr=args.alpha)
    history = []
    for step in range(1, args.steps + 1):
        optimiser.zero_grad()
        output = (torch.softmax(X @ W @ p, dim=1) * (X @ nu)).sum(dim=1)
        torch.nn.functional.softplus(-y * output).mean().backward()
        optimiser.step()
        if not args.bare and step % args.log_every == 0:
            history.append((step, *metrics(X, y, W, p, nu), *metrics(X_test, y_test, W, p, nu)))
    if args.bare:
        history.append((args.steps, *metrics(X, y, W, p, nu), *metrics(X_test, y_test, W, p, nu)))
    step, train_accuracy, train_loss, test_accuracy, test_loss = history[-1]
    print(
        f"steps {step}: train accuracy {train_accuracy:.3f}, test accuracy {test_accuracy:.3f},"
        f" test loss {test_loss:.4f}; {time.perf_counter() - started:.1f} s"
    )


if __name__ == "__main__":
    main()
