"""Suggested relaxations are the smallest that work, each checked by solving with it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from designer import planner
from designer.errors import InfeasibleError
from designer.planner.inputs import load_inputs

QUICKSTART = (Path(__file__).resolve().parents[2] / "examples" / "quickstart.yaml").read_text()
TOPOLOGIES = "  topologies: [single_switch, fat_tree, rail_optimized, rail_only]\n"


def _plan(tmp_path, racks: int):
    path = tmp_path / f"racks{racks}.yaml"
    path.write_text(QUICKSTART.replace(TOPOLOGIES, TOPOLOGIES + f"  max_racks: {racks}\n"))
    spec, catalog = load_inputs(path)
    return planner.plan(spec, catalog)


def test_the_suggested_rack_limit_is_the_smallest_that_works(tmp_path):
    # The design with fewest racks as the program counts them lays out in 4; a 2-rack-scale
    # system of 3 racks meets every other constraint, so 3 is the smallest limit that works.
    with pytest.raises(InfeasibleError) as info:
        _plan(tmp_path, 2)
    found = [r for r in info.value.relaxations if "max_racks" in r]
    assert found == ["raise constraints.max_racks from 2 to 3"]
    suggested = int(re.search(r"to (\d+)$", found[0]).group(1))
    design = _plan(tmp_path, suggested)
    status = {c.name: c for c in design.constraints}
    assert status["constraints.max_racks"].value <= suggested
