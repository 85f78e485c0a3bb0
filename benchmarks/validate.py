"""Compare the performance model with published training runs, on the user's path.

Usage::

    python benchmarks/validate.py            # print the tables
    python benchmarks/validate.py --write    # also regenerate docs/validation.md and the error band

Every row of benchmarks/data/published_runs.yaml becomes a spec by one rule
(benchmarks/validation_runs.py) and is predicted by ``designer.planner.estimate``, the code behind
``designer estimate``. The step-time error is predicted / published - 1: negative means the model
predicts a faster run than published (optimistic). Reported: median and worst absolute error over
every scored run, signed bias per source, the leave-one-source-out error (below), the interval
over what each source leaves unknown, and the planner's own (auto) plans against the best
published run of the same model and GPU.

Fitted constants. Two constants are fitted to the published runs, the rest keep their own
sources: ``TP_OVERLAP_EFFICIENCY`` and ``HBM_EFFICIENCY`` (designer/perf/constants.py). The fit
is a grid search (``FIT_GRID``) minimising the median absolute step-time error of the runs it is
given, each run timed on the plan its scored prediction chose. Leave-one-source-out refits both on
every other source and scores the held-out source with the refitted values; the constants shipped
are the fit on all sources.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from designer import perf  # noqa: E402
from designer.perf import constants as K  # noqa: E402
from designer.perf.flops import model_flops_per_token  # noqa: E402

import validation_autoplan as autoplan  # noqa: E402
import validation_collectives as collectives  # noqa: E402
import validation_memory as memory  # noqa: E402
import validation_runs as runs  # noqa: E402

# The planner's own plans against the best published run (benchmarks/validation_autoplan.py).
auto_plan, auto_table, best_published = autoplan.auto_plan, autoplan.auto_table, autoplan.best_published
LLAMA3_70B_1024, LLAMA3_70B_BEST_MFU = autoplan.LLAMA3_70B_1024, autoplan.LLAMA3_70B_BEST_MFU

DOC = ROOT / "docs" / "validation.md"
# The error band the design review page states (package data: the page cannot read docs/).
BAND = ROOT / "designer" / "report" / "html" / "model_error.json"
MEDIAN_TARGET = 0.08
WORST_TARGET = 0.25
LOSO_TARGET = 0.10
# Runs the model misses by more than WORST_TARGET, and why (the test keeps this list exact).
_NEMO_2504_DSV3 = ("NeMo 25.04's first DeepSeek-V3 recipes (TP2 with the experts folded, ETP1; 'FP8 recipe is "
    "not currently supported') reach 10 % MFU on GB200 and 16.5 % on H100, a third of what Megatron-Bridge 25.11 reaches "
    "per GB200 on the same model (3,139 against 956 tokens/s per GPU). Scored as NeMo 2.3's recipe and performance script "
    "ran them (MTP depth 1, first and last stages 64/pp - 1 and 64/pp - 2 layers, no TP overlap, core-attention "
    "recomputation on GB200, mla_up_proj on H100). The published step time is the iteration time, so no FLOP "
    "convention enters. The script's MegatronTokenDropCallback sets capacity factor 1.0 padded to capacity on the "
    "all-to-all dispatcher (balanced experts by construction, no host sync for the splits), with fused permutation, "
    "unfused RoPE, no CUDA graphs and synthetic data; even with unfused attention on GB200 the 128-GPU row stays at "
    "-55 %. Their BF16 layers issue too few host ops to be host-bound (designer.perf.host: no quantisation "
    "kernels); reaching these rows would take about 100 us per host op, 3.6 times the calibrated 28 us. What else "
    "slows these first recipes the sources do not state, and the model has no mechanism that slow (optimistic). "
    "Restating the recipe moved this row from -71.6 to -68.4 %")
BEYOND = {
    "mcore-dsv3-gb200-guide-01-baseline": "the guide's first step, before its kernel fusions (zeros and permute, "
        "router: 72 -> 31 kernels) and CPU-side optimisations (NUMA binding alone +70.6 TFLOP/s): its host issued "
        "more ops, each more slowly, than the model's count of the current stack at the calibrated 28 us "
        "(docs/model.md, 'Host-bound steps'); each later step closes part of the gap, to -1.5 % at the last "
        "(optimistic)",
    "torchtitan-llama3.1-8b-8xH100-fsdp1-cp8-seq256k": "256K context over CP8 (torch.compile, Float8, full "
        "recomputation) on PyTorch's load-balanced ring attention (torch.distributed.tensor.experimental._attention, "
        "torchtitan 9dec370): K and V, repeated to all 32 heads, are all-gathered once (its default rotate method) "
        "and waited for after the first step, a causal 32K x 32K block; every later step is a 32K x 16K or 16K x 32K "
        "block without mask, the same work with no masked waste, on the flash backend. The all-gather (7 x 537 MB, "
        "about 10 ms over NVLink) hides behind that first step (28 ms of FlashAttention-2), the backward's second "
        "all-gather likewise, and its FP32 key and value gradients (1.07 GB a step, 3 ms) behind each 70 ms step. "
        "The FP32 merges and gradient sums, one op at a time, are modelled (2.6 s of the step, over the repeated K "
        "and V: -36.8 -> -32.5 %). Each GPU runs the same 32K tokens as the table's FSDP8 CP1 32K row, so the two differ only in "
        "attention: that row is 15 % optimistic, and this one's attention runs 1.26-1.37x slower per FLOP than "
        "that row's (its other work at the model's time or at that row's error), of which the merges are 1.07x. "
        "No source measures the rest (optimistic)",
    "llama3-405b-8192gpu-seq8192": "the source's interleaved schedule does not fit the model's memory. Its "
        "schedule (sec. 3.3.2, Fig. 6: rounds of N micro-batches per chunk, N tunable between depth-first N = p and "
        "breadth-first N = M) is PyTorch's ScheduleFlexibleInterleaved1F1B, whose docstring example is Fig. 6's "
        "(p = 4, M = 10, N = 5): N = M / max(1, M // p), warm-up (v - 1) N + 2 (p - r - 1) chunks, which at M = 32 "
        "and p = 16 gives N = 16 and Megatron-Core's count (get_pp_rank_microbatches); N = 32 holds more and N < p "
        "needs M < p. At v = 8 that is 141 one-layer chunks in flight on the second stage (the first, with its "
        "embedding-only chunk, holds 112): 82.3 GB per GPU, 75.1 GB of it activations at 31.75 s b h / t bytes a layer "
        "(GQA, SwiGLU, RMSNorm, no dropout), against 79.6 GB usable after the reserve of 2 GB and 5 %. Its proactive "
        "deallocation of stage inputs and outputs frees what that count already leaves out (a stage's output once "
        "sent; its input is the first norm's saved input, needed by the backward). v = 2 and 4 hold more layers "
        "(180 and 154). The run kept less than 3.6 GB of the 85.9 GB in reserve, or kept less of a layer than the "
        "model counts; the source states neither. So plain 1F1B is scored (bubble 15/32); the v = 8 plan, where it "
        "fits, scores +6.4 %",
    "vtrain-gt-39.1B-tp2-dp16-pp16-mbs2": "the source's TP2 runs contradict its other runs of the same model on the "
        "same 512 GPUs. Every layout does the same work per GPU (1,536 sequences of the 39.1B model over 512 GPUs), so "
        "the iteration time over the 1F1B bubble, T m / (m + p - 1) with m = 1,536 / (dp x mbs), should not depend "
        "on pp or the micro-batch beyond the kernels' size. In data/ground_truth_multi.csv it stays within 11.0-14.6 s "
        "over all 41 TP4 and TP8 runs (pp 2-16, micro-batches 2-24), TP4 DP8 PP16 at micro-batch 2 included (12.6 s: "
        "twice this row's micro-batches, each of the same 2 sequences), but spans 12.3-18.1 s over the six TP2 "
        "runs: at micro-batch 3, 13.3 s at PP8 and 17.8 s at PP16; at PP8, 17.0, 13.3 and 12.3 s at micro-batches 2, "
        "3 and 6; this row 23.75 x 48/63 = 18.1 s. No mechanism that grows with the sends, the micro-batch count or "
        "smaller GEMMs slows TP2 and not TP4 at the same depth. At TP2's fastest work time (12.3 s) the row would take "
        "12.3 x 63/48 = 16.1 s, where the model predicts 15.4 (optimistic)",
    "dgxc-nemo25.04-deepseek-v3-512xGB200-bf16": _NEMO_2504_DSV3,
    "dgxc-nemo25.04-deepseek-v3-128xGB200-bf16": "as for dgxc-nemo25.04-deepseek-v3-512xGB200-bf16 (restating "
        "the recipe: -71.6 -> -68.7 %)",
    "dgxc-nemo25.04-deepseek-v3-1024xH100-bf16": "as for dgxc-nemo25.04-deepseek-v3-512xGB200-bf16 (restating "
        "the recipe: -37.8 -> -36.0 %)",
}
FIT_GRID = {
    "TP_OVERLAP_EFFICIENCY": (0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
    "HBM_EFFICIENCY": (0.80, 0.85, 0.90),  # the range STREAM copies reach on A100 and H100
}


@dataclass
class Result:
    """One scored row."""

    row: runs.Row
    prediction: runs.Prediction
    published_s: float
    how: str
    error: float  # predicted / published - 1
    low: float | None  # error at the fastest plausible plan
    high: float | None  # error at the slowest plausible plan


def run(interval: bool = True) -> tuple[list[Result], list[tuple[str, str]], dict]:
    """Predict every row: (scored results, (id, why) of rows that could not be scored, not_added)."""
    rows, not_added = runs.load_rows()
    scored, unscored = [], []
    for row in rows:
        pred = runs.predict_row(row, interval=interval)
        if pred.estimate is None:
            unscored.append((row.id, pred.problem))
            continue
        pub = runs.published_step_s(row, pred.estimate)
        if pub is None:
            unscored.append((row.id, "no published figure converts to a step time"))
            continue
        step, how = pub
        err = pred.estimate.step_time_s / step - 1.0
        low = high = None
        if pred.interval_s is not None:
            low, high = pred.interval_s[0] / step - 1.0, pred.interval_s[1] / step - 1.0
        scored.append(Result(row, pred, step, how, err, low, high))
    return scored, unscored, not_added


@dataclass(frozen=True)
class Summary:
    n: int
    median: float
    mean: float
    worst: float
    beyond: tuple[str, ...]


def summarize(errors: dict[str, float]) -> Summary:
    """Median, mean and worst absolute error, and the runs beyond the worst-run target."""
    a = [abs(e) for e in errors.values()]
    beyond = tuple(rid for rid, e in errors.items() if abs(e) > WORST_TARGET)
    return Summary(len(a), statistics.median(a), statistics.fmean(a), max(a), beyond)


def by_source(results: list[Result], errors: dict[str, float] | None = None) -> dict[str, list[float]]:
    """Signed errors grouped by source."""
    out: dict[str, list[float]] = {}
    for r in results:
        out.setdefault(r.row.source, []).append(errors[r.row.id] if errors else r.error)
    return out


# --- fitting and leave-one-source-out ------------------------------------------------------

def _retimer(results: list[Result]):
    """For each row, a function timing its scored plan again (after constants changed)."""
    from designer.planner.compile import compile_workload

    out = {}
    for r in results:
        est = r.prediction.estimate
        spec, catalog = runs._load(runs.spec_text(r.row, runs._scored_pins(r.row.run)), f"{r.row.id}.yaml")
        w = spec.workloads[0]
        cluster = runs.cluster_for(spec, catalog, w.gpus)  # the cluster the scored estimate ran on
        job = replace(compile_workload(w).job, recompute=est.recompute)
        out[r.row.id] = (job, est.plan, cluster, r.published_s)
    return out


def _errors_with(values: dict[str, float], timers: dict, ids) -> dict[str, float]:
    saved = {k: getattr(K, k) for k in values}
    try:
        for k, v in values.items():
            setattr(K, k, v)
        out = {}
        for rid in ids:
            job, plan, cluster, published = timers[rid]
            out[rid] = perf.estimate_step(job, plan, cluster).step_time_s / published - 1.0
        return out
    finally:
        for k, v in saved.items():
            setattr(K, k, v)


def fit(timers: dict, ids) -> dict[str, float]:
    """The grid point of ``FIT_GRID`` with the lowest median absolute error over ``ids``
    (ties: the first in grid order)."""
    names = list(FIT_GRID)
    best, best_med = None, None
    for point in itertools.product(*(FIT_GRID[n] for n in names)):
        values = dict(zip(names, point))
        med = statistics.median(abs(e) for e in _errors_with(values, timers, ids).values())
        if best_med is None or med < best_med - 1e-12:
            best, best_med = values, med
    assert best is not None
    return best


def leave_one_source_out(results: list[Result]) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """Each source's runs scored with the constants fitted on every other source: (errors by run,
    the fitted values per held-out source)."""
    timers = _retimer(results)
    sources = sorted({r.row.source for r in results})
    errors: dict[str, float] = {}
    fitted: dict[str, dict[str, float]] = {}
    for source in sources:
        train = [r.row.id for r in results if r.row.source != source]
        test = [r.row.id for r in results if r.row.source == source]
        values = fit(timers, train)
        fitted[source] = values
        errors.update(_errors_with(values, timers, test))
    return errors, fitted


# --- rendering ---------------------------------------------------------------------------------

def _pct(x: float | None, signed: bool = True) -> str:
    if x is None:
        return "-"
    return f"{x * 100:+.1f} %" if signed else f"{x * 100:.1f} %"


def _fmt(x: float) -> str:
    return f"{x:,.2f}" if x < 100 else f"{x:,.0f}"


def render(results, unscored, not_added, loso, fitted, table, llama70) -> str:
    errors = {r.row.id: r.error for r in results}
    s = summarize(errors)
    ls = summarize(loso)
    lines = [
        f"**{s.n} runs scored** on the user's path: median |step-time error| **{_pct(s.median, False)}**, mean "
        f"{_pct(s.mean, False)}, worst **{_pct(s.worst, False)}**; leave-one-source-out median "
        f"**{_pct(ls.median, False)}** (worst {_pct(ls.worst, False)}). Targets: median <= "
        f"{MEDIAN_TARGET:.0%}, every run <= {WORST_TARGET:.0%}, leave-one-source-out median <= {LOSO_TARGET:.0%}. "
        f"{len(s.beyond)} runs are beyond {WORST_TARGET:.0%}: {', '.join(s.beyond) or 'none'}. "
        f"{len(unscored)} rows could not be scored (listed below).",
        "",
        "Fitted constants (all sources): " + ", ".join(
            f"`{k}` = {getattr(K, k)}" for k in FIT_GRID) + ".",
        "",
        "| source | runs | median abs. error | signed bias (median) | worst | leave-one-source-out median | refitted |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    groups = by_source(results)
    lgroups = by_source(results, loso)
    for source in sorted(groups):
        e = groups[source]
        le = lgroups[source]
        ref = ", ".join(f"{k.split('_')[0].lower()} {v}" for k, v in fitted[source].items())
        lines.append(f"| {source} | {len(e)} | {_pct(statistics.median(map(abs, e)), False)} | "
                     f"{_pct(statistics.median(e))} | {_pct(max(map(abs, e)), False)} | "
                     f"{_pct(statistics.median(map(abs, le)), False)} | {ref} |")
    lines += ["", "| run | GPUs | stack | plan (scored) | unknown | published | predicted step | error | "
              "interval over the unknowns |",
              "| --- | ---: | --- | --- | --- | --- | ---: | ---: | --- |"]
    for r in results:
        est = r.prediction.estimate
        unk = ", ".join(r.prediction.unknown) or "-"
        span = "-" if r.low is None or r.low == r.high else f"{_pct(r.low)} .. {_pct(r.high)}"
        lines.append(f"| {r.row.id} | {r.row.run['gpus']:,} | {est.software.preset} | {est.plan.describe()} "
                     f"{est.recompute.value} | {unk} | {r.how}: {_fmt(r.published_s)} s | "
                     f"{_fmt(est.step_time_s)} s | {_pct(r.error)} | {span} |")
    lines += ["", "Runs beyond 25 % and why:", ""]
    lines += [f"- {rid} ({_pct(errors[rid])}): {BEYOND.get(rid, 'not explained')}" for rid in s.beyond]
    lines += ["", "Not scored:", ""]
    lines += [f"- {rid}: {why}" for rid, why in unscored]
    lines += ["", "Published rows not added to the data (not complete enough for a spec):", ""]
    lines += [f"- {rid}: {why}" for rid, why in not_added.items()]
    lines += autoplan.render(results, table, llama70, s.median)
    lines += memory.render(results, table)
    return "\n".join(lines) + "\n"


DOC_HEAD = """# Validation against published training runs

