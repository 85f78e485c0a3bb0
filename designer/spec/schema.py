"""The spec's input models (pydantic, strict keys, units parsed once), which also describe it.

Pydantic stays inside :mod:`designer.spec`: these models check a spec's YAML data, and
:mod:`designer.spec.load` turns them into the frozen dataclasses of :mod:`designer.spec.models`.
``SpecInput`` is the root model; the others are private to the package. Every field has a
``description`` (and, where the value type gives none, ``examples``): :mod:`designer.spec.jsonschema`
turns them into ``designer schema``, and a test fails on a field without one.
"""

from __future__ import annotations

__all__ = ["SpecInput", "ParallelismInput", "SoftwareInput", "PREFERENCE_KEYS"]

from typing import Annotated, Any, Literal, Union

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from designer.spec import bounds, presets, units
from designer.spec.choices import (
    ATTENTION_KERNELS, CHECKPOINT_SAVES, CUDA_GRAPHS, FABRICS, MOE_DISPATCHERS, SOFTWARE_PRESETS, TOPOLOGIES,
)
# The value types, each with its schema as written (designer.spec.values); adding a field of one of
# these types to a model below is all `designer schema` needs, with a description.
from designer.spec.values import (
    Bandwidth, BuildPrice, CapacityPrice, Count, DataSize, Duration, EnergyPrice, Flag, Fraction, Money, Name,
    NonNegInt, Period, PosInt, Power, Weight,
)



def _in(key: str) -> AfterValidator:
    """The sane range of ``key`` (:data:`designer.spec.bounds.SPEC`), checked on the parsed value."""
    return AfterValidator(bounds.within(bounds.SPEC[key]))


def _not_bool(value: Any) -> Any:
    if isinstance(value, bool):  # YAML `true` equals 1 in Python; a version is a number
        raise ValueError(f"expected the number 1, got {str(value).lower()}")
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


_AUTO = "auto lets the optimizer choose"


def _auto(description: str, examples: list[Any]) -> Any:
    """A parallelism field: a whole number or ``auto`` (the default)."""
    return Field("auto", description=f"{description}; {_AUTO}.", examples=[*examples, "auto"])


class _MoE(_Strict):
    """Mixture of experts: experts per MoE layer and how many each token is routed to."""

    experts: Annotated[PosInt, _in("experts")] = Field(description="Routed experts per MoE layer.", examples=[8, 256])
    top_k: Annotated[PosInt, _in("top_k")] = Field(description="Experts each token is routed to.", examples=[2, 8])
    shared_experts: Annotated[NonNegInt, _in("shared_experts")] = Field(0, description="Experts every token also passes through.", examples=[0, 1])
    expert_ffn: Annotated[PosInt, _in("expert_ffn")] | None = Field(None, description="FFN width of one expert; default the model's ffn.",
                                      examples=[2048])
    dense_layers: Annotated[NonNegInt, _in("dense_layers")] = Field(0, description="Leading layers with a dense FFN instead of experts.",
                                    examples=[0, 3])
    groups: Annotated[PosInt, _in("groups")] = Field(1, description="Group-limited routing: experts in this many equal "
                                                     "groups (DeepSeek-V3 n_group 8; 1: no groups).", examples=[1, 8])
    group_top_k: Annotated[PosInt, _in("group_top_k")] | None = Field(
        None, description="Groups each token picks before its experts (DeepSeek-V3 topk_group 4; default all).",
        examples=[4])


class _MLA(_Strict):
    """Multi-head latent attention (DeepSeek-V2/V3): the low-rank projections of queries, keys and values."""

    q_lora_rank: Annotated[NonNegInt, _in("q_lora_rank")] = Field(description="Query latent rank (0: queries projected directly).",
                                   examples=[1536])
    kv_lora_rank: Annotated[PosInt, _in("kv_lora_rank")] = Field(description="Key-value latent rank.", examples=[512])
    qk_nope_head_dim: Annotated[PosInt, _in("qk_nope_head_dim")] = Field(description="Per-head query/key dimension without rotary embedding.",
                                     examples=[128])
    qk_rope_head_dim: Annotated[PosInt, _in("qk_rope_head_dim")] = Field(description="Per-head query/key dimension with rotary embedding.",
                                     examples=[64])
    v_head_dim: Annotated[PosInt, _in("v_head_dim")] = Field(description="Per-head value dimension.", examples=[128])


