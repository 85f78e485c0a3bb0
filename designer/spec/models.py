"""The spec as frozen dataclasses in SI units: what must be trained, what may be bought or rented,
and the constraints. :mod:`designer.spec.load` builds them; the planner is their only reader.
"""

from __future__ import annotations

__all__ = [
    "MoESpec", "MLASpec", "ModelSpec", "ParallelismSpec", "SoftwareSpec", "WorkloadSpec", "Budget",
    "Constraints", "FacilitySpec", "StorageSpec", "OwnedSpec", "PreferenceSpec", "SystemPin", "Spec",
]

from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from designer.errors import Diagnostic, Location
from designer.spec.choices import Deployment, Objective, Pricing
from designer.spec.yamlio import YamlDoc


@dataclass(frozen=True, slots=True)
class MoESpec:
    experts: int
    top_k: int
    shared_experts: int = 0
    expert_ffn: int | None = None  # FFN width of one expert; defaults to the model's ffn
    dense_layers: int = 0  # leading layers with a dense FFN instead of experts
    groups: int = 1  # group-limited routing: equal expert groups
    group_top_k: int | None = None  # groups a token picks first (None: all)


@dataclass(frozen=True, slots=True)
class MLASpec:
    """Multi-head latent attention dimensions (DeepSeek-V2/V3 ``config.json`` names)."""

    q_lora_rank: int
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A model's architecture; ``assumptions`` say which figures were filled in by default
    (shown with every prediction)."""

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn: int
    seq_len: int
    vocab: int
    gated_mlp: bool
    params: float | None
    moe: MoESpec | None
    source: str
    mla: MLASpec | None = None
    assumptions: tuple[str, ...] = ()
    mtp_layers: int = 0  # multi-token-prediction depth (DeepSeek-V3 sec. 2.2)


@dataclass(frozen=True, slots=True)
class ParallelismSpec:
    """``None`` in a field means the optimizer chooses it (``parallelism: auto`` is all None)."""

    tp: int | None = None
    pp: int | None = None
    dp: int | None = None
    ep: int | None = None
    cp: int | None = None
    microbatch: int | None = None
    virtual_stages: int | None = None
    zero: int | None = None
    sequence_parallel: bool | None = None
    first_stage_layers: int | None = None
    last_stage_layers: int | None = None
    schedule: str | None = None  # 1f1b | dualpipe
    etp: int | None = None  # expert tensor-parallel size (None: tp)

    @property
    def is_auto(self) -> bool:
        return all(getattr(self, f) is None for f in self.__slots__)


@dataclass(frozen=True, slots=True)
class SoftwareSpec:
    """The training stack of a workload: a preset and the knobs given (``None``: the preset's
    default). A workload's ``software:`` block overrides the top-level one field by field."""

    preset: str | None = None  # megatron-core | megatron-lm-2021 | deepspeed | fsdp2 | torchtitan
    attention: str | None = None  # flash | unfused
    sequence_parallel: bool | None = None  # None: auto
    tp_comm_overlap: bool | None = None
    dp_overlap: bool | None = None
    p2p_overlap: bool | None = None  # None: the stack's pipeline schedule
    dropout: bool | None = None
    compile: bool | None = None
    moe_dispatcher: str | None = None  # nccl | deepep | hybridep
    in_network_reduction: bool | None = None  # NCCL CollNet / SHARP enabled
    checkpoint_saves: str | None = None  # what selective recomputation keeps (designer.perf.software.CHECKPOINT_SAVES)
    cuda_graphs: str | None = None  # none | partial | full (designer.perf.software.CUDA_GRAPHS)


@dataclass(frozen=True, slots=True)
class WorkloadSpec:
    name: str
    model: ModelSpec
    tokens: float
    global_batch: int  # sequences per step
    precision: str  # bf16 | fp16 | fp8
    recompute: str  # none | selective | full
    parallelism: ParallelismSpec
    deadline_s: float | None
    checkpoint_interval_s: float | None
    gpus: int | None  # pinned GPU count for this workload
    software: SoftwareSpec = field(default_factory=SoftwareSpec)


@dataclass(frozen=True, slots=True)
class Budget:
    capex_usd: float | None
    total_usd: float | None


