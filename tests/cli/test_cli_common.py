"""The shared command-line pieces agree with the library they front."""

from designer.cli.common import SolverName
from designer.optimize.milp import SOLVERS


def test_the_solver_choices_are_the_solvers_the_program_runs():
    assert tuple(s.value for s in SolverName) == SOLVERS
