"""Published runs on the user's path: one rule turns a row into a spec, the planner predicts it.

The rule (the same for every row of benchmarks/data/published_runs.yaml):

* the row's ``run:`` block holds what the source states, in a spec's terms; its cluster names a
  catalog server, switch, fabric and topology (``clusters:``; hardware the built-in catalogs lack
  is in benchmarks/data/validation_catalog/, named in the spec's ``catalogs:`` as a user would),
  and how many GPUs of each scale-up domain the source's jobs use (``gpus_per_domain_used``: 64
  of each GB200 NVL72's 72);
* the spec pins that system (all of the run's GPUs), the model, global batch, precision and the
  source's software stack as a ``software:`` preset with the knobs the source states; everything
  else keeps its documented default;
* what the source leaves unknown among the plan (tensor, pipeline, data and context parallelism,
  micro-batch, interleaving, ZeRO stage, sequence parallelism) and the recomputation is ``auto``:
  the planner picks the fastest plan that fits, as ``designer estimate`` does. That is the scored
  point (published runs are tuned for speed). The interval over every plausible value of the
  unknowns (every plan the stack can run that fits in memory) is reported beside it;
* the published figure becomes a step time by the first of: iteration time; tokens per second per
  GPU; GPU-hours per trillion tokens; time to train over the tokens trained; TFLOP/s per GPU in the
  source's FLOP convention (``run.flops``: model FLOPs; ``causal``, model FLOPs with the attention
  core counted causal, as Megatron-Core's formula from 2025; or hardware FLOPs that include the
  recomputation) counted with this model's FLOP formula.

The prediction is ``designer.planner.estimate`` on the parsed spec, exactly what ``designer
estimate`` runs; the catalogs are loaded once and reused.
"""

from __future__ import annotations

__all__ = ["DATA", "CATALOG_DIR", "Row", "Prediction", "load_rows", "spec_text", "predict_row",
           "published_step_s", "source_of", "cluster_for"]

import functools
import math
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from designer import perf, planner
from designer.catalog.load import load_catalog
from designer.errors import DesignerError
from designer.optimize.evaluate import Evaluator
from designer.perf.flops import causal_model_flops_per_token, hardware_flops, model_flops_per_token
from designer.planner import inputs
from designer.planner.predict import pinned_candidate
from designer.planner.compile import arch_for, compile_workload, facility_for
from designer.spec.load import parse_spec
from designer.spec.yamlio import load_yaml_text

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data" / "published_runs.yaml"
CATALOG_DIR = ROOT / "benchmarks" / "data" / "validation_catalog"
PLAN_FIELDS = ("tp", "pp", "dp", "cp", "ep", "microbatch", "virtual_stages", "zero", "sequence_parallel")

# Sources: a row's id prefix -> the publication it comes from (leave-one-source-out holds out one).
SOURCES = (
    ("megatron-sc21", "Megatron-LM SC21 (Narayanan et al.)"),
    ("korthikanti", "Korthikanti et al. 2022"),
    ("mtnlg", "MT-NLG (Smith et al. 2022)"),
    ("megatron-core", "Megatron-LM README (Megatron-Core)"),
    ("mcore-dsv3-gb200-guide", "Megatron-Core DeepSeek-V3 GB200 optimisation guide"),
    ("nemo-automodel", "NeMo AutoModel performance summary"),
    ("nemo-", "NeMo performance summaries"),
    ("mbridge", "Megatron-Bridge performance summaries"),
    ("dgxc", "NVIDIA DGX Cloud benchmarking"),
    ("mosaicml", "MosaicML llm-foundry benchmarks"),
    ("vtrain", "vTrain ground truth (MICRO 2024)"),
    ("llama3", "Llama 3 paper (Table 4)"),
    ("opt-", "OPT paper"),
    ("llama1", "LLaMA paper"),
    ("deepseek-v3", "DeepSeek-V3 report"),
    ("mlperf", "MLPerf Training results (submission logs)"),
    ("fsdp-vldb23", "PyTorch FSDP paper (PVLDB 2023)"),
    ("ibm-fms", "PyTorch/IBM FSDP blog"),
    ("torchtitan-trainy", "torchtitan H200 benchmark (Trainy)"),
    ("torchtitan", "torchtitan benchmarks"),
    ("bloom", "BLOOM training README"),
)


def source_of(rid: str) -> str:
    """The publication a row comes from."""
    for prefix, name in SOURCES:
        if rid.startswith(prefix):
            return name
    return rid


@dataclass(frozen=True)
class Row:
    """A published run: its id, source, the ``run:`` block and what it measured."""

    id: str
    source: str
    run: dict
    measured: dict
    cluster: dict


