"""Executors, resumable sweeps, and the experiments built on them (one driver)."""
