"""One deadline for a whole command: every phase (evaluation, programs, explanations) asks it how long is left.

``--time-limit`` bounds the command, not each program: the planner makes one :class:`Deadline`
and every stage that can take long checks it between steps and gives the solver only what is
left. When it passes, the best design found so far is the answer (status ``feasible``), and the
explanations not yet computed are left out with a warning.
"""

from __future__ import annotations

__all__ = ["Deadline", "WorkBudget", "OutOfTime", "NO_DEADLINE"]

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

    @property
    def clock(self) -> Callable[[], float]:
        """The time source the deadline is counted on (monotonic seconds; a test's fake clock):
        a phase's own budget inside it (:class:`WorkBudget`) reads the same one."""
        return self._clock

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

    def budget_spent(self) -> bool:
        """Whether a budget of the phase's own ended it (never, for the command's deadline)."""
        return False

    def reason(self) -> str:
        """What ended the phase, for a warning."""
        return "time limit reached"


class WorkBudget(Deadline):
    """A phase's own budget inside the command's deadline, counted in work rather than seconds:
    ``work()`` (plan searches, say) may grow by ``units`` before it passes. The same spec stops
    at the same point on any machine, so what the phase gives is deterministic; the command's
    ``--time-limit`` still ends it sooner. ``limit_s`` and the solver's limit are the command's,
    so the searches order their work as they do without a budget."""

    def __init__(self, parent: Deadline, units: int, work: Callable[[], float], what: str = "budget"):
        super().__init__(None, parent.clock)
        self.limit_s = parent.limit_s
        self._parent, self.units, self._work, self._what = parent, units, work, what
        self._stop = work() + units

    def remaining(self) -> float | None:
        return self._parent.remaining()

    def expired(self) -> bool:
        return self._parent.expired() or self._work() >= self._stop

    def solver_limit(self, per_run_s: float | None = None) -> float | None:
        return self._parent.solver_limit(per_run_s)

    def budget_spent(self) -> bool:
        """Whether this budget ended the phase, not the command's limit."""
        return self.expired() and not self._parent.expired()

    def reason(self) -> str:
        """What ended the phase, for a warning ("explanation budget of 2,000 plan searches spent"
        or "time limit reached")."""
        return f"{self._what} of {self.units:,} plan searches spent" if self.budget_spent() else "time limit reached"


NO_DEADLINE = Deadline(None)
