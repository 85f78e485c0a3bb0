"""The command line: parse arguments, make one call into the library, render, exit.

This is the only module that prints or exits. Exit codes (DESIGN.md): 0 success, 1 designs differ
(``diff``), 2 bad input, 3 infeasible, 4 no answer in time, 130 interrupted.
"""

from __future__ import annotations

__all__ = ["app", "main"]

import json
import sys
from enum import Enum
from pathlib import Path
from typing import Callable, List, Optional

import typer

from designer import __version__
from designer.cli_common import SOLVER_OPTION, TIME_LIMIT_OPTION, SolverName
from designer.errors import DesignerError, InfeasibleError, InputError

app = typer.Typer(
    name="designer",
    help="Design GPU training clusters and their networks, and find the cheapest one that does the job.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

_state = {"debug": False}


def _err(text: str) -> None:
    typer.echo(text, err=True)


_MAX_MESSAGE = 1000  # characters; a message quoting a huge input value is cut here


def _one_line(text: str) -> str:
    """An error message as one line (DESIGN.md): line breaks and control characters that a
    message quotes from the input are escaped, and an overlong message is cut."""
    out = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
    return out if len(out) <= _MAX_MESSAGE else out[:_MAX_MESSAGE] + "..."


def _run(action: Callable[[], int | None]) -> None:
    """Run one command body, turning every failure into a one-line message and an exit code."""
    try:
        code = action() or 0
    except typer.Exit:
        raise
    except InfeasibleError as exc:
        if _state["debug"]:
            raise
        _err(f"infeasible: {exc.message}")
        for reason in exc.reasons:
            _err(f"  - {reason}")
        if exc.relaxations:
            _err("to make it feasible, any one of:")
            for relax in exc.relaxations:
                _err(f"  - {relax}")
        code = exc.exit_code
    except InputError as exc:
        if _state["debug"]:
            raise
        _err(f"error: {_one_line(exc.located())}")
        code = exc.exit_code
    except DesignerError as exc:
        if _state["debug"]:
            raise
        _err(f"error: {_one_line(str(exc))}")
        code = exc.exit_code
    except KeyboardInterrupt:
        _err("interrupted; no output was written")
        code = 130
    except MemoryError:
        _err("error: out of memory; the input is too large")
        code = 2
    except Exception as exc:  # noqa: BLE001 - the contract is "never a traceback"
        if _state["debug"]:
            raise
        _err(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback; please report it)")
        code = 70
    raise typer.Exit(code)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"designer {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors (for bug reports)."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    _state["debug"] = debug


class SolveFormat(str, Enum):
    table = "table"
    yaml = "yaml"
    json = "json"
    markdown = "markdown"


class BomFormat(str, Enum):
    github = "github"
    markdown = "markdown"
    csv = "csv"
    json = "json"
    plain = "plain"


class DiffFormat(str, Enum):
    table = "table"
    markdown = "markdown"
    json = "json"


@app.command()
def validate(specs: List[Path] = typer.Argument(..., help="Spec files to check.", show_default=False)) -> None:
    """Check specs (and the catalogs they name); errors as FILE:LINE:COL: message. Exit 0 valid, 2 invalid."""
    from designer import inputs

    def body() -> int:
        bad = 0
        for path in specs:
            try:
                inputs.load_inputs(path)
            except InputError as exc:
                _err(f"error: {_one_line(exc.located())}")
                bad += 1
            else:
                typer.echo(f"{path}: ok")
        return 2 if bad else 0

    _run(body)


@app.command()
def schema() -> None:
    """Print the JSON Schema of the spec (for editor completion and validation)."""
    from designer import spec

    _run(lambda: typer.echo(json.dumps(spec.spec_json_schema(), indent=2, sort_keys=True)))


@app.command()
def solve(
    spec_path: Path = typer.Argument(..., metavar="SPEC", help="The spec to solve.", show_default=False),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write the design file here (YAML)."),
    fmt: SolveFormat = typer.Option(SolveFormat.table, "--format", "-f", help="What to print."),
    solver: SolverName = SOLVER_OPTION,
    time_limit: Optional[float] = TIME_LIMIT_OPTION,
) -> None:
    """Find the cheapest design meeting every constraint. Exit 0 solved, 2 bad input, 3 infeasible, 4 no answer in time."""
    from designer import atomic, design as design_mod, inputs, planner, report

    def body() -> int:
        spec, catalog = inputs.load_inputs(spec_path)
        if output is not None:
            atomic.check_writable(output)  # before the solve, which can take a while
        result = planner.plan(spec, catalog, solver=solver.value, time_limit_s=time_limit)
        if output is not None:
            atomic.write_atomic(output, design_mod.dump_design(result))
        for warning in result.warnings:
            _err(f"warning: {warning}")
        if fmt is SolveFormat.json:
            typer.echo(json.dumps(design_mod.design_to_json_dict(result), indent=2, sort_keys=False))
        elif fmt is SolveFormat.yaml:
            typer.echo(design_mod.dump_design(result), nl=False)
        else:
            typer.echo(report.render_summary(result, fmt.value), nl=False)
        return 0

    _run(body)


@app.command()
def estimate(
    spec_path: Path = typer.Argument(..., metavar="SPEC", help="A spec whose `system` is pinned.", show_default=False),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (keys per DESIGN.md)."),
) -> None:
    """Predict step time, utilization and time to train on the system pinned in the spec (no optimisation)."""
    from designer import inputs, planner, report_estimate

    def body() -> int:
        spec, catalog = inputs.load_inputs(spec_path)
        result = planner.estimate(spec, catalog)
        if as_json:
            typer.echo(json.dumps(report_estimate.estimate_to_json_dict(result), indent=2))
        else:
            typer.echo(report_estimate.render_estimate(result), nl=False)
        return 0

    _run(body)


@app.command()
def bom(
    design_path: Path = typer.Argument(..., metavar="DESIGN", help="A design file from `designer solve -o`.", show_default=False),
    fmt: BomFormat = typer.Option(BomFormat.github, "--format", "-f", help="Output format."),
    by: Optional[str] = typer.Option(None, "--by", help="`rack`: what goes in each rack."),
) -> None:
    """Print the bill of materials of a design, grouped by category with subtotals."""
    from designer import design as design_mod, report

    def body() -> int:
        if by not in (None, "rack"):
            raise InputError(f"--by must be 'rack', got {by!r}")
        d = design_mod.load_design(design_path)
        text = report.render_bom_by_rack(d, fmt.value) if by == "rack" else report.render_bom(d, fmt.value)
        typer.echo(text, nl=False)
        return 0

    _run(body)


@app.command()
def diff(
    old: Path = typer.Argument(..., help="The design before.", show_default=False),
    new: Path = typer.Argument(..., help="The design after.", show_default=False),
    fmt: DiffFormat = typer.Option(DiffFormat.table, "--format", "-f", help="Output format."),
) -> None:
    """What changed between two designs. Exit 0 same, 1 differ, 2 bad input."""
    from designer import design as design_mod, diff as diff_mod, report

    def body() -> int:
        a = design_mod.load_design(old)
        b = design_mod.load_design(new)
        d = diff_mod.diff_designs(a, b)
        typer.echo(report.render_diff(d, fmt.value), nl=False)
        return 0 if d.is_empty else 1

    _run(body)


@app.command()
def explain(design_path: Path = typer.Argument(..., metavar="DESIGN", show_default=False)) -> None:
    """Why this design: binding constraints, slack, and the best alternative per fabric and deployment."""
    from designer import design as design_mod, report

    def body() -> int:
        typer.echo(report.render_explain(design_mod.load_design(design_path)), nl=False)
        return 0

    _run(body)


def _add_subcommands() -> None:
    try:
        from designer.cli_catalog import catalog_app
    except ImportError:  # pragma: no cover - only while the package is incomplete
        return
    app.add_typer(catalog_app, name="catalog", help="What hardware and prices are known, with source and date.")
    from designer.cli_whatif import register as register_whatif

    register_whatif(app)


_add_subcommands()


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    except KeyboardInterrupt:
        _err("interrupted; no output was written")
        sys.exit(130)
