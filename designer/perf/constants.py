"""Every constant of the performance model, with its source. One set for all validation rows.

Values marked *estimate* are engineering judgement (a count of kernel memory traffic, a
typical figure) rather than a measurement; docs/model.md explains each one, and
docs/validation.md shows how the model with exactly these values compares with published runs.
"""

from __future__ import annotations

__all__ = [
    "ScaleupProfile",
    "SCALEUP_PROFILES",
    "DEFAULT_SCALEUP",
    "scaleup_profile",
    "FP8_GEMM_RELATIVE",
    "FUSED_ATTENTION_RELATIVE",
    "FUSED_ATTENTION_BWD_FACTOR",
    "FA2_ON_HOPPER_RELATIVE",
    "HOPPER_SCALEUP_KINDS",
    "PRE_BLACKWELL_SCALEUP_KINDS",
    "CAUSAL_FRACTION",
    "SCORE_BYTES_FWD",
    "SCORE_BYTES_BWD",
    "ELEMWISE_H_FWD",
    "ELEMWISE_H_FWD_NO_DROPOUT",
    "SCORE_BYTES_FWD_NO_DROPOUT",
    "SCORE_BYTES_BWD_NO_DROPOUT",
    "KERNELS_PER_LAYER_FWD",
    "KERNELS_PER_LAYER_FWD_EAGER",
    "ELEMWISE_EAGER_H",
    "ELEMWISE_EAGER_QK",
    "ELEMWISE_EAGER_F",
    "KERNEL_LAUNCH_S",
    "ELEMWISE_F_FWD",
    "ELEMWISE_F_FWD_GATED",
    "ELEMWISE_BWD_FACTOR",
    "LOGIT_BYTES",
    "HBM_EFFICIENCY",
    "WGRAD_BYTES",
    "FP8_CAST_BYTES",
    "SUSTAINED_FRACTION",
    "ACT_BYTES",
    "WEIGHT_BYTES",
    "ADAM_TRAFFIC_BYTES",
    "CHECKPOINT_BYTES_PER_PARAM",
    "OVERLAP_SLOWDOWN",
    "TP_OVERLAP_EFFICIENCY",
    "ASYNC_TP_OVERLAP_EFFICIENCY",
    "NCCL_BASE_LATENCY_S",
    "NCCL_NVLINK_STEP_S",
    "NCCL_NVLINK_TREE_STEP_S",
    "NCCL_NET_STEP_S",
    "NCCL_PAT_PER_RANK_S",
    "NCCL_PAT_BASE_S",
    "MEMORY_RESERVE_FRACTION",
    "MEMORY_RESERVE_BYTES",
]

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ScaleupProfile:
    """Collective constants of one scale-up technology.

    ``ring_efficiency``: ring all-reduce bus bandwidth / per-direction link bandwidth, large
    messages. ``reduction_efficiency``: algorithm bandwidth of the in-switch all-reduce (NVLS)
    / link bandwidth, 0 when the switch cannot reduce. ``latency_s``: per-step latency of a
    collective step (a ring all-reduce on p GPUs pays 2(p-1) of them). ``mesh``: GPUs are wired
    point to point rather than through a switch. Each collective also pays NCCL's base latency
    (:data:`NCCL_BASE_LATENCY_S`).
    """

    ring_efficiency: float
    reduction_efficiency: float
    latency_s: float
    mesh: bool
    source: str