class _Model(_Strict):
    """The model: a preset, or its architecture (a preset's fields can be overridden one by one)."""

    preset: Name | None = Field(None, description="A model preset (`designer presets` lists them): "
                                + ", ".join(presets.preset_names()) + ".", examples=["llama3-70b"])
    name: Name | None = Field(None, description="The model's name in reports; default the preset's.",
                              examples=["my-70b"])
    params: Annotated[Count, _in("params")] | None = Field(None, description="Published parameter count; checked against the architecture "
                                 "(a warning past 5%), which the FLOPs and memory follow.", examples=["70B"])
    layers: Annotated[PosInt, _in("layers")] | None = Field(None, description="Transformer layers.", examples=[80])
    hidden: Annotated[PosInt, _in("hidden")] | None = Field(None, description="Hidden size (model width).", examples=[8192])
    heads: Annotated[PosInt, _in("heads")] | None = Field(None, description="Attention heads.", examples=[64])
    kv_heads: Annotated[PosInt, _in("kv_heads")] | None = Field(None, description="Key-value heads (grouped-query attention); default heads.",
                                    examples=[8])
    ffn: Annotated[PosInt, _in("ffn")] | None = Field(None, description="MLP width; default Megatron-LM's: 4 x hidden, or 8/3 x hidden "
                               "rounded down to a multiple of 64 with a gated MLP.", examples=[28672])
    seq_len: Annotated[PosInt, _in("seq_len")] | None = Field(None, description="Sequence length in tokens.", examples=[8192])
    vocab: Annotated[PosInt, _in("vocab")] | None = Field(None, description="Vocabulary size; default 50,304 (GPT-2 BPE padded as "
                                 "Megatron-LM pads it).", examples=[128256])
    mlp: Literal["gated", "plain"] | None = Field(None, description="gated (SwiGLU, three matrices) or plain "
                                                  "(GeLU, two).")
    gated_mlp: Flag | None = Field(None, description="Older spelling of mlp: gated.")
    moe: _MoE | None = Field(None, description="Mixture of experts; absent for a dense model.")
    mla: _MLA | None = Field(None, description="Multi-head latent attention (DeepSeek-V2/V3).")
    mtp_layers: Annotated[NonNegInt, _in("mtp_layers")] | None = Field(
        None, description="Multi-token-prediction depth (DeepSeek-V3 sec. 2.2; Megatron-Core mtp_num_layers): "
                          "each depth adds one transformer layer, a projection and one more pass through the "
                          "output head and loss on the last pipeline stage; default 0.", examples=[0, 1])


