r"""Checks of the arrays a run is given: a :class:`~verify.sim.data.Dataset` and a
:math:`W_0`, held to what the command line asks of a ``--data-from`` file.

Each problem is an :class:`~theory.foundation.validation.InvalidParameter` naming the
argument (``data.X_train``, ``W0``), what it is and what is allowed, raised before any
work: an array of the wrong shape, type or with non-finite entries, labels other than
:math:`\pm 1`, data that does not match the configuration, and an all-zero
:math:`W_0` (a stationary point of GD: with :math:`W_0 = 0` and :math:`p(0) = 0` nothing
moves, and the scale :math:`\|W_0W_0^\top\|_F` that the invariant's drift is measured
against is 0).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from theory.foundation.validation import require
from verify.sim.config import RunConfig
from verify.sim.engines.registry import engine_traits, engines_where, spoken


def check_array(value: Any, name: str, shape: tuple[int, ...], shape_text: str) -> np.ndarray:
    """``value`` as a finite numeric array of ``shape``, or
    :class:`~theory.foundation.validation.InvalidParameter` naming ``name``."""
    require(
        isinstance(value, np.ndarray),
        name,
        type(value).__name__,
        f"a NumPy array of shape {shape_text}",
    )
    require(value.dtype.kind in "biuf", name, f"dtype {value.dtype}", "a numeric array")
    require(value.shape == shape, name, f"shape {value.shape}", f"an array of shape {shape_text}")
    require(bool(np.all(np.isfinite(value))), name, "non-finite entries", "finite numbers only")
    return value


def check_labels(value: Any, name: str, count: int) -> None:
    """Labels: a finite array of ``count`` values, each -1 or +1."""
    check_array(value, name, (count,), f"({count},)")
    require(bool(np.all(np.isin(value, (-1, 1)))), name, "other values", "labels -1 and +1 only")


def check_initial_weights(W0: Any, config: RunConfig, name: str = "W0") -> None:
    r""":math:`W_0`: a finite (d, d) array, not all zero, for an engine on tokens."""
    on_tokens = engines_where(tokens=True)
    engine = config.solver.engine
    require(
        engine in on_tokens,
        "engine",
        engine,
        f"{spoken(on_tokens)} with a given W0 (a d-free engine samples its own statistics)",
    )
    d = config.model.d
    check_array(W0, name, (d, d), f"({d}, {d}) (d = {d} from the configuration)")
    require(
        bool(np.any(W0)),
        name,
        "all zeros",
        "a nonzero matrix (W0 = 0 with p(0) = 0 is a stationary point of GD)",
    )


def check_dataset(data: Any, config: RunConfig, name: str = "data") -> None:
    """A :class:`~verify.sim.data.Dataset` given to a run: arrays of the configuration's
    shapes (n, T, d and test_size), finite, labels -1 and +1, for an engine on tokens."""
    engine = config.solver.engine
    if not engine_traits(engine).tokens:  # a d-free engine takes its sampled statistics
        return
    m = config.model
    n, T, d, test = m.n, m.T, m.d, config.recording.test_size
    where = "from the configuration"
    check_array(data.X_train, f"{name}.X_train", (n, T, d), f"(n, T, d) = ({n}, {T}, {d}) {where}")
    check_array(
        data.X_test,
        f"{name}.X_test",
        (test, T, d),
        f"(test_size, T, d) = ({test}, {T}, {d}) {where}",
    )
    check_labels(data.y_train, f"{name}.y_train", n)
    check_labels(data.y_test, f"{name}.y_test", test)
    if data.y_clean is not None:
        check_labels(data.y_clean, f"{name}.y_clean", n)
    check_array(data.nu, f"{name}.nu", (d,), f"({d},)")


__all__ = ["check_array", "check_labels", "check_initial_weights", "check_dataset"]
