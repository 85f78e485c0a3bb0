"""Build time and peak memory of rail-optimized DGX H100 fabrics at 1k-32k GPUs.

Run from the repository root:  python benchmarks/topology_scale.py

For each size it times the closed-form summary (mean of many calls), the graph build, the
invariant check and the network BOM, then measures the peak Python memory of the graph build
with tracemalloc (a second, separate build, because tracing slows the build down). Target: a
32,768-GPU fabric builds in under 10 s and 2 GB.

The switch, NIC, server and optics are the built-in catalog's DGX SuperPOD parts (RA-11333-001:
DGX H100 with 8 x 400G in 4 twin-port OSFP cages, QM9700 with 64 NDR ports in 32 cages), every
link built end to end.
"""

from __future__ import annotations

import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from designer.catalog import load_builtin  # noqa: E402
from designer.catalog.types import Catalog, Nic, Protocol, Server, Switch  # noqa: E402
from designer.topology import build_graph, check_graph, fabric_bom, request_for, server_port, summarize  # noqa: E402

SIZES_GPUS = (1024, 4096, 16384, 32768)
SUMMARY_CALLS = 2000


def parts() -> tuple[Server, Nic, Switch, Catalog]:
    """DGX H100 on QM9700 with the built-in catalog's optics and cables (ports as data)."""
    catalog = load_builtin()
    server = catalog.servers["dgx-h100"]
    return server, catalog.nics[server.nic], catalog.switches["nvidia-qm9700"], catalog


def main() -> None:
    server, nic, switch, catalog = parts()
    node = server_port(server, nic, Protocol.INFINIBAND)
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
        fabric_bom(summary, switch, catalog, node)
        bom_ms = (time.perf_counter() - start) * 1e3
        nodes, edges = graph.number_of_nodes(), graph.number_of_edges()
        del graph
        tracemalloc.start()
        graph = build_graph(request)
        fabric_bom(summary, switch, catalog, node)
        peak_mb = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
        del graph
        print(f"{gpus:>6} {summary.tiers:>5} {summary.switches:>8} {nodes:>11} {edges:>7} "
              f"{summary_us:>10.0f} {build_s:>8.2f} {check_s:>8.2f} {bom_ms:>7.2f} {peak_mb:>8.1f}")


if __name__ == "__main__":
    main()
