"""The real-world data sets by name and modality, as plain data (the command line reads it
without importing NumPy or PyTorch)."""

from __future__ import annotations

MODALITY = {"mnist": "image", "rotten-tomatoes": "text", "tweets": "text"}
DATASET_NAMES = tuple(sorted(MODALITY))