@dataclass(frozen=True, slots=True)
class Constraints:
    min_utilization: float
    deployments: tuple[Deployment, ...]
    fabrics: tuple[str, ...]
    topologies: tuple[str, ...]
    gpus: tuple[str, ...]  # allowed GPU catalog names; empty = any
    max_power_w: float | None
    max_racks: int | None
    max_nodes: int | None
    oversubscription: tuple[float, ...]  # candidate leaf oversubscription ratios
    pricing: tuple[Pricing, ...]  # how cloud hours may be bought (the optimizer picks per instance)
    allow_nic_downrate: bool = False  # NICs may run below their native rate on a slower switch


@dataclass(frozen=True, slots=True)
class FacilitySpec:
    """Overrides of the catalog's facility defaults; ``None`` keeps the default. ``overrides`` holds
    every other key given, by the :class:`~designer.catalog.types.Facility` attribute it sets (SI)."""

    electricity_usd_per_j: float | None
    pue: float | None
    rack_power_w: float | None
    overrides: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True)
class StorageSpec:
    """The on-prem parallel file system: on or off, and anything the spec fixes about it."""

    enabled: bool = True
    system: str | None = None  # a storage catalog entry
    capacity_bytes: float | None = None
    write_Bps: float | None = None
    read_Bps: float | None = None


@dataclass(frozen=True, slots=True)
class NetworksSpec:
    """Which of the storage, in-band and out-of-band networks an on-prem design has (``networks:``)."""

    storage: bool = True
    inband: bool = True
    oob: bool = True


@dataclass(frozen=True, slots=True)
class OwnedSpec:
    """Hardware the buyer already has (``inventory:``): a server, switch or storage entry and a count."""

    name: str
    count: int
    index: int  # position in the spec's inventory list (for located errors)


@dataclass(frozen=True, slots=True)
class PreferenceSpec:
    """A soft preference (``prefer:``): systems whose ``key`` (fabric, topology, deployment, server,
    switch, gpu or vendor) is ``value`` are worth ``usd`` dollars more (shared among the workloads
    run on them) or ``share`` of their cost more to the buyer."""

    key: str
    value: str
    usd: float = 0.0
    share: float = 0.0
    index: int = 0  # position in the spec's prefer list (for located errors)

    @property
    def weight_text(self) -> str:
        """The weight as a person writes it: ``$250,000`` or ``5%``."""
        return f"{self.share * 100:.4g}%" if self.share else f"${self.usd:,.0f}"


@dataclass(frozen=True, slots=True)
class SystemPin:
    deployment: Deployment | None
    server: str | None
    switch: str | None
    nodes: int | None
    fabric: str | None
    topology: str | None
    oversubscription: float | None
    gpus_per_domain_used: int | None = None  # GPUs a job uses of each scale-up domain (None: the default placement)

    @property
    def is_empty(self) -> bool:
        return all(getattr(self, f) is None for f in self.__slots__)


@dataclass(frozen=True, slots=True)
class Spec:
    version: int
    name: str
    objective: Objective
    horizon_s: float
    budget: Budget
    workloads: tuple[WorkloadSpec, ...]
    constraints: Constraints
    facility: FacilitySpec
    catalogs: tuple[Path, ...]  # resolved relative to the spec's folder
    system: SystemPin
    file: str
    digest: str  # sha256 of the spec file's bytes
    doc: YamlDoc | None = field(default=None, compare=False, repr=False)
    # Accepted, but probably not what was meant (a value listed twice, a params count off its
    # architecture): `validate` shows them; some are found once the catalogs are known.
    warnings: tuple[Diagnostic, ...] = field(default=(), compare=False, repr=False)
    storage: StorageSpec = StorageSpec()
    licences: tuple[str, ...] = ()  # licence catalog entries charged per GPU-year
    inventory: tuple[OwnedSpec, ...] = ()
    price_book: str | None = None  # price_book catalog entry (discounts, display currency)
    prefer: tuple[PreferenceSpec, ...] = ()  # soft preferences, in the spec's order
    networks: NetworksSpec = NetworksSpec()  # the on-prem design's storage and management networks

    def locate(self, path: tuple[Any, ...]) -> Location:
        """``FILE:LINE:COL`` of a key path in the spec file (for errors found after loading)."""
        if self.doc is None:
            return Location(self.file)
        return self.doc.locate(path)
