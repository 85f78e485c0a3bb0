"""Host-bound steps: the CPU issues kernels more slowly than the GPU runs them.

A training step's kernels are issued by one host thread per GPU: Python, PyTorch's dispatch and
the CUDA launch of each op. The GPU runs them as they arrive, so where the host takes longer to
issue a stretch of work than the GPU takes to run it, the GPU waits ("large gaps between kernels,
the CPU kernel launch speed cannot keep up": NVIDIA, Optimizing DeepSeek-V3 Training Performance
on GB200 NVL72, Megatron-LM docs/discussions/deepseek-v3-gb200-optimization, commit 79e8592,
2025-11-05, sec. 2). Fine-grained MoE and FP8 add most of those ops: the router, the token
dispatch, one GEMM per local expert and the quantisation kernels of every FP8 linear layer.

Model, per micro-batch on the slowest pipeline stage:

* each layer issues ``n`` host ops forward by block (:func:`layer_ops`: attention, dense MLP or
  shared experts, router and dispatch preprocess, routed experts with dispatch and combine), and
  :data:`BWD_OPS_FACTOR` times as many in the backward; each costs ``c`` seconds of host time on
  the GPU's CPU (:data:`HOST_OP_S`, :func:`host_cpu`): ``H = n c``;
* the host may run ahead of the GPU by any amount, except across a device-host sync: dropless MoE
  copies the tokens per expert to the host in every MoE layer's forward, to size the all-to-all
  and the expert GEMMs (the source, sec. 2.3 and 3.1), so each MoE layer's forward is a segment
  of its own, and the backward of a stage another (its sizes are known by then);
* a segment of blocks ``(h_k, g_k)`` in issue order, the GPU idle at its start, takes
  ``T = max_k (h_1 + ... + h_k + g_(k+1) + ... + g_n)`` (``k = 0..n``; the GPU runs block k once
  the host has issued it and the GPU has finished block k - 1): ``T = max(H, G)`` for one block,
  so a segment is host-bound iff its host time exceeds its GPU time, and ``T >= G`` always;
* the stall ``sum(T) - sum(G)`` adds to the micro-batch (:func:`host_stall_mb_s`). Without MoE
  layers, or with ``cuda_graphs: full``, the micro-batch is one segment: ``max(0, H - G)``.

CUDA graphs (``software.cuda_graphs``) replace the captured ops of a layer by one graph launch per
pass: ``partial`` is Transformer Engine's partial capture with ``--cuda-graph-scope attn
moe_router moe_preprocess`` (attention, router, EP preprocess and the shared experts; the routed
experts are dynamic and stay eager), ``full`` captures every op of a layer and leaves no sync
(full-layer graphs need static shapes: the source's future work, a sync-free MoE). Their memory
(``L M 2`` graphs in one pool, static buffers) is not counted.

The op counts are our count of Megatron-Core with Transformer Engine (estimates, module
constants below); the host cost per op, 28 us, is calibrated (:data:`HOST_OP_S`; docs/model.md,
"Host-bound steps").
"""

from __future__ import annotations

__all__ = ["HOST_OP_S", "LayerOps", "host_cpu", "layer_ops", "segment_s", "host_stall_mb_s"]

from dataclasses import dataclass

from designer.catalog.types import Gpu
from designer.perf.compute import LayerTimes
from designer.perf.flops import attention_flops_per_token, gemm_flops_per_token
from designer.perf import constants as K
from designer.perf.types import Job, ModelArch, Plan, Precision, Recompute

# Host seconds per op (Python, PyTorch dispatch and launch) by CPU. "A simple torch.empty will not call
# any CUDA kernel, but it will generate a few microseconds of overhead on the host side" (the source,
# sec. 2); a Transformer Engine module adds its Python around each. Calibrated (docs/model.md,
# "Host-bound steps"): the median absolute step-time error of four DeepSeek-V3 FP8 runs with stated
# graphs and dispatchers (Megatron-Bridge 25.11 GB200 fp8mx and B200 fp8mx, 26.06 GB200 mxfp8, the
# guide's HybridEP step) is 4.8-6.2 % for 26-30 us, 28 the middle. The runs do not separate Grace from
# x86 (the guide's NUMA binding alone gained 10 % on GB200: the value is that of a bound host), so both
# take it.
HOST_OP_S = {"grace": 28e-6, "x86": 28e-6}