class _Software(_Strict):
    """The training software stack; each field left out takes the stack's own default."""

    preset: Literal[SOFTWARE_PRESETS] | None = Field(  # type: ignore[valid-type]
        None, description="Training stack: " + ", ".join(SOFTWARE_PRESETS) + " (default megatron-core).")
    attention: Literal[ATTENTION_KERNELS] | None = Field(  # type: ignore[valid-type]
        None, description="Attention kernel: flash (fused) or unfused (softmax materialised).")
    sequence_parallel: Flag | Literal["auto"] | None = Field(
        None, description="auto, true or false; false: the plan search never uses sequence parallelism.")
    tp_comm_overlap: Flag | None = Field(None, description="Tensor-parallel collectives overlapped with GEMMs.")
    dp_overlap: Flag | None = Field(None, description="Gradient reduce-scatter and parameter all-gather "
                                    "overlapped with compute.")
    p2p_overlap: Flag | None = Field(None, description="Pipeline sends and receives posted ahead and overlapped "
                                     "with compute (default: the stack's schedule).")
    dropout: Flag | None = Field(None, description="Hidden and attention dropout (default: the stack's recipes).")
    compile: Flag | None = Field(None, description="torch.compile fuses element-wise ops (fsdp2, torchtitan; default false).")
    moe_dispatcher: Literal[MOE_DISPATCHERS] | None = Field(  # type: ignore[valid-type]
        None, description="MoE token dispatch: nccl (NCCL all-to-all, the default), deepep (DeepEP: each "
        "token crosses the network once per node it is routed to, then NVLink) or hybridep (HybridEP: as "
        "DeepEP, with fewer host launches than NCCL's all-to-all).", examples=["deepep"])
    in_network_reduction: Flag | None = Field(
        None, description="NCCL reduces in the InfiniBand switches (SHARP through NCCL CollNet: the NCCL-RDMA-SHARP "
        "plugin and NCCL_COLLNET_ENABLE=1) where the fabric can; default false, NCCL's default.", examples=[True])
    checkpoint_saves: Literal[CHECKPOINT_SAVES] | None = Field(  # type: ignore[valid-type]
        None, description="What recompute: selective keeps for the backward: all_but_attention_core (Megatron: "
        "the attention core recomputed), every_other_matmul (torchtitan's per-op policy: every second matmul "
        "and the element-wise ops recomputed) or linear_outputs (every linear layer's output kept, the "
        "element-wise ops recomputed; LLaMA 2023 sec. 2.4); default: the stack's policy.",
        examples=["linear_outputs"])
    cuda_graphs: Literal[CUDA_GRAPHS] | None = Field(  # type: ignore[valid-type]
        None, description="Which kernel launches CUDA graphs replace: none (the default of every stack), partial "
        "(Megatron-Core with Transformer Engine: attention, MoE router and preprocess, shared experts; the routed "
        "experts stay eager) or full (every op of a layer, no device-host sync); megatron-core only.",
        examples=["partial"])


class _Parallelism(_Strict):
    """How a workload is split over GPUs; each field is a whole number or auto."""

    tp: PosInt | Literal["auto"] = _auto("Tensor-parallel degree (within a node)", [8])
    pp: PosInt | Literal["auto"] = _auto("Pipeline-parallel stages", [4])
    dp: PosInt | Literal["auto"] = _auto("Data-parallel replicas", [64])
    ep: PosInt | Literal["auto"] = _auto("Expert-parallel degree (MoE models)", [8])
    etp: PosInt | Literal["auto"] = _auto("Expert tensor-parallel size (MoE models; Megatron-Core "
                                          "--expert-tensor-parallel-size): below tp, the experts are folded "
                                          "over tp x dp, so ep may exceed dp; auto: tp", [1])
    cp: PosInt | Literal["auto"] = _auto("Context-parallel degree (long sequences)", [2])
    microbatch: Annotated[PosInt, _in("microbatch")] | Literal["auto"] = _auto("Sequences per micro-batch", [1])
    virtual_stages: Annotated[PosInt, _in("virtual_stages")] | Literal["auto"] = _auto("Interleaved pipeline stages per GPU", [2])
    zero: Annotated[int, Field(ge=0, le=3, strict=True)] | Literal["auto"] = _auto(
        "ZeRO stage: 0 none, 1 optimizer states, 2 and gradients, 3 and parameters sharded", [1])
    sequence_parallel: Flag | Literal["auto"] = Field("auto", description=f"Sequence parallelism with tensor "
                                                      f"parallelism; {_AUTO}.", examples=[True, "auto"])
    first_stage_layers: Annotated[PosInt, _in("first_stage_layers")] | Literal["auto"] = _auto("Layers on the first pipeline stage", [7])
    last_stage_layers: Annotated[PosInt, _in("last_stage_layers")] | Literal["auto"] = _auto("Layers on the last pipeline stage", [7])
    schedule: Literal["1f1b", "dualpipe", "auto"] = Field(
        "auto", description="Pipeline schedule: 1f1b (interleaved with virtual_stages) or dualpipe "
                            "(DeepSeek-V3's bidirectional pipeline, only where given); auto: 1f1b.",
        examples=["dualpipe"])


