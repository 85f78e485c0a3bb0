"""The planner's own plans against the best published run, for docs/validation.md.

For each model, GPU, precision and stack, the published run with the most model TFLOP/s per GPU
against the plan ``designer estimate`` picks with ``parallelism: auto`` and ``recompute: auto``
(the same model, GPUs, batch, cluster and stack); the gains the model claims between published
plans of one group; and Llama 3 70B on 1,024 H100 with the default stack against the best
published Megatron-Core run of the model. Used by benchmarks/validate.py, which scores the runs.
"""

from __future__ import annotations

import statistics
from dataclasses import replace

import validation_runs as runs


def _pct(x: float | None, signed: bool = True) -> str:
    if x is None:
        return "-"
    return f"{x * 100:+.1f} %" if signed else f"{x * 100:.1f} %"


def _model_key(row: runs.Row) -> tuple:
    m = row.run["model"]
    if "preset" in m:
        return (m["preset"], m.get("seq_len"))
    return (m.get("layers"), m.get("hidden"), m.get("ffn"), m.get("seq_len"))


def best_published(results: list) -> list:
    """Per (model, GPU, precision, stack): the published run with the most model FLOP/s per GPU."""
    best: dict[tuple, object] = {}
    for r in results:
        if r.row.run.get("moe") or "moe" in str(r.row.run["model"]):
            continue
        key = (_model_key(r.row), r.row.cluster["server"], r.row.run["precision"], r.row.run["software"]["preset"])
        tf = _tflops(r, r.published_s)
        if key not in best or tf > _tflops(best[key], best[key].published_s):
            best[key] = r
    return sorted(best.values(), key=lambda r: r.row.id)


def ranking_pairs(results: list) -> list[tuple]:
    """Where the data hold several published runs of one model, GPU, precision and stack: the best
    run (most model FLOP/s per GPU) against each other one, as (best, other, published gain,
    predicted gain), each gain the MFU ratio best / other. A model that prices the plans it prefers
    too well predicts more gain than was published."""
    groups: dict[tuple, list] = {}
    for r in results:
        key = (_model_key(r.row), r.row.cluster["server"], r.row.run["precision"], r.row.run["software"]["preset"])
        groups.setdefault(key, []).append(r)
    out = []
    for key in sorted(groups, key=str):
        rs = groups[key]
        best = max(rs, key=lambda r: _tflops(r, r.published_s))
        for r in rs:
            if r is not best:
                out.append((best, r, _tflops(best, best.published_s) / _tflops(r, r.published_s),
                            best.prediction.estimate.mfu / r.prediction.estimate.mfu))
    return out


def _tflops(r, step_s: float) -> float:
    est = r.prediction.estimate
    model_flops = est.tflops_per_gpu * est.step_time_s  # per GPU, per step, model FLOPs / 1e12
    return model_flops / step_s


def auto_plan(row: runs.Row, software: dict | None = None):
    """The planner's own plan for a row's model, GPUs, batch and cluster: parallelism and
    recomputation ``auto``, the row's stack (or ``software``)."""
    auto_row = replace(row, run={**row.run, "parallelism": {k: None for k in runs.PLAN_FIELDS},
                                 "recompute": None, "software": software or row.run["software"]})
    spec, catalog = runs._load(runs.spec_text(auto_row), f"{row.id}-auto.yaml")
    from designer import planner
    return planner.estimate(spec, catalog).workloads[0].estimate


# dgxc-benchmarking, NeMo 24.12, Llama 3.1 70B BF16 on 2,048 H100 with TP overlap: 14.84 s a step, 53.6 %
# MFU in the non-causal count (the largest published Megatron-Core/NeMo run of the model on H100).
LLAMA3_70B_BEST_MFU = 0.536
LLAMA3_70B_1024 = runs.Row(
    id="llama3-70b-1024xH100-default-stack", source="(planner)", measured={},
    cluster={"server": "dgx-h100", "switch": "nvidia-qm9700", "fabric": "infiniband", "topology": "rail_optimized"},
    run={"cluster": "dgx-h100", "gpus": 1024, "software": {"preset": "megatron-core"},
         "model": {"preset": "llama3-70b"}, "global_batch": 1024, "precision": "bf16", "recompute": None,
         "parallelism": {k: None for k in runs.PLAN_FIELDS}})


