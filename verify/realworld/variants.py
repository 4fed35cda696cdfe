"""Labelled protocol variants: the named protocols, [CLS] on or off, and one-factor changes.

A variant label is a protocol name (``authors``, ``fullbatch-adam``, ``gd``),
optionally ``+cls`` (text keeps its special tokens), or ``BASE+FACTOR`` (the named
protocol ``BASE`` with the settings of one factor taken from the other end of the
comparison, :data:`FACTORS`).
"""

from __future__ import annotations

from typing import Any

from theory.foundation.validation import require
from verify.realworld.protocols import PROTOCOLS, Protocol, protocol

#: The factors of the one-factor-at-a-time analysis and the fields each one moves.
FACTORS: dict[str, tuple[str, ...]] = {
    "optimiser": ("optimiser",),
    "learning-rate": ("learning_rate",),
    "batch-size": ("batch_size",),
    "epochs": ("epochs", "eval_every"),
    "schedule": ("schedule",),
    "clipping": ("clip_norm",),
    "init": ("init",),
    "noise": ("noise",),
    "head": ("head_fit", "head_examples", "head_pooler"),
    "special-tokens": ("special_tokens",),
}
#: Where each base moves a factor to: the other protocol of the comparison.
TARGET = {"fullbatch-adam": "authors", "authors": "fullbatch-adam", "gd": "fullbatch-adam"}
GRID_VARIANTS = ("authors", "authors+cls", "fullbatch-adam", "gd")


def factor_overrides(base: str, factor: str) -> dict[str, Any]:
    """The fields ``factor`` moves, at the target protocol's values; the optimiser factor
    switches Adam to plain gradient steps at the step-size rule's step (and back to the
    target's Adam)."""
    require(factor in FACTORS, "factor", factor, "one of " + ", ".join(map(repr, FACTORS)))
    target = PROTOCOLS[TARGET[base]]
    if factor == "optimiser":
        if PROTOCOLS[base].optimiser == "adam":
            return {"optimiser": "sgd", "learning_rate": None}
        return {"optimiser": "adam", "learning_rate": target.learning_rate}
    return {name: getattr(target, name) for name in FACTORS[factor]}


def variant(label: str) -> Protocol:
    """The protocol of a variant label (see the module docstring)."""
    name, _, suffix = label.partition("+")
    require(
        name in PROTOCOLS,
        "protocol",
        label,
        "a protocol name (" + ", ".join(map(repr, PROTOCOLS)) + "), optionally with "
        "'+cls' or '+FACTOR'",
    )
    if not suffix:
        return protocol(name)
    if suffix == "cls":
        return protocol(name, special_tokens=True)
    return protocol(name, **factor_overrides(name, suffix))


def applies(label: str, modality: str) -> bool:
    """Whether a variant differs from its base on this modality (images always have [CLS])."""
    suffix = label.partition("+")[2]
    return modality == "text" or suffix not in ("cls", "special-tokens")
