"""Pipeline schedules: stage layouts, interleaving depths, micro-batches in flight, uneven stages."""

from __future__ import annotations

from dataclasses import replace

import pytest

from designer.perf import Cluster, Job, ModelArch, Plan, check_plan, estimate_step, resolve_software, search_plans
from designer.perf.memory import memory_per_gpu, usable_hbm_bytes
from designer.perf.pipeline import (
    StageLayout, bubble_microbatches, held_layers, inflight, interleave_depths, stage_layout,
)

from .factories import H100, LLAMA3_8B, LLAMA3_70B, NDR

# Llama 3 405B (The Llama 3 Herd of Models, Table 3): 126 layers, 16,384 wide, 128 heads, 8 KV
# heads, SwiGLU 53,248, vocabulary 128,256, sequence 8,192 in pre-training (sec. 3.4).
LLAMA3_405B = ModelArch("llama3-405b", 126, 16384, 128, 8, 53248, 128256, 8192, gated_mlp=True,
                        params=405.9e9)


def test_llama3_405b_splits_as_meta_ran_it():
    """126 layers on 16 stages: one layer fewer on the first and the last (Llama 3 sec. 3.3.2)."""
    assert stage_layout(126, 16) == StageLayout(7, 8, 7, 16)
    assert stage_layout(126, 16, uneven=False) == "pp=16 does not divide the 126 layers (the stack splits layers evenly)"
    assert interleave_depths(stage_layout(126, 16)) == (1, 2, 4, 8)


@pytest.mark.parametrize("layers, pp, first, last, expect", [
    (96, 8, None, None, StageLayout(12, 12, 12, 8)),
    (80, 3, None, None, StageLayout(26, 27, 27, 3)),
    (61, 4, None, None, StageLayout(14, 16, 15, 4)),
    (32, 2, None, None, StageLayout(16, 16, 16, 2)),
    (33, 2, None, None, StageLayout(16, 17, 17, 2)),
    (126, 16, 6, 8, StageLayout(6, 8, 8, 16)),
    (62, 2, 30, None, StageLayout(30, 32, 32, 2)),
])
def test_stage_layouts_hold_every_layer(layers, pp, first, last, expect):
    layout = stage_layout(layers, pp, first, last)
    assert layout == expect
    if pp == 2:
        assert layout.first + layout.last == layers
    else:
        assert layout.first + (pp - 2) * layout.middle + layout.last == layers


def test_pinned_stages_must_leave_an_even_rest():
    assert "do not divide evenly" in stage_layout(126, 16, 5, 7)
    assert "need pipeline parallelism" in stage_layout(32, 1, 4, None)


def test_interleaving_at_any_depth_that_divides_a_stage():
    assert interleave_depths(stage_layout(80, 4)) == (1, 2, 4, 5, 10, 20)
    assert interleave_depths(stage_layout(96, 8)) == (1, 2, 3, 4, 6, 12)


def test_interleaved_warmup_is_megatrons():
    """Megatron-LM: rank r warms up 2 (p - r - 1) + (v - 1) p chunks; plus the one in flight."""
    p, v = 8, 3
    for rank in range(p):
        chunks = 2 * (p - rank - 1) + (v - 1) * p + 1
        assert inflight(p, v, 64, rank) == pytest.approx(chunks / v)
    assert inflight(p, v, 2, 0) == pytest.approx(2.0)  # no more than the step's micro-batches


def _replayed_peak(p: int, v: int, m: int, rank: int, chunk_layers: list[float]) -> float:
    """Layer-micro-batches a stage holds at its peak, replayed from Megatron-Core's interleaved
    order: forward k runs model chunk (k mod p v) // p, backward k the chunk v - 1 - that
    (get_model_chunk_id, micro-batch groups of p), 2 (p - r - 1) + (v - 1) p + 1 forwards of warm-up,
    then one forward and one backward in turn."""
    total = m * v
    warm = min(total, 2 * (p - rank - 1) + (v - 1) * p + 1)
    order = [("F", k) for k in range(warm)]
    for j in range(total - warm):
        order += [("F", warm + j), ("B", j)]
    order += [("B", j) for j in range(total - warm, total)]
    held = peak = 0.0
    for kind, k in order:
        chunk = (k % (p * v)) // p
        if kind == "F":
            held += chunk_layers[chunk]
            peak = max(peak, held)
        else:
            held -= chunk_layers[v - 1 - chunk]
    assert held == pytest.approx(0.0)
    return peak


