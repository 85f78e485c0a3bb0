"""Tests of the performance model (designer.perf)."""
