"""The command line: the typer app, every command registered in the order ``--help`` lists them.

Each command group lives in its own module and knows nothing of this one (no import cycles):
:mod:`~designer.cli.spec` (validate, schema, presets), :mod:`~designer.cli.solve` (solve, estimate),
:mod:`~designer.cli.design` (bom, diff, explain, draw), :mod:`~designer.cli.review` (report),
:mod:`~designer.cli.catalog` (catalog list|show), :mod:`~designer.cli.whatif` (frontier, sweep) and
:mod:`~designer.cli.study` (study). A command parses its arguments, makes
one call into the library, renders and sets the exit code (:mod:`~designer.cli.run`); the CLI is
the only part of the package that prints or exits. Exit codes (docs/contract.md): 0 success, 1 designs
differ (``diff``), 2 bad input, 3 infeasible, 4 no answer in time, 5 a cost rise beyond
``diff --fail-on-increase``, 130 interrupted.
"""

from __future__ import annotations

__all__ = ["app", "run_app"]

import sys

import typer

from designer import __version__
from designer.cli import design, interrupt, review, solve, spec, study, whatif
from designer.cli.catalog import catalog_app
from designer.cli.run import state

app = typer.Typer(
    name="designer",
    help="Design GPU training clusters and their networks, and find the cheapest one that does the job.",
    epilog="Commands, exit codes, JSON keys and the design file: docs/contract.md in designer's repository.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion and --show-completion for bash, zsh, fish, PowerShell
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: no rich import at start-up, no colour codes in a pipe
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"designer {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors (for bug reports)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only results, warnings and errors: no "
                                                           "progress bars, no 'ok' lines, no confirmations."),
    no_color: bool = typer.Option(False, "--no-color", help="No colour, even on a terminal (also: the NO_COLOR "
                                                            "environment variable)."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    state["debug"] = debug
    state["quiet"] = quiet
    state["color"] = not no_color


app.command()(spec.validate)
app.command()(spec.schema)
app.command()(spec.presets)
app.command()(solve.solve)
app.command()(solve.estimate)
app.command()(design.bom)
app.command()(design.diff)
app.command()(design.explain)
app.command("report")(review.report_command)
app.add_typer(catalog_app, name="catalog", help="What hardware and prices are known, with source and date.")
app.command("draw")(design.draw_command)
app.command("frontier")(whatif.frontier_command)
app.command("sweep")(whatif.sweep_command)
app.command("study")(study.study_command)


def run_app() -> None:
    """Run the app as the console script does (:func:`designer.cli.main` installs the signal
    handlers first): a signal anywhere, even outside a command's body, is one line and its exit code."""
    try:
        app()
    except KeyboardInterrupt:
        interrupt.finished()
        interrupt.kill_started()
        print(interrupt.message(), file=sys.stderr)
        sys.exit(interrupt.exit_code())