@dataclass(frozen=True)
class Prediction:
    """A row predicted on the user's path: the scored estimate and the interval of step times."""

    row: Row
    estimate: perf.StepEstimate | None
    interval_s: tuple[float, float] | None
    unknown: tuple[str, ...]
    assumptions: tuple[str, ...]
    problem: str = ""


def load_rows(path: Path = DATA) -> tuple[list[Row], dict]:
    """Every row of the data file (with its cluster), and the file's ``not_added`` notes."""
    data = yaml.safe_load(path.read_text())
    clusters = data["clusters"]
    rows = [Row(r["id"], source_of(r["id"]), r["run"], r.get("measured", {}), clusters[r["run"]["cluster"]])
            for r in data["runs"]]
    return rows, data.get("not_added", {})


def _unknown(run: dict) -> tuple[str, ...]:
    par = run["parallelism"]
    out = [k for k in PLAN_FIELDS if par.get(k) is None or par.get(k) == "interleaved"]
    if run.get("recompute") is None:
        out.append("recompute")
    return tuple(out)


def _scored_pins(run: dict) -> dict:
    """What the scored point sets for the unknowns with a documented default: micro-batch 1
    (Megatron-LM requires one; NeMo's recipes and torchtitan's pipeline default to 1) and plain
    1F1B unless the source says it interleaved (Megatron-LM's default is no interleaving)."""
    par = run["parallelism"]
    pins: dict = {}
    if par.get("microbatch") is None:
        pins["microbatch"] = 1
    if par.get("virtual_stages") is None:
        pins["virtual_stages"] = 1
    return pins


def spec_text(row: Row, pins: dict | None = None) -> str:
    """The spec of a row: its cluster pinned, its facts given, its unknowns ``auto`` (or ``pins``)."""
    run, cl = row.run, row.cluster
    par = {k: v for k, v in run["parallelism"].items() if v is not None and v != "interleaved"}
    recompute = run.get("recompute") or "auto"
    for key, value in (pins or {}).items():
        if key == "recompute":
            recompute = value
        else:
            par[key] = value
    par_text = "{" + ", ".join(f"{k}: {str(v).lower() if isinstance(v, bool) else v}" for k, v in par.items()) + "}"
    model = ", ".join(f"{k}: {v}" for k, v in run["model"].items())
    software = ", ".join(f"{k}: {str(v).lower() if isinstance(v, bool) else v}" for k, v in run["software"].items())
    gpus = run["gpus"]
    used = cl.get("gpus_per_domain_used")
    nodes = math.ceil(gpus / (used or 8))
    placement = f", gpus_per_domain_used: {used}" if used else ""
    seq = run["model"].get("seq_len", 4096)
    tokens = max(run["global_batch"] * seq * 10, 1e9)
    catalogs = ", ".join(f"validation_catalog/{p.name}" for p in sorted(CATALOG_DIR.glob("*.yaml")))
    return (f"version: 1\nname: {row.id}\nworkloads:\n  - name: run\n    model: {{{model}}}\n"
            f"    tokens: {tokens:.0f}\n    global_batch: {run['global_batch']}\n    precision: {run['precision']}\n"
            f"    recompute: {recompute}\n    parallelism: {par_text}\n    gpus: {gpus}\n"
            f"    software: {{{software}}}\n"
            f"catalogs: [{catalogs}]\n"
            f"system: {{server: {cl['server']}, switch: {cl['switch']}, nodes: {nodes}, fabric: {cl['fabric']}, "
            f"topology: {cl['topology']}, oversubscription: {cl.get('oversubscription', 1)}{placement}}}\n")


@functools.lru_cache(maxsize=4)
def _catalog(files: tuple[str, ...]):
    return load_catalog(list(files))


def _load(text: str, name: str):
    """``designer estimate``'s loading (planner.inputs.load_inputs) on a spec held in memory."""
    spec = parse_spec(load_yaml_text(text, name), base_dir=DATA.parent)
    catalog = _catalog(tuple(str(p) for p in spec.catalogs))
    inputs.check_references(spec, catalog)
    inputs.check_software(spec)
    return replace(spec, warnings=inputs.spec_warnings(spec)), catalog


def cluster_for(spec, catalog, gpus: int) -> perf.Cluster | None:
    """The GPU and network ``designer estimate`` runs a job of ``gpus`` GPUs on: the evaluator's
    placement (the pinned share of each scale-up domain), its network view and efficiency, as
    :meth:`designer.optimize.evaluate.Evaluator.evaluate` builds them."""
    cand, _ = pinned_candidate(spec, catalog)
    evaluator = Evaluator(catalog, facility_for(spec, catalog),
                          gpus_per_domain_used=spec.system.gpus_per_domain_used)
    nodes, used = evaluator.placement(cand, gpus)
    view = evaluator.view(cand, nodes)
    if view is None:
        return None
    if nodes > 1 and used < view.gpus_per_node:
        view = replace(view, gpus_per_node=used)
    return perf.Cluster(gpu=catalog.gpus[cand.gpu], network=view, efficiency=evaluator.efficiency)


