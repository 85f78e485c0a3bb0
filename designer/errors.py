"""One error hierarchy for the whole package, rooted at :class:`DesignerError`.

The CLI maps each class to an exit code (docs/contract.md): bad input 2, infeasible 3, no answer in time 4.
The core raises these and never prints or exits.
"""

from __future__ import annotations

__all__ = [
    "DesignerError",
    "InputError",
    "SpecError",
    "CatalogError",
    "DesignFileError",
    "TopologyError",
    "PerfError",
    "InfeasibleError",
    "SolverError",
    "SolverTimeoutError",
    "Location",
    "Diagnostic",
]

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Location:
    """Where in an input file a problem is: 1-based line and column, and the key path."""

    file: str
    line: int | None = None
    col: int | None = None
    path: str = ""

    def __str__(self) -> str:
        if self.line is None:
            return self.file
        return f"{self.file}:{self.line}:{self.col or 1}"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem found in an input, for people and for ``validate --format json``.

    ``severity`` is ``error`` (the input is refused) or ``warning`` (accepted, but probably not what
    was meant); ``message`` says what is wrong, ``hint`` how to fix it (``None`` when the message
    says it all).
    """

    severity: str
    message: str
    location: Location
    hint: str | None = None

    def located(self) -> str:
        """``FILE:LINE:COL: message; hint`` on one line."""
        text = self.message if self.hint is None else f"{self.message}; {self.hint}"
        return f"{self.location}: {text}"


class DesignerError(Exception):
    """Root of every error this package raises on purpose."""

    exit_code = 1


class InputError(DesignerError):
    """Bad input of any kind (exit 2). ``location`` says where, when known.

    ``problem`` is what is wrong and ``hint`` how to fix it (or ``None``); ``message`` is both on
    one line. ``problems`` lists every problem found in the same input, this one first: a loader
    that checks a whole file raises its first problem with the others attached.
    """

    exit_code = 2

    def __init__(self, message: str, location: Location | None = None, *, hint: str | None = None):
        self.problem = message
        self.hint = hint
        self.message = message if hint is None else f"{message}; {hint}"
        self.location = location
        self._others: tuple[InputError, ...] = ()
        super().__init__(self.located())

    @property
    def problems(self) -> tuple[InputError, ...]:
        """Every problem found in the same input, this one first."""
        return (self, *self._others)

    def with_others(self, others: tuple[InputError, ...]) -> InputError:
        """This error with ``others`` attached as the rest of :attr:`problems`; returns ``self``."""
        self._others = tuple(others)
        return self

    def diagnostic(self) -> Diagnostic:
        """This error as a :class:`Diagnostic` (severity ``error``)."""
        return Diagnostic("error", self.problem, self.location or Location(""), self.hint)

    def located(self) -> str:
        """The one-line message, prefixed with ``FILE:LINE:COL:`` when the place is known."""
        if self.location is None:
            return self.message
        return f"{self.location}: {self.message}"


class SpecError(InputError):
    """The spec is malformed or invalid."""


class CatalogError(InputError):
    """A catalog file is malformed, invalid, or a catalog name is unknown."""


class DesignFileError(InputError):
    """A design file could not be read or does not validate."""


class TopologyError(DesignerError):
    """A fabric cannot be built as asked (too many nodes for the switch, bad ratio)."""

    exit_code = 2


class PerfError(DesignerError):
    """The performance model was asked something it cannot answer (no plan fits memory)."""

    exit_code = 2


class InfeasibleError(DesignerError):
    """No design meets every constraint (exit 3). Carries the reasons and suggested relaxations."""

    exit_code = 3

    def __init__(self, message: str, reasons: tuple[str, ...] = (), relaxations: tuple[str, ...] = ()):
        self.message = message
        self.reasons = tuple(reasons)
        self.relaxations = tuple(relaxations)
        super().__init__(message)


class SolverError(DesignerError):
    """The solver is missing or failed."""

    exit_code = 2


class SolverTimeoutError(DesignerError):
    """The solver found no feasible design within the time limit (exit 4)."""

    exit_code = 4
