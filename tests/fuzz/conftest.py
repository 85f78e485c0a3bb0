"""Loads the Hypothesis profile for the fuzz suite and reports how many cases ran."""

from __future__ import annotations

import hypothesis_profiles  # tests/hypothesis_profiles.py; pytest puts tests/ on sys.path

from . import gen

PROFILE = hypothesis_profiles.load()


def pytest_terminal_summary(terminalreporter) -> None:
    """One line with the number of generated fuzz cases (the CI profile promises >= 2,000)."""
    total = sum(gen.CASES.values())
    if total:
        per_test = ", ".join(f"{name} {n}" for name, n in sorted(gen.CASES.items()))
        terminalreporter.write_line(f"fuzz: {total:,} generated cases (profile {PROFILE}): {per_test}")
