"""``designer solve --top N``: the ranked designs in the alternatives, in every output format."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from designer.cli import app

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
