"""One deadline for a whole command: every phase (evaluation, programs, explanations) asks it how long is left.

``--time-limit`` bounds the command, not each program: the planner makes one :class:`Deadline`
and every stage that can take long checks it between steps and gives the solver only what is
left. When it passes, the best design found so far is the answer (status ``feasible``), and the
explanations not yet computed are left out with a warning.
"""

from __future__ import annotations

__all__ = ["Deadline", "OutOfTime", "NO_DEADLINE"]

import time
from typing import Callable

# Least time handed to a solver run: HiGHS needs a moment to return its incumbent.
_MIN_SOLVER_S = 0.05


class OutOfTime(Exception):
    """The command's deadline passed while an optional step (an explanation) was running."""


class Deadline:
    """A point in monotonic time, or none. ``limit_s`` is counted from construction."""

    def __init__(self, limit_s: float | None, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self.limit_s = limit_s
        self._end = None if limit_s is None else clock() + limit_s
        self._parent: Deadline | None = None  # the command's deadline, for a phase's own budget
        self.budget_s: float | None = None
        self._what = "budget"

    def within(self, budget_s: float, what: str = "budget") -> "Deadline":
        """This deadline or ``budget_s`` seconds from now, whichever comes first: a phase's own
        budget inside the command's. ``limit_s`` stays the command's (None without
        ``--time-limit``), so the searches order their work as they do without a limit;
        :meth:`budget_spent` says which of the two ended it."""
        inner = Deadline(None, self._clock)
        inner.limit_s, inner._parent, inner.budget_s, inner._what = self.limit_s, self, budget_s, what
        end = self._clock() + budget_s
        inner._end = end if self._end is None else min(self._end, end)
        return inner

    def budget_spent(self) -> bool:
        """Whether this phase's own budget (:meth:`within`) ended it, not the command's limit."""
        return self.expired() and self._parent is not None and not self._parent.expired()

    def reason(self) -> str:
        """What ended the phase, for a warning: its own budget ("explanation budget of 10 s
        spent") or the command's limit ("time limit reached")."""
        return f"{self._what} of {self.budget_s:g} s spent" if self.budget_spent() else "time limit reached"

    def remaining(self) -> float | None:
        """Seconds left (never below zero), or None without a limit."""
        return None if self._end is None else max(0.0, self._end - self._clock())

    def expired(self) -> bool:
        """Whether the deadline has passed."""
        return self._end is not None and self._clock() >= self._end

    def solver_limit(self, per_run_s: float | None = None) -> float | None:
        """A solver run's time limit: what is left (at least a moment), or ``per_run_s`` if smaller."""
        left = self.remaining()
        if left is None:
            return per_run_s
        left = max(left, _MIN_SOLVER_S)
        return left if per_run_s is None else min(left, per_run_s)


NO_DEADLINE = Deadline(None)
