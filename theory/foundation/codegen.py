r"""Code generation: SymPy expressions to NumPy or mpmath callables, in one place.

``module="numpy"`` gives float64 kernels that broadcast over array arguments;
``module="mpmath"`` gives kernels that evaluate at the caller's working precision
(wrap calls in ``mpmath.workdps(...)``; nothing here changes the global precision).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import sympy as sp

from theory.foundation.validation import Options

SUPPORTED_MODULES = ("numpy", "mpmath")


def lambdify_expression(
    arguments: Sequence[Any], expression: Any, module: str = "numpy", cse: bool = True
) -> Callable[..., Any]:
    r"""Turn ``expression`` (a SymPy expression, or a list of them) of ``arguments`` into
    a callable on ``module`` numbers; nested argument lists are unpacked as sequences,
    so ``arguments=[(a_1, a_2), y]`` takes an array (or list) of length 2 and a scalar.
    ``cse=True`` (default) evaluates common subexpressions once (same values, much faster
    for the softmax-shaped expressions here).
    """
    module = Options(SUPPORTED_MODULES).check("module", module)
    return sp.lambdify(list(arguments), expression, modules=module, cse=cse)


def lambdify_numpy(arguments: Sequence[Any], expression: Any) -> Callable[..., Any]:
    """:func:`lambdify_expression` with ``module="numpy"``."""
    return lambdify_expression(arguments, expression, module="numpy")


def lambdify_mpmath(arguments: Sequence[Any], expression: Any) -> Callable[..., Any]:
    """:func:`lambdify_expression` with ``module="mpmath"``."""
    return lambdify_expression(arguments, expression, module="mpmath")


def generated_source(arguments: Sequence[Any], expression: Any, module: str = "numpy") -> str:
    """The Python source of the generated kernel (for review and documentation)."""
    import inspect

    return inspect.getsource(lambdify_expression(arguments, expression, module=module))
