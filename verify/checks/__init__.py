"""Predictions against simulations: the run cache, the checks, regimes, the report."""
