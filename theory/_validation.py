"""Parameter checks shared by the numeric entry points (messages name parameter, value, range)."""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np


def require_integer_at_least(name: str, value: object, minimum: int) -> int:
    """Return ``value`` as ``int`` if it is an integer ``>= minimum``, else raise ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, Integral | np.integer):
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    if int(value) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return int(value)


def require_positive_real(name: str, value: object) -> float:
    """Return ``value`` as ``float`` if it is a finite real ``> 0``, else raise ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, Real | np.floating | np.integer):
        raise ValueError(f"{name} must be a finite real number > 0; got {value!r}")
    as_float = float(value)
    if not math.isfinite(as_float) or as_float <= 0.0:
        raise ValueError(f"{name} must be a finite real number > 0; got {value!r}")
    return as_float


def require_finite_array(name: str, value: object) -> np.ndarray:
    """Return ``value`` as a float64 array if every entry is finite, else raise ``ValueError``."""
    array = np.asarray(value, dtype=np.float64)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must contain only finite real numbers; got {value!r}")
    return array


def require_choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of ``choices``, else raise ``ValueError``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}; got {value!r}")
    return str(value)
