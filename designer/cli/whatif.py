"""``designer frontier`` and ``designer sweep``: what-if studies over targets and prices.

Thin commands: parse the options, make one call into :mod:`designer.study`, render
(:mod:`designer.report.study`, :mod:`designer.pictures.plot`), write, set the exit code (0 done,
2 bad input, as for every command). The study (and with it the solver) loads only when a command
runs.
"""

from __future__ import annotations

__all__ = ["frontier_command", "sweep_command", "parse_range", "parse_variation", "MAX_POINTS"]

import math
from pathlib import Path
from typing import TYPE_CHECKING, Callable, List, Optional

import typer

from designer.cli.common import JOBS_OPTION, SCHEDULER_OPTION, SOLVER_OPTION, TIME_LIMIT_OPTION, SolverName
from designer.cli.progress import ProgressBar
from designer.cli.run import err, run, show
from designer.errors import InputError
from designer.spec import units

if TYPE_CHECKING:  # the design package loads YAML: not at start-up
    from designer.design.study import Variation

_DEFAULT_UTILIZATION = "0.5:0.95:0.05"
MAX_POINTS = 200  # most values in one range: each is a full solve


def _fraction(text: str) -> float:
    """``0.8`` or ``80%``."""
    return units.parse_fraction(text if text.strip().endswith("%") else float(text))


# ---------------------------------------------------------------- option parsing


def parse_range(text: str, parse: Callable[[str], float] = float, *, what: str = "range") -> tuple[float, ...]:
    """``"0.5:0.95:0.05"`` (start:stop:step, stop included) or ``"0.6,0.7,0.9"`` as values.

    Args:
        text: The range.
        parse: Parser of one value (``units.parse_money`` for budgets).
        what: The option's name, for error messages.

    Raises:
        InputError: Malformed, empty, decreasing, or more than :data:`MAX_POINTS` values.

    Examples:
        >>> parse_range("0.5:0.7:0.1")
        (0.5, 0.6, 0.7)
        >>> parse_range("2,1")
        (1.0, 2.0)
    """
    def one(item: str) -> float:
        try:
            value = float(parse(item.strip()))
        except (ValueError, units.UnitError) as exc:
            raise InputError(f"{what}: cannot read {item.strip()!r}: {exc}") from None
        if not math.isfinite(value):
            raise InputError(f"{what}: {item.strip()!r} is not a finite number")
        return value

    if ":" in text:
        parts = text.split(":")
        if len(parts) != 3:
            raise InputError(f"{what}: expected start:stop:step, e.g. 0.5:0.95:0.05; got {text!r}")
        lo, hi, step = (one(p) for p in parts)
        if step <= 0 or hi < lo:
            raise InputError(f"{what}: need step > 0 and stop >= start; got {text!r}")
        count = math.floor((hi - lo) / step + 1e-9) + 1
        values = [round(lo + i * step, 12) for i in range(min(count, MAX_POINTS + 1))]
    else:
        values = sorted({one(p) for p in text.split(",") if p.strip()})
    if not values:
        raise InputError(f"{what}: no values in {text!r}")
    if len(values) > MAX_POINTS:
        raise InputError(f"{what}: {len(values)} values; at most {MAX_POINTS} (each is a full solve)")
    return tuple(values)


def parse_variation(text: str) -> "Variation":
    """``"gpu_price=-30%..+30%"`` (or ``uniform:-30%..+30%``, as ``designer study`` writes a range)
    as a :class:`Variation`. Any input a study varies may be swept
    (:data:`designer.design.montecarlo.UNCERTAIN`); a triangular distribution sweeps its range.

    Raises:
        InputError: Unknown input, malformed range, a change of -100% or less, or a distribution
            without a range (normal, lognormal).

    Examples:
        >>> parse_variation("electricity=-50%..+100%")
        Variation(name='electricity', low=-0.5, high=1.0)
        >>> parse_variation("tokens=uniform:-10%..+20%")
        Variation(name='tokens', low=-0.1, high=0.2)
    """
    from designer.design.montecarlo import UNCERTAIN
    from designer.design.study import Variation
    from designer.study.distributions import parse_change, parse_distribution

    name, sep, span = text.partition("=")
    name, span = name.strip(), span.strip()
    if not sep or name not in UNCERTAIN:
        known = ", ".join(UNCERTAIN)
        raise InputError(f"--vary {text!r}: expected NAME=LOW..HIGH with NAME one of {known}")
    what = f"--vary {name}"
    if ":" not in span:  # the sweep's own spelling: a bare range, either way round
        low_text, dots, high_text = span.partition("..")
        if not dots:
            raise InputError(f"{what}: expected a range such as -30%..+30%, got {span!r}")
        a, b = parse_change(low_text, what), parse_change(high_text, what)
        return Variation(name, min(a, b), max(a, b))
    dist = parse_distribution(span, what)
    if dist.kind not in ("uniform", "triangular"):
        raise InputError(f"{what}={span}: a sweep needs a range such as -30%..+30%; "
                         f"{dist.kind} distributions are for `designer study`")
    return Variation(name, dist.low, dist.high)