Generated by `python benchmarks/validate.py --write`; do not edit by hand.

Every row of `benchmarks/data/published_runs.yaml` is turned into a spec by one rule
(`benchmarks/validation_runs.py`): the row's `run:` block restates what the source published
(cluster, GPUs, software stack as a `software:` preset with the knobs the source states, model,
global batch, precision, recomputation, parallelism). The cluster names catalog entries; hardware
the built-in catalogs lack is a user catalog, `benchmarks/data/validation_catalog/`, named in
the spec's `catalogs:`. The spec goes through `designer.planner.estimate`, the code behind
`designer estimate`. What the source leaves unknown has its documented default where one exists
(micro-batch 1; plain 1F1B unless the source says it interleaved) and is `auto` otherwise (the
planner picks the fastest plan that fits): that is the scored point. The interval column spans
every plausible value of the unknowns (every plan of the stack that fits), timed on the cluster
the scored estimate runs on (the same placement on each scale-up domain), so it holds the scored
point by construction; a row whose scored step fell outside its interval stops the script. The
leave-one-source-out refits retime each scored plan on that same cluster. The published figure
becomes a step time by the first of: iteration time, tokens per second per GPU, GPU-hours per
trillion tokens, time to train over tokens trained, TFLOP/s per GPU in the source's convention.
Error = predicted step / published step - 1; negative is optimistic.

