"""A server and switch that no catalog part links are never designed with a stand-in part: pinned,
the spec is refused with the missing link named; otherwise the pair is among the design's
alternatives as ``unbuildable: <server> with <switch>`` with the reason, shown by explain."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from designer.cli import app
from tiny_spec import TINY

RUNNER = CliRunner()
# A DGX H100's twin-port OSFP cages on a 100GbE QSFP28 switch: no catalog cable or optic joins
# an OSFP cage at 4 x 25G lanes to a QSFP28 cage.
MISSING = ("dgx-h100 with nvidia-sn4600c: no link from dgx-h100 OSFP cage (8 x 100G ethernet, 2 links of 100G) "
           "to nvidia-sn4600c QSFP28 cage (4 x 25G ethernet, 1 link of 100G) over 2.0 m")


def _spec(tmp_path, text):
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    return spec


def test_a_pinned_pair_no_part_links_is_refused_naming_the_link(tmp_path):
    text = (TINY.replace("fabrics: [infiniband]", "fabrics: [roce]")
            .replace("  max_nodes: 4\n", "  max_nodes: 4\n  allow_nic_downrate: true\n"
                     "system: {server: dgx-h100, switch: nvidia-sn5600, nodes: 1}\n"))
    ok = RUNNER.invoke(app, ["solve", str(_spec(tmp_path, text)), "--format", "json"])
    assert ok.exit_code == 0, ok.output  # the same server on a switch the parts reach is designed
    bad = RUNNER.invoke(app, ["solve", str(_spec(tmp_path, text.replace("nvidia-sn5600", "nvidia-sn4600c")))])
    assert bad.exit_code != 0 and "Traceback" not in bad.output
    assert MISSING in " ".join(bad.output.split()), bad.output


def test_unbuildable_pairs_are_alternatives_with_their_reason(tmp_path):
    text = TINY.replace("fabrics: [infiniband]", "fabrics: [infiniband, roce]").replace(
        "  max_nodes: 4\n", "  max_nodes: 4\n  allow_nic_downrate: true\n")
    spec = _spec(tmp_path, text)
    design = tmp_path / "design.yaml"
    doc = json.loads(RUNNER.invoke(app, ["solve", str(spec), "--format", "json", "-o", str(design)]).stdout)
    unbuildable = {a["option"] if "option" in a else a["label"]: a for a in doc["alternatives"]
                   if (a.get("label") or a.get("option", "")).startswith("unbuildable: ")}
    assert "unbuildable: dgx-h100 with nvidia-qm8700" in unbuildable
    alt = unbuildable["unbuildable: dgx-h100 with nvidia-qm8700"]
    assert alt["feasible"] is False and alt["total_usd"] is None
    assert alt["reason"].startswith("no link from dgx-h100 OSFP cage (8 x 100G infiniband")
    assert "nvidia-qm8700 QSFP56 cage (4 x 50G infiniband" in alt["reason"]
    # No chosen or feasible design uses a pair listed as unbuildable.
    chosen = doc["system"]
    assert f"unbuildable: {chosen['server']} with {chosen['switch']}" not in unbuildable
    explained = RUNNER.invoke(app, ["explain", str(design)])
    assert explained.exit_code == 0
    assert "unbuildable: dgx-h100 with nvidia-qm8700: no design (no link from dgx-h100 OSFP cage" in explained.stdout
