"""A spec that pins the system: how much of it each workload's best plan can use, and why not more.

A plan splits a job's GPUs into tp x cp x pp x dp (docs/performance.md): tp a power of two within
a node, pp at most the model's layers, and the dp replicas split the global batch evenly into
micro-batches. A GPU count that no such split fits gets a reason in the spec's terms; the count a
workload uses is the largest (whole nodes first) at which a plan fits and meets its thresholds.
"""

from __future__ import annotations

__all__ = ["why_no_plan", "largest_fit", "largest_sizes", "plan_words", "PINNED_NO_PLAN", "SIZED_UP_TO"]

import math
from dataclasses import replace
from typing import Callable, Iterable

from designer.spec.choices import Deployment
from designer.spec.units import SECONDS_PER_DAY
from designer.optimize.candidates import Candidate
from designer.optimize.evaluate import Evaluation, Evaluator
from designer.optimize.task import Task, Thresholds, Workload
from designer.perf import PlanConstraints

# The performance model's message when no plan shape exists at a count (designer.perf.search).
PINNED_NO_PLAN = "no candidate plan"
_MAX_CP = 32  # the largest context-parallel degree the plan search tries (designer.perf.search)


def _pow2_upto(limit: int) -> list[int]:
    return [1 << k for k in range(max(limit, 1).bit_length()) if 1 << k <= limit]


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def why_no_plan(w: Workload, gpus: int, gpus_per_node: int) -> str:
    """Why no plan of ``w`` has the structure to run on ``gpus`` GPUs, in the spec's terms ("" when
    a structure exists and something else, such as memory, rules the plans out).

    tp x pp x cp GPUs make one replica (pinned degrees as pinned; else tp a power of two up to
    the GPUs of a node, pp up to the layers, cp a power of two dividing the sequence where the
    stack splits contexts), and the ``dp = gpus / (tp x pp x cp)`` replicas must split the
    global batch into micro-batches: ``global_batch % (dp x microbatch) == 0``.
    """
    f = w.plan or PlanConstraints()
    job = w.job
    pinned = {k: getattr(f, k) for k in ("tp", "pp", "cp") if getattr(f, k)}
    names = " x ".join(f"{k} {v}" for k, v in pinned.items())
    replica = math.prod(pinned.values())
    if pinned and gpus % replica:
        return f"{names} = {replica} GPUs per replica do not divide {gpus:,} GPUs"
    layers = job.model.layers
    tps = [f.tp] if f.tp else [t for t in _pow2_upto(gpus_per_node) if gpus % t == 0]
    if f.cp:
        cps = [f.cp]
    elif job.software.profile.context_parallel:
        cps = [c for c in _pow2_upto(_MAX_CP) if job.model.seq_len % c == 0]
    else:
        cps = [1]
    dps = set()
    for tp in tps:
        for cp in cps:
            if gpus % (tp * cp):
                continue
            rest = gpus // (tp * cp)
            for pp in [f.pp] if f.pp else [p for p in _divisors(rest) if p <= layers]:
                if rest % pp == 0:
                    dps.add(rest // pp)
    if f.dp:
        dps &= {f.dp}
    if not dps:
        return (f"no tp (a power of two up to {gpus_per_node}) x pp (up to the {layers} layers) split of "
                f"{gpus:,} GPUs {'has dp ' + str(f.dp) if f.dp else 'exists'}")
    micro = f.microbatch or 1
    batch = job.global_batch
    if any(batch % (d * micro) == 0 for d in dps):
        return ""
    least = min(dps)
    what = f" with {names}" if names else ""
    into = f" in micro-batches of {micro}" if f.microbatch else ""
    return (f"the global batch of {batch:,} sequences does not split over the data-parallel replicas that "
            f"{gpus:,} GPUs leave{what}{into} (dp {least:,} at the fewest; a global_batch that is a multiple "
            f"of {least * micro:,} would split)")

def plan_words(e: Evaluation) -> str:
    """A fitted plan's degrees as the spec writes them: ``tp 8 pp 4 dp 16``."""
    p = e.estimate.plan
    parts = [("tp", p.tp), ("pp", p.pp), ("dp", p.dp), ("cp", p.cp), ("ep", p.ep)]
    return " ".join(f"{k} {v}" for k, v in parts if k in ("tp", "pp", "dp") or v > 1)


def largest_fit(evaluator: Evaluator, w: Workload, cand: Candidate, upto: int,
                accept: Callable[[Evaluation], bool] | None = None) -> Evaluation | None:
    """The evaluation at the largest GPU count up to ``upto`` at which a plan of ``w`` fits on
    ``cand`` (and that ``accept`` accepts): whole nodes first, from the most down (a job sharing
    a node splits its NVLink domain), then any count below one node. None if none does."""
    for g in fit_counts(evaluator.gpus_used_per_node(cand), upto):
        e = evaluator.evaluate(w, cand, g)
        if e.estimate is not None and (accept is None or accept(e)):
            return e
    return None


def fit_counts(gpus_per_node: int, upto: int) -> Iterable[int]:
    """GPU counts to try, largest first: ``upto`` itself, then whole nodes below it, then the counts
    below one node."""
    seen = {upto}
    yield upto
    for n in range(upto // gpus_per_node, 0, -1):
        if n * gpus_per_node not in seen:
            seen.add(n * gpus_per_node)
            yield n * gpus_per_node
    for g in range(min(gpus_per_node, upto) - 1, 0, -1):
        if g not in seen:
            yield g


# Up to this many on-prem candidates, a pinned system's workloads are sized on each (the largest
# count is searched per candidate); beyond, the program sizes them as on any system, with a warning.
SIZED_UP_TO = 8


def largest_sizes(task: Task, th: Thresholds, evaluator: Evaluator) -> tuple[Task, tuple[str, ...]]:
    """``task`` with each workload on a pinned system (``system.nodes``) that the spec does not
    size set to the most GPUs its best plan can use, and why a workload does not use all of them.

    On each on-prem candidate the count is the largest, whole nodes first
    (:func:`largest_fit`), at which a plan fits and meets the workload's utilization target and
    deadline; the workload's count is the largest over the candidates (it has no option on a
    candidate where that count does not qualify). ``task`` itself (and no reasons) when the
    system is not pinned, a cloud deployment is allowed, or more than :data:`SIZED_UP_TO`
    candidates are open.
    """
    cands = sorted(task.candidates, key=lambda c: c.key)
    if task.fixed_nodes is None or not cands or len(cands) > SIZED_UP_TO \
            or any(c.deployment is not Deployment.ON_PREM for c in cands):
        return task, ()
    workloads, notes = [], []
    for w in task.workloads:
        if w.gpus is not None:
            workloads.append(w)
            continue
        best: tuple[Evaluation, Candidate] | None = None
        for c in cands:
            cluster = task.fixed_nodes * evaluator.gpus_used_per_node(c)
            e = largest_fit(evaluator, w, c, cluster,
                            accept=lambda e, n=w.name: th.admits(n, e.time_s, e.utilization))
            if e is not None and (best is None or e.gpus > best[0].gpus):
                best = (e, c)
        if best is None:  # nothing qualifies at any size: the program says why
            return task, ()
        e, c = best
        cluster = task.fixed_nodes * evaluator.gpus_used_per_node(c)
        workloads.append(replace(w, gpus=e.gpus))
        if e.gpus < cluster:
            notes.append(f"workload '{w.name}' runs on {e.gpus:,} of the {cluster:,} GPUs of the pinned system "
                         f"({plan_words(e)}): {_why_smaller(evaluator, w, c, th, e.gpus, cluster)}")
    return replace(task, workloads=tuple(workloads)), tuple(notes)


def _why_smaller(evaluator: Evaluator, w: Workload, c: Candidate, th: Thresholds, gpus: int, cluster: int) -> str:
    """Why ``w`` does not run on more than ``gpus`` of the ``cluster`` GPUs of ``c``: what rules out
    the whole system, and that no whole-node count between does better (:func:`largest_fit`
    tried them all)."""
    gpn = evaluator.gpus_used_per_node(c)
    e = evaluator.evaluate(w, c, cluster)
    if e.estimate is None:
        why = why_no_plan(w, cluster, gpn) or e.reason
    elif e.utilization < th.min_utilization - 1e-12:
        why = (f"its utilization {e.utilization:.3f} ({plan_words(e)}) is below constraints.min_utilization "
               f"{th.min_utilization:.3f}")
    else:
        why = f"it takes {e.time_s / SECONDS_PER_DAY:.1f} days ({plan_words(e)}), past its deadline"
    between = "" if cluster - gpus <= gpn else (f"; no count of whole nodes between {gpus:,} and {cluster:,} "
                                                "GPUs has a plan that meets its targets either")
    return f"on all {cluster:,}, {why}{between}"


def no_plan_reasons(reasons: tuple[str, ...], workloads: tuple[Workload, ...], cands: tuple[Candidate, ...],
                    evaluator: Evaluator, where: Callable[[int], str]) -> tuple[str, ...]:
    """``reasons`` with each "no candidate plan" of a workload whose ``gpus`` the spec pins made
    specific: why no plan has the structure to run on that count (:func:`why_no_plan`), the
    largest count below at which one fits on the first candidate, and ``where(i)``, the place of
    the ``i``-th workload's ``gpus`` in the spec."""
    out = []
    for r in reasons:
        found = next(((i, w) for i, w in enumerate(workloads) if r.startswith(f"{w.name}: ")), None)
        if found is None or found[1].gpus is None or not r.endswith(PINNED_NO_PLAN + ")") or not cands:
            out.append(r)
            continue
        i, w = found
        c = sorted(cands, key=lambda x: x.key)[0]
        why = why_no_plan(w, w.gpus, evaluator.gpus_used_per_node(c))
        if not why:
            out.append(r)
            continue
        fits = largest_fit(evaluator, w, c, w.gpus - 1) if w.gpus > 1 else None
        change = (f"; a plan fits on {fits.gpus:,} GPUs ({plan_words(fits)}): set gpus to {fits.gpus:,}"
                  if fits is not None else "; nor on fewer GPUs")
        out.append(f"{r[: -len(PINNED_NO_PLAN) - 1]}{why}{change}, at {where(i)})")
    return tuple(out)