SCALEUP_PROFILES: dict[str, ScaleupProfile] = {
    # A100 NVLink3 / NVSwitch, 300 GB/s per direction.
    "nvlink3": ScaleupProfile(
        ring_efficiency=0.75,  # 222-235 GB/s busbw on 4-8 GPUs at 0.5-1 GiB: vTrain A100 LUT, ml-engineering
        reduction_efficiency=0.0,  # NVSwitch gen 2 has no in-switch reduction
        latency_s=3.4e-6,  # NCCL's NVLink ring step (tuning.cc), as NVLink4
        mesh=False,
        source="VIA-Research/vTrain trace/a100 AR LUT; stas00/ml-engineering network chapter",
    ),
    # H100/H200 NVLink4 / NVSwitch gen 3 with NVLink SHARP (NVLS), 450 GB/s per direction.
    "nvlink4": ScaleupProfile(
        ring_efficiency=0.815,  # ~370 GB/s ring busbw (nccl-tests #212); 365.6-367.6 NVLS off
        reduction_efficiency=0.61,  # NVLS algbw ~275 GB/s (nccl-tests #212; H200 sweep 275.6)
        latency_s=3.4e-6,  # NCCL's NVLink ring step; with the 8.4 us base, 56 us per 8-GPU all-reduce (H200 sweep ~60)
        mesh=False,
        source="NVIDIA/nccl-tests issue 212; stas00/ml-engineering all-reduce-8xH200 results",
    ),
    # B200 NVLink5 / NVSwitch gen 4, 900 GB/s per direction.
    "nvlink5": ScaleupProfile(
        ring_efficiency=0.755,  # ring 673.8-682 GB/s busbw (ml-engineering, AWS p6-b200)
        reduction_efficiency=0.50,  # NVLS busbw 723-846 GB/s from 1 to 16 GiB on 8 GPUs
        latency_s=3.4e-6,  # NCCL's NVLink ring step (tuning.cc)
        mesh=False,
        source="stas00/ml-engineering network chapter (p6-b200 NVLS vs ring, size sweep)",
    ),
    # AMD MI300X Infinity Fabric: 7 point-to-point links of 64 GB/s per direction.
    "infinity-fabric": ScaleupProfile(
        ring_efficiency=0.70,  # 312.9 GB/s busbw on 8 GPUs at 4 GiB / 448 GB/s
        reduction_efficiency=0.0,
        latency_s=3.4e-6,  # estimate: as NVLink (RCCL keeps NCCL's tuner)
        mesh=True,
        source="stas00/ml-engineering network chapter (MI300X 4 GiB all-reduce, 2 and 8 GPUs)",
    ),
}

DEFAULT_SCALEUP = ScaleupProfile(
    ring_efficiency=0.75,  # estimate: the range of the measured kinds above
    reduction_efficiency=0.0,
    latency_s=3.4e-6,
    mesh=False,
    source="estimate for scale-up kinds without measurements",
)


def scaleup_profile(kind: str) -> ScaleupProfile:
    """Constants of a scale-up kind (``Gpu.scaleup_kind``); a conservative default if unknown."""
    return SCALEUP_PROFILES.get(kind.lower(), DEFAULT_SCALEUP)


# --- compute --------------------------------------------------------------------------------

# FP8 GEMMs reach a smaller fraction of their peak than BF16 ones: H100 measured maximum
# achievable matmul FLOPS (MAMF) is 1402.6/1979 = 0.709 of FP8 peak against 794.5/989 = 0.803
# of BF16 peak (stas00/ml-engineering MAMF table), a ratio of 0.88 applied on top of
# Gpu.matmul_efficiency (which is the BF16 figure).
FP8_GEMM_RELATIVE = 0.88

