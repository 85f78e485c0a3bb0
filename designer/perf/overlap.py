"""Overlapping communication with compute: what stays exposed, and what overlap costs.

Model. A collective of ``C`` seconds is launched beside ``W`` seconds of compute. A share
``1 - e`` of it cannot overlap at all (the stack's overlap efficiency ``e``: the first layer's
gather before any compute, the last bucket after the backward); it is exposed. The rest, ``e C``,
runs concurrently with the compute, which slows by a fraction ``s`` while both run: collective
kernels take SMs and HBM bandwidth from the GEMMs (one CUDA block per NCCL channel). If ``e C``
finishes first, the compute ends ``s e C`` late; if the compute finishes first (after
``W / (1 - s)``), the step waits for the collective's remainder, ``e C - W``. Both cases are

``exposed = (1 - e) C + max(s e C, e C - W)``

which is continuous, never below ``s e C`` and never above ``C``; with no window (``W = 0``) the
collective is wholly exposed, and with no overlap (``e = 0``) too.

``s`` is measured: running GEMMs and NCCL collectives concurrently slows the compute by 18.9 %
on average (up to 40 %) across A100, H100, MI250 and MI210 running GPT and LLaMA training
("Characterizing Compute-Communication Overlap in GPU-Accelerated Distributed Deep Learning",
arXiv 2507.03114). The efficiencies ``e`` are per stack and traffic class
(:mod:`designer.perf.software`, :mod:`designer.perf.constants`).

Examples:
    >>> exposed_s(1.0, 10.0, 1.0, 0.2)  # hidden behind a long window: only the slowdown
    0.2
    >>> exposed_s(1.0, 0.5, 1.0, 0.2)  # longer than its window
    0.5
    >>> exposed_s(1.0, 10.0, 0.9, 0.2)  # 10 % can never overlap
    0.28
    >>> exposed_s(1.0, 0.0, 1.0, 0.2)
    1.0
"""

from __future__ import annotations

__all__ = ["exposed_s", "async_tp_decomposed_s", "async_tp_exposed_s", "tp_overlap_exposed_s"]

from designer.perf import constants as K


def exposed_s(comm_s: float, window_s: float, efficiency: float, slowdown: float) -> float:
    """Seconds a collective of ``comm_s`` adds to the step when overlapped with ``window_s`` of
    compute: ``(1 - e) C + max(s e C, e C - W)`` (module docstring).

    Args:
        comm_s: the collective's own time ``C``.
        window_s: compute it may run beside, ``W``.
        efficiency: the share ``e`` that can overlap at all (0-1).
        slowdown: the compute slowdown ``s`` while both run (0-1).
    """
    if comm_s <= 0.0:
        return 0.0
    overlappable = efficiency * comm_s
    return comm_s - overlappable + max(slowdown * overlappable, overlappable - max(window_s, 0.0))


def async_tp_decomposed_s(ag_s: float, rs_s: float, full: bool) -> float:
    """Seconds of one layer's sequence-parallel TP traffic that PyTorch's AsyncTP decomposes:
    ``2 (ag + rs) x (2 if full recompute else 1) + 2 ag``.

    AsyncTP is an Inductor pass (torch/_inductor/fx_passes/micro_pipeline_tp.py) that rewrites
    ``all_gather -> mm`` into ``symm_mem.fused_all_gather_matmul`` where the gathered tensor is the
    left operand of the GEMMs, and ``mm -> reduce_scatter`` into ``fused_matmul_reduce_scatter``
    where one GEMM alone produces the reduce-scatter's input. In a Llama layer under a
    sequence-parallel plan that covers, per forward (and again in a full recompute), the gathers
    into the q/k/v and w1/w3 GEMMs and the reduce-scatters out of wo and w2; in the backward the
    gathers of the output gradients into the wo and w2 input-gradient GEMMs. It cannot cover the
    backward reduce-scatters of the attention and MLP input gradients, which are sums of three
    (q, k, v) and two (w1, w3) GEMMs (``_find_producer_matmul`` finds an add), nor, without a full
    recompute, the re-gathers of the norm outputs, whose only GEMM is the weight gradient with the
    gathered tensor as its right operand.
    """
    return 2.0 * (ag_s + rs_s) * (2.0 if full else 1.0) + 2.0 * ag_s


