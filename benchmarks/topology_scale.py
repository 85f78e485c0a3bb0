"""Build time and peak memory of rail-optimized DGX H100 fabrics at 1k-32k GPUs.

Run from the repository root:  python benchmarks/topology_scale.py

For each size it times the closed-form summary (mean of many calls), the graph build, the
invariant check and the network BOM, then measures the peak Python memory of the graph build
with tracemalloc (a second, separate build, because tracing slows the build down). Target: a
32,768-GPU fabric builds in under 10 s and 2 GB.

The switch, NIC, server and optics are the DGX SuperPOD shapes (RA-11333-001: DGX H100 with 8 x
400G in 4 twin-port OSFP cages, QM9700 with 64 NDR ports in 32 cages); the prices are placeholders,
irrelevant to the timings.
"""

from __future__ import annotations

import sys
import time
import tracemalloc
from pathlib import Path
from types import MappingProxyType

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from designer.catalog.load import load_builtin  # noqa: E402
from designer.catalog.types import (  # noqa: E402
    Catalog, Nic, Protocol, Provenance, Server, Switch,
)
from designer.topology import build_graph, check_graph, fabric_bom, request_for, summarize  # noqa: E402

G = 1e9 / 8
HERE = Provenance(source="benchmark fixture (placeholder prices)", as_of="2025", estimate=True)
SIZES_GPUS = (1024, 4096, 16384, 32768)
SUMMARY_CALLS = 2000


def parts() -> tuple[Server, Nic, Switch, Catalog]:
    server = Server("dgx-h100", "DGX H100", "h100", 8, "cx7", 8, 4, None, 0, 10200.0, 8, 310000.0, HERE)
    nic = Nic("cx7", "ConnectX-7 400G", 400 * G, 1, frozenset({Protocol.INFINIBAND}), True, 1200.0, 20.0, HERE)
    switch = Switch("qm9700", "Quantum-2 QM9700", Protocol.INFINIBAND, 64, 400 * G, 32,
                    MappingProxyType({200 * G: 128}), 150e-9, True, 36000.0, 1100.0, 1, HERE)
    # The optics and cords come from the built-in catalog, so the fixture always states the
    # connector, protocol and fiber fields the end-to-end link matcher needs.
    built = load_builtin()
    catalog = Catalog(transceivers=built.transceivers, cables=built.cables)
    return server, nic, switch, catalog


def main() -> None:
    server, nic, switch, catalog = parts()
    print(f"{'GPUs':>6} {'tiers':>5} {'switches':>8} {'graph nodes':>11} {'edges':>7} "
          f"{'summary us':>10} {'build s':>8} {'check s':>8} {'BOM ms':>7} {'peak MB':>8}")
    for gpus in SIZES_GPUS:
        request = request_for(server, nic, switch, "rail_optimized", gpus // server.gpus)
        start = time.perf_counter()
        for _ in range(SUMMARY_CALLS):
            summary = summarize(request)
        summary_us = (time.perf_counter() - start) / SUMMARY_CALLS * 1e6
        start = time.perf_counter()
        graph = build_graph(request)
        build_s = time.perf_counter() - start
        start = time.perf_counter()
        check_graph(graph)
        check_s = time.perf_counter() - start
        start = time.perf_counter()
        fabric_bom(summary, switch, catalog)
        bom_ms = (time.perf_counter() - start) * 1e3
        nodes, edges = graph.number_of_nodes(), graph.number_of_edges()
        del graph
        tracemalloc.start()
        graph = build_graph(request)
        fabric_bom(summary, switch, catalog)
        peak_mb = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
        del graph
        print(f"{gpus:>6} {summary.tiers:>5} {summary.switches:>8} {nodes:>11} {edges:>7} "
              f"{summary_us:>10.0f} {build_s:>8.2f} {check_s:>8.2f} {bom_ms:>7.2f} {peak_mb:>8.1f}")


if __name__ == "__main__":
    main()
