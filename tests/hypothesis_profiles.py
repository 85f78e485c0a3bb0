"""Hypothesis profiles for the test suite, chosen by the HYPOTHESIS_PROFILE environment variable.

* ``ci``: a fixed seed (``derandomize``), no example database, and 300 examples per property
  test that does not set its own count. The fuzz suite (tests/fuzz) has 7 such tests: 2,100
  generated cases per run, always the same ones.
* ``dev`` (the default): Hypothesis's defaults (100 examples, a random seed, the local database).
* ``long``: 14,300 examples per test, 100,100 fuzz cases in all; run it as
  ``HYPOTHESIS_PROFILE=long pytest tests/fuzz`` (about 30 minutes on 2 cores; docs/reliability.md).

Tests that set ``max_examples`` themselves (the slower property tests) keep their count in every
profile. Deadlines are off: timings on shared CI machines vary too much to mean anything, and the
tests that care about time assert it directly.
"""

from __future__ import annotations

__all__ = ["PROFILES", "load"]

import os

from hypothesis import HealthCheck, settings

# Examples per profile-driven test; the fuzz suite's 7 tests multiply these (see above).
PROFILES = {"ci": 300, "dev": 100, "long": 14_300}

_SLOW_OK = [HealthCheck.too_slow, HealthCheck.data_too_large]

settings.register_profile("ci", max_examples=PROFILES["ci"], derandomize=True, database=None, deadline=None,
                          print_blob=True, suppress_health_check=_SLOW_OK)
settings.register_profile("dev", max_examples=PROFILES["dev"], deadline=None)
settings.register_profile("long", max_examples=PROFILES["long"], deadline=None, suppress_health_check=_SLOW_OK)


def load() -> str:
    """Load the profile named by ``HYPOTHESIS_PROFILE`` (default ``dev``) and return its name."""
    name = os.environ.get("HYPOTHESIS_PROFILE", "dev")
    if name not in PROFILES:
        raise ValueError(f"HYPOTHESIS_PROFILE={name!r}: use one of {', '.join(PROFILES)}")
    settings.load_profile(name)
    return name
