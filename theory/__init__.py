r"""``theory``: the SymPy side of the benign-attention verification package.

SymPy derives the model's exact gradients, the conservation laws, the softmax/cosh identity,
the quadrature :math:`g(x) = 2x + 2\sinh(x - \log T)` with its inverse and asymptotics, and
the discrete (GD) quadrature with an explicit error bound; numeric kernels are generated
from (or proved equal to) the SymPy forms. No simulation lives here; ``verify`` imports
``theory``, never the reverse.

Modules: :mod:`~theory.symbols`, :mod:`~theory.model`, :mod:`~theory.invariants`,
:mod:`~theory.softmax_cosh`, :mod:`~theory.quadrature`,
:mod:`~theory.quadrature_asymptotics`, :mod:`~theory.gd_quadrature`,
:mod:`~theory.codegen`, :mod:`~theory.derivations` (``python -m theory`` prints them all).
"""

from theory.codegen import lambdify_expression, lambdify_mpmath, lambdify_numpy
from theory.derivations import Derivation, all_derivations, derivation_list
from theory.gd_quadrature import (
    GDQuadratureComparison,
    gd_recursion,
    gd_recursion_bound,
    gd_step_defect_bound,
    gd_step_defect_enclosure,
    gd_step_defect_uniform_bound,
)
from theory.invariants import (
    conserved_matrix,
    gd_invariant_drift,
    query_velocity,
)
from theory.model import (
    reference_logit_gradient,
    reference_sequence_loss,
)
from theory.proof import residuals_vanish
from theory.quadrature import (
    g,
    g_inverse,
    g_inverse_float_floor,
    g_inverse_log,
    g_mp,
    g_prime,
    g_prime_mp,
    g_root,
    log_g,
    log_quadrature_time,
    quadrature_gap,
    quadrature_gap_mp,
    quadrature_time,
    quadrature_time_float,
    signed_log_g,
    time_to_reach_gap_scaling,
)
from theory.quadrature_asymptotics import (
    g_inverse_asymptotic,
    g_inverse_asymptotic_error_bound,
    g_inverse_asymptotic_log,
)
from theory.softmax_cosh import (
    effective_gap,
    leader_probability,
    paper_form_ratio,
    paper_form_ratio_bound,
    saturation_bounds,
    saturation_equal_gaps,
    saturation_paper_form,
    selected_saturation,
)

__all__ = [
    "Derivation",
    "GDQuadratureComparison",
    "conserved_matrix",
    "derivation_list",
    "all_derivations",
    "effective_gap",
    "g",
    "g_inverse",
    "g_inverse_asymptotic",
    "g_inverse_asymptotic_error_bound",
    "g_inverse_asymptotic_log",
    "g_inverse_float_floor",
    "g_inverse_log",
    "g_mp",
    "g_prime",
    "g_prime_mp",
    "g_root",
    "gd_invariant_drift",
    "gd_recursion",
    "gd_recursion_bound",
    "gd_step_defect_bound",
    "gd_step_defect_enclosure",
    "gd_step_defect_uniform_bound",
    "lambdify_expression",
    "lambdify_mpmath",
    "lambdify_numpy",
    "leader_probability",
    "log_g",
    "log_quadrature_time",
    "paper_form_ratio",
    "paper_form_ratio_bound",
    "quadrature_gap",
    "quadrature_gap_mp",
    "quadrature_time",
    "quadrature_time_float",
    "query_velocity",
    "reference_logit_gradient",
    "reference_sequence_loss",
    "residuals_vanish",
    "saturation_bounds",
    "saturation_equal_gaps",
    "saturation_paper_form",
    "selected_saturation",
    "signed_log_g",
    "time_to_reach_gap_scaling",
]
