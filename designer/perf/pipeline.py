"""Pipeline schedules: how layers split over stages, micro-batches in flight, the bubble.

* Layers per stage (:func:`stage_layout`): an even split, or first and last stages with other
  counts than the middle ones (Megatron-Core ``--decoder-first-pipeline-num-layers`` and
  ``--decoder-last-pipeline-num-layers``, 2024-09; DeepSpeed ``--pp-partition-method``;
  torchtitan splits by module names). Llama 3 405B runs 126 layers on 16 stages as 7 + 14 x 8
  + 7: "we reduce one Transformer layer each from the first and the last stages" (The Llama 3
  Herd of Models, sec. 3.3.2).
* Interleaving (Narayanan et al. SC21, sec. 2.2): each stage holds ``v`` model chunks; ``v``
  must divide the middle stages' layers, at any depth.
* Micro-batches in flight on stage ``r`` (activations held): 1F1B warms up ``p - r - 1``
  micro-batches, so ``min(m, p - r)``; interleaved 1F1B warms up ``2 (p - r - 1) + (v - 1) p``
  chunks (Megatron-LM ``get_num_warmup_microbatches`` in
  megatron/core/pipeline_parallel/schedules.py), ``(2 (p - r - 1) + (v - 1) p + 1) / v`` stages'
  worth, which for ``r = 0`` is Korthikanti et al.'s ``p (1 + (p - 1) / (p v))``.
* Layers held (:func:`held_layers`): a first or last stage with fewer layers than the middle ones
  holds them in fewer chunks' worth. The first stage's missing layers are its first chunk's (the
  embedding alone) and the last stage's its last chunk's (output and loss alone): "the first model
  chunk has only the embedding and the last model chunk has only the output projection and loss",
  which Llama 3 chose because the first stage's first chunk holds the most micro-batches in
  flight (The Llama 3 Herd of Models, sec. 3.3.2). Megatron-Core runs forwards in rounds of ``p``
  micro-batches per chunk (``get_model_chunk_id``, microbatch_group_size_per_vp_stage = p) and
  backwards from the last chunk down, so the chunks' counts follow from the order; the peak is
  taken over the warm-up and the steady state.
* Bubble: ``(p - 1) / v`` micro-batch times of the slowest stage (SC21 sec. 2.2), less the chunk
  times a light first or last chunk saves (:func:`light_end_chunks`), plus the ``2 (p v - 1)``
  sends the fill and drain wait for (:func:`fill_drain_sends`).
* DualPipe (DeepSeek-V3 Technical Report, sec. 3.2.1 and Table 2): micro-batches enter from both
  ends, each rank holds stage ``i`` and stage ``p - 1 - i`` (two copies of the parameters, ``p + 1``
  micro-batches of activations), a forward chunk runs beside a backward chunk so that the expert
  all-to-all of one hides behind the compute of the other, and the bubble is
  ``(p/2 - 1)(F&B + B - 3W)``: with backward twice the forward and the weight gradient half of it,
  ``(p/2 - 1) x 2/3`` micro-batch times, against 1F1B's ``(p - 1)``.
"""

from __future__ import annotations

__all__ = ["StageLayout", "stage_layout", "inflight", "interleave_depths", "bubble_microbatches", "held_layers",
           "light_end_chunks", "fill_drain_sends", "DUALPIPE"]

import functools
import math
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class StageLayout:
    """Transformer layers on the first, each middle and the last pipeline stage."""

    first: int
    middle: int
    last: int
    stages: int

    @property
    def max_layers(self) -> int:
        """Layers on the stage that holds the most."""
        return max(self.first, self.middle, self.last)

    @property
    def is_even(self) -> bool:
        """Every stage holds the same number of layers."""
        return self.first == self.middle == self.last


def _balanced(layers: int, pp: int) -> StageLayout | None:
    """First and last stages absorb the remainder of an uneven split, as evenly as Megatron's
    first/last options allow (the first stage gets the fewer: it holds the most activations)."""
    if pp == 2:
        first = layers // 2
        return StageLayout(first, layers - first, layers - first, 2)
    best: StageLayout | None = None
    ceil = math.ceil(layers / pp)
    for middle in (ceil, ceil - 1):
        rest = layers - (pp - 2) * middle
        if middle < 1 or rest < 2:
            continue
        first = rest // 2
        cand = StageLayout(first, middle, rest - first, pp)
        if best is None or cand.max_layers < best.max_layers:
            best = cand
    return best


