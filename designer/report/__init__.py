"""Renderers: pure functions from results to text (the CLI prints it); one result, many renderings.

One import for the command line; each renderer lives in its own module: :mod:`~designer.report.bom`
(BOM tables, CSV, JSON, racks), :mod:`~designer.report.summary` (summary),
:mod:`~designer.report.diff` (diff), :mod:`~designer.report.explain` (why this design),
:mod:`~designer.report.estimate` (``designer estimate``), :mod:`~designer.report.catalog` (catalog
listings), :mod:`~designer.report.study` (frontier and sweep tables) and :mod:`~designer.report.fmt`
(shared number and table formatting).
"""

from __future__ import annotations

__all__ = [
    "BOM_FORMATS",
    "DIFF_FORMATS",
    "EXPLAIN_FORMATS",
    "RACK_FORMATS",
    "SUMMARY_FORMATS",
    "render_bom",
    "render_bom_by_rack",
    "render_diff",
    "render_explain",
    "render_summary",
]

from designer.report.bom import BOM_FORMATS, RACK_FORMATS, render_bom, render_bom_by_rack
from designer.report.diff import DIFF_FORMATS, render_diff
from designer.report.explain import EXPLAIN_FORMATS, render_explain
from designer.report.summary import SUMMARY_FORMATS, render_summary
