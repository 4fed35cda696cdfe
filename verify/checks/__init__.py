"""Predictions against simulations: the run cache, the checks, the report."""
