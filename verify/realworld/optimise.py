r"""Optimisers for parameters stacked over independent members (leading dimension ``M``).

Every operation is elementwise or reduces within one member, so each member follows
exactly the update it would follow alone:

* clipping: member ``m``'s gradient :math:`g_m` (all its tensors together) is scaled
  by :math:`\min(1, c / (\|g_m\|_2 + 10^{-6}))`, PyTorch's ``clip_grad_norm_`` rule;
* Adam with decoupled weight decay :math:`\lambda` (AdamW; :math:`\lambda = 0` is
  Adam), at step :math:`k = 1, 2, \dots` with learning rate :math:`\alpha_k`:
  :math:`\theta \leftarrow \theta (1 - \alpha_k \lambda)`, :math:`m \leftarrow \beta_1 m
  + (1 - \beta_1) g`, :math:`v \leftarrow \beta_2 v + (1 - \beta_2) g^2`,
  :math:`\theta \leftarrow \theta - \alpha_k \hat m / (\sqrt{\hat v} + \epsilon)` with
  :math:`\hat m = m / (1 - \beta_1^k)`, :math:`\hat v = v / (1 - \beta_2^k)`
  (PyTorch's fused AdamW kernel);
* plain gradient steps :math:`\theta \leftarrow \theta - \alpha_{k,m} g` (the step
  size may differ per member: the step-size rule probes several at once).

The step size follows :func:`verify.realworld.epochs.scheduled_rate`.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from verify.realworld.epochs import scheduled_rate

CLIP_EPSILON = 1e-6


def member_norms(tensors: Sequence[torch.Tensor]) -> torch.Tensor:
    """Euclidean norm of each member's gradient over all ``tensors``: ``[M]``."""
    per_tensor = torch.stack(
        [torch.linalg.vector_norm(t.grad.reshape(t.shape[0], -1), dim=1) for t in tensors]
    )
    return torch.linalg.vector_norm(per_tensor, dim=0)


def clip_members(tensors: Sequence[torch.Tensor], max_norm: float) -> torch.Tensor:
    """Scale each member's gradient to norm at most ``max_norm``; returns the norms before."""
    norms = member_norms(tensors)
    scale = (max_norm / (norms + CLIP_EPSILON)).clamp(max=1.0)
    if bool((scale < 1.0).any()):  # a factor of exactly 1 leaves a gradient as it is
        for tensor in tensors:
            tensor.grad.mul_(scale.view(-1, *([1] * (tensor.dim() - 1))))
    return norms


class MemberOptimiser:
    """Adam(W) or plain gradient steps on member-stacked leaf tensors, with optional clipping
    and a schedule. ``rate`` is a float, or a tensor ``[M]`` (one step size per member,
    gradient steps only)."""

    def __init__(
        self,
        tensors: Sequence[torch.Tensor],
        kind: str,
        rate: float | torch.Tensor,
        schedule: str,
        total_updates: int,
        clip_norm: float | None = None,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ) -> None:
        if kind not in ("adam", "sgd"):
            raise ValueError(f"optimiser={kind!r} is invalid: allowed 'adam' or 'sgd'")
        if kind == "adam" and isinstance(rate, torch.Tensor):
            raise ValueError("rate per member is invalid for adam: allowed a float")
        self.tensors = list(tensors)
        self.kind, self.rate, self.schedule = kind, rate, schedule
        self.total, self.clip_norm, self.updates = total_updates, clip_norm, 0
        self.adam = (
            torch.optim.AdamW(
                self.tensors,
                lr=float(rate) if kind == "adam" else 0.0,
                betas=betas,
                eps=eps,
                weight_decay=weight_decay,
                fused=True,
            )
            if kind == "adam"
            else None
        )

    def zero_grad(self) -> None:
        for tensor in self.tensors:
            tensor.grad = None

    def step(self) -> None:
        """One update from the gradients in ``.grad``."""
        self.updates += 1
        if self.clip_norm is not None:
            clip_members(self.tensors, self.clip_norm)
        if self.kind == "adam":
            self.adam.param_groups[0]["lr"] = scheduled_rate(
                self.rate, self.schedule, self.updates, self.total
            )
            self.adam.step()
            return
        factor = scheduled_rate(1.0, self.schedule, self.updates, self.total)
        with torch.no_grad():
            for tensor in self.tensors:
                rate = (
                    self.rate
                    if not isinstance(self.rate, torch.Tensor)
                    else self.rate.view(-1, *([1] * (tensor.dim() - 1)))
                )
                tensor.sub_(tensor.grad * (rate * factor))
