"""The spec: what must be trained, what may be bought or rented, and the constraints.

``load_spec(path)`` reads YAML, validates it with pydantic (strict keys, units parsed once through
:mod:`designer.units`) and returns frozen dataclasses in SI units. Every problem is raised as a
:class:`~designer.errors.SpecError` located ``FILE:LINE:COL`` at the offending YAML node, with a
"did you mean" for misspelt keys and names. Pydantic stays inside this module.
"""

from __future__ import annotations

__all__ = [
    "Objective", "Deployment", "Pricing",
    "MoESpec", "ModelSpec", "ParallelismSpec", "WorkloadSpec", "Budget", "Constraints",
    "FacilitySpec", "SystemPin", "Spec",
    "load_spec", "parse_spec", "spec_json_schema", "spec_digest",
]

import difflib
import hashlib
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import pydantic
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from designer import presets, spec_messages, units
from designer.errors import InputError, Location, SpecError
from designer.yamlio import YamlDoc, load_yaml_text, read_text

MAX_NODES = 100_000  # 800k GPUs: beyond any cluster built; larger asks are refused, not attempted
MAX_GPUS_PER_WORKLOAD = 1_000_000


class Objective(str, Enum):
    MIN_TOTAL_COST = "min_total_cost"
    MIN_TIME = "min_time"
    MIN_COST_PER_TOKEN = "min_cost_per_token"


class Deployment(str, Enum):
    ON_PREM = "on_prem"
    CLOUD = "cloud"


class Pricing(str, Enum):
    """How cloud hours are paid for."""

    ON_DEMAND = "on_demand"
    RESERVED_1Y = "reserved_1y"
    RESERVED_3Y = "reserved_3y"


# ---------------------------------------------------------------- frozen results (the core sees these)


@dataclass(frozen=True, slots=True)
class MoESpec:
    experts: int
    top_k: int
    shared_experts: int = 0
    expert_ffn: int | None = None  # FFN width of one expert; defaults to the model's ffn
    dense_layers: int = 0  # leading layers with a dense FFN instead of experts


@dataclass(frozen=True, slots=True)
class ModelSpec:
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

    @property
    def is_auto(self) -> bool:
        return all(getattr(self, f) is None for f in self.__slots__)


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
    pricing: Pricing


@dataclass(frozen=True, slots=True)
class FacilitySpec:
    """Overrides of the catalog's facility defaults; ``None`` keeps the default."""

    electricity_usd_per_j: float | None
    pue: float | None
    rack_power_w: float | None


@dataclass(frozen=True, slots=True)
class SystemPin:
    deployment: Deployment | None
    server: str | None
    switch: str | None
    nodes: int | None
    fabric: str | None
    topology: str | None
    oversubscription: float | None

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

    def locate(self, path: tuple[Any, ...]) -> Location:
        """``FILE:LINE:COL`` of a key path in the spec file (for errors found after loading)."""
        if self.doc is None:
            return Location(self.file)
        return self.doc.locate(path)


# ---------------------------------------------------------------- pydantic input models (private)

FABRICS = ("ethernet", "roce", "infiniband", "efa", "gpudirect-tcpx", "gpudirect-tcpxo")
TOPOLOGIES = ("single_switch", "fat_tree", "rail_optimized", "rail_only")


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
        except units.UnitError as exc:
            raise ValueError(str(exc)) from None
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


class _Model(_Strict):
    preset: Name | None = Field(None, description="one of: " + ", ".join(presets.preset_names()))
    name: Name | None = None
    params: Count | None = None
    layers: PosInt | None = None
    hidden: PosInt | None = None
    heads: PosInt | None = None
    kv_heads: PosInt | None = None
    ffn: PosInt | None = None
    seq_len: PosInt | None = None
    vocab: PosInt | None = None
    gated_mlp: bool | None = None
    moe: _MoE | None = None


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


class _Workload(_Strict):
    name: Name
    model: _Model
    tokens: Count = Field(gt=0)
    global_batch: PosInt
    precision: Literal["bf16", "fp16", "fp8"] = "bf16"
    recompute: Literal["none", "selective", "full"] = "selective"
    parallelism: Literal["auto"] | _Parallelism = "auto"
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


# ---------------------------------------------------------------- building the frozen spec


