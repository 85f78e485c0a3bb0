"""Renderers of designs and diffs: pure functions that return text (the CLI prints it).

One import for the command line; each renderer lives in its own module:
``report_bom`` (BOM tables, CSV, JSON, racks), ``report_summary`` (summary), ``report_diff`` (diff),
``report_explain`` (why this design), and ``report_fmt`` (shared number and table formatting).
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

from designer.report_bom import BOM_FORMATS, RACK_FORMATS, render_bom, render_bom_by_rack
from designer.report_diff import DIFF_FORMATS, render_diff
from designer.report_explain import EXPLAIN_FORMATS, render_explain
from designer.report_summary import SUMMARY_FORMATS, render_summary