# FlashAttention kernels run below GEMM efficiency: FlashAttention-2 (Dao 2023) reaches 50-73 %
# of A100 peak forward and ~61 % forward+backward, against 87 % for the best GEMM (MAMF 271 of
# 312). 0.61/0.87 = 0.70 of the GEMM efficiency.
FUSED_ATTENTION_RELATIVE = 0.70
# FlashAttention-2 uses neither Hopper's TMA nor its warpgroup MMA: "FlashAttention-2 ... achieving
# only 35% utilization on the H100 GPU" (Shah et al. 2024, FlashAttention-3, abstract), and PyTorch's
# default SDPA (its flash backend, FlashAttention-2) runs 329 TFLOP/s forward on H100 at head dim 128
# where cuDNN's and FlashAttention-3's Hopper kernels run 631 (pytorch/pytorch issue 142132, 2024-12).
# Of the GEMM rate (H100 MAMF 794.5 TFLOP/s): 0.35 x 989 / 794.5 = 0.44 and 329 / 794.5 = 0.41; 0.43.
# Applies to stacks whose fused attention is FlashAttention-2-class (Profile.hopper_attention False)
# on Hopper and later GPUs, named by their NVLink generation. No Blackwell FA2 figure is published:
# the Hopper one is used (an estimate).
FA2_ON_HOPPER_RELATIVE = 0.43
HOPPER_SCALEUP_KINDS = frozenset({"nvlink4", "nvlink5"})
# GPUs before Blackwell (CUDA device architecture below 10), named by their NVLink generation: A100
# (NVLink3), H100 and H200 (NVLink4). Megatron-Core checks the architecture for its
# CUDA_DEVICE_MAX_CONNECTIONS rules (megatron/training/arguments.py, get_device_arch_version() < 10).
PRE_BLACKWELL_SCALEUP_KINDS = frozenset({"nvlink3", "nvlink4"})
# The FlashAttention backward pass recomputes the scores: 5 matmuls against 2 forward
# (Dao 2023, sec. 3), 2.5x the forward FLOPs instead of 2x.
FUSED_ATTENTION_BWD_FACTOR = 2.5
# Causal masking: fused kernels skip the masked half of the score matrix; MFU conventions
# (Megatron, Chowdhery et al.) still count the full s^2 attention, so do we.
CAUSAL_FRACTION = 0.5

# Unfused attention (Megatron-LM 2021-22): the score matrix goes through HBM. Bytes per score
# element, our count of Megatron's path: forward = baddbmm write 2 + fused softmax read 2 /
# write 2 + dropout read 2 / write 2 / mask 1 + bmm read 2; backward = the matching gradients
# (dP write, dropout bwd, softmax bwd reading output and gradient, two reads for dQ and dK).
# Estimate.
SCORE_BYTES_FWD = 13.0
SCORE_BYTES_BWD = 18.0
# Without attention dropout the dropout read/write/mask drop out: forward 8, backward 11.
SCORE_BYTES_FWD_NO_DROPOUT = 8.0
SCORE_BYTES_BWD_NO_DROPOUT = 11.0

# Memory-bound element-wise kernels per token per layer, forward, in elements of 2 bytes:
# layer norm 1 (read h, write h), bias-dropout-add after attention (read 2h, write h, mask h/2),
# layer norm 2 (2h), bias-dropout-add after the MLP (3.5h) = 11h; the MLP activation reads and
# writes f (GeLU) or reads 2f and writes f (SwiGLU). Backward moves about twice as much.
# Our count of Megatron-LM's fused kernels; estimate.
ELEMWISE_H_FWD = 11.0
ELEMWISE_H_FWD_NO_DROPOUT = 10.0  # residual add instead of bias-dropout-add: 3h, not 3.5h
ELEMWISE_F_FWD = 2.0
ELEMWISE_F_FWD_GATED = 3.0
ELEMWISE_BWD_FACTOR = 2.0
# Kernel launches: a GPU waits a few microseconds between dependent kernels (launch latency
# and tail; NVIDIA, "Getting Started with CUDA Graphs": launch overheads of a few us per
# kernel). A transformer layer issues ~20 kernels forward and ~40 backward (norms, casts,
# GEMMs, attention, activation, residual); estimate.
KERNELS_PER_LAYER_FWD = 20
KERNEL_LAUNCH_S = 4e-6
# PyTorch eager modules (torchtitan's and IBM's FSDP Llama, MosaicML's MPT) run each op as its own
# kernel. Extra HBM traffic per token and layer, forward, in 2-byte elements, over the fused count
# above; our count of torchtitan's Llama code: an FP32 RMSNorm (x.float(), pow, mean, mul, type_as,
# weight: ~18h against a fused kernel's 2h) twice = 32h more; rotary embeddings through complex
# FP32 views (read, upcast, multiply, downcast: ~10 per query and key element); SwiGLU as silu then
# mul (5f against 3f fused) = 2f more. About 30 kernels a layer forward. Estimate (a count, as for
# the fused path); torch.compile fuses them again (the software knob `compile`).
ELEMWISE_EAGER_H = 32.0
ELEMWISE_EAGER_QK = 10.0
ELEMWISE_EAGER_F = 2.0
KERNELS_PER_LAYER_FWD_EAGER = 30
# Vocabulary logits, bytes per logit over forward and backward, our count of an unfused FP32
# vocab-parallel cross entropy (Megatron-LM): 16-bit logits write 2, upcast read 2 / write 4,
# max read 4, exp read/write 8, sum read 4, normalise read/write 8; backward read 4 / write 4
# and cast to 16-bit read 4 / write 2: 46. Estimate.
LOGIT_BYTES = 46.0

