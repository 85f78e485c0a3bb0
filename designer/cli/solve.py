"""``designer solve`` and ``designer estimate``: optimise a spec, or predict on the system it pins."""

from __future__ import annotations

__all__ = ["SolveFormat", "solve", "estimate"]

from datetime import date
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from designer.cli.common import SOLVER_OPTION, SolverName
from designer.cli.run import err, one_line, run, show, state

WHOLE_TIME_LIMIT_OPTION = typer.Option(
    None, "--time-limit", min=0.1,
    help="Time limit of the whole command, in seconds: the best design found by then is written "
         "(status feasible, with its gap); exit 4 if none was found.")


class SolveFormat(str, Enum):
    table = "table"
    yaml = "yaml"
    json = "json"
    markdown = "markdown"


def solve(
    spec_path: Path = typer.Argument(..., metavar="SPEC", help="The spec to solve.", show_default=False),
    output: Optional[str] = typer.Option(None, "-o", "--output", help="Write the design file here (YAML)."),
    fmt: SolveFormat = typer.Option(SolveFormat.table, "--format", "-f", help="What to print."),
    solver: SolverName = SOLVER_OPTION,
    time_limit: Optional[float] = WHOLE_TIME_LIMIT_OPTION,
    top: int = typer.Option(1, "--top", min=1, max=20,
                            help="Also rank the N best distinct designs (each another on-prem system, or the "
                                 "cloud alone), with their cost over the chosen one, in the alternatives "
                                 "(labels rank=1 ... rank=N)."),
) -> None:
    """Find the cheapest design meeting every constraint. Exit 0 solved, 2 bad input, 3 infeasible, 4 no answer in time."""
    import time

    from designer import planner, report
    from designer.report import jsondoc, prices
    from designer.cli import atomic
    from designer.cli.solve_progress import SolveProgress
    from designer.design import io as design_io

    started = time.monotonic()

    def body() -> int:
        spec, catalog, _ = atomic.load_spec_for_output(spec_path, output)
        read = atomic.spec_inputs(spec_path, spec.catalogs)
        # One deadline for the whole command, counted from its start (reading the inputs included).
        left = None if time_limit is None else max(0.1, time_limit - (time.monotonic() - started))
        progress = SolveProgress(quiet=bool(state.get("quiet")), time_limit_s=time_limit)
        try:
            result = planner.plan(spec, catalog, solver=solver.value, time_limit_s=left, progress=progress, top=top)
        finally:
            progress.close()
        if output is not None:
            atomic.write_atomic(output, design_io.dump_design(result), read)
        for warning in result.warnings:
            err(f"warning: {one_line(warning)}")
        stale = prices.render_stale_prices(prices.stale_prices(result, date.today()))
        if stale:
            err(f"warning: {one_line(stale)}")
        if fmt is SolveFormat.json:
            typer.echo(jsondoc.dumps(design_io.design_to_json_dict(result)), nl=False)
        elif fmt is SolveFormat.yaml:
            typer.echo(design_io.dump_design(result), nl=False)
        else:
            show(report.render_summary(result, fmt.value))
        return 0

    run(body)


def estimate(
    spec_path: Path = typer.Argument(..., metavar="SPEC", help="A spec whose `system` is pinned.", show_default=False),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (keys in docs/contract.md)."),
) -> None:
    """Predict step time, utilization and time to train on the system pinned in the spec (no optimisation)."""
    from designer import planner
    from designer.planner import inputs
    from designer.report import estimate as report_estimate, jsondoc

    def body() -> int:
        spec, catalog = inputs.load_inputs(spec_path)
        for warning in spec.warnings:
            err(f"warning: {one_line(warning.located())}")
        result = planner.estimate(spec, catalog)
        for warning in result.warnings[len(spec.warnings):]:  # what the estimate found (a system not used whole)
            err(f"warning: {one_line(warning)}")
        if as_json:
            typer.echo(jsondoc.dumps(report_estimate.estimate_to_json_dict(result)), nl=False)
        else:
            show(report_estimate.render_estimate(result))
        return 0

    run(body)
