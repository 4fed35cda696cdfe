r"""The gradient-descent step size, chosen by a stated rule on clean data.

Rule: the largest step size :math:`\alpha` of the grid
:math:`\{4^k : k = -6, \dots, 4\}`, refined by :math:`2\alpha^*` above the largest
stable grid value :math:`\alpha^*`, for which full-batch gradient descent on the
clean labels (eta = 0) of the first seed's training subset, from that seed's
initialisation and head, is *stable*: the full-batch loss is finite and strictly
decreasing at every one of the first ``step_probe_steps`` steps. (For an
:math:`L`-smooth loss every step below :math:`2/L` decreases it; the rule finds the
edge empirically, since :math:`L` is not known. *Strictly*: a too large step can
throw the softmax into saturation, where the loss stops moving; that is not
stable descent.) All step sizes of a stage are probed at once, as members.
"""

from __future__ import annotations

import math

import torch

from verify.realworld.optimise import MemberOptimiser

GRID = tuple(4.0**k for k in range(-6, 5))
REFINEMENT = (2.0,)


def is_stable(losses: list[float]) -> bool:
    """Finite and strictly decreasing at every step."""
    if not all(math.isfinite(v) for v in losses):
        return False
    return all(after < before for before, after in zip(losses[:-1], losses[1:], strict=True))


def probe(make_trainer, rates: tuple[float, ...], steps: int) -> list[list[float]]:
    """Full-batch loss trajectories (``steps + 1`` values) of gradient descent at each rate.

    ``make_trainer(count)`` returns a trainer of ``count`` identical members on clean
    labels; the rates are set on its optimiser, one per member."""
    trainer = make_trainer(len(rates))
    trainer.optimiser = MemberOptimiser(
        trainer.weights.tensors(), "sgd", torch.tensor(rates), "constant", steps
    )
    trajectories = [trainer.epoch() for _ in range(steps)] + [trainer.full_batch_losses()]
    return torch.stack(trajectories, dim=1).tolist()


def largest_stable_step(make_trainer, steps: int) -> dict:
    """The rule of the module docstring; returns the chosen step size and every probe."""
    trials = {}
    for rate, losses in zip(GRID, probe(make_trainer, GRID, steps), strict=True):
        trials[rate] = is_stable(losses)
    stable = [rate for rate in GRID if trials[rate]]
    if not stable:
        raise ValueError(
            f"step sizes={GRID} are invalid: allowed a grid with a stable one "
            "(no step size decreased the clean loss monotonically)"
        )
    refined = tuple(max(stable) * factor for factor in REFINEMENT)
    for rate, losses in zip(refined, probe(make_trainer, refined, steps), strict=True):
        trials[rate] = is_stable(losses)
    chosen = max(rate for rate, ok in trials.items() if ok)
    return {
        "rule": "largest step size whose full-batch clean loss decreases strictly at each "
        f"of the first {steps} steps",
        "chosen": chosen,
        "stable": {f"{rate:g}": ok for rate, ok in sorted(trials.items())},
    }
