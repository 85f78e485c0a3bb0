"""What a NIC achieves through its transport: RDMA at a share of line rate, kernel TCP bound by the host.

RDMA transports (InfiniBand, RoCE, EFA) move data NIC to GPU memory without the CPU, so a NIC
reaches a fixed share of its line rate (the fabric profile's ``efficiency``, measured as ring bus
bandwidth per NIC). Kernel TCP copies every byte through host memory (GPU to host buffer, into
and out of kernel socket buffers) on CPU cores, so it is bound by the host, not the wire:

* per NIC: one TCP flow is one core's copies, and "a single core is no longer able to process
  packets at line rate" at 100 Gb/s, "data copy from kernel to application buffers at the
  receiver becoming the core performance bottleneck" (Cai et al., "Understanding Host Network
  Stack Overheads", SIGCOMM 2021; a core saturates a 40 Gb/s link). NCCL over 100 Gb/s TCP
  reaches 4-6 GB/s bus bandwidth of the link's 12.5 GB/s (NVIDIA/nccl issue #450, 4 x 8 V100);
* per host: tuned SR-IOV TCP on A100 hosts with 2 x 100 GbE gives "usable bandwidth of
  120Gbps" per node (PyTorch blog, "Scaling PyTorch FSDP for Training Foundation Models on IBM
  Cloud", 2022).

The ceilings are the fabric profile's ``nic_cap_Bps`` and ``host_cap_Bps`` (catalogs/fabrics.yaml);
so 8 x 400 GbE under kernel TCP carries what the host can copy, about 15 Gb/s per NIC, which is why
GPUDirect-TCPX/TCPXO (payloads straight from GPU memory to the NIC) exist for 200 Gb/s and faster.
The CPU cost follows: at one core per ~40 Gb/s per direction, 120 Gb/s keeps three cores copying
on each side of every transfer.
"""

from __future__ import annotations

__all__ = ["achieved_efficiency"]


def achieved_efficiency(line_Bps: float, nics_per_host: int, efficiency: float,
                        nic_cap_Bps: float | None = None, host_cap_Bps: float | None = None) -> float:
    """Share of a NIC's line rate a bandwidth-bound collective achieves through its transport.

    ``min(line x efficiency, nic cap, host cap / NICs per host) / line``.

    Examples:
        >>> achieved_efficiency(50e9, 8, 0.94)  # RDMA: the fabric's share of line rate
        0.94
        >>> round(achieved_efficiency(50e9, 8, 0.9, 7.5e9, 15e9), 4)  # 8 x 400 GbE kernel TCP
        0.0375
        >>> round(achieved_efficiency(12.5e9, 1, 0.9, 7.5e9, 15e9), 2)  # one 100 GbE NIC per host
        0.6
    """
    if line_Bps <= 0:
        return efficiency
    rate = line_Bps * efficiency
    if nic_cap_Bps is not None:
        rate = min(rate, nic_cap_Bps)
    if host_cap_Bps is not None:
        rate = min(rate, host_cap_Bps / max(nics_per_host, 1))
    return rate / line_Bps
