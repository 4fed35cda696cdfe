r"""``theory``: the SymPy side of the benign-attention verification package.

SymPy derives the model's exact gradients, the conservation laws, the softmax/cosh
identity, the quadrature :math:`g(x) = 2x + 2\sinh(x - \log T)` with its inverse and
asymptotics, the discrete (GD) quadrature with an explicit error bound, the stage-1 rates
and the predictions; numeric kernels are generated from (or proved equal to) the SymPy
forms. The data model (:mod:`theory.foundation.data_model`) is declared here once and the
simulator composes it. No simulation lives here; ``verify`` imports ``theory``, never the
reverse. ``python -m theory`` prints every derivation with its status, its numeric twin, the
simulated quantity it is compared with and its test.

The modules follow the paper's analysis: ``theory/foundation/`` (data model and its sampler,
symbols, validation, proofs, code generation, assumptions), ``theory/quadrature/`` (g, its
inverse and asymptotics, the GD quadrature), ``theory/stage1/`` (rates, velocities and their
moments, stage-1 predictions), ``theory/stage2/`` (mean-field flow, preconditioner, laws,
stage-2 predictions), ``theory/variants/`` (the model variants of the authors' rebuttal: the
loss, per-example :math:`\rho`, one-step and trained heads, an FFN readout, the noisy
samples' share of the gradient), and at the top the attention model with its exact gradients
(:mod:`theory.model`), the softmax/cosh identity (:mod:`theory.softmax_cosh`), the
conservation laws (:mod:`theory.invariants`), max-margin token selection
(:mod:`theory.max_margin`), test-time baselines (:mod:`theory.baselines`) and the index of
the derivation records (:mod:`theory.derivations`).

The names below are imported on first use, so that ``import theory`` stays cheap (the
simulator's run path never loads SymPy).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, tuple[str, ...]] = {
    "foundation.codegen": ("lambdify_expression", "lambdify_mpmath", "lambdify_numpy"),
    "foundation.data_model": ("DataModel", "Training", "noisy_count", "token_groups"),
    "derivations": ("Derivation", "all_derivations", "derivation_list"),
    "quadrature.gd": (
        "GDQuadratureComparison",
        "gd_recursion",
        "gd_recursion_bound",
        "gd_step_defect_bound",
        "gd_step_defect_enclosure",
        "gd_step_defect_uniform_bound",
    ),
    "invariants": ("conserved_matrix", "gd_invariant_drift", "query_velocity"),
    "model": ("reference_logit_gradient", "reference_sequence_loss"),
    "stage1.predictions": ("Stage1Predictions", "stage1_predictions"),
    "foundation.proof": ("residuals_vanish",),
    "quadrature.g": (
        "g",
        "g_inverse",
        "g_inverse_float_floor",
        "g_inverse_log",
        "g_mp",
        "g_prime",
        "g_prime_mp",
        "g_root",
        "log_g",
        "log_quadrature_time",
        "quadrature_gap",
        "quadrature_gap_mp",
        "quadrature_time",
        "quadrature_time_float",
        "signed_log_g",
        "time_to_reach_gap_scaling",
    ),
    "quadrature.asymptotics": (
        "g_inverse_asymptotic",
        "g_inverse_asymptotic_error_bound",
        "g_inverse_asymptotic_log",
    ),
    "softmax_cosh": (
        "effective_gap",
        "leader_probability",
        "paper_form_ratio",
        "paper_form_ratio_bound",
        "saturation_bounds",
        "saturation_equal_gaps",
        "saturation_paper_form",
        "selected_saturation",
    ),
    "foundation.stability": ("max_stable_step",),
    "foundation.validation": ("InvalidParameter",),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'theory' has no attribute {name!r}")
    return getattr(importlib.import_module(f"theory.{module}"), name)


def __dir__() -> list[str]:
    return sorted(_MODULE_OF)


__all__ = sorted(_MODULE_OF)
