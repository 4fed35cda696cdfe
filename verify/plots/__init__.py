"""Figures, drawn from the tables the experiments wrote (never from live runs)."""
