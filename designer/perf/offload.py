"""Activation offload to host memory over the GPU's own host link (NVLink-C2C on GB200).

Model (Megatron-Core activation offloading: ``--cpu-offloading`` with
``cpu_offloading_num_layers``, Transformer Engine's ``get_cpu_offload_context``): when a plan's
peak memory is above the usable HBM, the activations of ``k`` layers of every micro-batch in
flight are copied to host memory during that micro-batch's forward and back before its backward,
with non-blocking copies on a side stream (the copy engines, not the SMs), so the compute runs
on beside them. ``k`` is the fewest whole layers that bring the plan under the usable HBM; one
layer always stays on the GPU (Megatron-Core requires ``cpu_offloading_num_layers`` below the
layers of a stage), so a plan that needs more does not fit. The offloaded bytes leave HBM.

Each micro-batch moves ``b = k x u / held`` bytes out and back (``u`` one layer's activations for
the ``held`` micro-batches in flight on the stage), at the GPU's host link rate ``B`` in each
direction (:attr:`designer.catalog.types.Gpu.host_Bps`); the copies overlap that micro-batch's
forward ``F`` and backward ``W`` compute on the stage:

    exposed per micro-batch = max(0, b / B - F) + max(0, b / B - W)

Only GPUs whose catalog entry gives a host link of their own offload (GB200 and GB300: 900 GB/s
NVLink-C2C per superchip, both directions, shared by its two GPUs, so 225 GB/s per GPU each way);
over PCIe the link is the NICs' too and the model does not offload. The offloaded bytes must fit
in the GPU's share of host memory (``Gpu.host_memory_bytes``: 240 GB, half a Grace's 480 GB).
The stack must have it (``Profile.activation_offload``).
"""

from __future__ import annotations

__all__ = ["Offload", "NO_OFFLOAD", "offload_for", "offload_exposed_s"]

import math
from dataclasses import dataclass

from designer.catalog.types import Gpu
from designer.perf.memory import memory_per_gpu, usable_hbm_bytes
from designer.perf.pipeline import inflight, stage_layout
from designer.perf.types import Job, Plan


@dataclass(frozen=True, slots=True)
class Offload:
    """Activations a plan keeps in host memory: ``layers`` per micro-batch, ``bytes_per_gpu`` at
    the peak, ``bytes_per_microbatch`` copied out (and back) for each micro-batch."""

    layers: int
    bytes_per_gpu: float
    bytes_per_microbatch: float


NO_OFFLOAD = Offload(0, 0.0, 0.0)


def _can_offload(job: Job, gpu: Gpu) -> bool:
    return job.software.profile.activation_offload and bool(gpu.host_Bps)


def offload_for(job: Job, plan: Plan, microbatches: int, gpu: Gpu) -> Offload | None:
    """What ``plan`` must offload to fit in ``gpu``'s usable HBM: :data:`NO_OFFLOAD` when it fits
    as it is, ``None`` when it does not fit even with offload (or cannot offload at all)."""
    mem = memory_per_gpu(job, plan, microbatches)
    excess = mem.total - usable_hbm_bytes(gpu)
    if excess <= 0.0:
        return NO_OFFLOAD
    if not _can_offload(job, gpu) or mem.activations <= 0.0:
        return None
    layout = stage_layout(job.model.layers, plan.pp, plan.first_stage_layers, plan.last_stage_layers)
    layers = job.model.layers if plan.pp == 1 or isinstance(layout, str) else layout.first
    if layers < 2:
        return None
    unit = mem.activations / layers  # one layer's activations, every micro-batch in flight
    k = math.ceil(excess / unit * (1.0 - 1e-12))
    if k > layers - 1:
        return None
    if gpu.host_memory_bytes is not None and k * unit > gpu.host_memory_bytes:
        return None  # more than the GPU's share of host memory
    held = inflight(plan.pp, plan.virtual_stages, microbatches, 0, plan.schedule)
    return Offload(k, k * unit, k * unit / max(held, 1.0))


def offload_exposed_s(off: Offload, gpu: Gpu, forward_s: float, backward_s: float) -> float:
    """Seconds one micro-batch waits for its offload copies: ``max(0, b/B - F) + max(0, b/B - W)``.

    Examples:
        >>> from dataclasses import replace
        >>> from designer.catalog.types import Provenance
        >>> g = Gpu("g", "", "", 1e15, None, 1e11, 1e12, 1e11, "nvlink5", 1e3, None, 0.7, Provenance("s", "2025"),
        ...         host_Bps=200e9)
        >>> offload_exposed_s(Offload(2, 8e9, 2e9), g, 0.004, 0.02)  # 10 ms each way
        0.006
    """
    if off.bytes_per_microbatch <= 0.0 or not gpu.host_Bps:
        return 0.0
    copy = off.bytes_per_microbatch / gpu.host_Bps
    return max(0.0, copy - forward_s) + max(0.0, copy - backward_s)
