"""Whether a parallelism plan can run at all: divisibility, the stack's features, FP8 support.

Memory is checked elsewhere (:mod:`designer.perf.memory`); the network plays no part. A plan
uses only what the job's software stack has (:class:`designer.perf.software.Profile`): no
sequence parallelism, context parallelism, interleaving or uneven stages on a stack without
them, and only its ZeRO stages (with pipeline parallelism, only those its pipeline engine
allows).
"""

from __future__ import annotations

__all__ = ["structure_reason", "software_conflicts"]

from designer.catalog.types import Gpu
from designer.perf.pipeline import interleave_depths, stage_layout
from designer.perf.software import Software
from designer.perf.types import Job, Plan, PlanConstraints, Precision, Recompute


def _positive(plan: Plan) -> str | None:
    for name in ("tp", "pp", "dp", "ep", "cp", "microbatch", "virtual_stages"):
        value = getattr(plan, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            return f"plan.{name} must be a positive integer, not {value!r}"
    if plan.etp is not None and (isinstance(plan.etp, bool) or not isinstance(plan.etp, int) or plan.etp < 1):
        return f"plan.etp must be a positive integer, not {plan.etp!r}"
    if plan.zero not in (0, 1, 2, 3):
        return f"plan.zero must be 0, 1, 2 or 3, not {plan.zero!r}"
    return None


def software_conflicts(software: Software, fixed: PlanConstraints | Plan) -> list[tuple[str, str]]:
    """(field, reason) for each pinned part of a plan the stack cannot run.

    Used on a spec's pinned parallelism before any search, so each conflict can be located at
    its key; :func:`structure_reason` repeats the same checks per plan.
    """
    prof = software.profile
    out: list[tuple[str, str]] = []
    name = prof.name
    if fixed.zero is not None and fixed.zero not in prof.zero_stages:
        out.append(("zero", f"{name} has ZeRO stages {', '.join(map(str, prof.zero_stages))}, not {fixed.zero}"))
    if fixed.pp is not None and fixed.pp > 1 and fixed.zero is not None and fixed.zero > prof.zero_with_pipeline:
        out.append(("zero", f"{name} runs pipeline parallelism with ZeRO stage {prof.zero_with_pipeline} at most, "
                            f"not {fixed.zero}"))
    if fixed.cp is not None and fixed.cp > 1 and not prof.context_parallel:
        out.append(("cp", f"{name} has no context parallelism"))
    if fixed.ep is not None and fixed.ep > 1 and not prof.expert_parallel:
        out.append(("ep", f"{name} has no expert parallelism"))
    if fixed.virtual_stages is not None and fixed.virtual_stages > 1 and not prof.interleaving:
        out.append(("virtual_stages", f"{name} has no interleaved pipeline schedule"))
    if (fixed.first_stage_layers is not None or fixed.last_stage_layers is not None) and not prof.uneven_pipeline:
        field = "first_stage_layers" if fixed.first_stage_layers is not None else "last_stage_layers"
        out.append((field, f"{name} splits layers evenly over the pipeline stages"))
    sp = fixed.sequence_parallel
    if sp is True and not prof.sequence_parallel:
        out.append(("sequence_parallel", f"{name} has no sequence parallelism"))
    if sp is True and software.sequence_parallel is False:
        out.append(("sequence_parallel", "software.sequence_parallel is false"))
    if sp is False and software.sequence_parallel is True and (fixed.tp is None or fixed.tp > 1):
        out.append(("sequence_parallel", "software.sequence_parallel is true"))
    if sp is False and software.tp_comm_overlap and (fixed.tp is None or fixed.tp > 1):
        out.append(("sequence_parallel", "software.tp_comm_overlap needs sequence parallelism"))
    return out


def structure_reason(job: Job, plan: Plan, gpu: Gpu, *, trusted: bool = False) -> str | None:
    """Why a plan cannot run at all on ``gpu`` (ignoring memory), or None: divisibility of heads,
    widths, layers, batch and experts, the stack's features, and FP8 support.

    ``trusted``: the plan's fields are known positive integers (a search generated them).
    """
    if not trusted:
        reason = _positive(plan)
        if reason is not None:
            return reason
    m = job.model
    if job.recompute is Recompute.AUTO:
        return "recompute auto is chosen by the plan search; estimate one setting"
    if m.heads % plan.tp:
        return f"tp={plan.tp} does not divide the {m.heads} attention heads"
    if m.kv_count % plan.tp and plan.tp % m.kv_count:
        return f"tp={plan.tp} and the {m.kv_count} key/value heads do not divide one another"
    if m.ffn_size % plan.tp or m.expert_size % plan.tp:
        return f"tp={plan.tp} does not divide the MLP width {m.ffn_size}"
    if m.seq_len % plan.cp:
        return f"cp={plan.cp} does not divide the sequence length {m.seq_len}"
    if plan.sequence_parallel and plan.tp > 1 and (m.seq_len // plan.cp) % plan.tp:
        return f"sequence parallelism needs tp={plan.tp} to divide the {m.seq_len // plan.cp} local tokens"
    conflicts = software_conflicts(job.software, plan)
    if plan.sequence_parallel and plan.tp == 1:
        conflicts = [c for c in conflicts if c[0] != "sequence_parallel"]
    if conflicts:
        return f"{conflicts[0][0]}: {conflicts[0][1]}"
    prof = job.software.profile
    layout = stage_layout(m.layers, plan.pp, plan.first_stage_layers, plan.last_stage_layers, prof.uneven_pipeline)
    if isinstance(layout, str):
        return layout
    if plan.schedule not in ("1f1b", "dualpipe"):
        return f"schedule must be 1f1b or dualpipe, not {plan.schedule!r}"
    if plan.schedule == "dualpipe" and (plan.pp < 2 or plan.pp % 2 or plan.virtual_stages > 1):
        return "the dualpipe schedule needs an even pp of 2 or more and no interleaving"
    if plan.virtual_stages > 1:
        if plan.pp == 1:
            return "virtual_stages > 1 needs pipeline parallelism (pp > 1)"
        if plan.pp < prof.min_interleaved_pp:
            return (f"{prof.name}'s interleaved schedule needs pp of {prof.min_interleaved_pp} or more, "
                    f"not {plan.pp}")
        if plan.virtual_stages not in interleave_depths(layout):
            return (f"virtual_stages={plan.virtual_stages} does not divide the {layout.middle} layers "
                    f"of a pipeline stage")
    if job.global_batch % (plan.dp * plan.microbatch):
        return (f"global batch {job.global_batch} is not a multiple of dp x microbatch = "
                f"{plan.dp * plan.microbatch}")
    micro = job.global_batch // (plan.dp * plan.microbatch)
    if plan.schedule == "dualpipe" and (micro < plan.pp or micro % 2):
        return f"the dualpipe schedule needs an even number of micro-batches, at least pp={plan.pp}"
    if plan.virtual_stages > 1 and micro % plan.pp:
        return f"the interleaved schedule needs the {micro} micro-batches to be a multiple of pp={plan.pp}"
    if plan.ep > 1:
        if m.moe is None:
            return "ep > 1 needs a mixture-of-experts model"
        if m.moe.experts % plan.ep:
            return f"ep={plan.ep} does not divide the {m.moe.experts} experts"
    if plan.etp is not None and plan.etp != plan.tp:
        if m.moe is None:
            return "etp needs a mixture-of-experts model"
        if plan.tp % plan.etp:
            return f"etp={plan.etp} does not divide tp={plan.tp}"
        if m.expert_size % plan.etp:
            return f"etp={plan.etp} does not divide the expert width {m.expert_size}"
        ranks = plan.tp * plan.cp * plan.dp
        if ranks % (plan.etp * plan.ep):
            return f"etp x ep = {plan.etp * plan.ep} does not divide tp x cp x dp = {ranks}"
    elif plan.ep > 1 and plan.dp % plan.ep:
        return f"ep={plan.ep} does not divide dp={plan.dp} (an expert tensor-parallel size etp below tp folds it over tp x dp)"
    if job.precision is Precision.FP8 and not gpu.fp8_flops:
        return f"GPU {gpu.name} has no FP8 tensor cores"
    return None