Fit procedure: `TP_OVERLAP_EFFICIENCY` and `HBM_EFFICIENCY` are fitted by a grid search
(`FIT_GRID` in `benchmarks/validate.py`) minimising the median absolute error, each run timed on
the plan its scored prediction chose. Leave-one-source-out refits them on all other sources and
scores the held-out source with those values. Every other constant has its own source
(`designer/perf/constants.py`, `designer/perf/stacks.py`) and is not fitted.

Notes:

* FLOP conventions differ between sources (SC21, MT-NLG, BLOOM and the FSDP paper count the
  recomputation; NeMo changed its attention count between 25.04 and 25.09), so TFLOP/s figures
  are converted with this model's own FLOP formula in the source's convention, and tokens per
  second or step times are used wherever a source gives them.
* vTrain's 39.1B model with TP2 x PP16 at micro-batch 2 contradicts the source's other runs: its
  per-GPU work time after the 1F1B bubble is 18.1 s, where the 41 TP4 and TP8 runs of the same
  model on the same 512 GPUs stay within 11.0-14.6 s at every depth and micro-batch and the six
  TP2 runs span 12.3-18.1 s (the arithmetic is under "Runs beyond 25 % and why"). It is scored
  like every other run.
* The fsdp2 preset's context parallelism is PyTorch's ring attention, FP32 merges included (NeMo
  AutoModel's runs it too, with the all-gather rotate method). Llama 3's 131K row runs Meta's own,
  which all-gathers the keys and values and then computes the local query chunk's attention
  (sec. 3.3.2), without merges; it is scored with the preset's (-10.8 % without the merges,
  -6.1 % with them).
