"""Peak memory per GPU against published measurements, for docs/validation.md.

Every row of benchmarks/data/published_runs.yaml that publishes a peak memory (``measured:
peak_memory_gib`` or ``memory_gib``) is compared with the memory the scored estimate of its
step-time validation predicts (the same spec, ``designer.planner.estimate``, the code behind
``designer estimate``): the largest stage's :class:`~designer.perf.memory.MemoryBreakdown` total,
less what the plan offloads to host memory. Both in GiB (2^30 bytes), the published unit.

The published figures are torchtitan's ``memory: ... GiB`` log line: the caching allocator's
``reserved_bytes.all.peak`` (torch.cuda.memory_stats), i.e. what the allocator took from the
driver, cached but unused blocks included (torchtitan/metrics.py ``DeviceMemoryMonitor``,
torchtitan 9dec370; torchtitan/components/metrics.py later). Error = predicted / published - 1;
negative means the model predicts less memory than the run held (optimistic: a plan it calls a
fit may not fit).

Every run that publishes a peak is a torchtitan run, counted with the ``torchtitan`` preset's memory
(its loss's backward peaks, K and V saved repeated to every head, the all-gathered tensor-parallel
inputs saved whole: designer/perf/stacks.py).

Also the auto plans that drop the published run's recomputation: their predicted memory against
the usable HBM (:func:`designer.perf.memory.usable_hbm_bytes`), so a gain that rests on a tight
fit shows. Used by benchmarks/validate.py.
"""

from __future__ import annotations

__all__ = ["GIB", "MemoryRow", "memory_rows", "summary", "render"]

import statistics
from dataclasses import dataclass

import validation_autoplan as autoplan
import validation_runs as runs

GIB = float(2**30)  # the published unit: torchtitan's DeviceMemoryMonitor divides by 1024^3


@dataclass(frozen=True)
class MemoryRow:
    """One published peak memory against the predicted one (GiB per GPU)."""

    id: str
    plan: str
    published_gib: float
    predicted_gib: float
    weights_gib: float
    grads_gib: float
    optimizer_gib: float
    activations_gib: float
    buffers_gib: float

    @property
    def error(self) -> float:
        """predicted / published - 1 (negative: the model is optimistic)."""
        return self.predicted_gib / self.published_gib - 1.0


def published_gib(row: runs.Row) -> float | None:
    """The row's published peak memory per GPU in GiB, if it has one."""
    m = row.measured
    for key in ("peak_memory_gib", "memory_gib"):
        if key in m:
            return float(m[key])
    return None


def memory_rows(pairs) -> list[MemoryRow]:
    """``pairs`` of (row, scored estimate): the rows with a published peak memory, compared.

    Predicted = the estimate's ``memory`` breakdown total (offloaded activations already taken
    out, :func:`designer.perf.step.estimate_from`) / 2^30.
    """
    out = []
    for row, est in pairs:
        pub = published_gib(row)
        if pub is None or est is None:
            continue
        mb = est.memory
        out.append(MemoryRow(row.id, f"{est.plan.describe()} {est.recompute.value}", pub,
                             est.memory_bytes_per_gpu / GIB, mb.weights / GIB, mb.grads / GIB,
                             mb.optimizer / GIB, mb.activations / GIB, mb.buffers / GIB))
    return out


def summary(rows: list[MemoryRow]) -> tuple[float, float, float]:
    """(median signed error, median absolute error, worst signed error: the largest in magnitude)."""
    errors = [r.error for r in rows]
    return statistics.median(errors), statistics.median(abs(e) for e in errors), max(errors, key=abs)


def _pct(x: float) -> str:
    return f"{x * 100:+.1f} %"


