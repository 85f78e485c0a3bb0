"""Alpha-beta cost of collective operations: closed forms per algorithm.

Notation: ``n`` is the buffer size in bytes (the whole vector being reduced or gathered,
as nccl-tests counts it), ``p`` the number of ranks, ``bw`` the achieved bandwidth of one
rank's link in one direction (bytes/s) and ``alpha`` the latency of one step (s).

Model (Thakur, Rabenseifner and Gropp 2005, "Optimization of Collective Communication
Operations in MPICH"; Patarasuk and Yuan 2009 for the bandwidth-optimal ring):

=====================  ===========================================  ==================
collective             time                                         steps
=====================  ===========================================  ==================
ring all-reduce        2 (p-1)/p * n/bw + 2 (p-1) alpha             reduce-scatter + all-gather
ring reduce-scatter    (p-1)/p * n/bw + (p-1) alpha
ring all-gather        (p-1)/p * n/bw + (p-1) alpha
tree all-reduce        2 n/bw + 2 ceil(log2 p) alpha                 reduce up, broadcast down
hierarchical (g x k)   intra RS + inter ring AR of n/g + intra AG    NVLink inside, fabric between nodes
in-switch all-reduce   n/bw + steps * alpha                          NVLS / SHARP: each byte sent once, received once
pairwise all-to-all    (p-1)/p * n/bw + (p-1) alpha                  n = bytes one rank sends in total
point-to-point         n/bw + alpha
=====================  ===========================================  ==================

The bus bandwidth that nccl-tests prints converts a measured time back to a per-link rate
(NVIDIA/nccl-tests doc/PERFORMANCE.md): all-reduce ``busbw = n/t * 2(p-1)/p``, reduce-scatter
and all-gather ``busbw = n/t * (p-1)/p``.

Examples:
    A 1 GB ring all-reduce over 8 ranks at 100 GB/s with 10 us steps:

    >>> round(ring_all_reduce_s(1e9, 8, 100e9, 10e-6) * 1e3, 3)
    17.64
    >>> round(bus_bandwidth(Collective.ALL_REDUCE, 1e9, 8, ring_all_reduce_s(1e9, 8, 100e9, 0.0)) / 1e9, 6)
    100.0

    In-network reduction halves the traffic of the bandwidth term:

    >>> ring_all_reduce_s(1e9, 1024, 50e9, 0.0) / in_switch_all_reduce_s(1e9, 50e9, 0.0) > 1.99
    True
"""

from __future__ import annotations

__all__ = [
    "Collective",
    "ring_all_reduce_s",
    "ring_reduce_scatter_s",
    "ring_all_gather_s",
    "tree_all_reduce_s",
    "hierarchical_all_reduce_s",
    "in_switch_all_reduce_s",
    "pairwise_all_to_all_s",
    "p2p_s",
    "bus_bandwidth",
]

import math
from enum import Enum


class Collective(str, Enum):
    """Communication patterns of distributed training."""

    ALL_REDUCE = "all_reduce"
    REDUCE_SCATTER = "reduce_scatter"
    ALL_GATHER = "all_gather"
    ALL_TO_ALL = "all_to_all"
    P2P = "p2p"


def ring_all_reduce_s(n: float, p: int, bw: float, alpha: float) -> float:
    """Ring all-reduce: ``2 (p-1)/p * n/bw + 2 (p-1) alpha``.

    Args:
        n: bytes of the vector on each rank.
        p: ranks.
        bw: per-rank link bandwidth, one direction, bytes/s.
        alpha: latency of one ring step, s.

    Returns:
        Seconds; 0 for a single rank.

    Examples:
        >>> ring_all_reduce_s(1e9, 2, 1e9, 0.0)
        1.0
        >>> round(ring_all_reduce_s(0.0, 4, 1e9, 1e-6) * 1e6, 6)
        6.0
        >>> ring_all_reduce_s(1e9, 1, 1e9, 1e-6)
        0.0
    """
    if p <= 1:
        return 0.0
    return 2.0 * (p - 1) / p * n / bw + 2.0 * (p - 1) * alpha


def ring_reduce_scatter_s(n: float, p: int, bw: float, alpha: float) -> float:
    """Ring reduce-scatter of an ``n``-byte vector: ``(p-1)/p * n/bw + (p-1) alpha``.

    Examples:
        >>> ring_reduce_scatter_s(8e9, 8, 7e9, 0.0)
        1.0
    """
    if p <= 1:
        return 0.0
    return (p - 1) / p * n / bw + (p - 1) * alpha


