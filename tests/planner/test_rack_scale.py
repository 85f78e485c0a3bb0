"""Rack-scale systems: a GB200 NVL72 rack is one 72-GPU NVLink domain of 18 trays, connected to the
scale-out fabric tray by tray, priced, powered and cooled as one rack.

Figures: NVIDIA DGX SuperPOD GB200 RA RA-11338-001 (SU of 8 racks = 576 GPUs, 1.2 MW TDP, one
400G ConnectX-7 per GPU, rail-optimized Quantum-2 NDR compute fabric).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from designer import estimate, load_catalog, load_spec, solve
from designer.catalog import domain
from designer.errors import CatalogError
from designer.optimize.candidates import Candidate
from designer.optimize.evaluate import Evaluator, network_view
from designer.perf import network as netm
from designer.planner.compile import compile_workload
from designer.report import explain as explain_report
from designer.spec.choices import Deployment

CATALOG = load_catalog([])

SU_SPEC = """\
version: 1
name: gb200-su
horizon: 3 years
workloads:
  - name: llama3-70b
    model: {preset: llama3-70b}
    tokens: 15T
    global_batch: 1024
    precision: bf16
    deadline: 365 days
constraints:
  min_utilization: 0.3
  deployments: [on_prem]
  fabrics: [infiniband]
  topologies: [rail_optimized]
system:
  server: gb200-nvl72
  switch: nvidia-qm9700
  nodes: 8
  fabric: infiniband
  topology: rail_optimized
  oversubscription: 1
"""

# A workload's last line, and a pinned on-prem system of {nodes} {server} on a rail-optimized NDR fabric.
_PINNED_TAIL = """\
    deadline: 365 days
constraints:
  min_utilization: 0.1
  deployments: [on_prem]
system:
  server: {server}
  switch: nvidia-qm9700
  nodes: {nodes}
  fabric: infiniband
  topology: rail_optimized
  oversubscription: 1
"""

TP16_SPEC = """\
version: 1
name: tp16
workloads:
  - name: llama3-70b
    model: {{preset: llama3-70b}}
    tokens: 1T
    global_batch: 1024
    precision: bf16
    gpus: 512
    parallelism: {{tp: 16, pp: 1, cp: 1}}
""" + _PINNED_TAIL

EP64_SPEC = """\
version: 1
name: ep64
workloads:
  - name: moe
    model:
      layers: 16
      hidden: 4096
      heads: 32
      kv_heads: 8
      mlp: gated
      ffn: 14336
      seq_len: 4096
      vocab: 32000
      moe: {{experts: 64, top_k: 8, expert_ffn: 2048}}
    tokens: 100B
    global_batch: 512
    precision: bf16
    gpus: 64
    parallelism: {{tp: 1, pp: 1, cp: 1, ep: 64}}
