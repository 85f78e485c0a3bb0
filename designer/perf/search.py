"""Pick the fastest parallelism plan that fits in memory, by enumeration with pruning.

Candidates: tp a power of two up to the node size, cp only for long sequences (at least 4,096
tokens per rank), pp any divisor of the remaining GPUs up to the layer count, ep a common
divisor of dp and the expert count, micro-batches of 1-8 sequences, interleaving that divides
the layers evenly. ZeRO stages are tried in order 1, 2, 3. Stages 1 and 2 run equally fast
in this model (stage 2 only saves memory), so the first of them that fits is timed; stage 3 is
timed as well when it fits and kept if faster: it gathers weights every micro-batch, but
reduces gradients layer by layer, which hides better behind the backward pass than the
bucketed reduction of stages 1-2 when there are few micro-batches or the model fills few
buckets.
"""

from __future__ import annotations

__all__ = ["candidate_plans", "search_plans", "feasible_gpu_counts"]

import functools
import math
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from designer.catalog.types import Gpu
from designer.errors import PerfError
from designer.perf import network as netm
from designer.perf.cluster import Cluster
from designer.perf.compute import layer_times, logit_times
from designer.perf.estimate import StepEstimate
from designer.perf.memory import memory_per_gpu, usable_hbm_bytes
from designer.perf.step import Timing, _structure_reason, estimate_from, stage_compute, step_timing, structure_reason_on
from designer.perf.types import Job, Plan, PlanConstraints

_MIN_TOKENS_PER_CP_RANK = 4096  # context parallelism only pays off on long sequences
_MAX_MICROBATCH = 8
_VIRTUAL_STAGES = (1, 2, 3, 4, 6, 8)


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, int(math.isqrt(n)) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def _pow2_upto(limit: int) -> list[int]:
    out, x = [], 1
    while x <= limit:
        out.append(x)
        x *= 2
    return out


def _timing_class(zero: int) -> int:
    """ZeRO stages with the same step time (1 and 2 differ only in memory)."""
    return 1 if zero in (1, 2) else zero


def _zero3_floor_s(shallow: Timing) -> float:
    """A lower bound on the step time of the ZeRO-3 twin of a ZeRO 0-2 plan.

    The two differ only in their data-parallel terms: ZeRO-3 adds per-micro-batch gathers
    (never negative) and at best removes the once-per-step exposed reduction, which is at most
    the whole data-parallel time ``dp_comm_s``; the checkpoint stall scales with the rest.
    """
    rest = shallow.step_s - shallow.checkpoint_s
    return (rest - shallow.dp_comm_s) * shallow.step_s / rest


def candidate_plans(job: Job, cluster: Cluster, gpus: int,
                    fixed: PlanConstraints | None = None) -> Iterator[tuple[Plan, ...]]:
    """Yield groups of plans that differ only in ZeRO stage (in the order to try them).

    Structural validity is not checked here; :func:`search_plans` does it.
    """
    return _plan_groups(job, cluster.network.gpus_per_node, gpus, fixed)


