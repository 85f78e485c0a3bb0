"""``designer bom``, ``diff``, ``explain`` and ``draw``: the commands that read design files.

Thin commands: load the design, make one call into :mod:`designer.design`, :mod:`designer.report`
or :mod:`designer.pictures`, print or write, set the exit code.
"""

from __future__ import annotations

__all__ = ["BomFormat", "DiffFormat", "EXIT_COST_INCREASE", "TRUST_OPTION", "load", "bom", "diff", "explain",
           "draw_command"]

from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer

from designer.cli.run import err, info, one_line, run, show
from designer.errors import InputError, Location


TRUST_OPTION = typer.Option(False, "--trust", help="Read a design file whose totals or content digest do not "
                                                  "match (edited by hand) with a warning instead of an error.")


def load(path: Path, trust: bool = False):
    """A design file read and verified (:mod:`designer.design.verify`); what ``--trust`` lets
    through, and a file without a content digest, is printed as a warning."""
    from designer.design import io as design_io

    return design_io.load_design(path, trust=trust, warn=_warn)


def _warn(problem: InputError) -> None:
    err(f"warning: {one_line(problem.located())}")


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
    check: bool = typer.Option(False, "--check", help="Check that every optic fits the cage it plugs into and "
                                                      "every cable's ends agree (exit 1 on a mismatch); reads a "
                                                      "hand-edited file as --trust does."),
    catalog_files: List[Path] = typer.Option([], "--catalog", "-c", metavar="FILE",
                                             help="User catalog the design was made with (repeatable; --check)."),
    trust: bool = TRUST_OPTION,
) -> None:
    """Print the bill of materials of a design, grouped by category with subtotals; with --check,
    verify what fits where instead (exit 0 all fit, 1 a mismatch, 2 bad input)."""
    from designer import report

    def body() -> int:
        if by not in (None, "rack"):
            raise InputError(f"--by must be 'rack', got {by!r}")
        if check:
            return _check_bom(design_path, catalog_files)
        d = load(design_path, trust)
        text = report.render_bom_by_rack(d, fmt.value) if by == "rack" else report.render_bom(d, fmt.value)
        show(text)
        return 0

    run(body)


def _check_bom(path: Path, catalog_files: List[Path]) -> int:
    """``bom --check``: each mismatch on stderr, located at its line's key; exit 1 if any."""
    from designer.catalog import load as catalog_load
    from designer.errors import DesignFileError
    from designer.spec import yamlio
    from designer.topology.bomcheck import check_bom

    d = load(path, True)
    doc = yamlio.load_yaml_text(yamlio.read_text(path), str(path))
    found = check_bom(d.bom, catalog_load.load_catalog(catalog_files))
    for m in found.mismatches:
        line = d.bom[m.index]
        problem = DesignFileError(f"bom[{m.index}].{m.key} ({line.category} {line.sku}, {line.role}): {m.message}",
                                  doc.locate(("bom", m.index, m.key)))
        err(f"error: {one_line(problem.located())}")
    unstated = f"; {found.unstated} state no fit and were not checked" if found.unstated else ""
    verdict = f"{len(found.mismatches)} mismatches" if found.mismatches else "every part fits"
    info(f"{path}: {found.checked} transceiver and cable lines checked, {verdict}{unstated}")
    return EXIT_BOM_MISMATCH if found.mismatches else 0


EXIT_BOM_MISMATCH = 1  # bom --check: a transceiver or cable line does not fit where it says
EXIT_COST_INCREASE = 5  # diff --fail-on-increase: the total cost rose more than allowed


def _baseline(ref: str, path: Path, trust: bool):
    """The design file at ``path`` as committed in git at ``ref`` (:func:`designer.design.io.load_committed_design`)."""
    from designer.design import io as design_io

    return design_io.load_committed_design(ref, path, trust=trust, warn=_warn)


def diff(
    designs: List[Path] = typer.Argument(..., metavar="OLD NEW | DESIGN", show_default=False,
                                         help="The design before and the design after; with --baseline, "
                                              "only the design after."),
    fmt: DiffFormat = typer.Option(DiffFormat.table, "--format", "-f", help="Output format."),
    baseline: Optional[str] = typer.Option(None, "--baseline", metavar="GITREF",
                                           help="Compare DESIGN with the same file as committed at GITREF "
                                                "(a branch, tag or commit), e.g. --baseline main."),
    fail_on_increase: Optional[str] = typer.Option(
        None, "--fail-on-increase", metavar="PCT|$X",
        help=f"Exit {EXIT_COST_INCREASE} when the total cost rose by more than this: 5% of the old total, or $50k."),
    trust: bool = TRUST_OPTION,
) -> None:
    """What changed between two designs (+ added, ~ changed, - removed).

    Exit 0 same, 1 differ, 2 bad input, 5 the total cost rose more than --fail-on-increase.
    """
    from designer import report
    from designer.design import diff as diff_mod
    from designer.report import fmt as fmt_mod

    def body() -> int:
        limit = None
        if fail_on_increase is not None:
            try:
                limit = diff_mod.parse_increase_limit(fail_on_increase)
            except ValueError as exc:
                raise InputError(str(exc)) from None
        if baseline is not None:
            if len(designs) != 1:
                raise InputError("with --baseline, give one design file: the one to compare with its committed version")
            a, b = _baseline(baseline, designs[0], trust), load(designs[0], trust)
        else:
            if len(designs) != 2:
                raise InputError("give two design files, OLD and NEW (or one with --baseline GITREF)")
            a, b = load(designs[0], trust), load(designs[1], trust)
        d = diff_mod.diff_designs(a, b)
        if fmt is DiffFormat.html:
            from designer.report import html

            show(html.render_diff_html(d))
        else:
            show(report.render_diff(d, fmt.value), diff_colours=fmt is DiffFormat.table)
        if limit is not None and limit.exceeded_by(d):
            t = d.total
            pct = "" if t.delta_pct is None else f" ({t.delta_pct:+.1f}%)"
            err(f"cost increase: the total rose {fmt_mod.usd(t.delta_usd)}{pct}, "
                f"more than --fail-on-increase {limit.text}")
            return EXIT_COST_INCREASE
        return 0 if d.is_empty else 1

    run(body)


