"""`designer bom --check`: exit 0 when every optic and cable fits where its line says, 1 with one
located message per mismatch, 2 on bad input; `bom --format json` carries what fits where."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from designer.cli import app
from tiny_spec import TINY

RUNNER = CliRunner()


def run(*args):
    return RUNNER.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def design(tmp_path_factory):
    """TINY on its cheapest system: a DGX A100 on one QM8700, a QSFP56 DAC per ConnectX-6."""
    folder = tmp_path_factory.mktemp("check")
    spec, out = folder / "spec.yaml", folder / "design.yaml"
    spec.write_text(TINY)
    assert run("solve", spec, "-o", out).exit_code == 0
    return out


def test_a_design_as_written_passes(design):
    result = run("bom", "--check", design)
    assert result.exit_code == 0, result.output
    # The storage, in-band and out-of-band lines state what fits where too: every line is checked.
    assert result.stdout.strip() == f"{design}: 9 transceiver and cable lines checked, every part fits"


def test_json_lines_say_what_fits_where(design):
    items = json.loads(run("bom", design, "--format", "json").stdout)["items"]
    (dac,) = [i for i in items if i["category"] == "cable" and i["role"] == "node-leaf"]
    assert {k: dac[k] for k in ("sku", "connector", "protocol", "lanes", "lane_gbps", "media", "ends")} == {
        "sku": "dac-200g-qsfp56", "connector": "qsfp56", "protocol": "infiniband", "lanes": 4, "lane_gbps": 50,
        "media": "dac", "ends": ["connectx6-hdr-200g", "nvidia-qm8700"]}


def test_a_hand_edit_exits_1_located(design, tmp_path):
    text = design.read_text()
    edited = tmp_path / "edited.yaml"
    edited.write_text(text.replace("lanes: 4, lane_gbps: 50, media: dac, ends: [connectx6-hdr-200g, nvidia-qm8700]",
                                   "lanes: 8, lane_gbps: 50, media: dac, ends: [connectx6-hdr-200g, nvidia-qm9700]"))
    result = run("bom", "--check", edited)
    assert result.exit_code == 1
    errors = [l for l in result.stderr.splitlines() if l.startswith("error: ")]
    line = next(n for n, l in enumerate(text.splitlines(), 1) if "role: node-leaf, sku: dac-200g-qsfp56" in l)
    assert len(errors) == 2
    assert re.fullmatch(rf"error: {re.escape(str(edited))}:{line}:\d+: bom\[\d+\]\.lanes \(cable dac-200g-qsfp56, "
                        r"node-leaf\): dac-200g-qsfp56 has lanes 4, the line says 8", errors[0])
    assert errors[1].endswith("ends (cable dac-200g-qsfp56, node-leaf): nvidia-qm9700 is not a server, NIC, "
                              "switch or appliance line of this design")
    assert "9 transceiver and cable lines checked, 2 mismatches" in result.stdout


def test_bad_input_exits_2(tmp_path):
    assert run("bom", "--check", tmp_path / "missing.yaml").exit_code == 2