""" + _PINNED_TAIL

MOE_CHOICE_SPEC = (Path(__file__).resolve().parents[2] / "examples" / "moe-rack-scale.yaml").read_text()


def _spec(tmp_path: Path, text: str, name: str = "spec.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return load_spec(path)


# -- catalog -----------------------------------------------------------------------------------

def test_nvl72_entries_are_one_rack_of_one_domain():
    gb200, gb300 = CATALOG.servers["gb200-nvl72"], CATALOG.servers["gb300-nvl72"]
    for rack in (gb200, gb300):
        su = domain.domain_of(rack, CATALOG.gpus[rack.gpu])
        assert (rack.gpus, su.gpus, su.compute_trays, su.gpus_per_tray, su.switch_trays, rack.cpus) == (72, 72, 18, 4, 9, 36)
        assert su.bandwidth_Bps == pytest.approx(900e9)  # 1.8 TB/s both directions per GPU
        assert rack.nics == 72 and domain.is_rack_scale(rack)
    # one NIC per GPU: ConnectX-7 NDR 400G on GB200, ConnectX-8 800G on GB300
    assert CATALOG.nics[gb200.nic].rate_Bps * 8 == pytest.approx(400e9)
    assert CATALOG.nics[gb300.nic].rate_Bps * 8 == pytest.approx(800e9)
    assert (gb200.power_w, gb300.power_w) == (120e3, 142e3)
    assert (gb200.cooling, gb300.cooling) == ("hybrid", "liquid")
    assert gb200.provenance.source and gb200.provenance.as_of and gb300.provenance.estimate
    # an 8-GPU server is the special case: a domain of 8 in one chassis
    dgx = CATALOG.servers["dgx-b200"]
    su = domain.domain_of(dgx, CATALOG.gpus[dgx.gpu])
    assert (su.gpus, su.compute_trays, su.switch_trays, domain.is_rack_scale(dgx)) == (8, 1, 0, False)


def test_ultraserver_instances_span_their_nvlink_domain():
    x72, x36 = CATALOG.clouds["aws-u-p6e-gb200x72"], CATALOG.clouds["aws-u-p6e-gb200x36"]
    assert (domain.domain_gpus(x72), domain.domain_gpus(x36)) == (72, 36)
    assert x72.price_usd_per_s("capacity_block") * 3600 == pytest.approx(761.904)
    assert x36.pricing_models() == ()  # no public price: left out of comparisons


def test_trays_must_split_the_rack_evenly(tmp_path):
    bad = tmp_path / "racks.yaml"
    bad.write_text("schema_version: 1\nkind: server\nitems:\n  - name: gb200-nvl72\n    compute_trays: 7\n"
                   "    source: test\n    as_of: '2026'\n")
    with pytest.raises(CatalogError, match="do not split evenly over 7 compute trays"):
        load_catalog([bad])


@pytest.mark.parametrize("gpus, expected", [(576, (8, 72)), (512, (8, 64)), (64, (1, 64)), (72, (1, 72)),
                                            (16, (2, 8))])
def test_a_job_uses_whole_domains_or_whole_power_of_two_parts(gpus, expected):
    size = 8 if gpus == 16 else 72
    assert domain.placement_for(gpus, size) == expected


def test_groups_that_do_not_tile_the_domain_straddle_two():
    # Ranks 64-79 of a TP group of 16 on 72-GPU domains: 8 in one rack, 8 in the next.
    assert netm.group_layout(16, 1, 72, 576) == netm.Group(16, 8, 2)
    assert netm.group_layout(16, 1, 64, 512) == netm.Group(16, 16, 1)
    assert netm.group_layout(64, 1, 72, 576) == netm.Group(64, 8, 2)
    assert netm.group_layout(64, 1, 72, 64) == netm.Group(64, 64, 1)  # one rack: no straddle
    assert netm.group_layout(8, 1, 8, 64) == netm.Group(8, 8, 1)  # 8-GPU servers unchanged


# -- a GB200 SuperPOD scalable unit --------------------------------------------------------------

def test_eight_nvl72_racks_are_one_superpod_su(tmp_path):
    design = solve(_spec(tmp_path, SU_SPEC))
    s = design.system
    assert (s.server, s.nodes, s.gpus) == ("gb200-nvl72", 8, 576)
    # IT power: eight racks at their own 120 kW, not a 40 kW rack budget, plus the fabric and
    # storage; the RA's 1.2 MW TDP per SU bounds it from above (it includes margin and management).
    assert 8 * 120 <= s.power_kw <= 1200
    assert s.power_kw == pytest.approx(1200, rel=0.20)
    lines = {(l.category, l.sku): l for l in design.bom}
    assert lines[("server", "gb200-nvl72")].quantity == 8
    assert lines[("gpu", "b200-gb200")].quantity == 576
    assert lines[("nic", "connectx7-ndr-400g")].quantity == 576  # one 400G port per GPU
    # the rack is the system: no rack enclosure bought for it; coolant distribution for 960 kW
    racks = [l for l in design.bom if l.category == "rack"]
    assert all(l.role == "network" for l in racks)
    cooling = lines[("cooling", "liquid-cooling-cdu")]
    assert cooling.quantity == pytest.approx(960.0) and cooling.total_usd == pytest.approx(960 * 200.0)
    assert s.racks >= 8


def test_the_fabric_connects_trays_on_rails():
    """The fabric's nodes are the 144 compute trays of 4 NICs (4 rails), every GPU port attached."""
    spec_cand = Candidate(Deployment.ON_PREM, "gb200-nvl72", "b200-gb200", 72, "infiniband", "rail_optimized",
                          "nvidia-qm9700", 1.0)
    from designer.optimize.pricing import fabric_request
    from designer import topology
    facility = CATALOG.facilities["default"]
    req = fabric_request(spec_cand, CATALOG, 8, facility)
    assert (req.nodes, req.gpus_per_node, req.nics_per_node, req.servers_per_rack) == (144, 4, 4, 18)
    summary = topology.summarize(req)
    assert summary.gpus == 576 and summary.server_racks == 8
    assert summary.injection_Bps * 8 == pytest.approx(400e9)
    view = network_view(spec_cand, CATALOG, facility, 8)
    assert view.gpus_per_node == 72 and view.scaleup_Bps == pytest.approx(900e9)


# -- performance: the domain keeps TP and EP on NVLink -------------------------------------------

def _estimate(tmp_path, template, server, nodes, name):
    spec = _spec(tmp_path, template.format(server=server, nodes=nodes), name)
    return spec, estimate(spec, load_catalog(spec.catalogs)).workloads[0].estimate