class _Workload(_Strict):
    """One training job: the model, the tokens to train on and by when."""

    name: Name = Field(description="The workload's name, unique in the spec.", examples=["llama3-70b"])
    model: _Model = Field(description="The model: a preset or its architecture.",
                          examples=[{"preset": "llama3-70b"}])
    tokens: Annotated[Count, _in("tokens")] = Field(description="Tokens to train on.", examples=["15T", "20B"])
    global_batch: Annotated[PosInt, _in("global_batch")] = Field(description="Sequences per optimizer step.", examples=[1024])
    precision: Literal["bf16", "fp16", "fp8"] = Field("bf16", description="Training precision of the GEMMs.")
    recompute: Literal["none", "selective", "full", "auto"] = Field(
        "selective", description="Activation recomputation: none, selective, full, or auto to search.")
    parallelism: Literal["auto"] | _Parallelism = Field(
        "auto", description="The parallelism plan, or auto to let the optimizer choose all of it.",
        examples=["auto", {"tp": 8, "pp": 4, "dp": "auto"}])
    software: _Software | None = Field(None, description="This workload's software stack, over the top-level "
                                       "software block.", examples=[{"preset": "megatron-core"}])
    deadline: Annotated[Duration, _in("deadline")] | None = Field(None, description="Train within this time.")
    checkpoint_interval: Annotated[Duration, _in("checkpoint_interval")] | None = Field(None, description="Time between checkpoints; their "
                                                 "stalls count against utilization.", examples=["2 h"])
    gpus: PosInt | None = Field(None, description="Pin this workload's GPU count.", examples=[1024])


class _Budget(_Strict):
    """Spending limits over the horizon."""

    capex: Annotated[Money, _in("budget")] | None = Field(None, description="Most to spend on purchased equipment and its installation.",
                                examples=["$60M"])
    total: Annotated[Money, _in("budget")] | None = Field(None, description="Most to spend in total: capex, opex and cloud.",
                                examples=["$90M"])


_PricingModel = Literal["on_demand", "reserved_1y", "reserved_3y", "capacity_block"]


class _Constraints(_Strict):
    """What a design must meet, and which technologies it may use."""

    min_utilization: Fraction = Field(0.0, description="Least utilization (compute time / step time) every "
                                      "workload must reach.", examples=[0.8, "80%"])
    deployments: list[Literal["on_prem", "cloud"]] = Field(
        default_factory=lambda: ["on_prem", "cloud"], min_length=1,
        description="Where the cluster may be: bought (on_prem) or rented (cloud).")
    fabrics: list[Literal[FABRICS]] = Field(  # type: ignore[valid-type]
        default_factory=lambda: ["ethernet", "roce", "infiniband"], min_length=1,
        description="Network technologies to consider.")
    topologies: list[Literal[TOPOLOGIES]] = Field(  # type: ignore[valid-type]
        default_factory=lambda: list(TOPOLOGIES), min_length=1, description="Network topologies to consider.")
    gpus: list[Name] = Field(default_factory=list, description="GPU catalog names allowed; empty: any.",
                             examples=[["h100-sxm", "b200"]])
    max_power: Annotated[Power, _in("max_power")] | None = Field(None, description="Most IT power the cluster may draw.")
    max_racks: Annotated[PosInt, _in("max_racks")] | None = Field(None, description="Most racks the cluster may fill.", examples=[40])
    max_nodes: PosInt | None = Field(None, description="Most servers or instances.", examples=[128])
    oversubscription: list[Annotated[float, Field(ge=1, le=16)]] = Field(
        default_factory=lambda: [1.0, 2.0, 3.0], min_length=1,
        description="Leaf oversubscription ratios to consider (downlinks : uplinks).", examples=[[1, 2]])
    allow_nic_downrate: Flag = Field(
        False, description="Let a server's NICs run below their native rate (a 400G NIC on a 200G or 100G "
        "switch). Off: only switches that run them at their rate are considered, unless the spec pins the "
        "switch.", examples=[True])
    pricing: _PricingModel | list[_PricingModel] = Field(
        "on_demand", description="How cloud hours are bought: on_demand, reserved_1y or reserved_3y (the whole "
        "term is paid for), capacity_block; a list lets the optimizer choose per instance.",
        examples=["on_demand", ["on_demand", "reserved_1y"]])