def async_tp_exposed_s(ag_s: float, rs_s: float, full: bool, window_s: float, efficiency: float,
                       slowdown: float) -> float:
    """Seconds one layer's TP traffic adds under AsyncTP: the traffic it cannot decompose whole, and
    the decomposed share ``D`` (:func:`async_tp_decomposed_s`) overlapped with its GEMMs
    (``window_s``) at the stack's efficiency: ``T - D + exposed_s(D, W, e, s)``, where ``T`` is the
    layer's TP traffic (``6 (ag + rs)`` with full recompute, else ``4 (ag + rs) + 2 ag``; Korthikanti
    et al. 2022 sec. 4.2.2).

    The decomposed GEMM runs in ``tp`` chunks on two alternating streams while the copy engines pull
    the peers' shards or partial outputs (torch/distributed/_symmetric_memory,
    ``_pipelined_all_gather_and_consume``, ``_pipelined_produce_and_all2all``); a barrier per step,
    the smaller GEMMs and the final reduction of the ``tp`` partial outputs are what the
    efficiency ``e`` of :data:`designer.perf.constants.ASYNC_TP_OVERLAP_EFFICIENCY` measures.

    Examples:
        >>> round(async_tp_exposed_s(1.0, 1.0, True, 100.0, 1.0, 0.0), 6)  # the 2 backward reduce-scatters
        2.0
        >>> round(async_tp_exposed_s(1.0, 1.0, False, 100.0, 0.0, 0.0), 6)  # nothing hides: 4 (ag + rs) + 2 ag
        10.0
    """
    total = (6.0 * (ag_s + rs_s)) if full else (4.0 * (ag_s + rs_s) + 2.0 * ag_s)
    decomposed = async_tp_decomposed_s(ag_s, rs_s, full)
    return total - decomposed + exposed_s(decomposed, window_s, efficiency, slowdown)


def tp_overlap_exposed_s(micro_pipelined: bool, ag_s: float, rs_s: float, full: bool, gemm_fwd_s: float,
                         column_share: float) -> float:
    """Seconds one layer's sequence-parallel TP traffic adds when the stack overlaps it with the GEMMs
    (``tp_comm_overlap``).

    Megatron-Core userbuffers pipeline every collective with its GEMM: ``exposed_s(T, W, e, s)`` with
    ``W`` the layer's GEMMs (forward, backward and a full recompute: 4 or 3 forward GEMM times) and
    ``e = TP_OVERLAP_EFFICIENCY``. PyTorch AsyncTP (``micro_pipelined``) decomposes only part of it
    (:func:`async_tp_exposed_s`), beside the forward GEMMs (twice with full recompute) and the
    row-parallel layers' input-gradient GEMMs (``1 - column_share`` of the forward GEMM time), at
    ``e = ASYNC_TP_OVERLAP_EFFICIENCY``. ``s = OVERLAP_SLOWDOWN`` in both.
    """
    if micro_pipelined:
        window = gemm_fwd_s * ((2.0 if full else 1.0) + 1.0 - column_share)
        return async_tp_exposed_s(ag_s, rs_s, full, window, K.ASYNC_TP_OVERLAP_EFFICIENCY, K.OVERLAP_SLOWDOWN)
    total = (6.0 * (ag_s + rs_s)) if full else (4.0 * (ag_s + rs_s) + 2.0 * ag_s)
    return exposed_s(total, gemm_fwd_s * (4.0 if full else 3.0), K.TP_OVERLAP_EFFICIENCY, K.OVERLAP_SLOWDOWN)
