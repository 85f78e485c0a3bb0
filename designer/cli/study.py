"""``designer study``: a Monte Carlo study of a spec under uncertain prices, model efficiencies and workloads.

A thin command: parse the options, make one call into :func:`designer.study.montecarlo.monte_carlo`
on an executor (local cores by default, a Dask cluster with ``--scheduler``), render
(:mod:`designer.report.montecarlo`, :mod:`designer.pictures.montecarlo`), write, set the exit
code: 0 done, 2 bad input, 3 when no scenario has a design that meets the constraints.
"""

from __future__ import annotations

__all__ = ["study_command", "DEFAULT_SAMPLES"]

from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from designer.cli.common import JOBS_OPTION, SCHEDULER_OPTION, SOLVER_OPTION, TIME_LIMIT_OPTION, SolverName
from designer.cli.progress import ProgressBar
from designer.cli.run import err, run
from designer.errors import InputError
from designer.spec import units

DEFAULT_SAMPLES = 64
_NO_DESIGN_EXIT = 3  # as `designer solve` on an infeasible spec


class StudyFormat(str, Enum):
    table = "table"
    json = "json"


def _share(text: str) -> float:
    """``0.9`` or ``90%``."""
    try:
        return units.parse_fraction(text if text.strip().endswith("%") else float(text))
    except (ValueError, units.UnitError) as exc:
        raise InputError(f"--min-feasible: cannot read {text!r}: {exc}") from None


def study_command(
    spec_path: Path = typer.Argument(..., metavar="SPEC", help="The spec to study.", show_default=False),
    vary: Optional[List[str]] = typer.Option(
        None, "--vary", metavar="NAME=DIST",
        help="An uncertain input and its distribution, e.g. gpu_price=normal:15%, "
             "tokens=uniform:-30%..+50%, electricity=triangular:-10%..+5%..+40% (repeatable). Names: gpu_price, "
             "server_price, switch_price, optics_price, cloud_price, electricity, compute_efficiency, "
             "network_efficiency, tokens, deadline; the two efficiencies alone take the model's error spread. "
             "Default: both efficiencies."),
    samples: int = typer.Option(DEFAULT_SAMPLES, "--samples", "-n", min=1, help="Scenarios to draw."),
    seed: int = typer.Option(0, "--seed", help="Seed of the draws: the same seed gives the same study."),
    min_feasible: str = typer.Option("90%", "--min-feasible", metavar="SHARE",
                                     help="Share of scenarios the robust choice must meet the constraints in."),
    output: Optional[str] = typer.Option(None, "-o", "--output", help="Plot of the cost distributions (.png or .svg)."),
    fmt: StudyFormat = typer.Option(StudyFormat.table, "--format", help="table for people, json for scripts."),
    solver: SolverName = SOLVER_OPTION,
    time_limit: Optional[float] = TIME_LIMIT_OPTION,
    jobs: Optional[int] = JOBS_OPTION,
    scheduler: Optional[str] = SCHEDULER_OPTION,
) -> None:
    """How often each design is the cheapest under uncertainty, its cost percentiles, and the robust choice."""
    from designer.cli import atomic
    from designer.report import jsondoc
    from designer.report import montecarlo as report
    from designer.study.distributions import parse_uncertainty
    from designer.study.backends import open_executor
    from designer.study.montecarlo import monte_carlo, unused_inputs

    def body() -> int:
        texts = list(vary or ["compute_efficiency", "network_efficiency"])
        uncertainties = [parse_uncertainty(v) for v in texts]
        share = _share(min_feasible)
        # the output is checked before solves that can take hours
        spec, catalog, picture = atomic.load_spec_for_output(spec_path, output, picture=True)
        read = atomic.spec_inputs(spec_path, spec.catalogs)
        if not vary:
            err("note: no --vary given: varying the model's compute and network efficiencies by their "
                "validation error spread")
        for warning in unused_inputs(spec, uncertainties):
            err(f"warning: {warning}")
        with open_executor(jobs, scheduler) as executor, \
                ProgressBar(f"{samples} scenarios", where=executor.description) as bar:
            result = monte_carlo(spec, catalog, uncertainties, samples=samples, seed=seed, min_feasible_share=share,
                                 solver=solver.value, time_limit_s=time_limit, executor=executor, progress=bar)
        if fmt is StudyFormat.json:
            typer.echo(jsondoc.dumps(report.study_to_json_dict(result)), nl=False)
        else:
            typer.echo(report.render_study_table(result), nl=False)
        failed = report.failed_scenarios(result)
        for s in failed[:5]:
            inputs_text = ", ".join(f"{n}={f:.6g}" for n, f in s.factors) or "no change"
            err(f"warning: scenario {s.index} ({inputs_text}) {s.status}: {s.reason}")
        if len(failed) > 5:
            err(f"warning: {len(failed) - 5} more scenarios failed; the JSON lists every one with its inputs")
        if output is not None and picture is not None:
            from designer.pictures.montecarlo import render_study
            atomic.write_data(output, render_study(result, picture), read)
        return 0 if result.designs else _NO_DESIGN_EXIT

    run(body)
