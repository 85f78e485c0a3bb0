"""The software stacks the model knows: what each can do and how it communicates, with sources.

One :class:`~designer.perf.profile.Profile` per preset (``megatron-core``, ``megatron-lm-2021``,
``deepspeed``, ``fsdp2``, ``torchtitan``). Sources, per feature, are in each profile's ``source``, in the comments
and in docs/model.md ("Software stacks"); the dates of Megatron-LM features are the first commits
of their command-line flags (NVIDIA/Megatron-LM git history).
"""

from __future__ import annotations

__all__ = ["PROFILES", "PRESET_NAMES", "DEFAULT_PRESET", "profile"]

from dataclasses import replace

from designer.errors import PerfError
from designer.perf.profile import DpSchedule, Gather, Profile


_MEGATRON_CORE = Profile(
    name="megatron-core",
    flash_attention=True,  # Transformer Engine fused attention (cuDNN / FlashAttention)
    sequence_parallel=True,  # --sequence-parallel (2022-04-28)
    selective_recompute=True,  # --recompute-granularity selective (2022-05-16)
    context_parallel=True,  # --context-parallel-size (2023-10-12)
    expert_parallel=True,
    interleaving=True,  # --num-layers-per-virtual-pipeline-stage
    uneven_pipeline=True,  # --decoder-first/last-pipeline-num-layers (2024-09-05)
    tp_comm_overlap=True,  # --tp-comm-overlap, userbuffers (2023-10-23); needs SP
    # LinearWithGradAccumulationAndAsyncCommunication (megatron/core/tensor_parallel/layers.py) and
    # Transformer Engine's Linear launch the dgrad reduce-scatter (all-reduce without SP) async before
    # the wgrad GEMM, and the SP input all-gather before the dgrad GEMM
    tp_backward_overlap=True,
    zero_stages=(0, 1, 2, 3),  # DDP; distributed optimizer; Megatron-FSDP optim_grads(_params)
    # Stages 2 and 3 are Megatron-FSDP, which runs without pipeline parallelism: NeMo AutoModel's
    # distributed config refuses it ("megatron_fsdp does not support pipeline parallelism",
    # nemo_automodel/components/distributed), and every published Megatron-FSDP recipe runs pp=1
    # (Megatron-Bridge performance summaries). With pipeline stages the stack has the distributed
    # optimizer (ZeRO-1) only.
    zero_with_pipeline=1,
    # DDP all-reduces and the distributed optimizer reduce-scatters once a step, "launched during
    # the last backward pass before the optimization step"; Megatron-FSDP's ZeRO-2 and ZeRO-3
    # reduce-scatter "during every backward pass", ZeRO-3 also gathers the weights before each
    # forward and backward (docs/user-guide/features/megatron_fsdp.md, sharding strategies).
    dp_schedules=(DpSchedule(False, 0), DpSchedule(False, 0), DpSchedule(True, 0), DpSchedule(True, 2)),
    dp_overlap=True,  # NeMo/Megatron-Bridge recipes set --overlap-grad-reduce --overlap-param-gather
    overlap_zero12=True,
    # DistributedDataParallelConfig.bucket_size = max(40M, 1M x dp) parameters; "this overlap
    # method exposes only one DP communication chunk" (Megatron-Bridge communication-overlap docs).
    grad_bucket_params=40e6,
    bucket_params_per_rank=1e6,
    whole_buffer_reduce=False,
    gather=Gather.RING,  # Megatron-FSDP all-gathers per layer with NCCL rings
    prefetch_params=None,
    fsdp_overlap_efficiency=0.90,  # as FSDP: the first layer forward, the last backward (below)
    p2p_overlap=True,  # overlap_p2p_comm, interleaved schedule only (NeMo default); plain 1F1B waits
    cp_overlap=True,  # TE ring attention overlaps the K/V exchange with the attention kernel
    # Transformer Engine's fused attention runs cuDNN's Hopper kernels (FlashAttention-3 class) on
    # H100 and later
    hopper_attention=True,
    fused_elementwise=True,  # Transformer Engine / Apex fused norms, RoPE, activations
    selective_ops=False,  # selective recomputation: the attention core (Korthikanti et al. 2022)
    dropout=False,  # current pre-training recipes (Llama, Nemotron) run without dropout
    # NeMo/Megatron-Bridge performance recipes set grad_reduce_in_fp32=False, and Megatron-Core's
    # DDP keeps the gradient buffer in the reduce dtype: 2 (bf16 weights) + 2 (bf16 gradients) +
    # 12 (FP32 master and Adam moments, sharded by the distributed optimizer).
    weight_bytes=2.0, grad_bytes=2.0, optimizer_bytes=12.0,
    grad_reduce_bytes=2.0, gather_bytes=2.0,
    # Loss: GPTModel passes logits.float() to vocab_parallel_cross_entropy, which subtracts the max
    # and exponentiates in place and keeps that FP32 tensor for backward (its gradient is formed in
    # place too): the 16-bit logits 2 + the FP32 copy 4 held together
    # (megatron/core/tensor_parallel/cross_entropy.py).
    loss_bytes=6.0,
    source="NVIDIA/Megatron-LM megatron/training/arguments.py, megatron/core/distributed "
           "(DistributedDataParallelConfig), docs/user-guide/features/dist_optimizer.md; "
           "NVIDIA-NeMo/Megatron-Bridge docs/training/communication-overlap.md",
    # --cpu-offloading with cpu_offloading_num_layers and cpu_offloading_activations
    # (TransformerConfig; Transformer Engine get_cpu_offload_context), set by Megatron-Bridge's
    # GB200 recipes (cpu_offloading_num_layers)
    activation_offload=True,
    # --expert-tensor-parallel-size (MoE parallel folding, Liu et al. 2025, arXiv:2504.14960;
    # megatron/core/parallel_state.py builds the expert groups over TP x CP x DP)
    expert_folding=True,
    # --align-grad-reduce (default) binds each chunk's start_grad_sync to config.grad_sync_func
    # (megatron/training/training.py); the interleaved schedule calls it when backward
    # `virtual_microbatch_id - pipeline_parallel_rank` is the chunk's last micro-batch, so chunk 0
    # starts at the step's last backward on rank 0 and after the cooldown ("Launch any remaining
    # grad reductions") elsewhere (megatron/core/pipeline_parallel/schedules.py); "when training
    # with pipeline-parallelism, the granularity of DP communication becomes the Transformer layers
    # per virtual pipeline stage" (NeMo communication-overlap docs). The plain 1F1B schedule
    # enables the bucketed sync during the first stage's last backward.
    chunk_grad_sync="interleaved",
    # param_sync_func prefetches chunk `get_model_chunk_id(...) + 1` only if
    # `1 < param_sync_chunk_id < num_model_chunks`: chunks 0 and 1 gather in their own forward
    # pre-hooks (megatron/core/pipeline_parallel/schedules.py, distributed_data_parallel.py)
    unprefetched_chunks=2,
    # "Here we rely on CUDA_DEVICE_MAX_CONNECTIONS=1 to ensure that the gather is scheduled before
    # the input gradient computation" (megatron/core/tensor_parallel/layers.py); Megatron-FSDP
    # asserts "FSDP always requires CUDA_DEVICE_MAX_CONNECTIONS value large than one", and with
    # TP or CP before Blackwell warns "they require different CUDA_MAX_CONNECTIONS settings for
    # best performance" (megatron/training/arguments.py; "CUDA_DEVICE_MAX_CONNECTIONS requirement
    # no longer exists since the Blackwell architecture")
    tp_overlap_single_queue=True,
)

