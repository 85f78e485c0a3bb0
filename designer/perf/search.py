"""Pick the fastest parallelism plan that fits in memory, by enumeration with pruning.

Candidates use only what the job's software stack has (:mod:`designer.perf.software`): tp a
power of two up to the node size, sequence parallelism with tp where the stack has it (and the
``sequence_parallel`` knob allows it), cp only on stacks with context parallelism and long
sequences (at least 4,096 tokens per rank), pp any divisor of the remaining GPUs that the
stack can split the layers over (evenly, or with other first and last stages,
:func:`designer.perf.pipeline.stage_layout`), ep a common divisor of dp and the expert count,
micro-batches of 1-8 sequences, interleaving at every depth that divides a stage's layers on
stacks that interleave (on as many stages as their schedule runs, ``Profile.min_interleaved_pp``),
and the stack's ZeRO stages (with pipeline parallelism only those its pipeline engine runs). With
``recompute: auto`` every recomputation the stack has is tried too. Every ZeRO stage that fits is timed (their data-parallel schedules differ,
:mod:`designer.perf.dataparallel`), except that a stage reducing every micro-batch is skipped when
a bound from a once-a-step stage of the same shape shows it cannot win.

Groups are visited in order of a network-free bound (compute and bubble); inside a group, a plan
whose compute and model-parallel traffic alone already bound its step above the fastest found
(:meth:`designer.perf.step.StageTerms.floor_s`) is skipped before its memory is checked. The
timings of one search share their traffic times (:class:`designer.perf.modelparallel.StepMemo`).
"""

from __future__ import annotations

__all__ = ["candidate_plans", "search_plans", "feasible_gpu_counts"]

import functools
import math
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from designer.catalog.types import Gpu
from designer.errors import PerfError
from designer.perf import network as netm
from designer.perf.cluster import Cluster
from designer.perf.compute import LayerTimes, layer_times, logit_times
from designer.perf.estimate import StepEstimate
from designer.perf.memory import memory_per_gpu, usable_hbm_bytes
from designer.perf.offload import offload_for
from designer.perf.pipeline import interleave_depths, stage_layout
from designer.perf.step import (
    StageTerms, StepMemo, Timing, estimate_from, finish_timing, layer_mix, plan_layout, plan_mp_terms, stage_compute,
    stage_terms, structure_reason_on,
)
from designer.perf.structure import structure_reason
from designer.perf.types import Job, Plan, PlanConstraints

_MIN_TOKENS_PER_CP_RANK = 4096  # context parallelism only pays off on long sequences
_MAX_MICROBATCH = 8


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, int(math.isqrt(n)) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def _pow2_upto(limit: int) -> list[int]:
    out, x = [], 1
    while x <= limit:
        out.append(x)
        x *= 2
    return out


def _zero_stages(job: Job, pp: int, fixed: int | None) -> tuple[int, ...]:
    """ZeRO stages to try, lowest first: the stack's (ZeRO-0 only where the stack has no
    distributed optimizer: it moves the same bytes as stage 1, once a step, with more memory)."""
    if fixed is not None:
        return (fixed,)
    prof = job.software.profile
    stages = [z for z in prof.zero_stages if pp == 1 or z <= prof.zero_with_pipeline]
    if 1 in stages and 0 in stages:
        stages.remove(0)
    return tuple(stages) or (prof.zero_stages[0],)


def _sharded_floor_s(shallow: Timing) -> float:
    """A lower bound on the step time of the ZeRO 2-3 twin of a plan whose ZeRO 1 (or higher)
    stage moves its data-parallel traffic once a step.

    The two differ only in their data-parallel terms (the optimizer step shards alike): the twin
    adds per-micro-batch traffic (never negative exposure) and at best removes the once-a-step
    exposed part, which is at most the whole data-parallel time ``dp_comm_s``; the checkpoint
    stall scales with the rest.
    """
    rest = shallow.step_s - shallow.checkpoint_s
    return (rest - shallow.dp_comm_s) * shallow.step_s / rest


def candidate_plans(job: Job, cluster: Cluster, gpus: int,
                    fixed: PlanConstraints | None = None) -> Iterator[tuple[Job, tuple[Plan, ...]]]:
    """Yield (job, plans) groups whose plans differ only in ZeRO stage (in the order to try
    them); the job carries the recomputation of the group (one per setting under ``auto``).

    Structural validity is not checked here; :func:`search_plans` does it.
    """
    variants = _job_variants(job)
    for group in _plan_groups(variants[0], cluster.network.gpus_per_node, gpus, fixed):
        for variant in variants:
            yield variant, group