# GEMM weight gradients accumulate into the FP32 main-gradient buffer (read and write 4 bytes)
# plus the 16-bit read of the weight in the input-gradient GEMM.
WGRAD_BYTES = 10.0
# FP8 recipes cast each GEMM input (and each output gradient) to FP8 and transpose it for the
# backward GEMMs (Transformer Engine cast-transpose: read 2 bytes, write 1 + 1).
FP8_CAST_BYTES = 4.0
# Fraction of micro-benchmark kernel throughput that a whole training step sustains: clocks
# settle at the power limit. NVIDIA rates the A100 at the 1,305 MHz it sustains at its power
# limit while running HPL, against a 1,410 MHz boost clock: 1305/1410 = 0.926 (G. Lockwood,
# "Peak FLOPS", glennklockwood.com). Applied to every GPU; an estimate for the others.
SUSTAINED_FRACTION = 0.926
# Fraction of HBM peak that streaming kernels reach: STREAM-like copies reach 85-90 % on A100/H100.
# Fitted, within 0.80-0.90, to the published runs (benchmarks/validate.py, FIT_GRID: the median
# absolute step-time error over all of them); leave-one-source-out refits it per held-out source.
HBM_EFFICIENCY = 0.90

# --- memory ---------------------------------------------------------------------------------

ACT_BYTES = 2.0  # activations in 16-bit (FP8 training keeps 16-bit activations between layers)
WEIGHT_BYTES = 2.0  # 16-bit weights (ZeRO-3 gather buffers)
# Bytes per parameter of weights, gradients and optimizer state, and on the wire, are properties
# of the software stack (designer/perf/software.py): Megatron keeps 18 per parameter (Korthikanti
# et al. 2022, Fig. 1: 45.56 GiB for 22B on 8 GPUs), FSDP2 16 (FP32 sharded master).

# --- communication volumes -----------------------------------------------------------------

# Adam step memory traffic per (sharded) parameter: read FP32 grad 4, read and write master,
# m, v (24), write 16-bit weight 2. Estimate.
ADAM_TRAFFIC_BYTES = 30.0
# Checkpoint: 16-bit weights + FP32 master + Adam moments (Megatron distributed checkpoint).
CHECKPOINT_BYTES_PER_PARAM = 14.0
# Megatron-Core DistributedDataParallelConfig: bucket_size = max(40M, 1M x dp) parameters; the
# last bucket's reduction cannot hide behind backward. (The stacks' own bucket sizes are in
# designer/perf/software.py; this is Megatron-Core's floor.)
DDP_BUCKET_PARAMS = 40e6
DDP_BUCKET_PARAMS_PER_RANK = 1e6

# --- overlap (designer/perf/overlap.py) ----------------------------------------------------