_MEGATRON_LM_2021 = Profile(
    name="megatron-lm-2021",
    # Tag v2.5 (2021-08-10, the SC21 code): torch.baddbmm materialises the [b*np, sq, sk] scores,
    # FusedScaleMaskSoftmax, dropout on the probabilities, torch.bmm with V (no FlashAttention
    # until --use-flash-attn, 2022-12-08).
    flash_attention=False,
    sequence_parallel=False,  # arrived 2022-04-28
    selective_recompute=False,  # only --checkpoint-activations (full layers)
    context_parallel=False,
    expert_parallel=False,
    interleaving=True,  # interleaved 1F1B with the scatter/gather optimisation (SC21 sec. 2.2, 4.1)
    # "pipeline-model-parallel size should be greater than 2 with interleaved schedule"
    # (megatron/arguments.py, an assertion; README: "not supported for pipelines with 2 stages")
    min_interleaved_pp=3,
    uneven_pipeline=False,  # layers must divide evenly over the stages
    tp_comm_overlap=False,
    # the async all-reduce of the input gradient beside the weight-gradient GEMM arrived on
    # 2021-09-02 (commit 16c90445e7), after v2.5
    tp_backward_overlap=False,
    zero_stages=(0,),  # no distributed optimizer until 2022-02-10
    zero_with_pipeline=0,
    dp_schedules=(DpSchedule(False, 0), None, None, None),
    # --DDP-impl local (default): one all-reduce of the contiguous gradient buffer after
    # forward_backward_func returns (megatron/training.py), nothing overlapped.
    dp_overlap=False,
    overlap_zero12=True,
    grad_bucket_params=6.25e6,  # --DDP-impl torch: PyTorch DDP buckets of 25 MB (FP32 grads)
    bucket_params_per_rank=0.0,
    whole_buffer_reduce=True,
    gather=Gather.RING,
    prefetch_params=None,
    fsdp_overlap_efficiency=0.90,
    p2p_overlap=False,  # batched isend/irecv waited on before the next compute
    cp_overlap=False,
    hopper_attention=False,  # no fused attention at all (unfused path)
    fused_elementwise=True,  # bias-GeLU, bias-dropout-add, scale-mask-softmax and layer-norm kernels
    selective_ops=False,  # selective recomputation: the attention core (Korthikanti et al. 2022)
    dropout=True,  # GPT-3 recipes: hidden and attention dropout 0.1
    # FP16 weights, FP32 main gradients, FP32 master and Adam: 18 bytes per parameter
    # (Korthikanti et al. 2022, Fig. 1: 45.56 GiB for 22B on 8 GPUs).
    weight_bytes=2.0, grad_bytes=4.0, optimizer_bytes=12.0,
    grad_reduce_bytes=2.0, gather_bytes=2.0,
    # Loss: GPTModel passes (v2.5: post_language_model_processing) logits.float() to vocab_parallel_cross_entropy, which subtracts the max
    # and exponentiates in place and keeps that FP32 tensor for backward (its gradient is formed in
    # place too): the 16-bit logits 2 + the FP32 copy 4 held together
    # (megatron/core/tensor_parallel/cross_entropy.py).
    loss_bytes=6.0,
    source="NVIDIA/Megatron-LM tag v2.5 megatron/model/transformer.py, megatron/model/distributed.py, "
           "megatron/training.py, megatron/arguments.py; flag dates from the repository history",
)