def render(results: list, table: list[dict]) -> list[str]:
    """The section's lines: the memory table and its summary, then the auto plans that drop the
    published run's recomputation with their predicted memory against the usable HBM."""
    rows = memory_rows((r.row, r.prediction.estimate) for r in results)
    lines = ["", "## Peak memory against published measurements", "",
             "Every run that publishes its peak memory per GPU, against the memory the scored estimate above "
             "predicts for the same spec and plan (the largest pipeline stage; weights, gradients, optimizer "
             "state, activations, gather buffers). GiB = 2^30 bytes, the published unit. The published figures "
             "are torchtitan's logged peak: the PyTorch caching allocator's `reserved_bytes.all.peak`, cached "
             "free blocks included (torchtitan `DeviceMemoryMonitor`). Error = predicted / published - 1; "
             "negative is optimistic (the run needed more than the model counts). Every one is a torchtitan run, "
             "counted with the `torchtitan` preset's memory: its loss peaks in the backward at 12 bytes a logit "
             "(the saved FP32 log_softmax output, the gradient it is handed and the one it returns, after "
             "`del pred` freed the BF16 logits), at 16 with TP (DTensor's `loss_parallel` decomposed: the "
             "log-probs, `zeros_like` and two temporaries), its attention saves K and V repeated to every query "
             "head (`repeat_kv` before SDPA), and its DTensor TP saves the all-gathered inputs of the "
             "column-parallel linears whole. The `fsdp2` preset, which stands for Meta's Llama 3 stack, "
             "llm-foundry and fms-fsdp, counts none of them: the Llama 3 405B production rows (no recomputation, "
             "TP8) and llm-foundry's MPT-7B at 8K on 8 H100 would not fit with them, and did.", "",
             "| run | plan (scored) | published | predicted | error | weights | grads | optimizer | activations "
             "| buffers |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        lines.append(f"| {r.id} | {r.plan} | {r.published_gib:.1f} | {r.predicted_gib:.1f} | {_pct(r.error)} | "
                     f"{r.weights_gib:.1f} | {r.grads_gib:.1f} | {r.optimizer_gib:.1f} | {r.activations_gib:.1f} | "
                     f"{r.buffers_gib:.1f} |")
    if rows:
        med, med_abs, worst = summary(rows)
        lines += ["", f"{len(rows)} runs: median signed error **{_pct(med)}** (median absolute "
                  f"{med_abs * 100:.1f} %), worst **{_pct(worst)}**. The Trainy rows "
                  "ran torchtitan e7c0cae (June 2025), which compiles the loss under `compile` "
                  "(components/loss.py, build_cross_entropy_loss) where 9dec370 ran it eagerly: the preset has "
                  "no fused loss. Not counted either: what the full-recomputation runs hold beyond one layer's "
                  "recomputed activations (their backward's gradients, FSDP2's unsharded root and reduce-scatter "
                  "buffers)."]
    drops = [t for t in table if t["auto"] is not None
             and autoplan._change(t["row"].prediction.estimate, t["auto"]) == "drops the published run's recomputation"]
    if drops:
        lines += ["", "The auto plans that drop the published run's recomputation (above), with the memory the model "
                  "predicts for them against the HBM a plan may fill (capacity less the reserve, "
                  "`designer.perf.memory.usable_hbm_bytes`):", "",
                  "| best published run | stack | its plan | auto plan | auto / its plan (predicted) "
                  "| auto plan memory | usable | fill |",
                  "| --- | --- | --- | --- | ---: | ---: | ---: | ---: |"]
        fills = []
        for t in drops:
            est, a = t["row"].prediction.estimate, t["auto"]
            fill = a.memory_bytes_per_gpu / a.memory_usable_bytes
            fills.append(fill)
            lines.append(f"| {t['row'].row.id} | {a.software.preset} | {est.plan.describe()} {est.recompute.value} | "
                         f"{a.plan.describe()} {a.recompute.value} | {a.mfu / est.mfu:.2f} | "
                         f"{a.memory_bytes_per_gpu / GIB:.1f} GiB | {a.memory_usable_bytes / GIB:.1f} GiB | "
                         f"{fill * 100:.0f} % |")
        fills.sort()
        tight = sum(f > 0.9 for f in fills)
        text = (f"{len(fills)} plans: median fill {statistics.median(fills) * 100:.0f} % of the usable HBM, "
                f"largest {fills[-1] * 100:.0f} %; {tight} above 90 %.")
        optimistic = [r.error for r in rows if r.error < 0]
        if optimistic:
            # a run that held published = predicted / (1 + e): the plans that would not fit if they
            # were off like the median and the most optimistic of the measured runs
            med_opt, worst_opt = statistics.median(optimistic), min(optimistic)
            over = [sum(f / (1.0 + e) > 1.0 for f in fills) for e in (med_opt, worst_opt)]
            modes = sorted({r.plan.rsplit(" ", 1)[-1] for r in rows if r.error < 0})
            text += (f" Off like the median of the runs the model under-counts ({_pct(med_opt)}), {over[0]} of them "
                     f"would exceed it; off like the most under-counted ({_pct(worst_opt)}), {over[1]}. The "
                     f"under-counted runs recompute {' or '.join(modes)}; no published peak measures a plan "
                     "without recomputation.")
        titan = [t for t in drops if t["auto"].software.preset == "torchtitan"]
        text += (f" {len(titan)} of the plans are torchtitan's, searched with its own memory.")
        lines += ["", text]
    return lines