@pytest.mark.parametrize("p, v, m", [(4, 2, 16), (8, 4, 32), (16, 8, 16), (16, 8, 32), (4, 5, 8), (16, 2, 48)])
def test_held_layers_replay_the_interleaved_schedule(p, v, m):
    """Every chunk alike: ``layers x`` the micro-batches in flight. A first stage one layer short
    (Llama 3 405B: 7 layers against 8 on 16 stages) keeps its first chunk for the embedding alone,
    the last stage its last chunk for the output and loss (Llama 3 sec. 3.3.2); the peak is the
    replayed schedule's."""
    middle = 2 * v
    for rank in range(p):
        assert held_layers(p, v, m, rank, middle, middle) == pytest.approx(middle * inflight(p, v, m, rank))
    short = [1.0] + [2.0] * (v - 1)  # the first chunk one layer short
    assert held_layers(p, v, m, 0, middle - 1, middle) == pytest.approx(_replayed_peak(p, v, m, 0, short))
    assert held_layers(p, v, m, p - 1, middle - 1, middle) == pytest.approx(
        _replayed_peak(p, v, m, p - 1, short[::-1]))


def test_llama3_405b_first_stage_holds_no_layer_in_its_embedding_chunk():
    """TP8 PP16 VP8, 7 layers on the first stage: its first chunk holds none, so with 32
    micro-batches in a step its peak is 16 micro-batches of its 7 layers (112 layer-micro-batches),
    not 7 layers x 17.9 micro-batches in flight (125.1)."""
    assert held_layers(16, 8, 32, 0, 7, 8) == pytest.approx(112.0)
    assert 7 * inflight(16, 8, 32, 0) == pytest.approx(125.125)
    assert held_layers(16, 1, 32, 0, 7, 8) == pytest.approx(7 * 16)  # plain 1F1B: one chunk