def _job_variants(job: Job) -> tuple[Job, ...]:
    choices = job.recompute_choices()
    if choices == (job.recompute,):
        return (job,)
    return tuple(replace(job, recompute=r) for r in choices)


def _plan_groups(job: Job, gpn: int, gpus: int, fixed: PlanConstraints | None) -> Iterator[tuple[Plan, ...]]:
    f = fixed or PlanConstraints()
    m = job.model
    prof = job.software.profile
    tps = [f.tp] if f.tp else [t for t in _pow2_upto(gpn) if gpus % t == 0]
    if f.cp:
        cps = [f.cp]
    elif prof.context_parallel:
        cps = [c for c in _pow2_upto(32) if m.seq_len % c == 0
               and (c == 1 or m.seq_len // c >= _MIN_TOKENS_PER_CP_RANK)]
    else:
        cps = [1]
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
                layout = stage_layout(m.layers, pp, f.first_stage_layers, f.last_stage_layers,
                                      prof.uneven_pipeline)
                if isinstance(layout, str):
                    if f.pp:  # pinned: let the structure check say why
                        layout = None
                    else:
                        continue
                if f.ep:
                    eps = [f.ep]
                elif m.moe is not None and prof.expert_parallel:
                    eps = [e for e in _divisors(math.gcd(dp, m.moe.experts))]
                else:
                    eps = [1]
                per_replica = job.global_batch // dp
                mbs = ([f.microbatch] if f.microbatch else
                       [b for b in _pow2_upto(_MAX_MICROBATCH) if per_replica % b == 0])
                if f.virtual_stages:
                    vs: Iterable[int] = [f.virtual_stages]
                elif pp < max(2, prof.min_interleaved_pp) or layout is None or not prof.interleaving:
                    vs = [1]
                else:
                    vs = interleave_depths(layout)
                if f.sequence_parallel is not None:
                    sps: Iterable[bool] = [f.sequence_parallel]
                else:
                    sps = job.software.sp_choices(tp)
                zeros = _zero_stages(job, pp, f.zero)
                first, last = f.first_stage_layers, f.last_stage_layers
                schedule = f.schedule or "1f1b"  # DualPipe only where pinned
                for etp, ep in _expert_layouts(job, f, tp, cp, dp, eps):
                    for mb in mbs:
                        for v in vs:
                            for sp in sps:
                                yield tuple([Plan(tp, pp, dp, ep, cp, mb, v, z, sp, first, last, schedule, etp)
                                             for z in zeros])


def _expert_layouts(job: Job, f: PlanConstraints, tp: int, cp: int, dp: int,
                    eps: list[int]) -> Iterator[tuple[int | None, int]]:
    """(etp, ep) pairs to try: the experts split like the dense layers (``etp`` = tp) over the
    ``eps`` given, and, where the stack folds them (``Profile.expert_folding``) and tp > 1, also
    unsplit experts (``etp`` 1) laid over all ``tp x cp x dp`` ranks of a stage, so ep may
    exceed dp (MoE parallel folding, Liu et al. 2025, arXiv:2504.14960; "prefer EP over extra
    TP for expert layers", Megatron-Bridge docs/training/moe-optimization.md). Other expert
    tensor-parallel sizes are left to a pinned ``etp``; a pinned ``ep`` is kept."""
    m = job.model
    for ep in eps:
        yield f.etp, ep
    if (f.etp is not None or m.moe is None or tp == 1 or not job.software.profile.expert_folding
            or not job.software.profile.expert_parallel):
        return
    folded = [f.ep] if f.ep else _divisors(math.gcd(tp * cp * dp, m.moe.experts))
    for ep in folded:
        yield 1, ep


class _Group:
    """A structurally valid plan group, ready to time: its bound, and (found on first use, as
    most groups are pruned before they are needed) which of its plans fit in memory."""

    __slots__ = ("bound_s", "index", "job", "group", "stage", "_fits", "_fit")

    def __init__(self, index: int, job: Job, group: tuple[Plan, ...], stage: StageTerms):
        self.bound_s = stage.bound_s  # compute and bubble alone (StageTerms.bound_s)
        self.index = index  # position in the enumeration: breaks ties
        self.job = job  # the job with this group's recomputation
        self.group = group
        self.stage = stage  # the same for every ZeRO stage
        self._fits: list[bool | None] | None = None
        self._fit: tuple[tuple[Plan, ...], str | None] | None = None

    def fits(self, i: int, usable: float, gpu: Gpu) -> bool:
        """Whether plan ``i`` fits in memory, offloading activations where the stack and GPU can
        (:mod:`designer.perf.offload`)."""
        if self._fits is None:
            self._fits = [None] * len(self.group)
        ok = self._fits[i]
        if ok is None:
            job, plan = self.job, self.group[i]
            micro = job.global_batch // (plan.dp * plan.microbatch)
            ok = memory_per_gpu(job, plan, micro).total <= usable or offload_for(job, plan, micro, gpu) is not None
            self._fits[i] = ok
        return ok

    def known_unfit(self, i: int) -> bool:
        """Plan ``i`` was found not to fit in memory (by an earlier search on this GPU)."""
        return self._fits is not None and self._fits[i] is False

    def fit(self, usable: float, gpu: Gpu) -> tuple[tuple[Plan, ...], str | None]:
        """The plans that fit in memory, in order, and why none fits when there are none."""
        if self._fit is None:
            timed = tuple(p for i, p in enumerate(self.group) if self.fits(i, usable, gpu))
            reason = None
            if not timed:
                last = self.group[-1]
                need = memory_per_gpu(self.job, last, self.job.global_batch // (last.dp * last.microbatch)).total
                reason = f"needs {need / 1e9:.0f} GB or more per GPU, {usable / 1e9:.0f} GB usable"
            self._fit = (timed, reason)
        return self._fit


@dataclass(frozen=True, slots=True)
class _Ranking:
    groups: tuple[_Group, ...]  # in order of bound
    structure: tuple[tuple[int, str], ...]  # (index, why) of the groups that cannot run
    by_shape: dict  # plan shape (all but the ZeRO stage) -> its group, filled when a hint first asks

    def group_of(self, plan: Plan, recompute) -> _Group | None:
        """The group of ``plan``'s shape under ``recompute``, if it is a valid candidate."""
        if not self.by_shape and self.groups:
            self.by_shape.update((_shape(g.group[0], g.job.recompute), g) for g in self.groups)
        return self.by_shape.get(_shape(plan, recompute))


def _shape(plan: Plan, recompute) -> tuple:
    return (plan.tp, plan.pp, plan.dp, plan.ep, plan.cp, plan.microbatch, plan.virtual_stages,
            plan.sequence_parallel, plan.first_stage_layers, plan.last_stage_layers, plan.schedule, plan.etp, recompute)


@functools.lru_cache(maxsize=2048)
def _ranked_groups(job: Job, gpu: Gpu, gpus_per_node: int, gpus: int, fixed: PlanConstraints | None,
                   speed: float = 1.0) -> _Ranking:
    """Every plan group for ``gpus`` GPUs in order of its step-time bound, and why the others
    cannot run. Layer times are divided by ``speed``, the compute efficiency multiplier.

    None of this depends on the network (structure, memory and compute do not), so one plan
    search's enumeration serves every fabric the optimizer tries at that size.
    """
    reasons: list[tuple[int, str]] = []
    # A dense layer's and the output layer's times depend on tp, cp, the micro-batch and
    # sequence parallelism (designer.perf.compute: ep and etp enter only an MoE layer's expert
    # GEMMs); an MoE layer's also on ep and etp (the expert weights each GPU streams), so the
    # average layer's key holds them too, or plans that differ only in their expert layout are
    # timed with the first one's layers.
    dense_times: dict[tuple, tuple[LayerTimes, float]] = {}
    cache: dict[tuple, tuple] = {}
    stages: dict[tuple, tuple] = {}  # (layer shape, pipeline) -> its layout and stage compute
    moe_model = job.model.moe is not None
    out = []
    variants = _job_variants(job)
    index = -1
    # Structure does not depend on the recomputation: check each shape once, then give every
    # recomputation setting its own group (and bound).
    for group in _plan_groups(variants[0], gpus_per_node, gpus, fixed):
        head = group[0]
        reason = structure_reason(variants[0], head, gpu, trusted=fixed is None)
        if reason is not None:
            for _ in variants:
                index += 1
                reasons.append((index, reason))
            continue
        for variant in variants:
            index += 1
            dense_key = (variant.recompute, head.tp, head.cp, head.microbatch, head.sequence_parallel)
            key = dense_key + (head.ep, head.etp)
            if key not in cache:
                if dense_key not in dense_times:
                    lf, lb = logit_times(variant, head, gpu)
                    dense_times[dense_key] = (layer_times(variant, head, gpu, False).scaled(speed), (lf + lb) / speed)
                dense, logits = dense_times[dense_key]
                moe = layer_times(variant, head, gpu, True).scaled(speed) if moe_model else None
                cache[key] = (logits, layer_mix(variant.model, dense, moe, logits))
            logits, mix = cache[key]
            skey = (key, head.pp, head.schedule, head.first_stage_layers, head.last_stage_layers)
            pre = stages.get(skey)
            if pre is None:
                layout = plan_layout(variant.model, head) if head.pp > 1 else None
                pre = stages[skey] = (layout, stage_compute(variant.model, head, mix[0], None, logits, mix=mix,
                                                            layout=layout))
            st = stage_terms(variant, head, gpu, speed, logits_s=logits, mix=mix, stage=pre[1], layout=pre[0])
            out.append(_Group(index, variant, group, st))
    out.sort(key=lambda g: (g.bound_s, g.index))
    return _Ranking(tuple(out), tuple(reasons), {})


def search_plans(job: Job, cluster: Cluster, gpus: int,
                 fixed: PlanConstraints | None = None, *, hint: Plan | None = None) -> StepEstimate:
    """The fastest plan on ``gpus`` GPUs that is valid and fits in memory.

    Branch and bound: every structurally valid plan group gets a lower bound on its step time
    (:attr:`~designer.perf.step.StageTerms.bound_s`, compute and bubble only, no communication);
    groups are timed in order of that bound, and the search stops at the first group whose bound
    is not below the fastest step found. Inside a group a plan is skipped when a tighter bound
    with its model-parallel traffic (:meth:`~designer.perf.step.StageTerms.floor_s`) is not
    below it. The result is the same as timing every plan. The enumeration does not
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
    ranking = _ranked_groups(job, cluster.gpu, cluster.network.gpus_per_node, gpus, fixed,
                             cluster.efficiency.compute)
    links = netm.links_for(cluster, job.software)
    memo = StepMemo(job, links, gpus)
    usable = usable_hbm_bytes(cluster.gpu)
    best: StepEstimate | None = None
    best_index = -1
    first = None
    if hint is not None:  # under recompute auto, the hint's shape with the first setting that has it
        first = next((g for g in (ranking.group_of(hint, r) for r in job.recompute_choices())
                      if g is not None), None)
    for g in ((first,) if first else ()) + ranking.groups:
        if best is not None and g.bound_s >= best.step_time_s:
            break  # every later group is bounded no lower: none can be strictly faster
        if g is first and best is not None:
            continue  # timed first already (or it has no plan that fits)
        shallow: Timing | None = None  # the group's timing with a once-a-step ZeRO 1+ schedule
        prof = g.job.software.profile
        for i, plan in enumerate(g.group):
            sched = prof.dp_schedule(plan.zero)
            if (sched.reduce_per_microbatch or sched.gathers) and shallow is not None and best is not None \
                    and _sharded_floor_s(shallow) >= best.step_time_s:
                continue
            if g.known_unfit(i):
                continue
            # A plan whose step is bounded above the incumbent by its compute and model-parallel
            # traffic alone is skipped before its memory is checked (StageTerms.floor_s).
            mp = plan_mp_terms(g.job, plan, cluster, links, g.stage, memo)
            if best is not None and g.stage.floor_s(mp) >= best.step_time_s:
                continue
            if not g.fits(i, usable, cluster.gpu):
                continue
            t = finish_timing(g.job, plan, cluster, links, g.stage, mp, memo=memo)
            if plan.zero >= 1 and not sched.reduce_per_microbatch and not sched.gathers:
                shallow = t
            if best is None or t.step_s < best.step_time_s \
                    or (t.step_s == best.step_time_s and g.index < best_index):
                # Only a new incumbent is assembled (throughput, memory, breakdown).
                best, best_index = estimate_from(g.job, plan, cluster, t), g.index
    if best is None:
        # Nothing was pruned (there was no incumbent), so every group's fit is known.
        memory = ((g.index, g.fit(usable, cluster.gpu)[1]) for g in ranking.groups)
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
        for variant, group in candidate_plans(job, cluster, n, fixed):
            if structure_reason_on(variant, group[0], cluster.gpu) is not None:
                continue
            micro = variant.global_batch // (group[0].dp * group[0].microbatch)
            if any(memory_per_gpu(variant, p, micro).total <= usable
                   or offload_for(variant, p, micro, cluster.gpu) is not None for p in group):
                ok = True
                break
        if ok:
            out.append(n)
    return tuple(out)
