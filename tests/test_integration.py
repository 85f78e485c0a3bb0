"""End to end through the built-in catalogs: catalog entries -> network_view -> performance model.

The performance model is validated elsewhere with hand-made constants (benchmarks/validate.py);
here every input comes from the catalogs: the GPU entry, the server or cloud instance, the switch
and the fabric profile, combined by ``designer.optimize.evaluate.network_view`` exactly as the
optimizer does. Published figures are the copies in benchmarks/data/ or named constants below,
each with its source.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from designer import catalog, perf
from designer.catalog.types import Catalog
from designer.errors import TopologyError
from designer.optimize import pricing
from designer.optimize.candidates import Candidate
from designer.optimize.evaluate import network_view
from designer.perf import network as netm
from designer.perf.collectives import Collective, bus_bandwidth
from designer.perf.constants import SCALEUP_PROFILES
from designer.planner.candidates import enumerate_candidates
from designer.spec.choices import Deployment
from designer.spec.load import parse_spec
from designer.spec.yamlio import load_yaml_text
from tiny_spec import EVERY_SYSTEM

ROOT = Path(__file__).resolve().parents[1]
BUILTIN = catalog.load_builtin()
FACILITY = BUILTIN.facilities["default"]

# Collective bus bandwidth within 15 % for large messages, as in tests/perf/test_published.py;
# below 256 MiB NCCL's protocol switching dominates (docs/model.md, "What the model leaves out").
COLLECTIVE_TOLERANCE = 0.15
LARGE_MESSAGE_BYTES = 256 * 2**20
# Where a row gives no message size (the ml-engineering A100 case study), compare at 16 GiB, well
# inside the bandwidth-bound regime.
UNSTATED_SIZE_BYTES = 16 * 2**30

# Which catalog system each GPU of benchmarks/data/collectives.yaml ran on. The B200 rows were
# measured on AWS p6-b200.48xlarge (the rows' locator); the others on 8-GPU servers of that GPU.
ROW_SYSTEMS = {
    "H200": (Deployment.ON_PREM, "hgx-h200"),
    "B200": (Deployment.CLOUD, "aws-p6-b200.48xlarge"),
    "MI300X": (Deployment.ON_PREM, "oem-mi300x-8g"),
    "A100": (Deployment.ON_PREM, "dgx-a100-80g"),
}

# NVIDIA/nccl-tests issue #290 (NCCL developer): two nodes benchmarked with NCCL_ALGO=RING, "For
# NDR @ 400Gbps you should see 46-48GB/s per NIC".
NDR_BUSBW_PER_NIC_GBPS = 47.0
# NVIDIA/nccl-tests issue #119 (NCCL developer): "24GB/s is the peak performance per 200G NIC".
HDR_BUSBW_PER_NIC_GBPS = 24.0

# Small-message latency rules of thumb, end to end, one way (estimates, not measurements): NDR
# RDMA ~1-2 us (jiahuanglin.xyz lesson, '~2 us RDMA'), RoCEv2 2-5 us, kernel TCP 10-30 us (Cisco
# white paper 'Cut-Through and Store-and-Forward Ethernet Switching for Low-Latency Environments':
# Ethernet application latency 'about 10 microseconds', InfiniBand below 3).
LATENCY_ANCHORS_S = {"infiniband": (1e-6, 2e-6), "roce": (2e-6, 5e-6), "ethernet": (10e-6, 30e-6)}

# GPU memory as nvidia-smi / rocm-smi report it (memory.total): the stated size in GiB less what
# the driver keeps (A100-SXM4-80GB 81,920 MiB; A100-SXM4-40GB 40,960; H100 80GB HBM3 81,559;
# H200 143,771; B200 183,359; MI300X rocm-smi 205,822,885,888 bytes).
VISIBLE_HBM_BYTES = {
    "a100-80g": 81_920 * 2**20, "a100-40g": 40_960 * 2**20, "h100-sxm": 81_559 * 2**20,
    "h200": 143_771 * 2**20, "b200": 183_359 * 2**20, "mi300x": 205_822_885_888,
}

# Llama 3 8B (model card): a job small enough to run on one node and large enough to have real
# tensor- and data-parallel traffic.
LLAMA3_8B = perf.ModelArch("llama3-8b", 32, 4096, 32, 8, 14336, 128256, 8192, gated_mlp=True)
BASELINE_SIZES = (1, 32, 256, 2048)


# --- building blocks -------------------------------------------------------------------------

def onprem(server: str, fabric: str, switch: str, topology: str = "rail_optimized",
           ratio: float = 1.0) -> Candidate:
    s = BUILTIN.servers[server]
    return Candidate(Deployment.ON_PREM, server, s.gpu, s.gpus, fabric, topology, switch, ratio)


def cloud(instance: str) -> Candidate:
    i = BUILTIN.clouds[instance]
    return Candidate(Deployment.CLOUD, instance, i.gpu, i.gpus, i.network.value, "cloud", None, 1.0)


def row_candidate(gpu_label: str) -> Candidate:
    for key, (deployment, name) in ROW_SYSTEMS.items():
        if key in gpu_label:
            if deployment is Deployment.CLOUD:
                return cloud(name)
            server = BUILTIN.servers[name]
            nic = BUILTIN.nics[server.nic]
            switch = "nvidia-qm9700" if nic.rate_Bps == 50e9 else "nvidia-qm8700"
            return onprem(name, "infiniband", switch, "single_switch")
    raise KeyError(gpu_label)


def all_reduce_busbw_Bps(cand: Candidate, nodes: int, ranks: int, size: float, *, stride: int = 1,
                         software: perf.Software | None = None, **override) -> float:
    """nccl-tests bus bandwidth the model predicts for an all-reduce on ``cand`` via network_view
    (``software``: the stack, default NCCL's defaults)."""
    view = network_view(cand, BUILTIN, FACILITY, nodes)
    if override:
        view = dataclasses.replace(view, **override)
    links = netm.links_for(perf.Cluster(BUILTIN.gpus[cand.gpu], view), software)
    group = netm.group_layout(ranks, stride, view.gpus_per_node)
    return bus_bandwidth(Collective.ALL_REDUCE, size, ranks, netm.all_reduce_s(size, group, links))


def collective_rows() -> list[tuple[str, str, dict, float, dict]]:
    """(id, variant, row, published busbw GB/s, view overrides) of every large all-reduce row."""
    data = yaml.safe_load((ROOT / "benchmarks" / "data" / "collectives.yaml").read_text())
    out = []
    for row in data["rows"]:
        size = row.get("message_bytes")
        if row.get("collective") != "all_reduce" or (size is not None and size < LARGE_MESSAGE_BYTES):
            continue
        meas = row["measured"]
        for key in ("busbw_GBps", "busbw_GBps_peak", "busbw_GBps_default"):
            if key in meas:
                out.append((row["id"], "default", row, meas[key], {}))
        if "busbw_GBps_NVLS_off" in meas:
            out.append((row["id"], "NVLS off", row, meas["busbw_GBps_NVLS_off"],
                        {"scaleup_reduction_efficiency": 0.0}))
    return out


COLLECTIVE_ROWS = collective_rows()


# --- the catalog and the model speak the same language -----------------------------------------

def test_every_gpu_has_a_scaleup_kind_the_model_knows():
    for gpu in BUILTIN.gpus.values():
        assert gpu.scaleup_kind in SCALEUP_PROFILES, gpu.name


@pytest.mark.parametrize("gpu, visible", sorted(VISIBLE_HBM_BYTES.items()))
def test_hbm_is_the_stated_size_in_gib(gpu, visible):
    # The vendors' "80GB" is 80 GiB: the driver shows that less under 1 GiB it keeps for itself.
    assert 0 <= BUILTIN.gpus[gpu].hbm_bytes - visible < 2**30


def test_profile_efficiency_is_per_nic_ring_busbw_for_measured_fabrics():
    # The model multiplies the NIC line rate by `efficiency` and then applies the algorithm; a
    # profile that already counted an algorithm would be counted twice. EFA's ring busbw per NIC
    # is 377-382 GB/s over 8 x 50 GB/s (benchmarks/data/collectives.yaml, 4 nodes, >= 4 GiB).
    assert 377 / 400 <= BUILTIN.fabrics["efa"].efficiency <= 382 / 400 + 1e-9
    assert BUILTIN.fabrics["infiniband"].efficiency == pytest.approx(NDR_BUSBW_PER_NIC_GBPS / 50)


@pytest.mark.parametrize("fabric, switch", [("infiniband", "nvidia-qm9700"), ("roce", "nvidia-sn5600"),
                                            ("ethernet", "nvidia-sn5600")])
@pytest.mark.parametrize("nodes", [32, 256, 2048])
def test_alpha_through_the_catalog_is_within_the_latency_anchors(fabric, switch, nodes):
    view = network_view(onprem("dgx-h100", fabric, switch), BUILTIN, FACILITY, nodes)
    low, high = LATENCY_ANCHORS_S[fabric]
    for hops in (view.hops, view.hops_same_rail):
        assert low <= view.host_latency_s + hops * view.switch_latency_s <= high


def test_tcp_latency_is_far_above_rdma():
    fabrics = BUILTIN.fabrics
    for rdma in ("roce", "infiniband"):
        assert fabrics["ethernet"].host_latency_s >= 5 * fabrics[rdma].host_latency_s
    assert fabrics["infiniband"].host_latency_s <= fabrics["roce"].host_latency_s


def test_multi_su_rings_cross_the_spine():
    small = network_view(onprem("dgx-h100", "infiniband", "nvidia-qm9700"), BUILTIN, FACILITY, 32)
    large = network_view(onprem("dgx-h100", "infiniband", "nvidia-qm9700"), BUILTIN, FACILITY, 256)
    assert (small.hops_same_rail, small.hops) == (1, 3)  # one SU: same-rail traffic stays on its leaf
    assert (large.hops_same_rail, large.hops) == (3, 3)  # 8 SUs: leaf, spine, leaf


# --- published collectives, through the catalog -------------------------------------------------

def test_the_collective_rows_cover_nvlink_infinity_fabric_and_efa():
    gpus = {row["hardware"]["gpu"].split()[0] for _, _, row, _, _ in COLLECTIVE_ROWS}
    assert {"H200", "B200", "A100", "AMD"} <= gpus
    assert any(row["hardware"]["num_nodes"] == 4 for _, _, row, _, _ in COLLECTIVE_ROWS)
    assert len(COLLECTIVE_ROWS) >= 20


@pytest.mark.parametrize("rid, variant, row, published, override", COLLECTIVE_ROWS,
                         ids=[f"{r[0]}-{r[1]}" for r in COLLECTIVE_ROWS])
def test_published_all_reduce_bus_bandwidth_through_the_catalog(rid, variant, row, published, override):
    hw = row["hardware"]
    size = row.get("message_bytes") or UNSTATED_SIZE_BYTES
    cand = row_candidate(hw["gpu"])
    predicted = all_reduce_busbw_Bps(cand, hw["num_nodes"], hw["num_gpus"], size, **override)
    assert predicted / 1e9 == pytest.approx(published, rel=COLLECTIVE_TOLERANCE), (rid, variant)


@pytest.mark.parametrize("server, switch, per_nic_gbps, nic_Bps", [
    ("dgx-h100", "nvidia-qm9700", NDR_BUSBW_PER_NIC_GBPS, 50e9),
    ("dgx-a100-80g", "nvidia-qm8700", HDR_BUSBW_PER_NIC_GBPS, 25e9),
])
def test_infiniband_ring_busbw_per_nic(server, switch, per_nic_gbps, nic_Bps):
    # Two nodes with NCCL_ALGO=RING and no SHARP (the setting the NCCL developers quote).
    cand = onprem(server, "infiniband", switch)
    nics = BUILTIN.servers[server].nics
    busbw = all_reduce_busbw_Bps(cand, 2, 2 * cand.gpus_per_node, 16 * 2**30, in_network_reduction=False)
    assert busbw / nics / 1e9 == pytest.approx(per_nic_gbps, rel=COLLECTIVE_TOLERANCE)
    assert busbw / nics <= nic_Bps  # a ring never beats the wire


def test_sharp_beats_the_ring_on_infiniband():
    cand = onprem("dgx-h100", "infiniband", "nvidia-qm9700")
    ring = all_reduce_busbw_Bps(cand, 32, 256, 2**30, in_network_reduction=False)
    assert network_view(cand, BUILTIN, FACILITY, 32).in_network_reduction
    collnet = perf.resolve_software(in_network_reduction=True)
    assert all_reduce_busbw_Bps(cand, 32, 256, 2**30, software=collnet) > 1.2 * ring
    # NCCL's defaults (NCCL_COLLNET_ENABLE=0): the SHARP switch is not used
    assert all_reduce_busbw_Bps(cand, 32, 256, 2**30) == ring


# --- orderings the optimizer relies on -------------------------------------------------------

def test_tensor_parallel_across_nodes_is_slower_than_inside():
    cand = onprem("dgx-h100", "infiniband", "nvidia-qm9700")
    size = 64 * 2**20  # one TP all-reduce of b s h 16-bit activations (8192 x 4096 x 2 bytes)
    inside = all_reduce_busbw_Bps(cand, 1, 8, size)
    across = all_reduce_busbw_Bps(cand, 8, 8, size, stride=8)  # one GPU in each of 8 nodes
    assert inside > 3 * across

    # The same job on the same 16 GPUs: TP 8 inside each node, or TP 16 over both nodes. Per
    # micro-batch each GPU then moves about as many TP bytes, but over the NICs instead of NVLink
    # (and without NVLS): TP costs more per micro-batch and the step is slower.
    gpu = BUILTIN.gpus[cand.gpu]
    job = perf.Job(LLAMA3_8B, global_batch=64, tokens=1e12)
    cluster = perf.Cluster(gpu, network_view(cand, BUILTIN, FACILITY, 2))
    tp8 = perf.estimate_step(job, perf.Plan(tp=8, pp=1, dp=2), cluster)  # 32 micro-batches per replica
    tp16 = perf.estimate_step(job, perf.Plan(tp=16, pp=1, dp=1), cluster)  # 64 micro-batches
    assert tp16.breakdown.tp_comm_s / 64 > tp8.breakdown.tp_comm_s / 32
    assert tp16.step_time_s > tp8.step_time_s


FABRIC_ORDER = (("infiniband", "nvidia-qm9700"), ("roce", "nvidia-sn5600"), ("ethernet", "nvidia-sn5600"))


@pytest.mark.parametrize("nodes", [2, 32, 256, 2048])
@pytest.mark.parametrize("size", [64 * 2**10, 2**20, 64 * 2**20, 2**30])
def test_infiniband_beats_roce_beats_tcp_collectives(nodes, size):
    busbw = [all_reduce_busbw_Bps(onprem("dgx-h100", fabric, switch), nodes, 8 * nodes, size)
             for fabric, switch in FABRIC_ORDER]
    assert busbw[0] > busbw[1] > busbw[2], busbw


@pytest.mark.parametrize("nodes", [4, 32, 256])
def test_infiniband_beats_roce_beats_tcp_training_steps(nodes):
    job = perf.Job(LLAMA3_8B, global_batch=16 * nodes, tokens=1e12)
    plan = perf.Plan(tp=8, pp=1, dp=nodes, microbatch=1, zero=1)
    steps = []
    for fabric, switch in FABRIC_ORDER:
        cand = onprem("dgx-h100", fabric, switch)
        cluster = perf.Cluster(BUILTIN.gpus[cand.gpu], network_view(cand, BUILTIN, FACILITY, nodes))
        steps.append(perf.estimate_step(job, plan, cluster))
    times = [s.step_time_s for s in steps]
    assert times[0] < times[1] < times[2], times
    assert steps[0].breakdown.dp_comm_s < steps[1].breakdown.dp_comm_s < steps[2].breakdown.dp_comm_s


# --- every system the optimizer can enumerate can be priced -----------------------------------


def onprem_candidates(cat: Catalog) -> tuple[Candidate, ...]:
    spec = parse_spec(load_yaml_text(EVERY_SYSTEM))
    candidates, _ = enumerate_candidates(spec, cat)
    return tuple(c for c in candidates if c.deployment is Deployment.ON_PREM)


CANDIDATES = onprem_candidates(BUILTIN)


def test_the_enumeration_covers_every_matching_server_and_switch():
    """Every priced server and switch of one protocol with a rate in common is a candidate, or
    rejected because no catalog part links their cages (the reason names both cages)."""
    pairs = {(c.server, c.switch) for c in CANDIDATES}
    _, rejected = enumerate_candidates(parse_spec(load_yaml_text(EVERY_SYSTEM)), BUILTIN)
    why = {r.what: r.reason for r in rejected}
    unlinked = 0
    for server in BUILTIN.servers.values():
        nic = BUILTIN.nics[server.nic]
        if server.price_usd is None:
            assert why[server.name].startswith("no price in the catalog")
            continue
        for switch in BUILTIN.switches.values():
            if switch.price_usd is None or switch.protocol not in nic.protocols:
                continue
            if any(switch.ports_at(r) for r in nic.rates()) and (server.name, switch.name) not in pairs:
                reason = why[f"{server.name} with {switch.name}"]
                assert reason.startswith("no link from ") and f"to {switch.name} " in reason
                unlinked += 1
    assert len(CANDIDATES) >= 100 and unlinked > 0


@pytest.mark.parametrize("cand", CANDIDATES, ids=[c.key for c in CANDIDATES])
def test_every_enumerated_system_prices_at_baseline_sizes(cand):
    shape = pricing.fabric_shape(cand, BUILTIN, FACILITY)
    held = [n for n in BASELINE_SIZES if n <= shape.max_nodes]
    assert 1 in held
    for nodes in held:
        try:
            lines, summary = pricing.onprem_bom(cand, BUILTIN, FACILITY, nodes, 0.0)
        except TopologyError:
            continue  # the topology cannot be built at this size (e.g. a leaf group that does not fit)
        # CatalogError would propagate: a part is missing for this combination.
        categories = {line.category for line in lines}
        assert {"server", "gpu", "nic", "switch", "cable"} <= categories, (nodes, categories)
        if summary.switch_transceivers:
            assert "transceiver" in categories
        assert all(line.total_usd >= 0 for line in lines)
    pricing.unit_costs(cand, BUILTIN, FACILITY, held[-1])
