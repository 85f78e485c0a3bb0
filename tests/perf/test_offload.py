"""Activation offload to host memory over NVLink-C2C (designer.perf.offload).

Megatron-Bridge's GB200 recipes keep some layers' activations in Grace memory
(cpu_offloading_num_layers). The model offloads the fewest whole layers that bring a plan under
the usable HBM, on GPUs with a host link of their own (GB200: NVLink-C2C 900 GB/s both ways per
superchip of two GPUs, 225 GB/s per GPU each way), and charges the copies where they outlast the
forward or backward compute they run beside.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from designer.perf import Cluster, Job, Plan, Precision, Recompute, check_plan, estimate_step
from designer.perf.memory import memory_per_gpu, usable_hbm_bytes
from designer.perf.offload import NO_OFFLOAD, Offload, offload_exposed_s, offload_for

from .factories import B200, LLAMA3_70B, NDR

# The GB200 NVL72's B200 (catalogs/gpus.yaml b200-gb200): 186 GB, 2,500 / 5,000 TFLOP/s, MAMF
# 1,822, and its NVLink-C2C share of a Grace (225 GB/s each way, 240 GB of its LPDDR5X).
GB200 = replace(B200, name="b200-gb200", bf16_flops=2500e12, fp8_flops=5000e12, hbm_bytes=186e9,
                matmul_efficiency=1822 / 2500, host_Bps=225e9, host_memory_bytes=240e9)
NVL = replace(NDR, gpus_per_node=64)
# Megatron-Bridge 25.11 Llama 3 70B on 64 GB200: FSDP 64, micro-batch 2, sequence 8,192, FP8, no
# recomputation (its recipe offloads activations instead).
JOB = Job(model=LLAMA3_70B, global_batch=256, tokens=1e9, precision=Precision.FP8, recompute=Recompute.NONE)
PLAN = Plan(tp=1, pp=1, dp=64, microbatch=2, zero=3, sequence_parallel=False)
MICRO = 256 // (64 * 2)


def test_the_fewest_whole_layers_that_fit_are_offloaded():
    mem = memory_per_gpu(JOB, PLAN, MICRO)
    usable = usable_hbm_bytes(GB200)
    assert mem.total > usable  # does not fit as it is
    off = offload_for(JOB, PLAN, MICRO, GB200)
    unit = mem.activations / LLAMA3_70B.layers  # one layer's activations (one stage: all 80 layers)
    k = math.ceil((mem.total - usable) / unit)
    assert (off.layers, off.bytes_per_gpu) == (k, pytest.approx(k * unit))
    assert mem.total - off.bytes_per_gpu <= usable < mem.total - (k - 1) * unit
    assert off.bytes_per_microbatch == pytest.approx(off.bytes_per_gpu)  # pp 1: one micro-batch in flight


def test_offloaded_bytes_leave_hbm_and_the_plan_runs():
    cluster = Cluster(GB200, NVL)
    assert check_plan(JOB, PLAN, cluster) is None
    est = estimate_step(JOB, PLAN, cluster)
    off = offload_for(JOB, PLAN, MICRO, GB200)
    assert est.offload_bytes_per_gpu == pytest.approx(off.bytes_per_gpu)
    assert est.memory_bytes_per_gpu == pytest.approx(memory_per_gpu(JOB, PLAN, MICRO).total - off.bytes_per_gpu)
    assert est.memory_bytes_per_gpu <= est.memory_usable_bytes
    assert est.to_json_dict()["activation_offload_gb_per_gpu"] == pytest.approx(off.bytes_per_gpu / 1e9)
    # 40 of 80 layers (151 GB; a Grace holds 480 GB for its two GPUs) take 0.67 s each way at
    # 225 GB/s, inside the micro-batch's forward (a third of its compute): the copies hide
    copy = off.bytes_per_microbatch / 225e9
    assert off.layers == 40 and copy == pytest.approx(0.672, abs=0.001)
    assert copy < est.breakdown.compute_s / est.microbatches / 3


def test_without_a_host_link_of_its_own_the_plan_does_not_fit():
    # The same GPU over PCIe (no host_Bps): nothing is offloaded, the plan is refused with its sizes
    reason = check_plan(JOB, PLAN, Cluster(replace(GB200, host_Bps=None), NVL))
    assert reason is not None and "needs" in reason and "GB usable" in reason
    assert offload_for(JOB, PLAN, MICRO, replace(GB200, host_Bps=None)) is None


def test_a_plan_that_fits_offloads_nothing():
    small = replace(JOB, global_batch=64)
    plan = replace(PLAN, microbatch=1)
    assert offload_for(small, plan, 1, GB200) is NO_OFFLOAD


def test_copies_longer_than_their_window_are_exposed():
    # 4.5 GB each way at 225 GB/s = 20 ms; a 5 ms forward and a 30 ms backward leave 15 ms exposed
    off = Offload(2, 9e9, 4.5e9)
    assert offload_exposed_s(off, GB200, 0.005, 0.030) == pytest.approx(0.015)
    assert offload_exposed_s(off, GB200, 0.050, 0.050) == 0.0
    assert offload_exposed_s(NO_OFFLOAD, GB200, 0.0, 0.0) == 0.0


def test_no_more_than_the_gpus_share_of_host_memory_is_offloaded():
    off = offload_for(JOB, PLAN, MICRO, GB200)
    assert offload_for(JOB, PLAN, MICRO, replace(GB200, host_memory_bytes=off.bytes_per_gpu)) == off
    assert offload_for(JOB, PLAN, MICRO, replace(GB200, host_memory_bytes=0.99 * off.bytes_per_gpu)) is None
