"""The performance model's error against published training runs, as the review page states it.

The figures are package data (``model_error.json``) written by ``python benchmarks/validate.py
--write`` together with docs/validation.md, from the same comparison; a test recomputes them.
"""

from __future__ import annotations

__all__ = ["ErrorBand", "SourceError", "load_band", "parse_band"]

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

_RESOURCE = "model_error.json"


@dataclass(frozen=True, slots=True)
class SourceError:
    """The error over the runs of one published source."""

    name: str
    runs: int
    median_abs_error: float
    max_abs_error: float


@dataclass(frozen=True, slots=True)
class ErrorBand:
    """Signed errors are predicted over published step time minus one (negative: optimistic).

    A predicted time ``t`` stands for a real run of ``t / (1 + e)`` for a run with error ``e``. The
    band is the central 80 % of the errors (``p10`` to ``p90``); ``min`` and ``max`` are the extremes.
    """

    runs: int
    left_out: int
    median_abs_error: float
    max_abs_error: float
    min_signed_error: float
    max_signed_error: float
    p10_signed_error: float
    p90_signed_error: float
    sources: tuple[SourceError, ...]
    document: str

    def time_range(self, days: float) -> tuple[float, float]:
        """Real times to train that a prediction of ``days`` stands for, over the central 80 % of runs.

        Model: real = predicted / (1 + e), for e from the 90th percentile (the model was slow, the
        run faster) to the 10th (the model was optimistic, the run slower).
        """
        return days / (1.0 + self.p90_signed_error), days / (1.0 + self.p10_signed_error)


def parse_band(data: Any) -> ErrorBand:
    """An error band from the JSON document ``benchmarks/validate.py --write`` writes.

    Raises:
        ValueError: a key is missing or of the wrong type (a packaging bug, not user input).
    """
    try:
        sources = tuple(SourceError(str(s["name"]), int(s["runs"]), float(s["median_abs_error"]),
                                    float(s["max_abs_error"])) for s in data["sources"])
        return ErrorBand(int(data["runs"]), int(data["left_out"]), float(data["median_abs_error"]),
                         float(data["max_abs_error"]), float(data["min_signed_error"]),
                         float(data["max_signed_error"]), float(data["p10_signed_error"]),
                         float(data["p90_signed_error"]), sources, str(data["document"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{_RESOURCE}: {exc!r}") from None


def load_band() -> ErrorBand:
    """The error band shipped with this version of designer."""
    text = resources.files("designer.report.html").joinpath(_RESOURCE).read_text(encoding="utf-8")
    return parse_band(json.loads(text))
