"""A fabric of one switch tier is not labelled with an oversubscription it cannot have."""

from __future__ import annotations

from typer.testing import CliRunner

from designer.cli import app
from designer.report.fmt import fabric_shape
from tiny_spec import TINY


def test_one_tier_has_no_ratio_and_two_tiers_keep_theirs():
    assert fabric_shape(1, 2.0) == "1 switch tier, non-blocking (no uplinks at this size)"
    assert fabric_shape(1, 1.0) == "1 switch tier, oversubscription 1:1"
    assert fabric_shape(3, 3.0) == "3 switch tiers, oversubscription 3:1"


def test_a_fat_tree_on_one_switch_is_not_called_2_to_1(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(TINY.replace("topologies: [single_switch]", "topologies: [fat_tree]\n  oversubscription: [2]"))
    out = CliRunner().invoke(app, ["solve", str(spec)]).stdout
    (row,) = [l for l in out.splitlines() if l.startswith("  fabric ")]
    assert row.split(None, 1)[1] == "infiniband, fat_tree, 1 switch tier, non-blocking (no uplinks at this size)"
