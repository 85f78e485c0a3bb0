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

__all__ = ["exposed_s"]


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