# Compute slows while a collective runs beside it: 18.9 % on average (max 40 %) over A100, H100,
# MI250 and MI210 running GPT and LLaMA training, measured against the same kernels run alone
# ("Characterizing Compute-Communication Overlap in GPU-Accelerated Distributed Deep Learning",
# arXiv 2507.03114). NVIDIA's forums show the mechanism on H100: a 132-block GEMM beside a
# 24-block ncclAllGather spills into a second wave.
OVERLAP_SLOWDOWN = 0.189
# Share of tensor-parallel traffic that Megatron-Core userbuffers / PyTorch AsyncTP can hide behind
# the GEMMs (the compute still slows by OVERLAP_SLOWDOWN while it runs). FLUX reports up to 96 % of
# the communication overlapped (Chang et al., arXiv 2406.06858). Fitted on the grid 0.5-1.0 to the
# published runs (benchmarks/validate.py, FIT_GRID); leave-one-source-out refits it per source.
TP_OVERLAP_EFFICIENCY = 1.0
# Share of the traffic PyTorch AsyncTP decomposes (designer.perf.overlap.async_tp_decomposed_s) that
# hides behind its GEMMs (the compute slows by OVERLAP_SLOWDOWN beside it), measured from torchtitan's
# own tables with and without AsyncTP on one layout: the e that turns the model's step without it
# into the published gain is 0.45 (Llama 3.1 405B Float8, 128 H100, FSDP 16 TP 8, docs/performance.md
# of 2024-08-23: 1.045), 0.32 (70B Float8, 256 H100, FSDP 32 TP 8, benchmarks/
# llama3_h100_202412_torchtitan.md Table 4: 1.057), and with torch of 2025-06-14
# (benchmarks/asyncTP_llama3_h100_2025-06_torchtitan.md, torchtitan commit 2887250's table) 0.62
# (70B BF16: 1.09), 0.85 (70B Float8 tensorwise: 1.16), 0.69 (8B BF16, 64 H100, FSDP 8 TP 8: 1.10)
# and 0.62 (8B Float8 tensorwise: 1.10). The median of those six; the Float8 rowwise pairs (1.04,
# 1.06) are left out, as the source says their baseline is slow for another reason (torchtitan
# issue 1207). Newer PyTorch hides more: 2024's stacks 0.3-0.45, 2025's 0.6-0.85.
ASYNC_TP_OVERLAP_EFFICIENCY = 0.62

# --- NCCL latency model (NVIDIA/nccl src/graph/tuning.cc, Simple protocol) ------------------
# A collective pays a base latency once, then one step latency per ring step: NVLink steps 3.4 us
# (tree 4.0 us), network steps 14 us plus the fabric's own latency (host + switch hops), so a ring
# all-reduce over 1,024 ranks on 128 nodes costs ~9.7 ms of latency alone, a tree over 128 nodes
# ~0.26 ms. NVLS (NVLink SHARP): NCCL's tuner says 25 us, the H200 sweep shows a ring's fixed cost
# (designer/perf/network.py uses the measurement); PAT (all-gather / reduce-scatter with one rank per
# node, NCCL 2.23+) base + log2(nodes) x net / 3.5 + 2.8 us per rank. On one 8-GPU H200 node the
# model's 56 us all-reduce fixed cost matches the ~60 us of stas00/ml-engineering's sweep.
NCCL_BASE_LATENCY_S = 8.4e-6
NCCL_NVLINK_STEP_S = 3.4e-6
NCCL_NVLINK_TREE_STEP_S = 4.0e-6
NCCL_NET_STEP_S = 14e-6
NCCL_PAT_BASE_S = 8.0e-6
NCCL_PAT_PER_RANK_S = 2.8e-6

# --- memory headroom ------------------------------------------------------------------------

# HBM that training cannot use (usable = HBM x (1 - fraction) - bytes):
# * a fixed 2 GB for the CUDA context, cuBLAS workspaces and NCCL buffers: NCCL allocates ~0.5-0.7
#   GB per communicator on A100 (NVIDIA/nccl #964: 544 MB for a 2-GPU group, 688 MB beyond) and
#   up to 1.6 GB for an all-reduce communicator (#864); communicators split from one share them;
# * 5 % for the caching allocator's fragmentation: GMLake (ASPLOS'24) recovers 9.2 GB of 80 on
#   average (up to 25 GB) that PyTorch's allocator strands in LLM training, and torchtitan's
#   measured peaks stay at or below 89 % of HBM (82.4-84.9 of 95 GiB). With expandable segments
#   (NVIDIA's recommended fix) fragmentation falls to a few per cent.
# The Llama 3 405B production layout (TP8 PP16 on H100 80GB, sequence 8192, no recomputation) must
# fit under it, as it ran (tests/perf/test_published.py). Estimate within those bounds.
MEMORY_RESERVE_FRACTION = 0.05
MEMORY_RESERVE_BYTES = 2e9