# ---------------------------------------------------------------- commands


def frontier_command(
    spec_path: Path = typer.Argument(..., metavar="SPEC", help="The spec to vary.", show_default=False),
    output: Optional[str] = typer.Option(None, "-o", "--output", help="Plot file (.png or .svg)."),
    utilization: Optional[str] = typer.Option(None, "--utilization", metavar="START:STOP:STEP",
                                              help=f"Utilization targets (default {_DEFAULT_UTILIZATION})."),
    deadline_scale: Optional[str] = typer.Option(None, "--deadline-scale", metavar="START:STOP:STEP",
                                                 help="Scale every deadline, e.g. 0.5:2:0.25."),
    budget: Optional[str] = typer.Option(None, "--budget", metavar="START:STOP:STEP",
                                         help="Total budgets, e.g. $5M:$30M:$5M."),
    solver: SolverName = SOLVER_OPTION,
    time_limit: Optional[float] = TIME_LIMIT_OPTION,
    jobs: Optional[int] = JOBS_OPTION,
    scheduler: Optional[str] = SCHEDULER_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of the table."),
) -> None:
    """Total cost against a target (utilization, deadlines or budget), per fabric and deployment class."""
    from designer import study
    from designer.cli import atomic
    from designer.pictures import plot
    from designer.report import jsondoc, study as report_study
    from designer.study.backends import open_executor

    def body() -> int:
        given = [(t, v) for t, v in (("utilization", utilization), ("deadline_scale", deadline_scale),
                                     ("budget", budget)) if v is not None]
        if len(given) > 1:
            raise InputError("give one of --utilization, --deadline-scale, --budget")
        target, text = given[0] if given else ("utilization", _DEFAULT_UTILIZATION)
        option = "--" + target.replace("_", "-")
        parse = {"utilization": _fraction, "budget": units.parse_money}.get(target, float)
        values = parse_range(text, parse, what=option)
        spec, catalog, fmt = atomic.load_spec_for_output(spec_path, output, picture=True)
        for v in values:  # bad values fail before any solve
            study.with_target(spec, target, v)
        read = atomic.spec_inputs(spec_path, spec.catalogs)
        with open_executor(jobs, scheduler) as executor, \
                ProgressBar(f"solving {len(values)} points", where=executor.description) as bar:
            result = study.frontier(spec, catalog, target, values, solver=solver.value, time_limit_s=time_limit,
                                    executor=executor, progress=bar)
        if as_json:
            typer.echo(jsondoc.dumps(report_study.frontier_to_json_dict(result)), nl=False)
        else:
            show(report_study.render_frontier_table(result))
        if output is not None and fmt is not None:
            atomic.write_data(output, plot.render_frontier(result, fmt, name=spec.name), read)
        return 0

    run(body)


def sweep_command(
    spec_path: Path = typer.Argument(..., metavar="SPEC", help="The spec to solve.", show_default=False),
    vary: List[str] = typer.Option(..., "--vary", metavar="NAME=LOW..HIGH",
                                   help="An input to vary, e.g. gpu_price=-30%..+30% (repeatable). Names: "
                                        "gpu_price, server_price, switch_price, optics_price, cloud_price, "
                                        "electricity, compute_efficiency, network_efficiency, tokens, deadline."),
    steps: int = typer.Option(5, "--steps", min=2, max=50, help="Grid values per price, ends included."),
    solver: SolverName = SOLVER_OPTION,
    time_limit: Optional[float] = TIME_LIMIT_OPTION,
    jobs: Optional[int] = JOBS_OPTION,
    scheduler: Optional[str] = SCHEDULER_OPTION,
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of the tables."),
) -> None:
    """How the chosen design depends on prices and other inputs: re-solve across each range and locate every change (to 1%)."""
    from designer import study
    from designer.planner import inputs
    from designer.report import jsondoc, study as report_study
    from designer.study.backends import open_executor

    def body() -> int:
        variations = [parse_variation(v) for v in vary]
        spec, catalog = inputs.load_inputs(spec_path)
        for var in variations:
            why = study.unused_variation(spec, var.name)
            if why:
                err(f"warning: {var.name}: {why}, so its changes cannot move the decision")
        with open_executor(jobs, scheduler) as executor, ProgressBar("solving", where=executor.description) as bar:
            result = study.sweep(spec, catalog, variations, steps=steps, solver=solver.value,
                                 time_limit_s=time_limit, executor=executor, progress=bar)
        if as_json:
            typer.echo(jsondoc.dumps(report_study.sweep_to_json_dict(result)), nl=False)
        else:
            show(report_study.render_sweep_table(result))
        return 0

    run(body)