# Ops per linear layer forward: BF16 the module's Python and its GEMM; FP8 (Transformer Engine,
# per-tensor, blockwise or MXFP8) adds the input's quantisation: the kernel, the four row- and
# column-wise data and scale tensors allocated per quantised tensor, the two scale-swizzle kernels
# and their zero-padded buffers ("four tensors need to be allocated", "torch.zeros kernels that
# allocate the scaling factor", the source, sec. 2.1.2-2.1.3). Our count; estimate.
LINEAR_OPS_BF16 = 2
LINEAR_OPS_FP8 = 10
# Non-GEMM ops of a block, forward. Attention: the input norm, rotary embedding (split, rotate,
# concatenate for latent attention's decoupled rope), the attention kernel and its setup, the
# residual add; latent attention adds the query and key-value latent norms. Dense MLP: activation,
# residual. Our count of Megatron-Core's TransformerLayer with Transformer Engine; estimate.
ATTENTION_OPS = 6
MLA_ATTENTION_OPS = 14
MLP_OPS = 3
# Router and dispatch preprocess: the fused router issues 31 kernels ("from 72 to 31", TE PR 1883,
# --moe-router-fusion, the source, sec. 2.1.4), the all-to-all dispatcher's preprocess (tokens per
# expert, their all-to-all, the split sizes) about 10 more (our count); DeepEP's fused preprocess
# brings router and preprocess to 17 (sec. 2.2.1), HybridEP is the same flex dispatcher.
ROUTER_OPS = {"nccl": 41, "deepep": 17, "hybridep": 17}
# Routed experts besides their GEMMs: permute, dispatch, activation, unpermute, combine and the
# shared experts' activation and add (our count; estimate).
EXPERT_FIXED_OPS = 12
# Backward host ops per forward op: each linear runs a data- and a weight-gradient GEMM (with their
# quantisation in FP8), each element-wise op its backward kernel (as compute.py's kernel count, 20
# forward and 40 backward).
BWD_OPS_FACTOR = 2.0
GRAPH_LAUNCH_OPS = 1  # one graph launch per captured region and pass


def host_cpu(gpu: Gpu) -> str:
    """The CPU that issues ``gpu``'s kernels: ``grace`` for the GPUs of a Grace superchip (their own
    NVLink-C2C link to host memory, ``Gpu.host_Bps``: GB200, GB300), ``x86`` otherwise (DGX H100:
    2x Xeon Platinum 8480C, DGX SuperPOD H100 RA RA-11333; DGX B200: 2x Xeon Platinum 8570)."""
    return "grace" if gpu.host_Bps else "x86"


@dataclass(frozen=True, slots=True)
class LayerOps:
    """Host ops one layer issues for one micro-batch's forward, by block (:func:`layer_ops`)."""

    attention: float  # attention block: norms, projections, rotary, attention kernel, residual
    mlp: float  # a dense layer's MLP, an MoE layer's shared experts
    router: float  # router and dispatch preprocess (MoE)
    experts: float  # routed experts with dispatch, permute, unpermute and combine (MoE)

    @property
    def total(self) -> float:
        """All the layer's forward ops."""
        return self.attention + self.mlp + self.router + self.experts


def _linear_ops(job: Job) -> int:
    return LINEAR_OPS_FP8 if job.precision is Precision.FP8 else LINEAR_OPS_BF16


def layer_ops(job: Job, plan: Plan, moe_layer: bool = False) -> LayerOps:
    """Forward host ops of one layer for one micro-batch, eager (no CUDA graphs): ``linears x
    ops per linear + other ops`` per block (module constants). Latent attention runs five
    projections (query down and up, key-value down and up, output), grouped-query attention two
    (fused QKV, output); an MoE layer's routed experts one GEMM per local expert and matrix
    (grouped GEMM as multi-stream cuBLAS, the source sec. 1), ``experts / ep`` local experts.

    Examples:
        >>> from designer.perf.types import Job, ModelArch, Plan
        >>> llama8b = ModelArch("llama3-8b", 32, 4096, 32, 8, 14336, 128256, 8192, gated_mlp=True)
        >>> ops = layer_ops(Job(llama8b, 128, 1e9), Plan(tp=1, pp=1, dp=8))
        >>> ops.attention, ops.mlp, ops.total  # 2 linears x 2 + 6, 2 x 2 + 3
        (10, 7, 17)
    """
    m = job.model
    lin = _linear_ops(job)
    if m.mla is not None:
        attention = 5 * lin + MLA_ATTENTION_OPS
    else:
        attention = 2 * lin + ATTENTION_OPS
    if job.software.eager:  # PyTorch eager modules: each element-wise op its own kernel
        attention += (K.KERNELS_PER_LAYER_FWD_EAGER - K.KERNELS_PER_LAYER_FWD)
    if not (moe_layer and m.moe is not None):
        return LayerOps(attention, 2 * lin + MLP_OPS, 0, 0)
    moe = m.moe
    local = max(1.0, moe.experts / plan.ep)
    experts = 2 * local * lin + EXPERT_FIXED_OPS
    shared = 2 * lin * moe.shared_experts
    return LayerOps(attention, shared, ROUTER_OPS.get(job.software.moe_dispatcher, ROUTER_OPS["nccl"]), experts)


