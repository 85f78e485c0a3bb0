"""``designer bom``, ``diff``, ``explain`` and ``draw``: the commands that read design files.

Thin commands: load the design, make one call into :mod:`designer.design`, :mod:`designer.report`
or :mod:`designer.pictures`, print or write, set the exit code.
"""

from __future__ import annotations

__all__ = ["BomFormat", "DiffFormat", "bom", "diff", "explain", "draw_command"]

from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from designer.cli.run import run
from designer.errors import InputError


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
    html = "html"


def bom(
    design_path: Path = typer.Argument(..., metavar="DESIGN", help="A design file from `designer solve -o`.", show_default=False),
    fmt: BomFormat = typer.Option(BomFormat.github, "--format", "-f", help="Output format."),
    by: Optional[str] = typer.Option(None, "--by", help="`rack`: what goes in each rack."),
) -> None:
    """Print the bill of materials of a design, grouped by category with subtotals."""
    from designer import report
    from designer.design import io as design_io

    def body() -> int:
        if by not in (None, "rack"):
            raise InputError(f"--by must be 'rack', got {by!r}")
        d = design_io.load_design(design_path)
        text = report.render_bom_by_rack(d, fmt.value) if by == "rack" else report.render_bom(d, fmt.value)
        typer.echo(text, nl=False)
        return 0

    run(body)


def diff(
    old: Path = typer.Argument(..., help="The design before.", show_default=False),
    new: Path = typer.Argument(..., help="The design after.", show_default=False),
    fmt: DiffFormat = typer.Option(DiffFormat.table, "--format", "-f", help="Output format."),
) -> None:
    """What changed between two designs. Exit 0 same, 1 differ, 2 bad input."""
    from designer import report
    from designer.design import diff as diff_mod
    from designer.design import io as design_io

    def body() -> int:
        a = design_io.load_design(old)
        b = design_io.load_design(new)
        d = diff_mod.diff_designs(a, b)
        if fmt is DiffFormat.html:
            from designer.report import html

            typer.echo(html.render_diff_html(d), nl=False)
        else:
            typer.echo(report.render_diff(d, fmt.value), nl=False)
        return 0 if d.is_empty else 1

    run(body)


def explain(design_path: Path = typer.Argument(..., metavar="DESIGN", show_default=False)) -> None:
    """Why this design: binding constraints, slack, and the best alternative per fabric and deployment."""
    from designer import report
    from designer.design import io as design_io

    def body() -> int:
        typer.echo(report.render_explain(design_io.load_design(design_path)), nl=False)
        return 0

    run(body)


def draw_command(
    design_path: Path = typer.Argument(..., metavar="DESIGN", help="A design file from `designer solve -o`.",
                                       show_default=False),
    output: Optional[str] = typer.Option(None, "-o", "--output",
                                          help="Picture file: .svg, .png or .dot (default: DOT on stdout)."),
    catalog_files: List[Path] = typer.Option([], "--catalog", "-c", metavar="FILE",
                                             help="User catalog the design was made with (repeatable)."),
    detail: Optional[int] = typer.Option(None, "--detail", min=1,
                                         help="Most boxes per tier before devices are grouped "
                                              "(default 32 for servers and leaves, 16 above)."),
) -> None:
    """Draw a design's fabric by tier (servers, leaf, spine, core), rails coloured; large tiers grouped."""
    from designer.catalog import load as catalog_load
    from designer.cli import atomic
    from designer.design import io as design_io
    from designer.pictures import draw, drawing as drawing_mod, plot

    def body() -> int:
        read = atomic.spec_inputs(design_path, catalog_files, role="the design")
        if output is not None:  # the name as typed: a trailing '/' says it is a folder
            atomic.check_output(output, read)
        fmt = plot.format_of(output) if output is not None else "dot"
        if fmt in plot.IMAGE_FORMATS:
            plot.check_matplotlib()
        d = design_io.load_design(design_path)
        limits = drawing_mod.MAX_BOXES if detail is None else (detail,) * 4
        drawing = draw.draw_design(d, catalog_load.load_catalog(catalog_files), max_boxes=limits)
        for warning in drawing.warnings:
            typer.echo(f"warning: {warning}", err=True)
        data = plot.render_dot(drawing) if fmt == "dot" else plot.render_drawing(drawing, fmt)
        if output is None:
            typer.echo(data, nl=False)
        else:
            atomic.write_data(output, data, read)
            typer.echo(f"{output}: {drawing.subtitle}")
        return 0

    run(body)