@functools.lru_cache(maxsize=4096)  # a few shapes, asked for by every plan of a search
def stage_layout(layers: int, pp: int, first: int | None = None, last: int | None = None,
                 uneven: bool = True) -> StageLayout | str:
    """How ``layers`` transformer layers split over ``pp`` stages, or why they cannot.

    Args:
        layers: transformer layers of the model.
        pp: pipeline stages.
        first, last: pinned layer counts of the first and last stage (``None``: chosen).
        uneven: the stack can give the first and last stages other counts than the rest.

    Returns:
        A :class:`StageLayout`, or a reason string.

    Examples:
        >>> stage_layout(126, 16)
        StageLayout(first=7, middle=8, last=7, stages=16)
        >>> stage_layout(96, 8)
        StageLayout(first=12, middle=12, last=12, stages=8)
        >>> stage_layout(126, 16, uneven=False)
        'pp=16 does not divide the 126 layers (the stack splits layers evenly)'
    """
    if pp == 1:
        if (first is not None and first != layers) or (last is not None and last != layers):
            return "first_stage_layers and last_stage_layers need pipeline parallelism"
        return StageLayout(layers, layers, layers, 1)
    if pp > layers:
        return f"pp={pp} exceeds the {layers} layers"
    if first is None and last is None:
        if layers % pp == 0:
            m = layers // pp
            return StageLayout(m, m, m, pp)
        if not uneven:
            return f"pp={pp} does not divide the {layers} layers (the stack splits layers evenly)"
        return _balanced(layers, pp) or f"the {layers} layers cannot be split over pp={pp} stages"
    if not uneven:
        return "the stack cannot give the first and last pipeline stages their own layer counts"
    for name, value in (("first_stage_layers", first), ("last_stage_layers", last)):
        if value is not None and not 1 <= value < layers:
            return f"{name}={value} must be between 1 and {layers - 1}"
    if pp == 2:
        f = first if first is not None else layers - last  # type: ignore[operator]
        la = last if last is not None else layers - f
        if f + la != layers:
            return f"first_stage_layers + last_stage_layers must be the {layers} layers on two stages"
        return StageLayout(f, la, la, 2)
    ends = [v for v in (first, last) if v is not None]
    rest = layers - sum(ends)
    others = pp - len(ends)
    if rest < others or rest % others:
        return (f"the {rest} layers left after the first and last stages do not divide evenly over "
                f"the other {others} stages")
    m = rest // others
    return StageLayout(first if first is not None else m, m, last if last is not None else m, pp)


@functools.lru_cache(maxsize=1024)
def interleave_depths(layout: StageLayout) -> tuple[int, ...]:
    """Interleaving depths ``v`` the layout allows: every divisor of the middle stages' layers
    (1 is plain 1F1B). The first and last stages may hold fewer layers in their chunks."""
    if layout.stages == 1:
        return (1,)
    m = layout.middle
    if max(layout.first, layout.last) > m:
        return (1,)
    return tuple(v for v in range(1, m + 1) if m % v == 0)


DUALPIPE = "dualpipe"


def bubble_microbatches(pp: int, v: int, schedule: str = "1f1b") -> float:
    """Pipeline bubble in micro-batch times of the slowest stage (module docstring).

    Examples:
        >>> bubble_microbatches(8, 1), bubble_microbatches(8, 4), round(bubble_microbatches(8, 1, DUALPIPE), 3)
        (7.0, 1.75, 2.0)
    """
    if pp <= 1:
        return 0.0
    if schedule == DUALPIPE:
        return (pp / 2 - 1) * 2.0 / 3.0
    return (pp - 1) / v


def fill_drain_sends(pp: int, v: int) -> int:
    """Pipeline sends on the critical path of the fill and the drain: ``2 (p v - 1)``.

    The first micro-batch's forward crosses every boundary between the ``p v`` model chunks in
    order (stage ``r`` chunk ``c`` feeds stage ``r + 1``, the last stage's chunk ``c`` the first
    stage's chunk ``c + 1``; Narayanan et al. SC21 sec. 2.2, Megatron-Core
    ``forward_backward_pipelining_with_interleaving``), and the last micro-batch's backward crosses
    them all again. No compute can hide those transfers: the receiver has nothing else to run
    until they arrive (in the warm-up the first stage waits ``p`` sends per round of chunks),
    while in the steady state ``overlap_p2p_comm`` hides each send behind the next chunk. An
    op-by-op replay of the schedule (tests/perf/test_pipeline.py) lengthens by exactly this many
    send times. Plain 1F1B: ``2 (p - 1)``.

    Examples:
        >>> fill_drain_sends(4, 1), fill_drain_sends(16, 8), fill_drain_sends(4, 20)
        (6, 254, 158)
    """
    if pp <= 1:
        return 0
    return 2 * (pp * v - 1)