def _graphed(ops: LayerOps, graphs: str, moe_layer: bool) -> tuple[float, float]:
    """(attention + router block, MLP + experts block) forward ops under ``graphs``: captured
    ops become one graph launch per captured region."""
    if graphs == "full":
        return GRAPH_LAUNCH_OPS, 0.0
    if graphs == "partial":
        # TE partial capture: attention, router, preprocess and shared experts in one graph;
        # a dense layer's MLP stays eager (scope `mlp` is not in the stated set)
        first = GRAPH_LAUNCH_OPS
        second = ops.experts if moe_layer else ops.mlp
        return first, second
    return ops.attention + ops.router, ops.mlp + ops.experts


def segment_s(blocks: list[tuple[float, float]]) -> float:
    """Seconds a segment of blocks ``(host_s, gpu_s)`` takes between two device-host syncs,
    the GPU idle at its start: ``max_k (h_1 + ... + h_k + g_(k+1) + ... + g_n)`` over ``k =
    0..n`` (block k runs once issued and once block k - 1 is done; the module docstring).

    Examples:
        >>> segment_s([(1.0, 3.0)]), segment_s([(3.0, 1.0)])  # max(H, G) for one block
        (3.0, 3.0)
        >>> segment_s([(2.0, 1.0), (0.0, 2.0)])  # the host's first block delays the GPU's second
        4.0
    """
    best = sum(g for _, g in blocks)
    issued = 0.0
    remaining = best
    for h, g in blocks:
        issued += h
        remaining -= g
        best = max(best, issued + remaining)
    return best


def _attention_share(m: ModelArch, moe_layer: bool) -> float:
    """Share of a layer's forward FLOPs in its attention block (projections and core, causal)."""
    h = m.hidden
    if m.mla is not None:
        attn = 2 * (m.attention_params() - m.mla.q_lora_rank - m.mla.kv_lora_rank)
    else:
        attn = 2 * h * (m.q_dim + 2 * m.kv_dim) + 2 * m.q_dim * h
    core = K.CAUSAL_FRACTION * attention_flops_per_token(m, m.seq_len)
    total = gemm_flops_per_token(m, moe_layer) + core
    return (attn + core) / total if total > 0 else 1.0


def host_stall_mb_s(job: Job, plan: Plan, gpu: Gpu, layer: LayerTimes, layers_stage: int,
                    ep_mb_s: float = 0.0) -> float:
    """Seconds per micro-batch the slowest stage's GPU waits for its host (module docstring):
    ``sum over segments of segment_s - the segments' GPU time``, never negative.

    ``layer`` is the stage's average layer (:func:`designer.perf.step.layer_mix`), ``ep_mb_s`` the
    stage's expert all-to-all per micro-batch (GPU time the host can run ahead in: half in the
    forward, dispatch and combine, half in the backward).
    """
    m = job.model
    graphs = job.software.cuda_graphs
    cost = HOST_OP_S[host_cpu(gpu)]
    frac = m.moe_layer_count / m.layers
    dense_ops = layer_ops(job, plan, False)
    d_first, d_second = _graphed(dense_ops, graphs, False)
    if frac:
        moe_ops = layer_ops(job, plan, True)
        e_first, e_second = _graphed(moe_ops, graphs, True)
    else:
        e_first = e_second = 0.0
    first = ((1.0 - frac) * d_first + frac * e_first) * cost  # attention (+ router) block, host
    second = ((1.0 - frac) * d_second + frac * e_second) * cost  # MLP or experts block, host
    share = (1.0 - frac) * _attention_share(m, False) + frac * (_attention_share(m, True) if frac else 0.0)
    g_first = layer.fwd_s * share
    g_second = layer.fwd_s - g_first + 0.5 * ep_mb_s / max(layers_stage, 1)
    # the backward issues BWD_OPS_FACTOR times the forward's ops (a full graph: its backward graph's
    # launches); full recomputation re-issues the forward's in the backward
    bwd_host = BWD_OPS_FACTOR * (first + second)
    rec_host = (first + second) if job.recompute is Recompute.FULL else 0.0
    g_bwd = layers_stage * (layer.bwd_s + layer.recompute_s) + 0.5 * ep_mb_s
    h_bwd = layers_stage * (bwd_host + rec_host)
    gpu_total = layers_stage * (g_first + g_second) + g_bwd
    if not frac or graphs == "full":
        # no device-host sync: the host runs ahead over the whole micro-batch
        host_total = layers_stage * (first + second) + h_bwd
        return max(0.0, host_total - gpu_total)
    # each MoE layer's forward a segment from the sync after its preprocess: its experts, then
    # the next layer's attention and router; the stage's backward one more
    fwd = layers_stage * segment_s([(second, g_second), (first, g_first)])
    return max(0.0, fwd + segment_s([(h_bwd, g_bwd)]) - gpu_total)