def test_tp16_on_nvl72_stays_on_nvlink_and_beats_8_gpu_servers(tmp_path):
    _, nvl = _estimate(tmp_path, TP16_SPEC, "gb200-nvl72", 8, "nvl.yaml")
    _, dgx = _estimate(tmp_path, TP16_SPEC, "dgx-b200", 64, "dgx.yaml")
    assert nvl.plan.tp == dgx.plan.tp == 16 and nvl.plan.gpus == dgx.plan.gpus == 512
    # 64 of each rack's 72 GPUs: every TP group of 16 inside one rack
    assert netm.group_layout(16, 1, 64, 512).nodes == 1 and netm.group_layout(16, 1, 8, 512).nodes == 2
    # The same bytes at NVLink's 900 GB/s (NVLS for all-reduce) instead of half of them over
    # each GPU's 400G NIC: TP time about halves (hierarchical over 2 nodes moves n/8 per NIC).
    assert nvl.breakdown.tp_comm_s < 0.6 * dgx.breakdown.tp_comm_s
    assert nvl.utilization > 1.25 * dgx.utilization and nvl.utilization > dgx.utilization + 0.10


def test_tp16_traffic_on_nvl72_does_not_touch_the_scale_out_fabric(tmp_path):
    spec, _ = _estimate(tmp_path, TP16_SPEC, "gb200-nvl72", 8, "nvl.yaml")
    w = compile_workload(spec.workloads[0])
    times = []
    for scale in (1.0, 0.25):
        ev = Evaluator(CATALOG, CATALOG.facilities["default"])
        cand = Candidate(Deployment.ON_PREM, "gb200-nvl72", "b200-gb200", 72, "infiniband", "rail_optimized",
                         "nvidia-qm9700", 1.0)
        view = ev.view(cand, 8)
        ev._views[(cand.key, 8)] = replace(view, inter_Bps_per_gpu=view.inter_Bps_per_gpu * scale)
        times.append(ev.evaluate(w, cand, 512).estimate.breakdown.tp_comm_s)
    assert times[0] == pytest.approx(times[1], rel=1e-12)


def test_moe_ep64_inside_one_nvl72_needs_no_scale_out_all_to_all(tmp_path):
    spec, nvl = _estimate(tmp_path, EP64_SPEC, "gb200-nvl72", 1, "nvl.yaml")
    _, dgx = _estimate(tmp_path, EP64_SPEC, "dgx-b200", 8, "dgx.yaml")
    assert nvl.plan.ep == dgx.plan.ep == 64
    w = compile_workload(spec.workloads[0])
    cand = Candidate(Deployment.ON_PREM, "gb200-nvl72", "b200-gb200", 72, "infiniband", "rail_optimized",
                     "nvidia-qm9700", 1.0)
    ep = []
    for scale in (1.0, 0.01):  # a scale-out fabric 100x slower leaves the all-to-all alone
        ev = Evaluator(CATALOG, CATALOG.facilities["default"])
        view = ev.view(cand, 1)
        ev._views[(cand.key, 1)] = replace(view, inter_Bps_per_gpu=view.inter_Bps_per_gpu * scale,
                                           bisection_Bps_per_gpu=None)
        ep.append(ev.evaluate(w, cand, 64).estimate.breakdown.ep_comm_s)
    assert ep[0] == pytest.approx(ep[1], rel=1e-12) and ep[0] > 0
    # across eight 8-GPU servers the same all-to-all leaves 56/64 of its bytes on InfiniBand
    assert dgx.breakdown.ep_comm_s > 3 * nvl.breakdown.ep_comm_s


# -- the decision: 8-GPU servers or NVL72 racks ------------------------------------------------

def test_moe_pretraining_chooses_by_cost_and_utilization_and_explain_says_why(tmp_path):
    design = solve(_spec(tmp_path, MOE_CHOICE_SPEC))
    by_option = {a.label: a for a in design.alternatives}
    assert {"domain=8", "domain=72"} <= set(by_option)
    chosen = design.system.server
    other = by_option["domain=8"] if chosen == "gb200-nvl72" else by_option["domain=72"]
    assert chosen == "gb200-nvl72" and other.server == "dgx-b200"
    assert other.delta_usd > 0 and "utilization" in other.reason and "chosen:" in other.reason
    util = design.workloads[0].utilization
    assert f"{util:.1%}" in other.reason
    text = explain_report.render_explain(design)
    assert "domain=8" in text and "dgx-b200" in text and other.reason in text


def test_the_drawing_shows_one_box_per_nvlink_domain(tmp_path):
    from designer.pictures.draw import draw_design
    design = solve(_spec(tmp_path, SU_SPEC))
    drawing = draw_design(design, CATALOG)
    trays = [b for b in drawing.boxes if b.role == "server"]
    assert len(trays) == 8 and all(b.count == 18 for b in trays)
    assert [b.label.splitlines()[-1] for b in trays] == [f"NVLink domain {i}" for i in range(8)]
    assert "8 NVLink domains of 72 GPUs" in drawing.subtitle
    assert not drawing.warnings