_DEEPSPEED = Profile(
    name="deepspeed",
    flash_attention=True,  # Megatron-DeepSpeed --use-flash-attn; HF models via SDPA
    sequence_parallel=True,  # Megatron-DeepSpeed --sequence-parallel (Megatron-LM's), not Ulysses
    selective_recompute=True,  # Megatron-DeepSpeed --recompute-granularity selective
    context_parallel=False,  # DeepSpeed-Ulysses is all-to-all sequence parallelism: not modelled
    expert_parallel=True,  # DeepSpeed-MoE
    interleaving=False,  # the DeepSpeed pipeline engine runs non-interleaved 1F1B only
    uneven_pipeline=True,  # --pp-partition-method type:transformer|embedding (BLOOM)
    tp_comm_overlap=False,
    # Megatron-DeepSpeed's LinearWithGradAccumulationAndAsyncCommunication, as Megatron-LM's
    tp_backward_overlap=True,
    zero_stages=(0, 1, 2, 3),
    zero_with_pipeline=1,  # the pipeline engine supports ZeRO-1 only
    # Stages 0 and 1 reduce at the gradient-accumulation boundary; stage 2 keeps only its gradient
    # partition, so its buckets are reduced on every backward; stage 3 also gathers each layer's
    # parameters before its forward and again before its backward (deepspeed/runtime/zero/
    # stage_1_and_2.py, partition_gradients; stage3.py, partitioned_param_coordinator.py).
    dp_schedules=(DpSchedule(False, 0), DpSchedule(False, 0), DpSchedule(True, 0), DpSchedule(True, 2)),
    # zero/config.py: overlap_comm None resolves to True only for stage 3.
    dp_overlap=True,
    overlap_zero12=False,
    grad_bucket_params=5e8,  # reduce_bucket_size = allgather_bucket_size = 5e8 elements
    bucket_params_per_rank=0.0,
    whole_buffer_reduce=False,
    # partitioned_param_coordinator: all_gather_coalesced over the whole data-parallel group.
    gather=Gather.PER_GPU,
    prefetch_params=5e7,  # stage3_prefetch_bucket_size = 5e7 elements
    fsdp_overlap_efficiency=1.0,  # bounded by the prefetch bucket instead
    p2p_overlap=False,
    cp_overlap=False,
    hopper_attention=False,  # Megatron-DeepSpeed --use-flash-attn-v2: FlashAttention-2
    fused_elementwise=True,  # Megatron-DeepSpeed keeps Megatron's fused kernels
    selective_ops=False,  # selective recomputation: the attention core (Korthikanti et al. 2022)
    dropout=False,
    # ZeRO (Rajbhandari et al. 2020, sec. 5): 16-bit weights and gradients, 12 bytes of FP32
    # master and Adam state: 2 + 2 + 12 / Nd at stage 1.
    weight_bytes=2.0, grad_bytes=2.0, optimizer_bytes=12.0,
    grad_reduce_bytes=2.0, gather_bytes=2.0,
    # Loss: as Megatron-LM (Megatron-DeepSpeed keeps its loss):
    # GPTModel passes logits.float() to vocab_parallel_cross_entropy, which subtracts the max
    # and exponentiates in place and keeps that FP32 tensor for backward (its gradient is formed in
    # place too): the 16-bit logits 2 + the FP32 copy 4 held together
    # (megatron/core/tensor_parallel/cross_entropy.py).
    loss_bytes=6.0,
    source="microsoft/DeepSpeed deepspeed/runtime/zero/config.py (stage3_prefetch_bucket_size, "
           "reduce_bucket_size, overlap_comm), partitioned_param_coordinator.py, runtime/pipe/engine.py; "
           "microsoft/Megatron-DeepSpeed megatron/arguments.py",
)

