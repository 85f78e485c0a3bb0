"""One error hierarchy for the whole package, rooted at :class:`DesignerError`.

The CLI maps each class to an exit code (DESIGN.md): bad input 2, infeasible 3, no answer in time 4.
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


class DesignerError(Exception):
    """Root of every error this package raises on purpose."""

    exit_code = 1


class InputError(DesignerError):
    """Bad input of any kind (exit 2). ``location`` says where, when known."""

    exit_code = 2

    def __init__(self, message: str, location: Location | None = None):
        self.message = message
        self.location = location
        super().__init__(self.located())

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
