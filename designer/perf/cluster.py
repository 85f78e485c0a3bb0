"""The hardware a job runs on, as the performance model sees it: one GPU model and its network view.

:class:`NetworkView` is everything the communication model needs to know about the fabric, per
GPU (the optimizer derives it from a topology, :func:`designer.optimize.evaluate.network_view`);
the only catalog type used is :class:`designer.catalog.types.Gpu`. :class:`ModelEfficiency`
scales the model's predicted rates, for studies of how far the model may be off.
"""

from __future__ import annotations

__all__ = ["NetworkView", "ModelEfficiency", "Cluster"]

import math
from dataclasses import dataclass, field

from designer.catalog.types import Gpu
from designer.errors import PerfError
from designer.perf.types import check_positive, check_positive_int


@dataclass(frozen=True, slots=True, kw_only=True)
class NetworkView:
    """Everything the communication model needs to know about the fabric, per GPU.

    Scale-up (inside a node):
        gpus_per_node: GPUs sharing one NVLink/Infinity-Fabric domain.
        scaleup_Bps: per-GPU scale-up bandwidth, one direction, bytes/s (``None``: the GPU's).
        scaleup_latency_s: per-step latency of a scale-up collective (``None``: default of the
            GPU's scale-up kind, see :mod:`designer.perf.constants`).
        scaleup_efficiency: achieved ring bus bandwidth / ``scaleup_Bps`` (``None``: default).
        scaleup_reduction_efficiency: algorithm bandwidth of an in-switch all-reduce (NVLS) /
            ``scaleup_Bps``; ``None``: default of the kind (0 where the switch cannot reduce).
        scaleup_mesh: GPUs are wired point to point (AMD Infinity Fabric) rather than through a
            switch, so a group of p GPUs only uses (p-1)/(gpus_per_node-1) of the bandwidth.
            ``None``: default of the kind.

    Scale-out (between nodes):
        inter_Bps_per_gpu: line rate of the GPU's share of scale-out NICs, one direction, bytes/s.
        efficiency: achieved bus bandwidth per NIC / line rate for large messages (nccl-tests
            all-reduce busbw divided by NICs per node; protocol and transport overheads).
        host_latency_s: one-way NIC plus host-stack latency of a small message.
        switch_latency_s: one switch traversal, port to port.
        hops: switch hops between two GPUs on different rails (any-to-any traffic).
        hops_same_rail: switch hops between same-rank GPUs of two nodes (rail-aligned rings);
            ``None``: ``hops``.
        oversubscription: taper (down:up) that data-parallel and expert traffic meets when it
            leaves a leaf switch; 1 is non-blocking.
        bisection_Bps_per_gpu: fabric bisection bandwidth (one direction, minimum over balanced
            cuts) divided by the number of GPUs; ``None``: ``inter_Bps_per_gpu / (2 *
            oversubscription)``, a tapered fat tree. Bounds all-to-all.
        in_network_reduction: switches reduce in the network (InfiniBand SHARP), so an
            all-reduce sends and receives each byte once instead of twice.
        rail_only: no spine joins the rails; cross-rail traffic first crosses NVLink
            (Wang et al. 2023, "Rail-only").
        fabric: name of the fabric, for reports.
    """

    gpus_per_node: int
    inter_Bps_per_gpu: float
    efficiency: float
    host_latency_s: float
    switch_latency_s: float
    hops: int
    scaleup_Bps: float | None = None
    scaleup_latency_s: float | None = None
    scaleup_efficiency: float | None = None
    scaleup_reduction_efficiency: float | None = None
    scaleup_mesh: bool | None = None
    hops_same_rail: int | None = None
    oversubscription: float = 1.0
    bisection_Bps_per_gpu: float | None = None
    in_network_reduction: bool = False
    rail_only: bool = False
    fabric: str = ""

    def __post_init__(self) -> None:
        check_positive_int(self.gpus_per_node, "network.gpus_per_node")
        check_positive(self.inter_Bps_per_gpu, "network.inter_Bps_per_gpu")
        if not 0.0 < self.efficiency <= 1.0:
            raise PerfError(f"network.efficiency must be in (0, 1], not {self.efficiency!r}")
        if self.host_latency_s < 0 or self.switch_latency_s < 0 or self.hops < 0:
            raise PerfError("network latencies and hops must not be negative")
        if self.oversubscription < 1.0 or not math.isfinite(self.oversubscription):
            raise PerfError(f"network.oversubscription must be >= 1, not {self.oversubscription!r}")
        for name in ("scaleup_Bps", "bisection_Bps_per_gpu"):
            if getattr(self, name) is not None:
                check_positive(getattr(self, name), f"network.{name}")
        for name in ("scaleup_efficiency",):
            value = getattr(self, name)
            if value is not None and not 0.0 < value <= 1.0:
                raise PerfError(f"network.{name} must be in (0, 1], not {value!r}")


# Bounds of a ModelEfficiency multiplier: a model off by more than 20x either way is not a model.
EFFICIENCY_RANGE = (0.05, 20.0)


@dataclass(frozen=True, slots=True)
class ModelEfficiency:
    """Multipliers on the rates the performance model predicts (1: as modelled).

    Model: ``compute`` divides every compute time (GEMMs, attention, memory-bound kernels, kernel
    launches, the optimizer step) by the same factor, as if the GPU and its software stack ran
    that much faster. ``network`` multiplies every achieved bandwidth (NVLink, in-switch
    reduction, the NICs' share, bisection), so the bandwidth term of every transfer is divided by
    it; latencies stay as modelled, and checkpoint writes to storage are not scaled. Overlap,
    bubbles and the plan search then follow from the scaled times, so a step does not scale
    exactly. Peak FLOP/s for MFU stay the datasheet's. Monte Carlo studies draw both from the
    spread of the model's errors against published measurements (docs/validation.md): step
    times of training runs, and large-message collective bandwidth.

    Raises:
        PerfError: a multiplier outside :data:`EFFICIENCY_RANGE`.
    """

    compute: float = 1.0
    network: float = 1.0

    def __post_init__(self) -> None:
        low, high = EFFICIENCY_RANGE
        for name in ("compute", "network"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
                raise PerfError(f"{name} efficiency must lie in [{low:g}, {high:g}], not {value!r}")

    @property
    def is_nominal(self) -> bool:
        """Both multipliers are 1: the model as calibrated."""
        return self.compute == 1.0 and self.network == 1.0


@dataclass(frozen=True, slots=True)
class Cluster:
    """The hardware a job runs on: one GPU model, the network as the GPUs see it, and the
    multipliers on the model's predicted rates (:class:`ModelEfficiency`)."""

    gpu: Gpu
    network: NetworkView
    efficiency: ModelEfficiency = field(default_factory=ModelEfficiency)