def _plan_groups(job: Job, gpn: int, gpus: int, fixed: PlanConstraints | None) -> Iterator[tuple[Plan, ...]]:
    f = fixed or PlanConstraints()
    m = job.model
    tps = [f.tp] if f.tp else [t for t in _pow2_upto(gpn) if gpus % t == 0]
    if f.cp:
        cps = [f.cp]
    else:
        cps = [c for c in _pow2_upto(32) if m.seq_len % c == 0
               and (c == 1 or m.seq_len // c >= _MIN_TOKENS_PER_CP_RANK)]
    zeros = (f.zero,) if f.zero is not None else (1, 2, 3)
    for tp in tps:
        for cp in cps:
            if gpus % (tp * cp):
                continue
            rest = gpus // (tp * cp)
            pps = [f.pp] if f.pp else [p for p in _divisors(rest) if p <= m.layers]
            for pp in pps:
                if rest % pp:
                    continue
                dp = rest // pp
                if f.dp and f.dp != dp:
                    continue
                if job.global_batch % dp:
                    continue
                if f.ep:
                    eps = [f.ep]
                elif m.moe is not None:
                    eps = [e for e in _divisors(math.gcd(dp, m.moe.experts))]
                else:
                    eps = [1]
                per_replica = job.global_batch // dp
                mbs = ([f.microbatch] if f.microbatch else
                       [b for b in _pow2_upto(_MAX_MICROBATCH) if per_replica % b == 0])
                if f.virtual_stages:
                    vs = [f.virtual_stages]
                elif pp == 1:
                    vs = [1]
                else:
                    vs = [v for v in _VIRTUAL_STAGES if v == 1 or m.layers % (pp * v) == 0]
                sps = [f.sequence_parallel] if f.sequence_parallel is not None else [tp > 1]
                for ep in eps:
                    for mb in mbs:
                        for v in vs:
                            for sp in sps:
                                yield tuple(Plan(tp, pp, dp, ep, cp, mb, v, z, sp) for z in zeros)


def _compute_bound_s(job: Job, plan: Plan, dense, moe, logits_s: float) -> float:
    """A lower bound on the step time of ``plan``: its pipeline's compute alone.

    :func:`designer.perf.step.step_timing` gives ``step = micro * t_mb + bubble + exposed DP +
    optimizer + checkpoint`` with ``t_mb >= compute_mb`` (exposed communication is never
    negative) and ``bubble = (pp - 1) / v * t_mb``; so ``step >= (micro + (pp - 1) / v) *
    compute_mb``, with ``compute_mb`` from the same :func:`~designer.perf.step.stage_compute`.
    """
    micro = job.global_batch // (plan.dp * plan.microbatch)
    _, compute_mb = stage_compute(job.model, plan, dense, moe, logits_s)
    bubble = (plan.pp - 1) / plan.virtual_stages if plan.pp > 1 else 0.0
    # Rounding: the step model sums the same terms in another order.
    return (micro + bubble) * compute_mb * (1.0 - 1e-9)


class _Group:
    """A structurally valid plan group, ready to time: its bound, and (found on first use, as
    most groups are pruned before they are needed) the plans of it that fit in memory."""

    __slots__ = ("bound_s", "index", "group", "dense", "moe", "_fit")

    def __init__(self, bound_s: float, index: int, group: tuple[Plan, ...], dense, moe):
        self.bound_s = bound_s
        self.index = index  # position in the enumeration: breaks ties
        self.group = group
        self.dense = dense
        self.moe = moe
        self._fit: tuple[tuple[Plan, ...], str | None] | None = None

    def fit(self, job: Job, usable: float) -> tuple[tuple[Plan, ...], str | None]:
        """The plans to time, in order (they fit in memory; one per timing class), and why
        none fits when there are none."""
        if self._fit is None:
            micro = job.global_batch // (self.group[0].dp * self.group[0].microbatch)
            timed: list[Plan] = []
            classes: set[int] = set()
            need = 0.0
            for plan in self.group:
                need = memory_per_gpu(job, plan, micro).total
                if need > usable or _timing_class(plan.zero) in classes:
                    continue
                classes.add(_timing_class(plan.zero))
                timed.append(plan)
            reason = None if timed else f"needs {need / 1e9:.0f} GB or more per GPU, {usable / 1e9:.0f} GB usable"
            self._fit = (tuple(timed), reason)
        return self._fit


@dataclass(frozen=True, slots=True)
class _Ranking:
    groups: tuple[_Group, ...]  # in order of bound
    structure: tuple[tuple[int, str], ...]  # (index, why) of the groups that cannot run
    by_shape: dict  # plan shape (all but the ZeRO stage) -> its group


def _shape(plan: Plan) -> tuple:
    return (plan.tp, plan.pp, plan.dp, plan.ep, plan.cp, plan.microbatch, plan.virtual_stages,
            plan.sequence_parallel)


@functools.lru_cache(maxsize=2048)
def _ranked_groups(job: Job, gpu: Gpu, gpus_per_node: int, gpus: int, fixed: PlanConstraints | None) -> _Ranking:
    """Every plan group for ``gpus`` GPUs in order of its step-time bound, and why the others
    cannot run.

    None of this depends on the network (structure, memory and compute do not), so one plan
    search's enumeration serves every fabric the optimizer tries at that size.
    """
    reasons: list[tuple[int, str]] = []
    # Layer times depend on tp, cp, the micro-batch, sequence parallelism and (through the
    # expert weights each GPU streams) ep; the key must hold all of them, or plans that differ
    # only in ep are timed with the first one's layers.
    cache: dict[tuple[int, int, int, bool, int], tuple] = {}
    moe_model = job.model.moe is not None
    out = []
    for index, group in enumerate(_plan_groups(job, gpus_per_node, gpus, fixed)):
        head = group[0]
        reason = structure_reason_on(job, head, gpu)
        if reason is not None:
            reasons.append((index, reason))
            continue
        key = (head.tp, head.cp, head.microbatch, head.sequence_parallel, head.ep)
        if key not in cache:
            dense = layer_times(job, head, gpu, False)
            moe = layer_times(job, head, gpu, True) if moe_model else None
            lf, lb = logit_times(job, head, gpu)
            cache[key] = (dense, moe, lf + lb)
        dense, moe, logits = cache[key]
        out.append(_Group(_compute_bound_s(job, head, dense, moe, logits), index, group, dense, moe))
    out.sort(key=lambda g: (g.bound_s, g.index))
    return _Ranking(tuple(out), tuple(reasons), {_shape(g.group[0]): g for g in out})


def search_plans(job: Job, cluster: Cluster, gpus: int,
                 fixed: PlanConstraints | None = None, *, hint: Plan | None = None) -> StepEstimate:
    """The fastest plan on ``gpus`` GPUs that is valid and fits in memory.

    Branch and bound: every structurally valid plan group gets a lower bound on its step time
    (:func:`_compute_bound_s`, compute and bubble only, no communication); groups are timed in
    order of that bound, and the search stops at the first group whose bound is not below the
    fastest step found. The result is the same as timing every plan. The enumeration does not
    depend on the network and is shared between searches (:func:`_ranked_groups`). A ``hint``
    (the best plan of the same job on a similar network) is timed first: a fast incumbent
    prunes more, and the answer does not change.

    Args:
        job: the training job.
        cluster: GPU and network.
        gpus: GPUs to use (all of them).
        fixed: parts of the plan that are pinned (``None`` fields are searched).
        hint: a plan to time first (ignored when it is not among the candidates).

    Returns:
        The :class:`StepEstimate` of the fastest plan (ties keep the first in the enumeration
        order of :func:`candidate_plans`).

    Raises:
        PerfError: no plan fits; the message lists the most common reasons.
    """
    if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus < 1:
        raise PerfError(f"gpus must be a positive integer, not {gpus!r}")
    ranking = _ranked_groups(job, cluster.gpu, cluster.network.gpus_per_node, gpus, fixed)
    links = netm.links_for(cluster)
    usable = usable_hbm_bytes(cluster.gpu)
    best: StepEstimate | None = None
    best_index = -1
    first = ranking.by_shape.get(_shape(hint)) if hint is not None else None
    for g in ((first,) if first else ()) + ranking.groups:
        if best is not None and g.bound_s >= best.step_time_s:
            break  # every later group is bounded no lower: none can be strictly faster
        if g is first and best is not None:
            continue  # timed first already (or it has no plan that fits)
        plans, _ = g.fit(job, usable)
        if not plans:
            continue
        shallow: Timing | None = None  # the group's ZeRO 0-2 timing
        for plan in plans:
            if plan.zero == 3 and shallow is not None and best is not None \
                    and _zero3_floor_s(shallow) >= best.step_time_s:
                continue
            t = step_timing(job, plan, cluster, links, g.dense, g.moe)
            if plan.zero < 3:
                shallow = t
            if best is None or t.step_s < best.step_time_s \
                    or (t.step_s == best.step_time_s and g.index < best_index):
                # Only a new incumbent is assembled (throughput, memory, breakdown).
                best, best_index = estimate_from(job, plan, cluster, t), g.index
    if best is None:
        # Nothing was pruned (there was no incumbent), so every group's fit is known.
        memory = ((g.index, g.fit(job, usable)[1]) for g in ranking.groups)
        reasons = sorted([*ranking.structure, *((i, r) for i, r in memory if r)])
        counts = Counter(r for _, r in reasons)
        common = "; ".join(f"{r} ({n} plans)" for r, n in counts.most_common(3))
        raise PerfError(f"no parallelism plan for {job.model.name} fits on {gpus} GPUs: "
                        f"{common or 'no candidate plan'}")
    return best


def feasible_gpu_counts(job: Job, cluster: Cluster, counts: Iterable[int],
                        fixed: PlanConstraints | None = None) -> tuple[int, ...]:
    """The GPU counts among ``counts`` on which some plan is valid and fits in memory.

    Only structure and memory are checked (no timing), so it is cheap enough to screen many
    cluster sizes before estimating any of them.
    """
    usable = usable_hbm_bytes(cluster.gpu)
    out = []
    for n in sorted(set(counts)):
        if n < 1:
            continue
        ok = False
        for group in candidate_plans(job, cluster, n, fixed):
            if _structure_reason(job, group[0], cluster) is not None:
                continue
            micro = job.global_batch // (group[0].dp * group[0].microbatch)
            if any(memory_per_gpu(job, p, micro).total <= usable for p in group):
                ok = True
                break
        if ok:
            out.append(n)
    return tuple(out)