def _spare(what: str) -> Any:
    return Field(None, description=f"Spare {what} bought, as a share of those bought.", examples=["2%"])


class _Spares(_Strict):
    """Spare parts bought per BOM category (a server's GPUs and NICs are spared with it)."""

    server: Fraction | None = _spare("servers")
    gpu: Fraction | None = _spare("GPUs listed apart from their servers")
    nic: Fraction | None = _spare("NICs listed apart from their servers")
    switch: Fraction | None = _spare("switches")
    transceiver: Fraction | None = _spare("optics")
    cable: Fraction | None = _spare("cables")
    rack: Fraction | None = _spare("racks")
    storage: Fraction | None = _spare("file-system building blocks")


class _Facility(_Strict):
    """Overrides of the catalog's facility defaults (the keys of catalogs/facility.yaml)."""

    electricity: Annotated[EnergyPrice, _in("electricity")] | None = Field(None, description="Price of electricity.")
    pue: Annotated[float, Field(ge=1, le=3)] | None = Field(
        None, description="Power usage effectiveness: facility power / IT power.", examples=[1.3])
    rack_power: Annotated[Power, _in("rack_power")] | None = Field(None, description="Most power one rack may draw.")
    rack_units: Annotated[PosInt, _in("rack_units")] | None = Field(None, description="Usable units of one rack.", examples=[42])
    rack_price: Annotated[Money, _in("rack_price")] | None = Field(None, description="One rack with its PDUs.", examples=["$11,250"])
    installation_fraction: Fraction | None = Field(None, description="Installation and cabling, once, as a share "
                                                   "of the equipment.", examples=["5%"])
    maintenance_fraction_per_year: Fraction | None = Field(
        None, description="One flat support share of all equipment per year, instead of the catalog's "
        "per-vendor contracts.", examples=["8%"])
    space: Literal["colocation", "owned"] | None = Field(
        None, description="colocation: rent the space per kW of capacity; owned: build it, amortised over its life.")
    colocation_price: Annotated[CapacityPrice, _in("colocation_price")] | None = Field(None, description="Colocation per kW of IT capacity per month.")
    build_cost: Annotated[BuildPrice, _in("build_cost")] | None = Field(None, description="Owned space: construction per MW of IT load.")
    build_life: Annotated[Period, _in("build_life")] | None = Field(None, description="Owned space: the life the build is amortised over.",
                                        examples=["15 years"])
    training_power_fraction: Fraction | None = Field(
        None, gt=0, description="A server's draw while training at full utilization, over its rated power.",
        examples=[0.82])
    idle_power_fraction: Fraction | None = Field(None, description="A server's draw when idle, over its rated "
                                                 "power.", examples=[0.2])
    useful_life: Annotated[Period, _in("useful_life")] | None = Field(None, description="Book life of the hardware: its residual value falls "
                                         "linearly to zero over it.", examples=["5 years"])
    spares: _Spares | None = Field(None, description="Spare parts bought per BOM category, as a share of the "
                                   "parts; categories not given keep the catalog's share.",
                                   examples=[{"server": "2%", "transceiver": "3%"}])
    storage_bytes_per_token: Annotated[DataSize, _in("storage_bytes_per_token")] | None = Field(None, description="Data-set bytes per training token "
                                                     "kept on the file system.", examples=["4 B"])
    storage_checkpoints_kept: Annotated[PosInt, _in("storage_checkpoints_kept")] | None = Field(None, description="Checkpoints kept per workload.",
                                                    examples=[2])
    storage_read_per_node: Annotated[Bandwidth, _in("storage_per_node")] | None = Field(None, description="Baseline file-system read bandwidth per "
                                                    "node.", examples=["1.25 GB/s"])
    storage_write_per_node: Annotated[Bandwidth, _in("storage_per_node")] | None = Field(None, description="Baseline file-system write bandwidth per "
                                                     "node.", examples=["0.63 GB/s"])


