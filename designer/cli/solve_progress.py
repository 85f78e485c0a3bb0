"""Progress of a long solve on stderr: a rich status line, only on a terminal and only after about 2 s.

Never drawn when stderr is not a terminal (logs and pipes stay clean), with ``--quiet``, or under
``TERM=dumb``; rich itself honours ``NO_COLOR``. The line is erased when the solve ends.
"""

from __future__ import annotations

__all__ = ["SolveProgress"]

import os
import sys
import time

from designer.spec.units import format_money

_AFTER_S = 2.0  # a solve shorter than this shows nothing


class SolveProgress:
    """A callable for :func:`designer.planner.plan`'s ``progress``: (candidates evaluated,
    programs solved, best total cost or None)."""

    def __init__(self, *, quiet: bool = False, time_limit_s: float | None = None):
        self.enabled = (not quiet and sys.stderr.isatty() and os.environ.get("TERM") != "dumb")
        self.start = time.monotonic()
        self.time_limit_s = time_limit_s
        self._status = None

    def __call__(self, evaluated: int, solves: int, best_usd: float | None) -> None:
        if not self.enabled or time.monotonic() - self.start < _AFTER_S:
            return
        best = "none yet" if best_usd is None else format_money(best_usd)
        elapsed = time.monotonic() - self.start
        limit = "" if self.time_limit_s is None else f" of {self.time_limit_s:g} s"
        text = (f"solving: {evaluated} candidate systems evaluated, {solves} programs solved, best {best}, "
                f"{elapsed:.0f} s{limit}")
        if self._status is None:
            from rich.console import Console  # only when shown: start-up stays fast

            self._status = Console(stderr=True).status(text)
            self._status.start()
        else:
            self._status.update(text)

    def close(self) -> None:
        """Erase the line (the answer follows)."""
        if self._status is not None:
            self._status.stop()
            self._status = None
