"""``designer solve --top N``: the ranked designs in the alternatives, in every output format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from designer import planner
from designer.cli import app
from designer.design import dump_design
from designer.planner.inputs import load_inputs
from designer.spec.choices import Deployment

RUNNER = CliRunner()
QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart.yaml"


def test_top_in_json_and_the_table():
    out = RUNNER.invoke(app, ["solve", str(QUICKSTART), "--top", "3", "--format", "json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    ranked = [a for a in doc["alternatives"] if a["label"].startswith("rank=")]
    assert [a["label"] for a in ranked] == ["rank=1", "rank=2", "rank=3"]
    assert ranked[0]["reason"] == "chosen" and ranked[0]["delta_usd"] == 0
    assert ranked[0]["total_usd"] == doc["cost"]["total_usd"]
    table = RUNNER.invoke(app, ["solve", str(QUICKSTART), "--top", "3"])
    assert table.exit_code == 0 and "rank=3" in table.stdout


def test_top_below_one_is_refused_with_a_located_message():
    out = RUNNER.invoke(app, ["solve", str(QUICKSTART), "--top", "0"])
    assert out.exit_code == 2
    assert "--top" in out.output and "Traceback" not in out.output


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("example", ["finetune-small", "moe-rack-scale"])
def test_each_ranked_total_is_that_designs_bill_of_materials_and_costs(tmp_path, example):
    # Each rank is the best design of its kind (server, fabric, topology; or the cloud alone):
    # solved over that kind's candidates only, its design costs what the ranking lists, and
    # `designer bom` on that design totals the capex the design holds.
    spec_path = EXAMPLES / f"{example}.yaml"
    out = RUNNER.invoke(app, ["solve", str(spec_path), "--top", "3", "--format", "json"])
    assert out.exit_code == 0, out.output
    ranked = [a for a in json.loads(out.stdout)["alternatives"] if a["label"].startswith("rank=")]
    assert 2 <= len(ranked) <= 3
    spec, catalog = load_inputs(spec_path)
    cloud_ranked = False
    for a in ranked:
        if a["topology"] == "cloud":
            def keep(c):
                return c.deployment is Deployment.CLOUD
        else:
            kind = (a["server"], a["fabric"], a["topology"])

            def keep(c, kind=kind, cloud=not cloud_ranked):
                return (c.server, c.fabric, c.topology) == kind or (cloud and c.deployment is Deployment.CLOUD)
        cloud_ranked = cloud_ranked or a["topology"] == "cloud"
        design = planner.plan(spec, catalog, keep=keep, explain_design=False)
        assert design.cost.total_usd == pytest.approx(a["total_usd"], rel=1e-9, abs=0.01), a["label"]
        path = tmp_path / f"{a['label']}.yaml"
        path.write_text(dump_design(design))
        bom = RUNNER.invoke(app, ["bom", str(path), "--format", "json"])
        assert bom.exit_code == 0, bom.output
        totals = json.loads(bom.stdout)["totals"]
        assert totals["capex_usd"] == pytest.approx(design.cost.capex_usd, rel=1e-9, abs=0.01), a["label"]