class _Storage(_Strict):
    """The on-prem design's parallel file system, sized from the workloads unless given."""

    enabled: Flag = Field(True, description="false: the design has no file system.")
    system: Name | None = Field(None, description="A storage catalog entry; default the cheapest for the need.",
                                examples=["ddn-ai400x2t"])
    capacity: Annotated[DataSize, _in("storage_capacity")] | None = Field(None, description="Usable capacity, instead of the sized one.",
                                      examples=["2 PB"])
    write_bandwidth: Annotated[Bandwidth, _in("storage_bandwidth")] | None = Field(None, description="Write bandwidth, instead of the sized one.",
                                              examples=["400 GB/s"])
    read_bandwidth: Annotated[Bandwidth, _in("storage_bandwidth")] | None = Field(None, description="Read bandwidth, instead of the sized one.",
                                             examples=["800 GB/s"])


class _Networks(_Strict):
    """The on-prem design's networks besides the compute fabric (cloud designs have none: the provider's)."""

    storage: Flag = Field(True, description="The storage fabric between the servers and the file system "
                          "(none without a file system).")
    inband: Flag = Field(True, description="The in-band management network (Ethernet).")
    oob: Flag = Field(True, description="The out-of-band management network (1 GbE to every BMC and switch).")


class _Owned(_Strict):
    """Hardware the buyer already has: used before buying more, its purchase price sunk."""

    name: Name = Field(description="A server, switch or storage catalog entry.", examples=["dgx-h100"])
    count: Annotated[PosInt, _in("owned_count")] = Field(description="Units owned.", examples=[64])


# What a soft preference can name: the key of `prefer:` item and what it matches in a candidate system.
PREFERENCE_KEYS = ("fabric", "topology", "deployment", "server", "switch", "gpu", "vendor")


class _Preference(_Strict):
    """A soft preference: a property the buyer would pay for, and how much (it never changes a design's cost)."""

    # Exactly one property with the weight: the loader says which were named when it is not one
    # (designer.spec.load), and the schema says the same to an editor. The properties take no
    # null (the default None only means "not written"), so the two agree on `fabric: null` too.
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True, json_schema_extra={
        "oneOf": [{"required": [key]} for key in PREFERENCE_KEYS]})

    fabric: Literal[FABRICS] = Field(None, description="Prefer this network technology.")  # type: ignore[valid-type]
    topology: Literal[TOPOLOGIES] = Field(None, description="Prefer this topology.")  # type: ignore[valid-type]
    deployment: Literal["on_prem", "cloud"] = Field(None, description="Prefer owning or renting.")  # type: ignore[assignment]
    server: Name = Field(None, description="Prefer this server or cloud instance (catalog name).",
                         examples=["dgx-h100"])
    switch: Name = Field(None, description="Prefer this switch (catalog name).", examples=["nvidia-qm9700"])
    gpu: Name = Field(None, description="Prefer this GPU (catalog name).", examples=["h100-sxm"])
    vendor: Name = Field(None, description="Prefer this GPU maker, or this cloud provider.", examples=["nvidia"])
    weight: Weight = Field(description="What the preference is worth: dollars, shared among the workloads that "
                           "run on a matching system, or a percentage of the matching systems' cost.")


