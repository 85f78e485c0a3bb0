"""Options shared by the solving commands (:mod:`designer.cli.solve`, :mod:`designer.cli.whatif`).

The solver choice and the options every solving command takes. Typer reads an option from its
default value, so one definition serves every command that takes it.
"""

from __future__ import annotations

__all__ = ["SolverName", "SOLVER_OPTION", "TIME_LIMIT_OPTION", "JOBS_OPTION", "SCHEDULER_OPTION"]

from enum import Enum

import typer


class SolverName(str, Enum):
    """The MILP solvers (:data:`designer.optimize.milp.SOLVERS`)."""

    highs = "highs"
    cbc = "cbc"


SOLVER_OPTION = typer.Option(SolverName.highs, "--solver", help="MILP solver.")
TIME_LIMIT_OPTION = typer.Option(None, "--time-limit", min=0.1, help="Time limit of each solver run, in seconds.")
JOBS_OPTION = typer.Option(None, "--jobs", "-j", help="Parallel solves on this machine (default: the available cores).")
SCHEDULER_OPTION = typer.Option(None, "--scheduler", metavar="ADDRESS",
                                help="Solve on the Dask cluster of this scheduler, e.g. tcp://10.0.0.5:8786 "
                                     "(needs the dask extra: pip install 'designer[dask]').")