def _interval(spec, catalog, scored: perf.StepEstimate) -> tuple[float, float] | None:
    """Fastest and slowest step over every plan consistent with what the spec pins (the stack's
    plans that fit), on the cluster ``designer estimate`` uses (:func:`cluster_for`). The scored
    plan is one of those plans, so the interval holds the scored step; it is timed here as well
    and a miss is an error, not a silently wider interval."""
    w = spec.workloads[0]
    workload = compile_workload(w)
    gpus = w.gpus
    cluster = cluster_for(spec, catalog, gpus)
    if cluster is None:
        return None
    times = []
    from designer.perf.search import candidate_plans
    for job, group in candidate_plans(workload.job, cluster, gpus, workload.plan):
        for plan in group:
            if perf.check_plan(job, plan, cluster) is None:
                try:
                    times.append(perf.estimate_step(job, plan, cluster).step_time_s)
                except DesignerError:
                    continue
    if not times:
        return None
    low, high = min(times), max(times)
    if not low * (1 - 1e-9) <= scored.step_time_s <= high * (1 + 1e-9):
        raise AssertionError(f"{spec.name}: scored step {scored.step_time_s:.4g} s outside its interval "
                             f"{low:.4g} .. {high:.4g} s")
    return low, high


def predict_row(row: Row, *, interval: bool = True) -> Prediction:
    """Predict a row as ``designer estimate`` would, and the interval over its unknowns."""
    unknown = _unknown(row.run)
    if row.cluster.get("pending"):
        return Prediction(row, None, None, unknown, (), f"pending: {row.cluster['pending']}")
    try:
        spec, catalog = _load(spec_text(row, _scored_pins(row.run)), f"{row.id}.yaml")
        result = planner.estimate(spec, catalog)
        if unknown:  # the interval spans every plausible value of the unknowns
            spec, catalog = _load(spec_text(row), f"{row.id}.yaml")
    except DesignerError as exc:
        return Prediction(row, None, None, unknown, (), str(exc))
    est = result.workloads[0].estimate
    span = None
    if interval and unknown:
        span = _interval(spec, catalog, est)
    elif interval:
        span = (est.step_time_s, est.step_time_s)
    return Prediction(row, est, span, unknown, result.workloads[0].assumptions + spec.warnings)


def published_step_s(row: Row, est: perf.StepEstimate | None) -> tuple[float, str] | None:
    """The published figure as a step time (seconds), and what it came from (module docstring)."""
    m, run = row.measured, row.run
    gbs, gpus = run["global_batch"], run["gpus"]
    if "iteration_time_s" in m:
        return float(m["iteration_time_s"]), "iteration time"
    if "iteration_time_ms" in m:
        return float(m["iteration_time_ms"]) / 1e3, "iteration time"
    if est is None:
        return None
    model = _arch(row)
    seq = model.seq_len
    if "tokens_per_s_per_gpu" in m:
        return gbs * seq / (m["tokens_per_s_per_gpu"] * gpus), "tokens/s per GPU"
    if "gpu_hours_per_trillion_tokens" in m:
        tps = 1e12 / (m["gpu_hours_per_trillion_tokens"] * 3600.0)
        return gbs * seq / (tps * gpus), "GPU-hours per trillion tokens"
    if "time_to_train_min" in m and run.get("tokens_trained"):
        tps = run["tokens_trained"] / (m["time_to_train_min"] * 60.0) / gpus
        return gbs * seq / (tps * gpus), "time to train over tokens trained"
    for key in ("tflops_per_gpu", "tflops_per_gpu_up_to", "tflops_per_gpu_more_than"):
        if key in m:
            tflops = float(m[key])
            break
    else:
        if "mfu_pct" in m and est is not None:
            tflops = m["mfu_pct"] / 100.0 * est.peak_flops / 1e12
        else:
            return None
    if run.get("flops") == "hardware":
        flops = hardware_flops(model, gbs, est.recompute)
        how = "TFLOP/s per GPU (hardware FLOPs)"
    elif run.get("flops") == "causal":  # the attention core counted causal (Megatron-Core from 2025)
        flops = causal_model_flops_per_token(model) * gbs * model.seq_len
        how = "TFLOP/s per GPU (model FLOPs, causal attention)"
    else:
        flops = model_flops_per_token(model) * gbs * model.seq_len
        how = "TFLOP/s per GPU (model FLOPs)"
    return flops / (tflops * 1e12 * gpus), how


def _arch(row: Row) -> perf.ModelArch:
    spec, _ = _load(spec_text(row), f"{row.id}.yaml")
    return arch_for(spec.workloads[0].model)
