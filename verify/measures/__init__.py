"""What a finished run measured, read from its final state alone: its regime.

Neither the simulator nor the theory: :mod:`~verify.measures.regimes` classifies a run's
final history row, and both :mod:`verify.checks` and :mod:`verify.experiments` use it.
It imports nothing from the rest of :mod:`verify`.
"""