def inflight(pp: int, v: int, microbatches: int, rank: int, schedule: str = "1f1b") -> float:
    """Micro-batches whose activations stage ``rank`` holds at its peak, in whole-stage units.

    Examples:
        >>> inflight(4, 1, 16, 0), inflight(4, 1, 16, 3), inflight(4, 1, 2, 0)
        (4.0, 1.0, 2.0)
        >>> inflight(4, 2, 16, 0) == 4 * (1 + 3 / (4 * 2))
        True
    """
    if pp == 1:
        return 1.0
    if schedule == DUALPIPE:
        return float(min(microbatches, pp + 1))
    if v == 1:
        return float(min(microbatches, pp - rank))
    chunks = min(microbatches * v, 2 * (pp - rank - 1) + (v - 1) * pp + 1)
    return chunks / v


def _chunk_layers(layers: int, middle: int, v: int, first: bool) -> tuple[float, ...]:
    """Layers of each of a stage's ``v`` chunks: ``middle / v`` each, the stage's shortfall
    against the middle stages taken from its first chunks (first stage) or last chunks."""
    per = middle / v
    short = float(middle - layers)
    out = []
    for _ in range(v):
        take = min(per, short)
        out.append(per - take)
        short -= take
    return tuple(out) if first else tuple(reversed(out))


@functools.lru_cache(maxsize=4096)
def held_layers(pp: int, v: int, microbatches: int, rank: int, layers: int, middle: int,
                schedule: str = "1f1b") -> float:
    """Layer-micro-batches of activations stage ``rank`` (holding ``layers`` layers, the middle
    stages ``middle``) holds at its peak (module docstring): ``layers x`` :func:`inflight` where
    every chunk holds the same layers, otherwise the largest chunk-weighted count over the
    schedule's warm-up and steady state.

    Examples:
        >>> held_layers(4, 1, 16, 0, 10, 10), held_layers(16, 8, 16, 0, 7, 8)
        (40.0, 112.0)
        >>> held_layers(16, 8, 32, 0, 7, 8), 7 * inflight(16, 8, 32, 0)
        (112.0, 125.125)
    """
    held = inflight(pp, v, microbatches, rank, schedule)
    if v == 1 or pp == 1 or schedule == DUALPIPE or layers >= middle or rank not in (0, pp - 1):
        return layers * held
    sizes = _chunk_layers(layers, middle, v, rank == 0)
    total = microbatches * v
    warm = min(total, 2 * (pp - rank - 1) + (v - 1) * pp + 1)
    group = pp * v

    def fwd(k: int) -> float:  # forward k runs chunk (k mod p v) // p
        return sizes[(k % group) // pp]

    def bwd(k: int) -> float:  # backward k frees chunk v - 1 - (k mod p v) // p
        return sizes[v - 1 - (k % group) // pp]

    now = sum(fwd(k) for k in range(warm))
    peak = now
    for j in range(total - warm):  # one forward then one backward, 1F1B
        now += fwd(warm + j)
        peak = max(peak, now)
        now -= bwd(j)
    return float(peak)


def light_end_chunks(layout: StageLayout, v: int, layer_s: float, logits_s: float) -> float:
    """Chunk times of the pacing stage by which a light first and last chunk shorten the bubble.

    The fill runs the first micro-batch's forward through every chunk and the drain the last one's
    backward back through them; of the first stage's chunks only its first lies on that path (the rest of its work waits in its idle time), and a first chunk
    ``a`` times a middle chunk saves ``1 - a``. The last stage's last chunk turns each micro-batch
    round (its forward then at once its backward); a last chunk ``b`` times a middle chunk saves
    at least ``1 - b`` (a replay of the schedule saves up to one chunk already at ``b = 0.5``;
    the lower bound is taken). Llama 3 405B keeps its first chunk for the embedding alone and its
    last for the output and loss (sec. 3.3.2): about two chunks of its 15-chunk bubble on 16
    stages. None when the last stage paces the pipeline (its logits outweigh a middle chunk).

    Examples:
        >>> light_end_chunks(StageLayout(7, 8, 7, 16), 8, 1.0, 0.5), light_end_chunks(StageLayout(8, 8, 8, 8), 4, 1.0, 0.0)
        (2.0, 0.0)
        >>> light_end_chunks(StageLayout(7, 8, 7, 16), 1, 1.0, 0.5)  # plain 1F1B: the stages are the chunks
        0.1875
    """
    if layout.stages == 1 or layout.middle <= 0:
        return 0.0
    middle = layout.middle * layer_s
    if layout.last * layer_s + logits_s > middle or layout.first > layout.middle:
        return 0.0
    per = layout.middle / v  # layers of a middle chunk
    first = max(0.0, per - (layout.middle - layout.first))
    last = max(0.0, per - (layout.middle - layout.last))
    chunk = per * layer_s
    short = max(0.0, 1.0 - (last * layer_s + logits_s) / chunk)
    return max(0.0, 1.0 - first / per) + (min(1.0, 2.0 * short) if v > 1 else short)