def ring_all_gather_s(n: float, p: int, bw: float, alpha: float) -> float:
    """Ring all-gather into an ``n``-byte vector: ``(p-1)/p * n/bw + (p-1) alpha``.

    Examples:
        >>> ring_all_gather_s(8e9, 8, 7e9, 1e-6) == ring_reduce_scatter_s(8e9, 8, 7e9, 1e-6)
        True
    """
    return ring_reduce_scatter_s(n, p, bw, alpha)


def tree_all_reduce_s(n: float, p: int, bw: float, alpha: float) -> float:
    """Pipelined (double binary) tree all-reduce: ``2 n/bw + 2 ceil(log2 p) alpha``.

    Each rank sends and receives the whole vector on the way up and again on the way down;
    latency grows with the tree depth instead of the ring length (Sanders, Speck and Traeff
    2009, as used by NCCL).

    Examples:
        >>> round(tree_all_reduce_s(0.0, 1024, 1e9, 1e-6) * 1e6, 6)
        20.0
        >>> tree_all_reduce_s(0.0, 1024, 1e9, 1e-6) < ring_all_reduce_s(0.0, 1024, 1e9, 1e-6)
        True
    """
    if p <= 1:
        return 0.0
    return 2.0 * n / bw + 2.0 * math.ceil(math.log2(p)) * alpha


def hierarchical_all_reduce_s(n: float, g: int, k: int, intra_bw: float, intra_alpha: float,
                              inter_bw: float, inter_alpha: float) -> float:
    """Two-level all-reduce: reduce-scatter inside each of ``k`` nodes of ``g`` ranks, ring
    all-reduce of the ``n/g`` shard between nodes, all-gather inside the node.

    ``2 (g-1)/g * n/B_in + 2 (g-1) a_in + 2 (k-1)/k * (n/g)/B_out + 2 (k-1) a_out``: each NIC
    carries ``2 (k-1)/k * n/g`` bytes, NVLink ``2 (g-1)/g * n`` (stas00/ml-engineering,
    "Inter-node speed depends on intra-node speed"; Thakur et al. 2005 for the pieces).

    Examples:
        >>> hierarchical_all_reduce_s(8e9, 8, 2, 7e9, 0.0, 1e9, 0.0)
        3.0
        >>> hierarchical_all_reduce_s(8e9, 8, 1, 7e9, 0.0, 1e9, 0.0) == ring_all_reduce_s(8e9, 8, 7e9, 0.0)
        True
    """
    intra = ring_reduce_scatter_s(n, g, intra_bw, intra_alpha) + ring_all_gather_s(n, g, intra_bw, intra_alpha)
    return intra + ring_all_reduce_s(n / g, k, inter_bw, inter_alpha)


def in_switch_all_reduce_s(n: float, bw: float, alpha: float, steps: int = 2) -> float:
    """All-reduce reduced inside the switches (NVLink SHARP, InfiniBand SHARP): ``n/bw + steps alpha``.

    Every rank sends its vector once and receives the result once, half the bytes of a ring
    (NVIDIA SHARP whitepaper; nccl-tests PERFORMANCE.md notes busbw then exceeds link speed).

    Examples:
        >>> in_switch_all_reduce_s(1e9, 1e9, 0.0)
        1.0
    """
    return n / bw + steps * alpha


def pairwise_all_to_all_s(n: float, p: int, bw: float, alpha: float) -> float:
    """Pairwise-exchange all-to-all; ``n`` is what one rank sends in total (to all ranks).

    ``(p-1)/p * n/bw + (p-1) alpha``: the 1/p addressed to itself stays put (Thakur et al. 2005).

    Examples:
        >>> pairwise_all_to_all_s(8e9, 8, 7e9, 0.0)
        1.0
    """
    if p <= 1:
        return 0.0
    return (p - 1) / p * n / bw + (p - 1) * alpha


def p2p_s(n: float, bw: float, alpha: float) -> float:
    """One point-to-point transfer: ``n/bw + alpha``.

    Examples:
        >>> p2p_s(1e6, 1e9, 1e-6)
        0.001001
    """
    return n / bw + alpha


def bus_bandwidth(collective: Collective, n: float, p: int, time_s: float) -> float:
    """nccl-tests bus bandwidth of a measured or predicted collective, bytes/s.

    ``algbw = n / t``; all-reduce ``busbw = algbw * 2(p-1)/p``; reduce-scatter and all-gather
    ``busbw = algbw * (p-1)/p``; otherwise ``busbw = algbw``.

    Examples:
        >>> bus_bandwidth(Collective.ALL_REDUCE, 1e9, 8, 1.0) / 1e9
        1.75
    """
    collective = Collective(collective)
    algbw = n / time_s
    if collective is Collective.ALL_REDUCE:
        return algbw * 2.0 * (p - 1) / p
    if collective in (Collective.REDUCE_SCATTER, Collective.ALL_GATHER):
        return algbw * (p - 1) / p
    return algbw