def _build_model(m: _Model, doc: YamlDoc, path: tuple[Any, ...]) -> ModelSpec:
    base: dict[str, Any] = {}
    name = m.name
    if m.preset is not None:
        if m.preset not in presets.PRESETS:
            close = difflib.get_close_matches(m.preset, presets.preset_names(), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else f"; known presets: {', '.join(presets.preset_names())}"
            raise SpecError(f"unknown model preset '{m.preset}'{hint}", doc.locate(path + ("preset",)))
        base = dict(presets.PRESETS[m.preset])
        name = name or m.preset
    given = m.model_dump(exclude_none=True, exclude={"preset", "name"})
    merged = {**base, **given}
    if "moe" in given:
        merged["moe"] = given["moe"]
    required = ("layers", "hidden", "heads", "ffn", "seq_len", "vocab")
    missing = [k for k in required if k not in merged]
    if missing:
        raise SpecError(f"model needs a preset or the architecture: missing {', '.join(missing)}",
                        doc.locate(path))
    heads = merged["heads"]
    kv_heads = merged.get("kv_heads", heads)
    if merged["hidden"] % heads:
        raise SpecError(f"hidden ({merged['hidden']}) must be a multiple of heads ({heads})", doc.locate(path + ("hidden",)))
    if kv_heads > heads or heads % kv_heads:
        raise SpecError(f"kv_heads ({kv_heads}) must divide heads ({heads})", doc.locate(path + ("kv_heads",)))
    moe = None
    if merged.get("moe"):
        mo = merged["moe"]
        mo = mo if isinstance(mo, dict) else dict(mo)
        moe = MoESpec(experts=mo["experts"], top_k=mo["top_k"], shared_experts=mo.get("shared_experts", 0),
                      expert_ffn=mo.get("expert_ffn"), dense_layers=mo.get("dense_layers", 0))
        if moe.top_k > moe.experts:
            raise SpecError(f"moe.top_k ({moe.top_k}) exceeds moe.experts ({moe.experts})",
                            doc.locate(path + ("moe", "top_k")))
        if moe.dense_layers >= merged["layers"]:
            raise SpecError("moe.dense_layers must be fewer than layers", doc.locate(path + ("moe", "dense_layers")))
    return ModelSpec(
        name=name or "custom", layers=merged["layers"], hidden=merged["hidden"], heads=heads,
        kv_heads=kv_heads, ffn=merged["ffn"], seq_len=merged["seq_len"], vocab=merged["vocab"],
        gated_mlp=bool(merged.get("gated_mlp", False)), params=merged.get("params"), moe=moe,
        source=str(base.get("source", "given in the spec")),
    )


def _build_parallelism(p: Any) -> ParallelismSpec:
    if p == "auto":
        return ParallelismSpec()
    values = {k: (None if v == "auto" else v) for k, v in p.model_dump().items()}
    return ParallelismSpec(**values)


def _build(raw: _Spec, doc: YamlDoc, base_dir: Path, digest: str) -> Spec:
    names: set[str] = set()
    workloads = []
    for i, w in enumerate(raw.workloads):
        path = ("workloads", i)
        if w.name in names:
            raise SpecError(f"duplicate workload name '{w.name}'", doc.locate(path + ("name",)))
        names.add(w.name)
        par = _build_parallelism(w.parallelism)
        for key in ("tp", "pp", "dp", "ep", "cp"):
            value = getattr(par, key)
            if value is not None and value > MAX_GPUS_PER_WORKLOAD:
                raise SpecError(f"{key}={value:,} is beyond any buildable cluster (limit {MAX_GPUS_PER_WORKLOAD:,} GPUs)",
                                doc.locate(path + ("parallelism", key)))
        if w.gpus is not None and w.gpus > MAX_GPUS_PER_WORKLOAD:
            raise SpecError(f"gpus={w.gpus:,} is beyond any buildable cluster (limit {MAX_GPUS_PER_WORKLOAD:,})",
                            doc.locate(path + ("gpus",)))
        model = _build_model(w.model, doc, path + ("model",))
        if w.tokens < model.seq_len:
            raise SpecError(f"tokens ({w.tokens:g}) is less than one sequence ({model.seq_len})", doc.locate(path + ("tokens",)))
        step_tokens = w.global_batch * model.seq_len
        if w.tokens < step_tokens:
            # Fewer tokens than one optimizer step: the time to train would be a fraction of a step.
            raise SpecError(f"tokens ({w.tokens:,.0f}) is less than one step: global_batch {w.global_batch:,} x "
                            f"{model.seq_len:,} tokens per sequence = {step_tokens:,}; lower global_batch or "
                            f"train more tokens", doc.locate(path + ("tokens",)))
        workloads.append(WorkloadSpec(
            name=w.name, model=model, tokens=w.tokens, global_batch=w.global_batch, precision=w.precision,
            recompute=w.recompute, parallelism=par, deadline_s=w.deadline,
            checkpoint_interval_s=w.checkpoint_interval, gpus=w.gpus,
        ))
    c = raw.constraints
    if c.max_nodes is not None and c.max_nodes > MAX_NODES:
        raise SpecError(f"max_nodes={c.max_nodes:,} is beyond any buildable cluster (limit {MAX_NODES:,})",
                        doc.locate(("constraints", "max_nodes")))
    s = raw.system
    if s.nodes is not None and s.nodes > MAX_NODES:
        raise SpecError(f"nodes={s.nodes:,} is beyond any buildable cluster (limit {MAX_NODES:,})",
                        doc.locate(("system", "nodes")))
    constraints = Constraints(
        min_utilization=c.min_utilization, deployments=tuple(Deployment(d) for d in dict.fromkeys(c.deployments)),
        fabrics=tuple(dict.fromkeys(c.fabrics)), topologies=tuple(dict.fromkeys(c.topologies)),
        gpus=tuple(dict.fromkeys(c.gpus)), max_power_w=c.max_power, max_racks=c.max_racks, max_nodes=c.max_nodes,
        oversubscription=tuple(sorted(set(c.oversubscription))), pricing=Pricing(c.pricing),
    )
    if c.min_utilization >= 1.0:
        raise SpecError("constraints.min_utilization must be below 1 (no GPU computes 100% of the time)",
                        doc.locate(("constraints", "min_utilization")))
    catalogs = []
    for i, entry in enumerate(raw.catalogs):
        p = Path(entry)
        resolved = p if p.is_absolute() else (base_dir / p)
        try:
            found = resolved.is_file()
        except OSError:  # permission denied on a folder, a name too long: as good as missing
            found = False
        if not found:
            raise SpecError(f"catalog file '{entry}' not found (paths resolve relative to the spec's folder)",
                            doc.locate(("catalogs", i)))
        catalogs.append(resolved)
    return Spec(
        version=raw.version, name=raw.name, objective=Objective(raw.objective), horizon_s=raw.horizon,
        budget=Budget(raw.budget.capex, raw.budget.total), workloads=tuple(workloads), constraints=constraints,
        facility=FacilitySpec(raw.facility.electricity, raw.facility.pue, raw.facility.rack_power),
        catalogs=tuple(catalogs),
        system=SystemPin(
            deployment=Deployment(s.deployment) if s.deployment else None, server=s.server, switch=s.switch,
            nodes=s.nodes, fabric=s.fabric, topology=s.topology, oversubscription=s.oversubscription,
        ),
        file=doc.file, digest=digest, doc=doc,
    )


def parse_spec(doc: YamlDoc, *, base_dir: Path | None = None, digest: str = "") -> Spec:
    """Validate a parsed YAML document into a :class:`Spec`.

    Raises:
        SpecError: located at the YAML node of the first problem.
    """
    if not isinstance(doc.data, dict):
        raise SpecError(f"expected a mapping at the top level (version, name, workloads, ...), "
                        f"got {type(doc.data).__name__}", doc.locate(()))
    try:
        raw = _Spec.model_validate(doc.data)
    except pydantic.ValidationError as exc:
        err, loc = spec_messages.best_error(exc.errors(include_url=False), doc.data)
        key = err["type"] == "extra_forbidden"
        raise SpecError(spec_messages.message(err, loc, _Spec), doc.locate(loc, key=key)) from None
    return _build(raw, doc, base_dir or Path("."), digest)


def load_spec(path: str | Path) -> Spec:
    """Read, validate and normalise a spec file.

    Args:
        path: the spec's YAML file. Catalog paths inside it resolve relative to its folder.

    Returns:
        The spec as frozen dataclasses in SI units.

    Raises:
        SpecError: bad input of any kind, located ``FILE:LINE:COL``.
    """
    try:
        text = read_text(path)
        doc = load_yaml_text(text, str(path))
    except InputError as exc:  # from yamlio: the same message and place, as a spec error
        raise SpecError(exc.message, exc.location) from None
    # The digest of the bytes just read (UTF-8 decoding round-trips exactly): reading the file a
    # second time could see another version of it, or nothing at all from a pipe.
    return parse_spec(doc, base_dir=Path(path).resolve().parent, digest=spec_digest(text))


def spec_digest(text: str) -> str:
    """sha256 of a spec's text, as recorded in design files."""
    return hashlib.sha256(text.encode()).hexdigest()


def spec_json_schema() -> dict[str, Any]:
    """JSON Schema of the spec (draft 2020-12), for editor completion and validation."""
    schema = _Spec.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "designer spec"
    return schema


def _load_text(text: str, file: str = "<string>") -> Spec:
    """Parse a spec from text (tests and fuzzing)."""
    return parse_spec(load_yaml_text(text, file), digest=spec_digest(text))


# A typed alias kept for callers that need to name the union of parallelism inputs.
ParallelismInput = Union[Literal["auto"], _Parallelism]
