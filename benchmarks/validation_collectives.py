"""The collective-communication check of the validation: nccl-tests all-reduce bus bandwidth
(benchmarks/data/collectives.yaml) against designer.perf.network.all_reduce_s."""

from __future__ import annotations

__all__ = ["collective_cases", "render_collectives", "LARGE_MESSAGE_BYTES", "COLL_HEAD"]

import statistics
from dataclasses import replace
from pathlib import Path

import yaml

from designer.catalog.types import Gpu, Provenance
from designer.perf import Cluster, NetworkView

ROOT = Path(__file__).resolve().parent.parent

# --- collectives ---------------------------------------------------------------------------
COLLECTIVES = ROOT / "benchmarks" / "data" / "collectives.yaml"
LARGE_MESSAGE_BYTES = 256 * 2**20  # the collective model is checked at and above this size
# Scale-up of each GPU in the collective rows (datasheets, one direction per GPU).
SCALEUP = {
    "H200": (450e9, "nvlink4"),
    "B200": (900e9, "nvlink5"),
    "A100": (300e9, "nvlink3"),
    "MI300X": (448e9, "infinity-fabric"),  # 7 links x 64 GB/s
}
# AWS EFA v4: 400 Gb/s per GPU. Efficiency: raw RDMA write reaches 96.9 % of line rate
# (ml-engineering); 0.95 for collectives. Latency ~10 us per message (estimate).
EFA = dict(efficiency=0.95, host_latency_s=10e-6, switch_latency_s=0.5e-6, hops=3)


# H100 SXM5 compute and memory (datasheet); only the scale-up differs between collective rows.
_H100 = Gpu(name="h100", description="H100 SXM5 80GB", vendor="nvidia", bf16_flops=989e12, fp8_flops=1979e12,
            hbm_bytes=80 * 2**30, hbm_Bps=3.35e12, scaleup_Bps=450e9, scaleup_kind="nvlink4", power_w=700,
            price_usd=None, matmul_efficiency=794.5 / 989,
            provenance=Provenance(source="NVIDIA H100 datasheet; MAMF: stas00/ml-engineering", as_of="2024"))


def _collective_gpu(label: str) -> Gpu:
    for key, (bw, kind) in SCALEUP.items():
        if key in label:
            return replace(_H100, name=key, scaleup_Bps=bw, scaleup_kind=kind)
    raise KeyError(label)


def collective_cases() -> list[tuple[str, str, float | None, float, float | None, str]]:
    """(id, what, message bytes, published busbw, predicted busbw, note) for every row."""
    from designer.perf import network as netm
    from designer.perf.collectives import Collective, bus_bandwidth

    data = yaml.safe_load(COLLECTIVES.read_text())
    out = []
    for row in data["rows"]:
        rid = row["id"]
        if row.get("collective") != "all_reduce":
            out.append((rid, "-", None, float("nan"), None, "not a collective"))
            continue
        hw = row["hardware"]
        gpu = _collective_gpu(hw["gpu"])
        nodes, n = hw["num_nodes"], hw["num_gpus"]
        if nodes > 1:
            net = NetworkView(gpus_per_node=8, inter_Bps_per_gpu=hw["nic_gbps_per_gpu"] * 1e9 / 8, **EFA)
        else:
            net = NetworkView(gpus_per_node=8, inter_Bps_per_gpu=50e9, efficiency=0.94,
                              host_latency_s=1e-6, switch_latency_s=0.1e-6, hops=1)
        meas = row["measured"]
        variants = []
        if "busbw_GBps" in meas:
            variants.append(("default", meas["busbw_GBps"], net))
        if "busbw_GBps_peak" in meas:
            variants.append(("default", meas["busbw_GBps_peak"], net))
        if "busbw_GBps_default" in meas:
            variants.append(("default", meas["busbw_GBps_default"], net))
        if "busbw_GBps_NVLS_off" in meas:
            variants.append(("ring (NVLS off)", meas["busbw_GBps_NVLS_off"],
                             replace(net, scaleup_reduction_efficiency=0.0)))
        size = row.get("message_bytes")
        for what, published, view in variants:
            links = netm.links_for(Cluster(gpu, view))
            group = netm.group_layout(n, 1, 8)
            note = ""
            if size is None:
                size_eff, note = 1e12, "size not stated: compared at large-message limit"
            else:
                size_eff = size
            t = netm.all_reduce_s(size_eff, group, links)
            pred = bus_bandwidth(Collective.ALL_REDUCE, size_eff, n, t) / 1e9
            out.append((rid, what, size, published, pred, note))
    return out


def render_collectives(rows: list) -> str:
    """Markdown table of the collective comparison and the large-message summary."""
    lines = ["| measurement | algorithm | message | published busbw GB/s | predicted | error |",
             "| --- | --- | ---: | ---: | ---: | ---: |"]
    large = []
    for rid, what, size, published, pred, note in rows:
        if pred is None:
            lines.append(f"| {rid} | - | - | - | - | {note} |")
            continue
        err = pred / published - 1.0
        is_large = size is None or size >= LARGE_MESSAGE_BYTES
        if is_large:
            large.append(abs(err))
        size_txt = "?" if size is None else f"{size / 2**20:,.2f} MiB"
        lines.append(f"| {rid} | {what} | {size_txt} | {published:,.2f} | {pred:,.2f} | "
                     f"{err * 100:+.1f} %{' (' + note + ')' if note else ''} |")
    head = (f"Large messages (>= {LARGE_MESSAGE_BYTES // 2**20} MiB): {len(large)} comparisons, "
            f"median abs. error {statistics.median(large) * 100:.1f} %, max {max(large) * 100:.1f} %. "
            "Smaller messages are latency-bound and shown for information only.")
    return "\n".join([head, "", *lines]) + "\n"


COLL_HEAD = """
## Collective communication

nccl-tests style all-reduce bus bandwidth (`benchmarks/data/collectives.yaml`) against
`designer.perf.network.all_reduce_s`, converted with `busbw = n/t * 2(p-1)/p`. Inside a node
the model picks the faster of a ring and, on NVLink4/5, the in-switch (NVLS) reduction; across
nodes the fastest of flat ring, hierarchical and (with SHARP) in-network reduction. The
scale-up constants come from some of these rows (`designer/perf/constants.py` says which); the
rest are held out. Tested in `tests/perf/test_published.py`.

Small messages run on NCCL's Simple-protocol latencies (base 8.4 us, 3.4 us an NVLink step:
56 us for 8 GPUs), not on the LL and LL128 protocols NCCL's tuner picks for them
(`src/graph/tuning.cc`: LL base 6.6 us and 0.6 us a step, LL128 14.0 and 1.9 us, LL at half and
LL128 at 0.92 of the Simple bus bandwidth). The tuner's constants rank protocols; as absolute
times they are too fast: for 32 KiB on 8 H200 they give 15 us with LL, where the sweep measures
40 us (the model's 56 us is -29 %), and 22 us with LL at 1 MiB on 8 B200 (busbw +136 %), where
Simple is -13 %. The rows below 256 MiB are shown for information.

"""
