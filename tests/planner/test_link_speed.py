"""The link speed per GPU in the design and its summary, and a warning where NICs run below their rate."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from designer.cli import app
from tiny_spec import TINY

RUNNER = CliRunner()


def _solve(tmp_path, text):
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    table = RUNNER.invoke(app, ["solve", str(spec)])
    doc = json.loads(RUNNER.invoke(app, ["solve", str(spec), "--format", "json"]).stdout)
    return table, doc


def test_native_nics_show_their_speed_per_gpu(tmp_path):
    table, doc = _solve(tmp_path, TINY)
    # DGX A100: 8 ConnectX-6 HDR 200G for 8 GPUs on an HDR QM8700.
    assert (doc["system"]["link_gbps_per_gpu"], doc["system"]["nic_native_gbps"]) == (200, 0)
    assert "  link per GPU  200 Gb/s\n" in table.stdout
    assert "below their" not in table.stderr


def test_nics_below_their_rate_are_warned_and_shown(tmp_path):
    text = (TINY.replace("fabrics: [infiniband]", "fabrics: [roce]")
            .replace("  max_nodes: 4\n", "  max_nodes: 4\n  gpus: [a100-80g]\n"
                     "system: {server: dgx-a100-80g, switch: nvidia-sn4600c}\n"))
    table, doc = _solve(tmp_path, text)
    assert (doc["system"]["link_gbps_per_gpu"], doc["system"]["nic_native_gbps"]) == (100, 200)
    assert "  link per GPU  100 Gb/s (NICs run below their 200 Gb/s)\n" in table.stdout
    assert ("warning: the 8 connectx6-hdr-200g NICs of each dgx-a100-80g run at 100 Gb/s, below their 200 Gb/s, "
            "on nvidia-sn4600c (100 Gb/s per GPU)") in table.stderr


def _roce_a100(extra: str = "") -> str:
    return (TINY.replace("fabrics: [infiniband]", "fabrics: [roce]")
            .replace("  max_nodes: 4\n", "  max_nodes: 4\n  gpus: [a100-80g]\n" + extra))


def _pairs(text: str):
    from designer.catalog import load_builtin
    from designer.planner.candidates import enumerate_candidates
    from designer.spec.load import parse_spec
    from designer.spec.yamlio import load_yaml_text

    cands, rejected = enumerate_candidates(parse_spec(load_yaml_text(text)), load_builtin())
    return ({(c.server, c.switch): c.link_rate_Bps for c in cands if c.server == "dgx-a100-80g"},
            {r.what: r.reason for r in rejected})


def test_a_slower_switch_is_not_a_candidate_unless_the_spec_allows_down_rating():
    # DGX A100's ConnectX-6 HDR runs 200G; the SN4600C runs 100G ports only.
    pairs, why = _pairs(_roce_a100())
    assert ("dgx-a100-80g", "nvidia-sn4600c") not in pairs
    assert why["dgx-a100-80g with nvidia-sn4600c"] == (
        "runs its NIC connectx6-hdr-200g at 100G below its native 200G "
        "(allow it with constraints.allow_nic_downrate: true)")
    assert pairs and all(rate == 0.0 for rate in pairs.values())  # every remaining switch runs it at 200G
    allowed, _ = _pairs(_roce_a100("  allow_nic_downrate: true\n"))
    assert allowed[("dgx-a100-80g", "nvidia-sn4600c")] == 100e9 / 8
    assert set(pairs) < set(allowed)


def test_a_pinned_slower_switch_is_still_a_candidate():
    pairs, _ = _pairs(_roce_a100() + "system: {server: dgx-a100-80g, switch: nvidia-sn4600c}\n")
    assert pairs == {("dgx-a100-80g", "nvidia-sn4600c"): 100e9 / 8}


def test_estimate_names_the_switch_and_the_link_speed(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(_roce_a100() + "system: {server: dgx-a100-80g, nodes: 4}\n")
    doc = json.loads(RUNNER.invoke(app, ["estimate", str(spec), "--json"]).stdout)
    # Unpinned, the switch runs the ConnectX-6 HDR at its 200G: 8 x 200G for 8 GPUs.
    assert (doc["system"]["link_gbps_per_gpu"], doc["system"]["nic_native_gbps"]) == (200, 0)
    assert doc["system"]["switch"] != "nvidia-sn4600c"


def test_estimate_on_a_pinned_slower_switch_warns(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text(_roce_a100() + "system: {server: dgx-a100-80g, switch: nvidia-sn4600c, nodes: 4}\n")
    table = RUNNER.invoke(app, ["estimate", str(spec)])
    doc = json.loads(RUNNER.invoke(app, ["estimate", str(spec), "--json"]).stdout)
    assert {k: doc["system"][k] for k in ("switch", "link_gbps_per_gpu", "nic_native_gbps")} == {
        "switch": "nvidia-sn4600c", "link_gbps_per_gpu": 100, "nic_native_gbps": 200}
    assert table.stdout.startswith("tiny: 4 x dgx-a100-80g, roce ") and \
        ", nvidia-sn4600c, 100 Gb/s per GPU (NICs run below their 200 Gb/s)\n" in table.stdout.splitlines(True)[0]
    assert ("the 8 connectx6-hdr-200g NICs of each dgx-a100-80g run at 100 Gb/s, below their 200 Gb/s, "
            "on nvidia-sn4600c (100 Gb/s per GPU)") in table.stderr
