"""Known cases behave as the field knows (network.md, perf.md).

* A 16k-GPU dense pre-training run held to 90% utilization does not pick TCP Ethernet: kernel
  TCP's latency and protocol efficiency leave the GPUs waiting (the fabric table of docs/data-flow.md).
* A 64-GPU fine-tune with a loose utilization target does not pay for InfiniBand.
* Rail-only (Wang et al., arXiv:2307.12169) is cheaper than a rail-optimized fat tree for dense
  traffic, and its network costs 38-77% less in the paper; we check the direction and that the
  saving falls in a wide band around it.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from designer import planner
from designer.planner.inputs import load_inputs


def _solve(tmp_path: Path, text: str):
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(text))
    spec, catalog = load_inputs(path)
    return planner.plan(spec, catalog)


def _network_capex(design) -> float:
    return sum(l.total_usd for l in design.bom if l.category in ("switch", "transceiver", "cable"))


def test_16k_gpu_pretraining_at_80_percent_does_not_pick_tcp(tmp_path):
    # Overlap costs compute (collectives slow the GEMMs they run beside), large groups pay
    # NCCL's ring latency and the pipeline's fill and drain wait for every send between its
    # chunks, so the best plan here reaches about 0.83 utilization on InfiniBand; 0.80 leaves
    # room for the fabric to matter.
    d = _solve(tmp_path, """
        version: 1
        name: dense-16k
        workloads:
          - name: llama3-70b
            model: {preset: llama3-70b}
            tokens: 15T
            global_batch: 8192
            gpus: 16384
            deadline: 200 days
        constraints:
          min_utilization: 0.80
          deployments: [on_prem]
          fabrics: [ethernet, roce, infiniband]
          gpus: [h100-sxm]
        """)
    assert d.system.gpus == 16384
    assert d.system.fabric in ("roce", "infiniband")
    tcp = next(a for a in d.alternatives if a.label == "fabric=ethernet")
    assert not tcp.feasible and "utilization" in tcp.reason
    assert all(w.utilization >= 0.80 for w in d.workloads)


def test_64_gpu_finetune_with_loose_target_does_not_pick_infiniband(tmp_path):
    d = _solve(tmp_path, """
        version: 1
        name: finetune-64
        workloads:
          - name: llama3-8b-sft
            model: {preset: llama3-8b, seq_len: 4096}
            tokens: 20B
            global_batch: 256
            gpus: 64
            deadline: 14 days
        constraints:
          min_utilization: 0.40
          deployments: [on_prem]
          fabrics: [ethernet, roce, infiniband]
          gpus: [h100-sxm]
        """)
    assert d.system.gpus >= 64
    assert d.system.fabric != "infiniband"
    ib = next(a for a in d.alternatives if a.label == "fabric=infiniband")
    assert ib.total_usd is None or ib.total_usd > d.cost.total_usd


@pytest.mark.parametrize("nodes", [64, 1024])
def test_rail_only_is_cheaper_than_rail_optimized_for_dense_training(tmp_path, nodes):
    spec = """
        version: 1
        name: rail-{topo}
        workloads:
          - name: llama3-70b
            model: {{preset: llama3-70b}}
            tokens: 2T
            global_batch: 2048
            gpus: {gpus}
        constraints:
          min_utilization: 0.5
          deployments: [on_prem]
        system: {{server: dgx-h100, switch: nvidia-qm9700, fabric: infiniband, topology: {topo}, nodes: {nodes},
                 oversubscription: 1}}
        """
    only = _solve(tmp_path, spec.format(topo="rail_only", gpus=nodes * 8, nodes=nodes))
    full = _solve(tmp_path, spec.format(topo="rail_optimized", gpus=nodes * 8, nodes=nodes))
    assert only.cost.total_usd < full.cost.total_usd
    saving = 1 - _network_capex(only) / _network_capex(full)
    # Rail-only paper abstract: 38% to 77% lower network cost; our catalog prices land inside a
    # wider band because switch/optic prices differ from the paper's.
    assert 0.2 <= saving <= 0.8, saving
    # Dense traffic (TP inside the node, DP on rails) runs as well on rail-only.
    assert only.workloads[0].utilization == pytest.approx(full.workloads[0].utilization, abs=0.02)
