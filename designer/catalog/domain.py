"""The scale-up domain as its own concept: how many GPUs share one NVLink domain, at what bandwidth
and latency, with or without in-switch reduction, and how the domain is packaged (trays, racks).

A catalog server is the unit that is bought and racked. On an 8-GPU server (DGX B200) the domain
is the server: 8 GPUs on NVSwitches inside one chassis, the fabric's NICs on that chassis. On a
rack-scale system (GB200 NVL72) the unit is a whole rack: 18 compute trays of 4 GPUs joined by 9
NVLink switch trays into one 72-GPU domain (NVIDIA DGX SuperPOD GB200 RA, RA-11338-001), each
tray carrying its own NICs to the scale-out fabric. So three counts matter and differ:

* the domain (72 GPUs), which the performance model sees as one NVLink island;
* the tray (4 GPUs, 4 NICs), which the scale-out fabric connects (the topology's node);
* the system (one rack), which is priced, powered and cooled.

A job that cannot use all of a domain in whole groups (a TP or EP group of 16 or 64 does not tile
72 GPUs) runs on the largest power of two that fits, 64 of the 72, and leaves the rest idle: the
way NVIDIA's own GB200 runs are sized (NeMo's DGX-GB200 tables list 64, 128, 256 GPUs, never
multiples of 72). :func:`placements` gives both choices.
"""

from __future__ import annotations

__all__ = ["ScaleUpDomain", "domain_of", "domain_gpus", "is_rack_scale", "packaging_problem", "partial_domain",
           "placements", "placement_for", "pinned_placement"]

from dataclasses import dataclass

from designer.catalog.types import CloudInstance, Gpu, Server


@dataclass(frozen=True, slots=True)
class ScaleUpDomain:
    """One NVLink (or Infinity Fabric) domain and its packaging.

    Attributes:
        gpus: GPUs in the domain.
        bandwidth_Bps: Scale-up bandwidth per GPU, one direction, bytes/s (NVLink 5: 900 GB/s).
        latency_s: One NVLink step of a collective; None: the default of ``kind``.
        in_switch_reduction: NVLink SHARP (NVLS) in the domain's switches; None: the kind's default.
        kind: Scale-up technology (``nvlink5``, ...).
        compute_trays: Trays (or the one chassis) the domain's GPUs sit in.
        switch_trays: NVLink switch trays joining the trays (0: switches inside the chassis).
        cooling: ``air``, ``liquid`` or ``hybrid``.
    """

    gpus: int
    bandwidth_Bps: float
    latency_s: float | None
    in_switch_reduction: bool | None
    kind: str
    compute_trays: int = 1
    switch_trays: int = 0
    cooling: str = "air"

    @property
    def gpus_per_tray(self) -> int:
        """GPUs in one compute tray (the whole domain on an 8-GPU server)."""
        return self.gpus // self.compute_trays


def domain_gpus(entry: Server | CloudInstance) -> int:
    """GPUs per scale-up domain of a server or cloud instance (its own GPUs unless it says more)."""
    return entry.domain_gpus or entry.gpus


def is_rack_scale(server: Server) -> bool:
    """A system whose GPUs sit in several trays of one rack, joined by NVLink switch trays."""
    return server.compute_trays > 1


def domain_of(server: Server, gpu: Gpu) -> ScaleUpDomain:
    """The scale-up domain of ``server``: its own figures where the catalog gives them, else the GPU's."""
    domain = domain_gpus(server)
    return ScaleUpDomain(
        gpus=domain,
        bandwidth_Bps=server.scaleup_Bps if server.scaleup_Bps is not None else gpu.scaleup_Bps,
        latency_s=server.scaleup_latency_s,
        in_switch_reduction=server.in_switch_reduction,
        kind=gpu.scaleup_kind,
        compute_trays=max(1, server.compute_trays * domain // server.gpus),
        switch_trays=server.switch_trays,
        cooling=server.cooling,
    )


def packaging_problem(server: Server) -> tuple[str, str] | None:
    """(key, message) when a server's domain and trays do not add up, else None: the domain must
    be the whole system or a divisor of it, and GPUs, compute NICs and NIC cages must split evenly
    over the trays (each tray carries its own NICs to the fabric)."""
    domain = domain_gpus(server)
    if domain > server.gpus or server.gpus % domain:
        return ("domain_gpus", f"a scale-up domain of {domain} GPUs does not divide the system's {server.gpus}")
    trays = server.compute_trays
    for key, count in (("gpus", server.gpus), ("nics", server.nics), ("nic_cages", server.nic_cages)):
        if count % trays:
            return ("compute_trays", f"{count} {key.replace('_', ' ')} do not split evenly over {trays} compute trays")
    return None


def partial_domain(domain: int) -> int:
    """GPUs a job uses of a domain when whole TP/EP groups must fit in it: the largest power of two
    up to the domain (64 of an NVL72's 72; 8 of an 8-GPU server, which is all of it).

    Examples:
        >>> partial_domain(72), partial_domain(36), partial_domain(8)
        (64, 32, 8)
    """
    p = 1
    while p * 2 <= domain:
        p *= 2
    return p


def placements(domain: int) -> tuple[int, ...]:
    """GPUs per domain a job may use: all of them, and the power of two below where that differs."""
    part = partial_domain(domain)
    return (domain,) if part == domain else (domain, part)


def placement_for(gpus: int, domain: int) -> tuple[int, int]:
    """(domains, GPUs used per domain) of a job on ``gpus`` GPUs: whole domains where ``gpus`` is a
    multiple of the domain, else whole power-of-two parts of domains (:func:`partial_domain`); a
    job within one domain uses that one.

    Examples:
        >>> placement_for(576, 72), placement_for(512, 72), placement_for(64, 72), placement_for(16, 8)
        ((8, 72), (8, 64), (1, 64), (2, 8))
    """
    if gpus <= domain:
        return 1, gpus
    if gpus % domain == 0:
        return gpus // domain, domain
    part = partial_domain(domain)
    if gpus % part == 0:
        return gpus // part, part
    return -(-gpus // domain), domain


def pinned_placement(gpus: int, used: int) -> tuple[int, int]:
    """(domains, GPUs used per domain) of a job on ``gpus`` GPUs that uses ``used`` GPUs of each
    domain (``system.gpus_per_domain_used``): ``ceil(gpus / used)`` domains of ``used`` GPUs,
    or one domain of ``gpus`` when the job fits in one.

    Examples:
        >>> pinned_placement(128, 64), pinned_placement(8, 64), pinned_placement(144, 64)
        ((2, 64), (1, 8), (3, 64))
    """
    if gpus <= used:
        return 1, gpus
    return -(-gpus // used), used