def _replayed_step(p: int, v: int, m: int, fwd: float, bwd: float, send: float, cost=None) -> float:
    """Time of one step of Megatron-Core's interleaved 1F1B (v = 1: plain 1F1B), replayed op by
    op: each stage runs its forwards and backwards in the schedule's order (warm-up
    2 (p - r - 1) + (v - 1) p forwards, then one forward and one backward in turn), a chunk's
    forward waits for the previous chunk's output and its backward for the next chunk's gradient,
    each ``send`` seconds after it was produced; sends never hold up the sender (posted ahead and
    overlapped, as overlap_p2p_comm does). A chunk's forward takes ``fwd / v`` and its backward
    ``bwd / v``, times ``cost(stage, chunk)`` where given."""
    orders = []
    for r in range(p):
        total = m * v
        warm = min(p - r - 1, m) if v == 1 else min(2 * (p - r - 1) + (v - 1) * p, total)
        chunk = [((k // (p * v)) * p + k % p, (k % (p * v)) // p) for k in range(total)]  # (micro-batch, chunk)
        order = [("F", *chunk[k]) for k in range(warm)]
        for j in range(total - warm):
            order += [("F", *chunk[warm + j]), ("B", chunk[j][0], v - 1 - chunk[j][1])]
        order += [("B", chunk[j][0], v - 1 - chunk[j][1]) for j in range(total - warm, total)]
        orders.append(order)
    done: dict = {}
    at, clock = [0] * p, [0.0] * p
    moved = True
    while moved:
        moved = False
        for r in range(p):
            while at[r] < len(orders[r]):
                kind, mb, c = orders[r][at[r]]
                position = c * p + r
                if kind == "F":
                    need = None if position == 0 else ("F", mb, c if r else c - 1, (r - 1) % p)
                else:
                    need = ("F", mb, c, r) if position == p * v - 1 else ("B", mb, c if r < p - 1 else c + 1, (r + 1) % p)
                if need is not None and need not in done:
                    break
                ready = 0.0 if need is None else done[need] + (send if need[3] != r else 0.0)
                scale = 1.0 if cost is None else cost(r, c)
                clock[r] = max(clock[r], ready) + (fwd if kind == "F" else bwd) / v * scale
                done[(kind, mb, c, r)] = clock[r]
                at[r] += 1
                moved = True
    assert all(at[r] == len(orders[r]) for r in range(p))
    return max(clock)


@pytest.mark.parametrize("p, v, m", [(4, 2, 16), (4, 20, 16), (8, 4, 32), (16, 8, 16), (8, 12, 8), (8, 1, 32)])
def test_replayed_schedule_takes_the_1f1b_bubble(p, v, m):
    """Replayed, Megatron-Core's (interleaved) 1F1B takes (m + (p - 1)/v) micro-batch times
    (SC21 sec. 2.2)."""
    assert _replayed_step(p, v, m, 1.0, 2.0, 0.0) == pytest.approx((m + bubble_microbatches(p, v)) * 3.0)


@pytest.mark.parametrize("p, v, m", [(4, 2, 16), (4, 20, 16), (8, 4, 32), (16, 8, 16), (16, 8, 32), (8, 12, 8)])
@pytest.mark.parametrize("send", [0.01, 0.05])
def test_replayed_interleaved_schedule_waits_for_the_fill_and_drain_sends(p, v, m, send):
    """With the steady state's sends overlapped, the replayed interleaved step is longer than
    without sends by exactly 2 (p v - 1) send times: the first micro-batch's forward and the
    last one's backward cross every chunk boundary in a row."""
    from designer.perf.pipeline import fill_drain_sends
    extra = _replayed_step(p, v, m, 1.0, 2.0, send) - _replayed_step(p, v, m, 1.0, 2.0, 0.0)
    assert extra == pytest.approx(fill_drain_sends(p, v) * send, rel=1e-9)
    assert fill_drain_sends(p, v) == 2 * (p * v - 1)


@pytest.mark.parametrize("p, v, m", [(4, 2, 8), (8, 4, 16), (16, 8, 16), (8, 1, 16), (4, 1, 8)])
@pytest.mark.parametrize("first, last, logits", [(1, 2, 0.0), (2, 1, 0.0), (1, 1, 1.0), (0, 2, 0.0),
                                                  (2, 1, 0.5), (1, 0, 0.8), (2, 2, 1.9)])
def test_light_first_and_last_chunks_shorten_the_replayed_bubble(p, v, m, first, last, logits):
    """Middle chunks of 2 layers; the first stage's first chunk holds ``first`` layers and the last
    stage's last chunk ``last`` layers plus ``logits`` layers' worth of output and loss. The
    replayed schedule's step is shorter than the even one's by at least the chunks
    :func:`light_end_chunks` counts (exactly where only the first chunk is light)."""
    from designer.perf.pipeline import light_end_chunks
    fwd, bwd = 1.0, 2.0
    middle = 2 * v
    layout = StageLayout(middle - 2 + first, middle, middle - 2 + last, p)

    def cost(r, c):
        if r == 0 and c == 0:
            return first / 2
        if r == p - 1 and c == v - 1:
            return (last + logits) / 2
        return 1.0

    even = _replayed_step(p, v, m, fwd * middle, bwd * middle, 0.0)
    light = _replayed_step(p, v, m, fwd * middle, bwd * middle, 0.0, cost)
    chunk = 2 * (fwd + bwd)  # one middle chunk's forward and backward
    counted = light_end_chunks(layout, v, fwd + bwd, logits * (fwd + bwd))
    if last + logits > 2:  # the last stage paces the pipeline: nothing counted
        assert counted == 0.0 and light > even
        return
    assert even - light >= counted * chunk - 1e-9
    if last + logits == 2:
        assert even - light == pytest.approx(counted * chunk)


def test_uneven_split_runs_on_stacks_that_have_it_only():
    cluster = Cluster(H100, NDR)
    plan = Plan(tp=8, pp=16, dp=2, microbatch=1, zero=1)
    core = Job(LLAMA3_405B, 64, 1e9, recompute="full")
    assert check_plan(core, plan, cluster) is None
    old = Job(LLAMA3_405B, 64, 1e9, recompute="full", software=resolve_software("megatron-lm-2021"))
    assert "does not divide the 126 layers" in check_plan(old, replace(plan, zero=0, sequence_parallel=False), cluster)
    est = estimate_step(core, plan, cluster)
    assert est.stage_layers == (7, 8, 7)


def test_the_slowest_stage_sets_the_pace():
    """Llama 3 8B's logits (128K vocabulary) cost about two layers: moving a layer from the last
    stage to the first speeds the step; piling layers on the first stage slows it."""
    cluster = Cluster(H100, NDR)
    job = Job(LLAMA3_8B, 256, 1e9, recompute="full")
    base = Plan(tp=1, pp=4, dp=2, microbatch=1, zero=1)
    even = estimate_step(job, base, cluster)
    light_last = estimate_step(job, replace(base, first_stage_layers=9, last_stage_layers=7), cluster)
    heavy_first = estimate_step(job, replace(base, first_stage_layers=12, last_stage_layers=4), cluster)
    assert (even.stage_layers, light_last.stage_layers) == ((8, 8, 8), (9, 8, 7))
    assert light_last.breakdown.compute_s < even.breakdown.compute_s < heavy_first.breakdown.compute_s


def test_llama3_405b_production_layout_fits_with_the_reserve():
    """Meta's layout (Llama 3 Table 4): TP8 PP16 DP128 on 16,384 H100, sequence 8,192, 2,048
    sequences per step (16 per data-parallel group), no activation checkpointing, FSDP keeping
    parameters unsharded after the forward (ZeRO-2), interleaved. It ran, so it must fit under the
    allocator and NCCL reserve, at every interleaving depth the stages allow."""
    job = Job(LLAMA3_405B, 2048, 15e12, recompute="none", software=resolve_software("fsdp2"))
    cluster = Cluster(H100, NDR)
    for v in (2, 4, 8):
        plan = Plan(tp=8, pp=16, dp=128, microbatch=1, virtual_stages=v, zero=2)
        assert check_plan(job, plan, cluster) is None
        need = memory_per_gpu(job, plan, 16).total
        assert need <= usable_hbm_bytes(H100) < 0.95 * H100.hbm_bytes


def test_recompute_auto_picks_the_fastest_that_fits():
    cluster = Cluster(H100, NDR)
    auto = search_plans(Job(LLAMA3_70B, 1024, 1e9, recompute="auto"), cluster, 256)
    each = []
    for r in ("none", "selective", "full"):
        try:
            each.append(search_plans(Job(LLAMA3_70B, 1024, 1e9, recompute=r), cluster, 256).step_time_s)
        except Exception:
            pass
    assert auto.step_time_s == pytest.approx(min(each))
    assert auto.recompute.value in ("none", "selective", "full")
    with pytest.raises(Exception, match="recompute auto"):
        estimate_step(Job(LLAMA3_70B, 1024, 1e9, recompute="auto"), auto.plan, cluster)


def test_dualpipe_hides_the_expert_all_to_all_and_shrinks_the_bubble():
    """DeepSeek-V3 (sec. 3.2.1, Table 2): DualPipe's bubble is (p/2 - 1)(F&B + B - 3W) against
    1F1B's (p - 1)(F + B), it keeps two copies of the parameters, and a forward chunk beside a
    backward chunk hides the expert all-to-all."""
    from designer.perf import MoE
    from designer.perf.pipeline import DUALPIPE, bubble_microbatches
    assert bubble_microbatches(16, 1, DUALPIPE) == pytest.approx(7 * 2 / 3)
    model = ModelArch("moe", 16, 4096, 32, 8, 14336, 32000, 4096, gated_mlp=True, moe=MoE(experts=16, top_k=2))
    job = Job(model, 256, 1e9, recompute="full")
    cluster = Cluster(H100, NDR)
    base = Plan(tp=1, pp=4, dp=16, ep=8, microbatch=1, zero=1)
    plain = estimate_step(job, base, cluster)
    dual = estimate_step(job, replace(base, schedule=DUALPIPE), cluster)
    assert dual.breakdown.ep_comm_s == pytest.approx(plain.breakdown.ep_comm_s)
    assert dual.breakdown.bubble_s < 0.5 * plain.breakdown.bubble_s
    assert dual.step_time_s < plain.step_time_s
    assert dual.memory.weights == pytest.approx(2 * plain.memory.weights)
    assert "even pp" in check_plan(job, replace(base, pp=1, dp=64, schedule=DUALPIPE), cluster)
    # the search never picks DualPipe on its own, only where the plan pins it
    assert search_plans(job, cluster, 64).plan.schedule == "1f1b"
