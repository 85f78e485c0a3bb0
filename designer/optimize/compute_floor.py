"""The least GPU time any plan can spend per trained token: its compute at the best rates of the GPU.

A step is compute, bubble, exposed communication, optimizer and checkpoint
(:mod:`designer.perf.step`), so it is never shorter than its compute, and the slowest
pipeline stage computes no less than the average GPU. Summed over the GPUs, one step's compute
is the roofline sum of :mod:`designer.perf.compute` over every token of the global batch,
whatever the split (tensor, context, pipeline, data and expert parallelism divide the same
work). Keeping only its arithmetic terms at their fastest rates bounds it from below:

* linear layers (dense and MoE, :func:`designer.perf.flops.gemm_flops_per_token`): forward once
  and backward twice, at the achievable GEMM rate of the job's precision
  (:func:`designer.perf.compute.gemm_rate`);
* the attention core: a fused kernel computes the causal half, forward and backward
  (``CAUSAL_FRACTION x (1 + FUSED_ATTENTION_BWD_FACTOR)``), at no more than the 16-bit GEMM
  rate; unfused it is three full passes at that rate: the smaller of the two counts;
* the logits: three passes at the 16-bit GEMM rate.

Memory-bound kernels, launches and recomputation only add time, and
:class:`designer.perf.ModelEfficiency` ``compute`` divides every compute time alike. So
``tokens x floor`` GPU-seconds is a lower bound on ``gpus x time to train`` of every plan on
every network, and ``tokens x floor / deadline`` on the GPUs that meet a deadline. The bound is
about 20-30% below the fastest plans found (their memory-bound kernels and bubble), where the
model FLOPs at the datasheet peak are 2-5 times below.
"""

from __future__ import annotations

__all__ = ["seconds_per_token"]

from designer import perf
from designer.catalog.types import Gpu
from designer.errors import PerfError
from designer.perf import compute as perf_compute
from designer.perf import constants as K
from designer.perf import flops as perf_flops
from designer.perf.types import Precision


def seconds_per_token(job: perf.Job, gpu: Gpu, speed: float = 1.0) -> float:
    """GPU-seconds per trained token that no plan of ``job`` on ``gpu`` beats (module
    docstring); ``speed`` is the compute multiplier (:class:`designer.perf.ModelEfficiency`).
    0.0 when the job cannot run on the GPU at all (FP8 asked of a GPU without FP8): no bound."""
    m = job.model
    try:
        rate = perf_compute.gemm_rate(gpu, job.precision)
    except PerfError:
        return 0.0
    rate16 = perf_compute.gemm_rate(gpu, Precision.BF16)
    moe_layers = m.moe_layer_count
    gemm = ((m.layers - moe_layers) * perf_flops.gemm_flops_per_token(m, False)
            + moe_layers * perf_flops.gemm_flops_per_token(m, True))
    attention = m.layers * perf_flops.attention_flops_per_token(m, m.seq_len)
    # A fused kernel's rate is a share of the 16-bit GEMM rate; read as at most all of it.
    fastest_fused = max(1.0, K.FUSED_ATTENTION_RELATIVE, K.FA2_ON_HOPPER_RELATIVE)
    passes = min(3.0, K.CAUSAL_FRACTION * (1.0 + K.FUSED_ATTENTION_BWD_FACTOR) / fastest_fused)
    logits = perf_flops.logit_flops_per_token(m)
    return (3.0 * gemm / rate + passes * attention / rate16 + 3.0 * logits / rate16) / speed
