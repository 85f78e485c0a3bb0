"""The spec's input models (pydantic, strict keys, units parsed once) and its JSON Schema.

Pydantic stays inside :mod:`designer.spec`: these models check a spec's YAML data, and
:mod:`designer.spec.load` turns them into the frozen dataclasses of :mod:`designer.spec.models`.
``SpecInput`` is the root model; the others are private to the package.
"""

from __future__ import annotations

__all__ = ["SpecInput", "ParallelismInput", "SoftwareInput", "spec_json_schema"]

from typing import Annotated, Any, Literal, Union

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from designer.spec import presets, units
from designer.spec.choices import ATTENTION_KERNELS, FABRICS, SOFTWARE_PRESETS, TOPOLOGIES


def _unit(parser):
    def convert(value: Any) -> float:
        try:
            return parser(value)
        except units.UnitError as exc:
            raise ValueError(str(exc)) from None
    return BeforeValidator(convert)


def _int_count(value: Any) -> Any:
    if isinstance(value, str):
        try:
            number = units.parse_count(value)
        except units.UnitError:
            raise ValueError(f"cannot read {value.strip()[:60]!r} as a whole number; write it like 8 or 1K") from None
        if number != int(number):
            raise ValueError(f"{value!r} is not a whole number")
        return int(number)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


Money = Annotated[float, _unit(units.parse_money)]
Duration = Annotated[float, _unit(units.parse_duration)]
Power = Annotated[float, _unit(units.parse_power)]
EnergyPrice = Annotated[float, _unit(units.parse_energy_price)]
Count = Annotated[float, _unit(units.parse_count)]
Fraction = Annotated[float, _unit(units.parse_fraction)]
PosInt = Annotated[int, BeforeValidator(_int_count), Field(ge=1, strict=True)]
NonNegInt = Annotated[int, BeforeValidator(_int_count), Field(ge=0, strict=True)]


def _one_line(value: str) -> str:
    # Names end up in tables, design files and one-line error messages: no line breaks or controls.
    if any(ord(ch) < 32 or 127 <= ord(ch) < 160 for ch in value):
        raise ValueError("must be one line of text without control characters")
    return value