* GB200 NVL72 rows run on 64 of each rack's 72 GPUs, as the NVIDIA tables size them (64, 128,
  256, 512 GPUs): their specs pin `system.gpus_per_domain_used: 64`. Where a recipe's layout
  does not fit in HBM without recomputation, the model offloads activations to Grace memory as
  the recipes do (docs/model.md, "Memory").
* The dgxc DeepSeek-V3 rows state ETP1 (experts folded over TP x DP, EP 64 over TP2 x DP32):
  their specs pin `parallelism.etp: 1`.
* `--write` also regenerates this file; reproduce every figure with
  `python benchmarks/validate.py` (about half a minute).

"""


def error_band(results: list[Result], unscored: list[tuple[str, str]]) -> dict:
    """The step-time error over the scored runs, as the review page states it.

    Errors are predicted / published step time - 1 (negative: the model is optimistic), so a
    predicted time ``t`` stands for a real run of ``t / (1 + e)``. The page's band is the central
    80 % of the signed errors (10th to 90th percentile, inclusive method), with the extremes stated.
    """
    errors = [r.error for r in results]
    deciles = statistics.quantiles(errors, n=10, method="inclusive")
    groups = by_source(results)
    return {
        "generated_by": "python benchmarks/validate.py --write",
        "document": "docs/validation.md",
        "error": "predicted / published step time - 1",
        "runs": len(errors),
        "left_out": len(unscored),
        "median_abs_error": round(statistics.median(abs(e) for e in errors), 4),
        "max_abs_error": round(max(abs(e) for e in errors), 4),
        "min_signed_error": round(min(errors), 4),
        "max_signed_error": round(max(errors), 4),
        "p10_signed_error": round(deciles[0], 4),
        "p90_signed_error": round(deciles[-1], 4),
        "sources": [{"name": name, "runs": len(errs), "median_abs_error": round(statistics.median(abs(e) for e in errs), 4),
                     "max_abs_error": round(max(abs(e) for e in errs), 4)} for name, errs in sorted(groups.items())],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="regenerate docs/validation.md")
    args = parser.parse_args(argv)
    results, unscored, not_added = run()
    loso, fitted = leave_one_source_out(results)
    table = autoplan.auto_table(results)
    llama70 = autoplan.auto_plan(autoplan.LLAMA3_70B_1024)
    text = render(results, unscored, not_added, loso, fitted, table, llama70)
    coll = collectives.render_collectives(collectives.collective_cases())
    print(text)
    print(coll)
    if args.write:
        DOC.write_text(DOC_HEAD + text + collectives.COLL_HEAD + coll)
        BAND.write_text(json.dumps(error_band(results, unscored), indent=2) + "\n")
        print(f"wrote {DOC.relative_to(ROOT)} and {BAND.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
