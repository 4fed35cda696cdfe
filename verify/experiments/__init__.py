"""Resumable sweeps, and the experiments built on them (one driver)."""