_FSDP2 = Profile(
    name="fsdp2",
    flash_attention=True,  # F.scaled_dot_product_attention (FlashAttention-2 / cuDNN backends)
    sequence_parallel=True,  # DTensor TP plans put norms in SequenceParallel (torchtitan)
    selective_recompute=True,  # torchtitan selective (op / layer) activation checkpointing
    context_parallel=True,  # torch.distributed.tensor.experimental.context_parallel (ring attention)
    expert_parallel=True,
    interleaving=True,  # torch.distributed.pipelining ScheduleInterleaved1F1B
    uneven_pipeline=True,  # stages are split by module names, any count per stage
    tp_comm_overlap=True,  # AsyncTP (torch._micro_pipeline_tp with torch.compile)
    # AsyncTP decomposes only the collectives next to a single GEMM (torch/_inductor/fx_passes/
    # micro_pipeline_tp.py; designer.perf.overlap.async_tp_decomposed_s)
    micro_pipelined_tp=True,
    # DTensor's colwise/rowwise plans wait for each collective before the next op (no async
    # backward reduction unless AsyncTP)
    tp_backward_overlap=False,
    # replicate; no gradient sync until the last micro-batch (what torch.distributed.pipelining does
    # to every FSDP stage); sharded gradients with the parameters kept gathered; FULL_SHARD.
    zero_stages=(0, 1, 2, 3),
    # Under pipeline parallelism torchtitan keeps the parameters gathered after the forward ("For
    # PP, do not reshard after forward to avoid per-microbatch all-gathers", parallelize.py) and
    # pipelining's backward_maybe_with_nosync turns off resharding and gradient sync until the last
    # micro-batch: ZeRO-1's schedule. Llama 3's FSDP instead "shards optimizer states and
    # gradients, but for model shards we do not reshard after forward" (sec. 3.3.2): ZeRO-2.
    zero_with_pipeline=2,
    # 1: FSDP2 with set_requires_gradient_sync(False) until the last micro-batch, the unsharded
    # gradients accumulated in the reduce dtype (FSDPParam.unsharded_accumulated_grad); 2:
    # gradients reduce-scattered after every backward, parameters gathered once; 3: FULL_SHARD,
    # gathered before each forward and (resharded after it) again before each backward.
    dp_schedules=(DpSchedule(False, 0), DpSchedule(False, 0), DpSchedule(True, 0), DpSchedule(True, 2)),
    dp_overlap=True,  # FSDP2 always prefetches the next all-gather (backward pre-hook), no knob
    overlap_zero12=True,
    grad_bucket_params=None,  # one reduce-scatter per FSDP unit (layer)
    bucket_params_per_rank=0.0,
    whole_buffer_reduce=False,
    gather=Gather.RING,
    prefetch_params=None,
    # "In practice, the overlap percentage possible is 90% since the first block during forward
    # pass and the last block during backward pass are not able to overlap" (PyTorch blog,
    # "Maximizing training throughput using PyTorch FSDP", IBM and Meta, 2024-03-13).
    fsdp_overlap_efficiency=0.90,
    # torch.distributed.pipelining posts each stage's receives right before the compute that needs
    # them (PipelineScheduleMulti._step_microbatches), and NCCL moves point-to-point data only once
    # both sides have posted: the transfer is waited for
    p2p_overlap=False,
    cp_overlap=True,
    # torch.distributed.tensor.experimental's ring attention upcasts each step's output and the
    # gradient accumulators to FP32 (_ContextParallelOptions.convert_to_f32 = True) and merges them
    # with separate element-wise ops (_SDPAMerger, _templated_ring_attention_backward)
    ring_merge_fp32=True,
    # F.scaled_dot_product_attention's flash backend is FlashAttention-2 (PyTorch 2.2+); the
    # cuDNN backend is not the default
    hopper_attention=False,
    fused_elementwise=False,  # eager PyTorch modules unless torch.compile runs (the `compile` knob)
    # torchtitan's selective (op) checkpointing saves the matmul and attention outputs and recomputes
    # the element-wise ops between them: the norm outputs and the MLP activation are not kept
    selective_ops=True,
    dropout=False,
    # BF16 compute copy 2, FP32 gradients 4, FP32 master (the sharded parameter) and Adam
    # moments 12: the same 18 bytes as Megatron.
    weight_bytes=2.0, grad_bytes=4.0, optimizer_bytes=12.0,
    grad_reduce_bytes=4.0,  # torchtitan mixed_precision_reduce = float32
    gather_bytes=2.0,  # param_dtype bf16
    # Loss: torchtitan's cross_entropy(pred.float(), labels) holds the BF16 logits 2, their FP32 copy
    # 4 and log_softmax's FP32 output 4 (saved for backward) at once (torchtitan/components/loss.py;
    # aten log_softmax is out of place).
    loss_bytes=10.0,
    # torch.distributed.pipelining's backward_maybe_with_nosync turns gradient sync off for every
    # backward of an FSDP stage and, after its last one, runs the stage's post_backward (the
    # reduce-scatter of all its gradients) by hand (torch/distributed/pipelining/stage.py)
    chunk_grad_sync="always",
    source="pytorch/torchtitan docs/fsdp.md, torchtitan/config (mixed_precision_param/reduce), "
           "torchtitan/distributed (parallelize, pipelining); Zhao et al., PyTorch FSDP, PVLDB 2023",
)