Name = Annotated[str, Field(min_length=1, max_length=200, strict=True), AfterValidator(_one_line)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


class _MoE(_Strict):
    experts: PosInt
    top_k: PosInt
    shared_experts: NonNegInt = 0
    expert_ffn: PosInt | None = None
    dense_layers: NonNegInt = 0


class _MLA(_Strict):
    q_lora_rank: NonNegInt = Field(description="query latent rank (0: queries projected directly)")
    kv_lora_rank: PosInt
    qk_nope_head_dim: PosInt
    qk_rope_head_dim: PosInt
    v_head_dim: PosInt


class _Model(_Strict):
    preset: Name | None = Field(None, description="one of: " + ", ".join(presets.preset_names()))
    name: Name | None = None
    params: Count | None = Field(None, description="published total; checked against the architecture")
    layers: PosInt | None = None
    hidden: PosInt | None = None
    heads: PosInt | None = None
    kv_heads: PosInt | None = None
    ffn: PosInt | None = Field(None, description="MLP width; default Megatron-LM's: 4 x hidden, "
                                                 "8/3 x hidden rounded down to 64 with a gated MLP")
    seq_len: PosInt | None = None
    vocab: PosInt | None = Field(None, description="default 50,304 (GPT-2 BPE padded as Megatron-LM pads it)")
    mlp: Literal["gated", "plain"] | None = Field(None, description="gated (SwiGLU, 3 matrices) or plain (GeLU, 2)")
    gated_mlp: bool | None = Field(None, description="older spelling of mlp: gated")
    moe: _MoE | None = None
    mla: _MLA | None = Field(None, description="multi-head latent attention (DeepSeek-V2/V3)")


class _Software(_Strict):
    preset: Literal[SOFTWARE_PRESETS] | None = Field(  # type: ignore[valid-type]
        None, description="training stack: " + " | ".join(SOFTWARE_PRESETS) + " (default megatron-core)")
    attention: Literal[ATTENTION_KERNELS] | None = Field(  # type: ignore[valid-type]
        None, description="flash (fused) or unfused (softmax materialised)")
    sequence_parallel: bool | Literal["auto"] | None = Field(
        None, description="auto | true | false; false: the plan search never uses it")
    tp_comm_overlap: bool | None = Field(None, description="TP collectives overlapped with GEMMs")
    dp_overlap: bool | None = Field(None, description="gradient reduce-scatter / parameter all-gather overlapped")
    dropout: bool | None = Field(None, description="hidden and attention dropout (default: the stack's recipes)")


class _Parallelism(_Strict):
    tp: PosInt | Literal["auto"] = "auto"
    pp: PosInt | Literal["auto"] = "auto"
    dp: PosInt | Literal["auto"] = "auto"
    ep: PosInt | Literal["auto"] = "auto"
    cp: PosInt | Literal["auto"] = "auto"
    microbatch: PosInt | Literal["auto"] = "auto"
    virtual_stages: PosInt | Literal["auto"] = "auto"
    zero: Annotated[int, Field(ge=0, le=3, strict=True)] | Literal["auto"] = "auto"
    sequence_parallel: bool | Literal["auto"] = "auto"
    first_stage_layers: PosInt | Literal["auto"] = "auto"
    last_stage_layers: PosInt | Literal["auto"] = "auto"


class _Workload(_Strict):
    name: Name
    model: _Model
    tokens: Count = Field(gt=0)
    global_batch: PosInt
    precision: Literal["bf16", "fp16", "fp8"] = "bf16"
    recompute: Literal["none", "selective", "full", "auto"] = "selective"
    parallelism: Literal["auto"] | _Parallelism = "auto"
    software: _Software | None = None
    deadline: Duration | None = Field(None, gt=0)
    checkpoint_interval: Duration | None = Field(None, gt=0)
    gpus: PosInt | None = None


class _Budget(_Strict):
    capex: Money | None = None
    total: Money | None = None


class _Constraints(_Strict):
    min_utilization: Fraction = 0.0
    deployments: list[Literal["on_prem", "cloud"]] = Field(default_factory=lambda: ["on_prem", "cloud"], min_length=1)
    fabrics: list[Literal[FABRICS]] = Field(default_factory=lambda: ["ethernet", "roce", "infiniband"], min_length=1)  # type: ignore[valid-type]
    topologies: list[Literal[TOPOLOGIES]] = Field(default_factory=lambda: list(TOPOLOGIES), min_length=1)  # type: ignore[valid-type]
    gpus: list[Name] = Field(default_factory=list)
    max_power: Power | None = Field(None, gt=0)
    max_racks: PosInt | None = None
    max_nodes: PosInt | None = None
    oversubscription: list[Annotated[float, Field(ge=1, le=16)]] = Field(default_factory=lambda: [1.0, 2.0, 3.0], min_length=1)
    pricing: Literal["on_demand", "reserved_1y", "reserved_3y"] = "on_demand"


class _Facility(_Strict):
    electricity: EnergyPrice | None = None
    pue: Annotated[float, Field(ge=1, le=3)] | None = None
    rack_power: Power | None = Field(None, gt=0)


class _System(_Strict):
    deployment: Literal["on_prem", "cloud"] | None = None
    server: Name | None = None
    switch: Name | None = None
    nodes: PosInt | None = None
    fabric: Literal[FABRICS] | None = None  # type: ignore[valid-type]
    topology: Literal[TOPOLOGIES] | None = None  # type: ignore[valid-type]
    oversubscription: Annotated[float, Field(ge=1, le=16)] | None = None


class _Spec(_Strict):
    version: Literal[1]
    name: Name
    objective: Literal["min_total_cost", "min_time", "min_cost_per_token"] = "min_total_cost"
    horizon: Duration = Field(3 * units.SECONDS_PER_YEAR, gt=0)
    budget: _Budget = _Budget()
    workloads: list[_Workload] = Field(min_length=1, max_length=100)
    constraints: _Constraints = _Constraints()
    facility: _Facility = _Facility()
    catalogs: list[Name] = Field(default_factory=list, max_length=20)
    system: _System = _System()
    software: _Software | None = None


# The root model under a public name (the class keeps its name: it titles the JSON Schema's $defs).
SpecInput = _Spec

SoftwareInput = _Software

# A typed alias kept for callers that need to name the union of parallelism inputs.
ParallelismInput = Union[Literal["auto"], _Parallelism]


def spec_json_schema() -> dict[str, Any]:
    """JSON Schema of the spec (draft 2020-12), for editor completion and validation."""
    schema = _Spec.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "designer spec"
    return schema