def explain(design_path: Path = typer.Argument(..., metavar="DESIGN", show_default=False),
            trust: bool = TRUST_OPTION) -> None:
    """Why this design: binding constraints, slack, and the best alternative per fabric and deployment."""
    from designer import report

    def body() -> int:
        show(report.render_explain(load(design_path, trust)))
        return 0

    run(body)


def _draw_schedule(design_path: Path, output: Optional[str], fmt: str, read, trust: bool) -> int:
    """``draw --schedule``: the Gantt chart of the design's schedule to an image file."""
    from designer.cli import atomic
    from designer.pictures import gantt

    if output is None or fmt not in ("png", "svg"):
        raise InputError("--schedule draws a picture: give -o FILE.png or -o FILE.svg")
    d = load(design_path, trust)
    atomic.write_data(output, gantt.render_schedule(d, fmt), read)
    typer.echo(f"{output}: schedule of {len(d.workloads)} workloads on {d.system.gpus:,} GPUs")
    return 0


def draw_command(
    design_path: Path = typer.Argument(..., metavar="DESIGN", help="A design file from `designer solve -o`.",
                                       show_default=False),
    output: Optional[str] = typer.Option(None, "-o", "--output",
                                          help="Picture file: .svg, .png or .dot; or the whole fabric graph as "
                                               ".graphml or .json (node-link). Default: DOT on stdout."),
    fmt: Optional[str] = typer.Option(None, "--format", "-f", metavar="FORMAT",
                                      help="dot, svg, png, graphml or json, whatever the file's name "
                                           "(without -o: what goes to stdout)."),
    catalog_files: List[Path] = typer.Option([], "--catalog", "-c", metavar="FILE",
                                             help="User catalog the design was made with (repeatable)."),
    detail: Optional[int] = typer.Option(None, "--detail", min=1,
                                         help="Most boxes per tier before devices are grouped "
                                              "(default 32 for servers and leaves, 16 above)."),
    schedule: bool = typer.Option(False, "--schedule",
                                  help="Draw the schedule instead, as a Gantt chart (-o .png or .svg)."),
    trust: bool = TRUST_OPTION,
) -> None:
    """Draw a design's fabric by tier (servers, leaf, spine, core), rails coloured; large tiers grouped.
    With --schedule, its workloads' schedule as a Gantt chart."""
    from designer.catalog import load as catalog_load
    from designer.cli import atomic
    from designer.pictures import draw, drawing as drawing_mod, export, plot

    def body() -> int:
        read = atomic.spec_inputs(design_path, catalog_files, role="the design")
        if output is not None:  # the name as typed: a trailing '/' says it is a folder
            atomic.check_output(output, read)
        kinds = (*plot.FORMATS, *export.GRAPH_FORMATS)
        if fmt is not None:
            kind = fmt.lower().lstrip(".")
            if kind not in kinds:
                raise InputError(f"unknown format '{fmt}'; use one of {', '.join(kinds)}", Location("--format"))
        else:
            kind = plot.format_of(output, kinds) if output is not None else "dot"
        if kind in plot.IMAGE_FORMATS:
            plot.check_matplotlib()
        if schedule:
            return _draw_schedule(design_path, output, kind, read, trust)
        d = load(design_path, trust)
        if kind in export.GRAPH_FORMATS:
            from designer.report import jsondoc

            cat = catalog_load.load_catalog(catalog_files)
            graph = export.fabric_graph(d, cat)
            if d.catalog_digest and cat.digest and d.catalog_digest != cat.digest:
                err("warning: the catalog differs from the one the design was made with")
            text = export.render_graphml(graph) if kind == "graphml" else jsondoc.dumps(export.node_link_data(graph))
            if output is None:
                typer.echo(text, nl=False)
            else:
                atomic.write_atomic(output, text, read)
                info(f"{output}: {graph.number_of_nodes():,} devices, {graph.number_of_edges():,} edges "
                     f"({sum(int(e.get('links', 1)) for _, _, e in graph.edges(data=True)):,} links)")
            return 0
        limits = drawing_mod.MAX_BOXES if detail is None else (detail,) * 4
        drawing = draw.draw_design(d, catalog_load.load_catalog(catalog_files), max_boxes=limits)
        for warning in drawing.warnings:
            err(f"warning: {one_line(warning)}")
        data = plot.render_dot(drawing) if kind == "dot" else plot.render_drawing(drawing, kind)
        if output is None:
            typer.echo(data, nl=False)
        else:
            atomic.write_data(output, data, read)
            info(f"{output}: {drawing.subtitle}")
        return 0

    run(body)