class _System(_Strict):
    """Parts of the system fixed in advance (estimate needs server, nodes, fabric and topology)."""

    deployment: Literal["on_prem", "cloud"] | None = Field(None, description="Pin the deployment.")
    server: Name | None = Field(None, description="Catalog name of a server or cloud instance.",
                                examples=["dgx-h100"])
    switch: Name | None = Field(None, description="Catalog name of the fabric's switch.", examples=["nvidia-qm9700"])
    nodes: PosInt | None = Field(None, description="Servers or instances.", examples=[128])
    fabric: Literal[FABRICS] | None = Field(None, description="Pin the network technology.")  # type: ignore[valid-type]
    topology: Literal[TOPOLOGIES] | None = Field(None, description="Pin the topology.")  # type: ignore[valid-type]
    oversubscription: Annotated[float, Field(ge=1, le=16)] | None = Field(
        None, description="Pin the leaf oversubscription ratio.", examples=[1])
    gpus_per_domain_used: Annotated[PosInt, Field(le=1024)] | None = Field(
        None, description="GPUs a job uses of each scale-up domain (64 of an NVL72's 72); the rest stay idle. "
        "Default: all of them, or the largest power of two below when the job's GPUs are not a multiple of the "
        "domain.", examples=[64])


class _Spec(_Strict):
    """A designer spec: what must be trained, what may be bought or rented, and the constraints."""

    version: Annotated[Literal[1], BeforeValidator(_not_bool)] = Field(description="Spec version: 1.")
    name: Name = Field(description="The spec's name, shown in designs and reports.",
                       examples=["llama3-70b-pretrain"])
    objective: Literal["min_total_cost", "min_time", "min_cost_per_token"] = Field(
        "min_total_cost", description="What the optimizer minimises.")
    horizon: Annotated[Period, _in("horizon")] = Field(3 * units.SECONDS_PER_YEAR, description="Amortisation and planning period "
                              "(default 3 years).", json_schema_extra={"default": "3 years"})
    budget: _Budget = Field(_Budget(), description="Spending limits.")
    workloads: list[_Workload] = Field(min_length=1, max_length=100, description="The training jobs.")
    constraints: _Constraints = Field(_Constraints(), description="What a design must meet.")
    facility: _Facility = Field(_Facility(), description="Electricity, PUE, racks, data-centre space and how "
                                "hardware is kept, over the catalog's.")
    storage: _Storage = Field(_Storage(), description="The on-prem parallel file system.")
    networks: _Networks | Flag = Field(_Networks(), description="The on-prem design's storage, in-band and "
                                       "out-of-band networks, each on unless turned off (false: none of them).",
                                       examples=[{"storage": True, "inband": True, "oob": False}, False])
    licences: list[Name] = Field(default_factory=list, max_length=20, description="Licence catalog entries "
                                 "charged per GPU-year.", examples=[["nvidia-ai-enterprise"]])
    inventory: list[_Owned] = Field(default_factory=list, max_length=100, description="Hardware already owned "
                                    "(sunk cost, used before buying more).",
                                    examples=[[{"name": "dgx-h100", "count": 64}]])
    price_book: Name | None = Field(None, description="A price_book catalog entry: the buyer's per-vendor "
                                    "discounts off catalog prices and the currency amounts are shown in.",
                                    examples=["acme-2026-11"])
    catalogs: list[Name] = Field(default_factory=list, max_length=20,
                                 description="User catalog files merged over the built-in ones, in order "
                                 "(paths relative to the spec).", examples=[["./my-prices.yaml"]])
    system: _System = Field(_System(), description="Parts of the system pinned in advance.")
    software: _Software | None = Field(None, description="The training software stack of every workload.",
                                       examples=[{"preset": "megatron-core"}])
    prefer: list[_Preference] = Field(default_factory=list, max_length=20, description="Soft preferences: "
                                      "each enters the optimizer's objective as a credit, reported apart from the "
                                      "cost.", examples=[[{"fabric": "infiniband", "weight": "5%"}]])


# The root model under a public name (the class keeps its name: it titles the JSON Schema's $defs).
SpecInput = _Spec

SoftwareInput = _Software

# A typed alias kept for callers that need to name the union of parallelism inputs.
ParallelismInput = Union[Literal["auto"], _Parallelism]
