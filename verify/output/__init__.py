"""Atomic result files, tables and provenance."""
