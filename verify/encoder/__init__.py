r"""The paper's appendix experiment: a one-layer transformer encoder, every weight trained.

The authors' code (``main_one_layer.py``, Figures 6-7 of the paper) prepends a trainable
[CLS] token (it plays the role of the bare model's :math:`p`) to the T data tokens and
runs one pre-LayerNorm transformer block: single-head self-attention with one bias-free
fused query/key/value map and scores scaled by :math:`d^{-1/2}`, a residual, a
pre-LayerNorm feed-forward block (Linear d -> m, GELU, Linear m -> d) with a residual, a
final LayerNorm and a linear head on the [CLS] position; logistic loss, full-batch SGD
at 5e-3 for 1000 steps, a switch that removes both residuals. What it records is the
[CLS] row's attention over the T data tokens.

Here: :mod:`~verify.encoder.parameters` (PyTorch's default initialisation, seeded),
:mod:`~verify.encoder.layers` and :mod:`~verify.encoder.fast` (the [CLS] row only, exact,
NumPy, float64), :mod:`~verify.encoder.reference` (every token through every layer,
PyTorch float64; the reference the fast model is tested equal to),
:mod:`~verify.encoder.train` (GD and the log points), :mod:`~verify.encoder.files` and
:mod:`~verify.encoder.figures` (a run's files), :mod:`~verify.encoder.grid`,
:mod:`~verify.encoder.grid_tables` and :mod:`~verify.encoder.experiment` (the regimes
against the bare model's), :mod:`~verify.encoder.diagnostics` (where the fit is stored)
and :mod:`~verify.encoder.claims` (measures for checks). Data come from
:func:`verify.sim.data.generate`; unlike the authors' code, the test set is an
independent draw.
"""
