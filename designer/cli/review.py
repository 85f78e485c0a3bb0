"""``designer report``: the design review page, one self-contained HTML file for the people who approve it.

A thin command: load the design and the catalogs, make one call into
:mod:`designer.report.html`, write the page (or print it), print the warnings met.
"""

from __future__ import annotations

__all__ = ["report_command"]

from pathlib import Path
from typing import List, Optional

import typer

from designer.cli.design import TRUST_OPTION, load
from designer.cli.run import err, info, one_line, run, show


def report_command(
    design_path: Path = typer.Argument(..., metavar="DESIGN", help="A design file from `designer solve -o`.",
                                       show_default=False),
    output: Optional[str] = typer.Option(None, "-o", "--output", metavar="FILE",
                                         help="The page to write, e.g. review.html (default: HTML on stdout)."),
    catalog_files: List[Path] = typer.Option([], "--catalog", "-c", metavar="FILE",
                                             help="User catalog the design was made with (repeatable)."),
    trust: bool = TRUST_OPTION,
) -> None:
    """Write the design review page: decision, cost, workloads, fabric, BOM, alternatives, assumptions.

    One HTML file with everything inline (styles, script, SVG charts and the fabric drawing); it
    opens without a network and prints to PDF.
    """
    from designer.catalog import load as catalog_load
    from designer.cli import atomic
    from designer.report import html

    def body() -> int:
        read = atomic.spec_inputs(design_path, catalog_files, role="the design")
        if output is not None:
            atomic.check_output(output, read)
        design = load(design_path, trust)
        page = html.render_review(design, catalog_load.load_catalog(catalog_files))
        for warning in page.warnings:
            err(f"warning: {one_line(warning)}")
        if output is None:
            show(page.html)
        else:
            atomic.write_atomic(output, page.html, read)
            info(f"{output}: design review of {design.spec_name} ({len(design.bom)} BOM lines, "
                 f"total {design.cost.total_usd:,.2f} USD)")
        return 0

    run(body)
