"""Renderers of ``designer estimate`` results: a terminal table and docs/contract.md's JSON."""

from __future__ import annotations

__all__ = ["estimate_to_json_dict", "render_estimate"]

from typing import Any

from tabulate import tabulate



def estimate_to_json_dict(result: Any) -> dict[str, Any]:
    """``{"system": {...}, "workloads": [...]}`` with the docs/contract.md ``estimate --json`` keys."""
    system = {"server": result.server, "nodes": result.nodes, "fabric": result.fabric, "topology": result.topology}
    if result.gpus_per_domain_used is not None:
        system["gpus_per_domain_used"] = result.gpus_per_domain_used
    system.update(switch=result.switch, link_gbps_per_gpu=result.link_gbps_per_gpu,
                  nic_native_gbps=result.nic_native_gbps)
    return {
        "system": system,
        "workloads": [{**w.estimate.to_json_dict(w.name), "assumptions": list(w.assumptions)}
                      for w in result.workloads],
    }


def render_estimate(result: Any) -> str:
    """A table per workload: the plan, the predictions and the step-time breakdown."""
    head = (f"{result.spec_name}: {result.nodes} x {result.server}, {result.fabric} "
            f"{result.topology.replace('_', '-')}")
    if result.switch:
        head += f", {result.switch}"
    if result.link_gbps_per_gpu:
        head += f", {result.link_gbps_per_gpu:g} Gb/s per GPU"
        if result.nic_native_gbps:
            head += f" (NICs run below their {result.nic_native_gbps:g} Gb/s)"
    if result.gpus_per_domain_used is not None:
        head += f", {result.gpus_per_domain_used} GPUs used of each scale-up domain"
    head += "\n\n"
    rows = []
    for w in result.workloads:
        e = w.estimate
        p = e.plan
        plan = f"tp{p.tp} pp{p.pp} dp{p.dp} ep{p.ep} cp{p.cp} mb{p.microbatch}"
        if p.virtual_stages > 1:
            plan += f" v{p.virtual_stages}"
        rows.append([w.name, e.gpus, plan,
                     f"{e.step_time_s:.3f}", f"{e.utilization:.3f}", f"{e.mfu:.3f}", f"{e.tflops_per_gpu:.1f}",
                     f"{e.tokens_per_s:,.0f}", f"{e.time_to_train_days:.1f}",
                     f"{e.memory_bytes_per_gpu / 1e9:.1f} GB"])
    table = tabulate(rows, headers=["workload", "GPUs", "plan", "step s", "util", "MFU", "TFLOP/s/GPU",
                                    "tokens/s", "days", "memory/GPU"], tablefmt="simple")
    parts = [head, table, "\n"]
    for w in result.workloads:
        e = w.estimate
        sw = e.software.describe()
        layers = "/".join(str(n) for n in e.stage_layers)
        parts.append(f"\n{w.name}: software {sw['preset']} (attention {sw['attention']}, sequence parallel "
                     f"{'on' if e.plan.sequence_parallel else 'off'}, TP overlap "
                     f"{'on' if sw['tp_comm_overlap'] else 'off'}, DP overlap {'on' if sw['dp_overlap'] else 'off'}); "
                     f"recompute {e.recompute.value}; zero {e.plan.zero}; layers per stage {layers}; memory "
                     f"{e.memory_bytes_per_gpu / 1e9:.1f} of {e.memory_usable_bytes / 1e9:.1f} GB usable per GPU"
                     + (f"; activations offloaded to host memory {e.offload_bytes_per_gpu / 1e9:.1f} GB per GPU"
                        if e.offload_bytes_per_gpu else "") + "\n")
        for note in w.assumptions:
            parts.append(f"  assumed: {note}\n")
    for w in result.workloads:
        b = w.estimate.breakdown
        rows = [[k, f"{v:.4f}"] for k, v in (
            ("compute", b.compute_s), ("pipeline bubble", b.bubble_s), ("exposed communication", b.exposed_comm_s),
            ("  tensor-parallel (total)", b.tp_comm_s), ("  pipeline p2p (total)", b.pp_comm_s),
            ("  data-parallel (total)", b.dp_comm_s), ("  expert all-to-all (total)", b.ep_comm_s),
            ("optimizer step", b.optimizer_s), ("checkpoint stall", b.checkpoint_s))]
        parts.append(f"\n{w.name}: step time breakdown (seconds)\n")
        parts.append(tabulate(rows, tablefmt="plain") + "\n")
    return "".join(parts)
