"""The results: a design and its file, its bill of materials, the diff of two designs, what-if studies.

Modules: :mod:`~designer.design.model` (the :class:`Design` dataclasses), :mod:`~designer.design.io`
(the design file and the JSON document), :mod:`~designer.design.bom` (bill-of-materials lines,
totals, racks, output rounding), :mod:`~designer.design.diff` (what changed, computed on data) and
:mod:`~designer.design.study` (frontier and sweep results). Renderers live in :mod:`designer.report`.
"""

from __future__ import annotations

from designer.design.bom import BomLine
from designer.design.diff import DesignDiff, diff_designs
from designer.design.io import as_written, design_to_json_dict, dump_design, load_design, parse_design
from designer.design.model import (
    SCHEMA_VERSION, Alternative, Breakdown, ConstraintStatus, CostBreakdown, CostLine, Design, FacilityAssumptions,
    PriceBookUsed, SoftwareUsed, SolverInfo,
    SystemChoice, WorkloadResult,
)

__all__ = [
    "SCHEMA_VERSION",
    "Design",
    "SystemChoice",
    "CostBreakdown",
    "CostLine",
    "Breakdown",
    "WorkloadResult",
    "SoftwareUsed",
    "Alternative",
    "ConstraintStatus",
    "SolverInfo",
    "FacilityAssumptions",
    "PriceBookUsed",
    "BomLine",
    "DesignDiff",
    "as_written",
    "design_to_json_dict",
    "diff_designs",
    "dump_design",
    "load_design",
    "parse_design",
]