# torchtitan (pytorch/torchtitan, its benchmarks at 9dec370, Dec. 2024) is FSDP2 as above with its own
# memory and its own rules: the fsdp2 preset also stands for Meta's Llama 3 stack, llm-foundry and
# fms-fsdp, whose published runs fit where these counts would not (docs/validation.md, "Peak memory").
_TORCHTITAN = replace(
    _FSDP2,
    name="torchtitan",
    # Under pipeline parallelism torchtitan does not reshard after the forward ("For PP, do not reshard
    # after forward to avoid per-microbatch all-gathers", parallelize_llama.py) and pipelining's
    # backward_maybe_with_nosync keeps gradient sync off until the last micro-batch: ZeRO-1's schedule,
    # the highest with pipeline stages (Meta's Llama 3 FSDP reduce-scatters every backward: ZeRO-2).
    zero_with_pipeline=1,
    # AsyncTP is Inductor's micro-pipeline pass: torchtitan refuses it without torch.compile
    # ("Async TP requires --training.compile", torchtitan/parallelisms/parallelize_llama.py,
    # parallelize_llama, at 3faaa1a0d and 9dec370; "Async TP requires 'model' in --compile.components
    # and --compile.enable", torchtitan/config/configs.py CompileConfig.__post_init__ today)
    tp_overlap_needs_compile=True,
    # The loss peaks in its backward: train.py deletes pred ("need to free to before bwd to avoid
    # peaking memory"), then the saved FP32 log_softmax output 4, the FP32 gradient nll_loss_backward
    # hands on 4 and the FP32 gradient _log_softmax_backward_data returns 4 are held at once
    # (torchtitan 9dec370 train.py loss_fn, cross_entropy(pred.float(), ...)).
    loss_bytes=12.0,
    # Attention.forward repeats the grouped K and V to all heads (repeat_kv) before
    # F.scaled_dot_product_attention, which saves the repeated tensors for its backward
    # (torchtitan 9dec370 torchtitan/models/llama/model.py)
    kv_repeat=True,
    # The TP plan's PrepareModuleInput all-gathers the sequence-parallel norm output to Replicate
    # before wq/wk/wv and w1/w3, and aten.mm saves that gathered input for the weight gradient
    # (torchtitan 9dec370 parallelize_llama.py apply_tp; torch/distributed/tensor/parallel/style.py)
    tp_saves_gathered=True,
    # With TP the loss is DTensor's loss_parallel (torchtitan's default, training.disable_loss_parallel
    # False), whose decomposed ops hold more at once (torch/distributed/tensor/parallel/loss.py, 2024):
    # the forward keeps the BF16 logits 2, the FP32 copy 4, shifted 4 and exp(shifted) or the result
    # 4 (14); the backward (_nll_loss_and_log_softmax_backward, after del pred) the saved log-probs
    # 4, grad_input = zeros_like 4, exp(x) or the sum 4 and the product 4: 16.
    tp_loss_bytes=16.0,
    source="pytorch/torchtitan 9dec370 (benchmarks/llama3_h100_202412_torchtitan.md): train.py, "
           "torchtitan/parallelisms/parallelize_llama.py (apply_tp, apply_ac, AsyncTP check), "
           "torchtitan/models/llama/model.py, torchtitan/config_manager.py; as fsdp2 otherwise",
)

PROFILES: dict[str, Profile] = {p.name: p for p in (_MEGATRON_CORE, _MEGATRON_LM_2021, _DEEPSPEED, _FSDP2,
                                                    _TORCHTITAN)}
PRESET_NAMES: tuple[str, ...] = tuple(PROFILES)
DEFAULT_PRESET = "megatron-core"


def profile(name: str) -> Profile:
    """The profile of a preset name.

    Raises:
        PerfError: unknown preset.
    """
    try:
        return PROFILES[name]
    except KeyError:
        raise PerfError(f"unknown software preset {name!r}; one of {', '.join(PRESET_NAMES)}") from None