def _change(published, auto) -> str:
    """What the auto plan changes in the published run's plan: the kinds the claimed gains are
    broken down by (the first that applies)."""
    p, a = published.plan, auto.plan
    if published.recompute.value != "none" and auto.recompute.value == "none":
        return "drops the published run's recomputation"
    if (p.tp, p.pp, p.cp, p.ep) != (a.tp, a.pp, a.cp, a.ep):
        return "changes tp, pp, cp or ep"
    if p.microbatch != a.microbatch:
        return "changes only the micro-batch"
    return "keeps the layout and micro-batch"


def auto_table(results: list) -> list[dict]:
    """The planner's plan against the best published run, per model, GPU, precision and stack."""
    out = []
    for r in best_published(results):
        try:
            est = auto_plan(r.row)
        except Exception as exc:  # noqa: BLE001 - a row whose auto plan fails is shown with why
            out.append({"row": r, "auto": None, "why": str(exc)})
            continue
        out.append({"row": r, "auto": est, "why": ""})
    return out


def render(results: list, table: list[dict], llama70, median: float) -> list[str]:
    """The section's lines: the table, the rule over it, the gains checked between published runs,
    and the Llama 3 70B figure (``median``: the validated median absolute step-time error)."""
    lines: list[str] = []
    lines += ["", "## The planner's plans against the best published run", "",
              "For each model, GPU, precision and stack, the published run with the most model TFLOP/s per "
              "GPU against the plan `designer estimate` picks for the same model, GPUs, batch, cluster and "
              "stack with `parallelism: auto` and `recompute: auto`. MFU counts model FLOPs with full "
              "(non-causal) attention, Megatron's and NeMo's convention up to 25.04, against the dense peak "
              "of the precision. The ratio is the product of two factors: the model's own error on the published "
              "plan (its predicted MFU there over the published one) and the gain the model claims for the auto "
              "plan over it (auto over the published plan, both predicted).", "",
              "| best published run | GPUs | stack | its plan | published MFU | predicted on its plan | auto plan | "
              "predicted MFU | auto / published | auto / its plan (predicted) |",
              "| --- | ---: | --- | --- | ---: | ---: | --- | ---: | ---: | ---: |"]
    for t in table:
        r = t["row"]
        est = r.prediction.estimate
        pub_mfu = _tflops(r, r.published_s) * 1e12 / est.peak_flops
        if t["auto"] is None:
            lines.append(f"| {r.row.id} | {r.row.run['gpus']:,} | {est.software.preset} | {est.plan.describe()} | "
                         f"{_pct(pub_mfu, False)} | {_pct(est.mfu, False)} | - ({t['why'][:80]}) | - | - | - |")
            continue
        a = t["auto"]
        lines.append(f"| {r.row.id} | {r.row.run['gpus']:,} | {est.software.preset} | {est.plan.describe()} | "
                     f"{_pct(pub_mfu, False)} | {_pct(est.mfu, False)} | {a.plan.describe()} {a.recompute.value} | "
                     f"{_pct(a.mfu, False)} | {a.mfu / pub_mfu:.2f} | {a.mfu / est.mfu:.2f} |")
    ratios = sorted(t["auto"].mfu / (_tflops(t["row"], t["row"].published_s) * 1e12 / t["row"].prediction.estimate.peak_flops)
                    for t in table if t["auto"] is not None)
    gains = sorted(t["auto"].mfu / t["row"].prediction.estimate.mfu for t in table if t["auto"] is not None)
    own = sorted(t["row"].prediction.estimate.mfu
                 / (_tflops(t["row"], t["row"].published_s) * 1e12 / t["row"].prediction.estimate.peak_flops)
                 for t in table if t["auto"] is not None)
    bound = 1.0 + median
    over = sum(x > bound for x in ratios)
    if ratios:
        lines += ["", f"Rule: the auto plan may beat the best published run of its stack for the same model and GPU by "
                  f"no more than the model's validated median error (here {_pct(median, False)}: auto / published "
                  f"<= {bound:.3f}). {len(ratios)} pairs: median ratio {statistics.median(ratios):.2f}, largest "
                  f"{ratios[-1]:.2f}; {over} pairs exceed the rule (most where the published run used a layout, "
                  "recomputation or stack setting the search is free to improve on, or the model is optimistic for "
                  f"the stack: see the rows above). Of the two factors, the model's error on the published plans has "
                  f"median {statistics.median(own):.2f} (largest {own[-1]:.2f}); the gain it claims for the auto plans "
                  f"median {statistics.median(gains):.2f} (largest {gains[-1]:.2f}); {sum(g > bound for g in gains)} "
                  "auto plans are predicted faster than the published plan by more than the median error."]
        kinds: dict[str, list[float]] = {}
        for t in table:
            if t["auto"] is not None:
                est = t["row"].prediction.estimate
                kinds.setdefault(_change(est, t["auto"]), []).append(t["auto"].mfu / est.mfu)
        parts = [f"{k}: {len(v)} pairs, median {statistics.median(v):.2f}, {sum(g > bound for g in v)} beyond the "
                 "median error" for k, v in sorted(kinds.items(), key=lambda kv: -len(kv[1]))]
        lines += ["", "The claimed gains by what the auto plan changes in the published plan: " + "; ".join(parts) + "."]
    causal = llama70.mfu_causal / llama70.mfu  # the same model and step: the ratio of the two counts
    bound70 = LLAMA3_70B_BEST_MFU * causal * (1.0 + median)
    pairs = ranking_pairs(results)
    if pairs:
        q = sorted(pred / pub for _, _, pub, pred in pairs)
        dec = statistics.quantiles(q, n=10, method="inclusive")
        lines += ["", f"The gains the model claims, checked where the data hold several published runs of one model, "
                  f"GPU, precision and stack: over {len(q)} pairs (each group's best published run against each "
                  f"other one) the predicted gain over the published gain has median {statistics.median(q):.2f} "
                  f"(10th-90th percentile {dec[0]:.2f}-{dec[-1]:.2f}); {sum(x > bound for x in q)} pairs claim more "
                  f"than the published gain by more than the median error, {sum(x < 1.0 / bound for x in q)} less."]
    lines += ["", f"Llama 3 70B on 1,024 H100 (DGX H100, NDR InfiniBand), global batch 1,024, BF16, the default "
              f"stack (megatron-core, no TP overlap), everything auto: **{llama70.plan.describe()} "
              f"{llama70.recompute.value}, MFU {_pct(llama70.mfu, False)}, {_pct(llama70.mfu_causal, False)} in the "
              f"causal count** ({llama70.tflops_per_gpu:.0f} TFLOP/s per GPU). The best published Megatron-Core/NeMo "
              "runs of this model on H100 in BF16 reach 54.5 % (64 GPUs) and 53.6 % (2,048 GPUs) with TP overlap on "
              f"(dgxc-benchmarking, non-causal count): {_pct(0.545 * causal, False)} and "
              f"{_pct(LLAMA3_70B_BEST_MFU * causal, False)} in the causal count that Meta's Llama 3 paper and "
              "torchtitan use (`mfu_causal` in `estimate --json`; Llama 3 405B on 16,384 H100: 38-43 %). Rule: the "
              f"auto plan's causal MFU stays within {_pct(LLAMA3_70B_BEST_MFU * causal, False)} plus the validated "
              f"median error, at most {_pct(bound70, False)}: "
              f"{'holds' if llama70.mfu_causal <= bound70 else 'does not hold'}."]
    return lines
