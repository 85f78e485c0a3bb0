"""Loading a spec: YAML text -> validated input models -> the frozen :class:`~designer.spec.models.Spec`.

``load_spec(path)`` reads YAML, validates it with pydantic (:mod:`designer.spec.schema`: strict
keys, units parsed once through :mod:`designer.spec.units`) and returns frozen dataclasses in SI
units. A whole file is checked: every problem becomes a :class:`~designer.errors.SpecError`
located ``FILE:LINE:COL`` at the offending YAML node, with a "did you mean" for misspelt keys and
names (:mod:`designer.spec.messages`); the first is raised with the others attached
(``SpecError.problems``). Checks that need a valid value (a model's shape, token counts) run on the
parts that passed the first ones. Warnings (accepted, but probably not what was meant) travel
with the spec (``Spec.warnings``).
"""

from __future__ import annotations

__all__ = ["MAX_NODES", "MAX_GPUS_PER_WORKLOAD", "DEFAULT_VOCAB", "default_ffn", "load_spec", "parse_spec",
           "parse_spec_text", "spec_digest"]

import difflib
import hashlib
from types import MappingProxyType
from pathlib import Path
from typing import Any

import pydantic

from designer.errors import Diagnostic, InputError, SpecError
from designer.spec import messages, presets, units
from designer.spec.choices import Deployment, Objective, Pricing
from designer.spec.models import (
    Budget, Constraints, FacilitySpec, MLASpec, ModelSpec, MoESpec, OwnedSpec, ParallelismSpec, PreferenceSpec,
    NetworksSpec, SoftwareSpec, Spec, StorageSpec, SystemPin, WorkloadSpec,
)
from designer.spec.schema import PREFERENCE_KEYS, SoftwareInput, SpecInput, _Model, _Networks, _Workload
from designer.spec.yamlio import YamlDoc, load_yaml_text, read_text

from designer.spec.bounds import MAX_GPUS_PER_WORKLOAD, MAX_NODES  # the limits live with the ranges
# Megatron-LM's defaults for what a model may leave out (megatron/training/arguments.py):
# ffn_hidden_size = 4 x hidden, or int(4 x hidden x 2/3 / 64) x 64 with --swiglu; the GPT-2 BPE
# vocabulary of 50,257 padded to a multiple of 128 (make_vocab_size_divisible_by) is 50,304.
DEFAULT_VOCAB = 50_304


def _networks(raw: _Networks | bool) -> NetworksSpec:
    """``networks:`` as a mapping of the three, or one boolean for all of them."""
    if isinstance(raw, bool):
        return NetworksSpec(storage=raw, inband=raw, oob=raw)
    return NetworksSpec(storage=raw.storage, inband=raw.inband, oob=raw.oob)


def default_ffn(hidden: int, gated: bool) -> int:
    """Megatron-LM's MLP width when none is given: ``4 h``, or ``int(8 h / 3 / 64) x 64`` gated.

    Examples:
        >>> default_ffn(4096, False), default_ffn(4096, True)
        (16384, 10880)
    """
    return int((4 * hidden * 2 / 3) / 64) * 64 if gated else 4 * hidden


class _Found:
    """The problems and warnings found while checking one spec, in the order found."""

    def __init__(self, doc: YamlDoc, *, errors: list[SpecError] | None = None):
        self.doc = doc
        self.errors: list[SpecError] = [] if errors is None else errors
        self.warnings: list[Diagnostic] = []

    def error(self, message: str, path: tuple[Any, ...], *, hint: str | None = None, key: bool = False) -> None:
        self.errors.append(SpecError(message, self.doc.locate(path, key=key), hint=hint))

    def warn(self, message: str, path: tuple[Any, ...], *, hint: str | None = None) -> None:
        self.warnings.append(Diagnostic("warning", message, self.doc.locate(path), hint))

    def raise_if_any(self) -> None:
        if self.errors:
            ordered = sorted(self.errors, key=_position)
            raise ordered[0].with_others(tuple(ordered[1:]))


def _position(exc: SpecError) -> tuple[int, int]:
    loc = exc.location
    return (loc.line or 0, loc.col or 0) if loc is not None else (0, 0)


def _build_model(m: _Model, found: _Found, path: tuple[Any, ...]) -> ModelSpec | None:
    """The model's architecture from its preset and the fields given; ``None`` after a problem."""
    base: dict[str, Any] = {}
    name = m.name
    if m.preset is not None:
        if m.preset not in presets.PRESETS:
            close = difflib.get_close_matches(m.preset, presets.preset_names(), n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"known presets: {', '.join(presets.preset_names())}"
            found.error(f"unknown model preset '{m.preset}'", path + ("preset",), hint=hint)
            return None
        base = dict(presets.PRESETS[m.preset])
        name = name or m.preset
    given = m.model_dump(exclude_none=True, exclude={"preset", "name"})
    merged = {**base, **given}
    for key in ("moe", "mla"):
        if key in given:
            merged[key] = given[key]
    required = ("layers", "hidden", "heads", "seq_len")
    missing = [k for k in required if k not in merged]
    if missing:
        found.error(f"model needs a preset or the architecture: missing {', '.join(missing)}", path,
                    hint="`designer presets` lists the presets")
        return None
    errors = len(found.errors)
    assumptions: list[str] = []
    if m.mlp is not None and m.gated_mlp is not None and (m.mlp == "gated") != m.gated_mlp:
        found.error(f"mlp: {m.mlp} contradicts gated_mlp: {str(m.gated_mlp).lower()}", path + ("gated_mlp",),
                    hint="give one of them")
    if m.mlp is not None:
        gated = m.mlp == "gated"
    elif m.gated_mlp is not None:
        gated = m.gated_mlp
    elif "gated_mlp" in base:
        gated = bool(base["gated_mlp"])
    else:
        gated = False
        assumptions.append("mlp: plain (GeLU, two matrices), not given")
    heads = merged["heads"]
    kv_heads = merged.get("kv_heads", heads)
    if "ffn" not in merged:
        merged["ffn"] = default_ffn(merged["hidden"], gated)
        rule = "8/3 x hidden rounded down to a multiple of 64" if gated else "4 x hidden"
        assumptions.append(f"ffn: {merged['ffn']:,} = {rule} (Megatron-LM's default), not given")
    if "vocab" not in merged:
        merged["vocab"] = DEFAULT_VOCAB
        assumptions.append(f"vocab: {DEFAULT_VOCAB:,} (GPT-2 BPE padded to a multiple of 128, "
                           "Megatron-LM's default), not given")
    mla = None
    if merged.get("mla"):
        a = merged["mla"] if isinstance(merged["mla"], dict) else dict(merged["mla"])
        mla = MLASpec(q_lora_rank=a["q_lora_rank"], kv_lora_rank=a["kv_lora_rank"],
                      qk_nope_head_dim=a["qk_nope_head_dim"], qk_rope_head_dim=a["qk_rope_head_dim"],
                      v_head_dim=a["v_head_dim"])
    if mla is None and merged["hidden"] % heads:
        found.error(f"hidden ({merged['hidden']}) must be a multiple of heads ({heads})", path + ("hidden",))
    if kv_heads > heads or heads % kv_heads:
        found.error(f"kv_heads ({kv_heads}) must divide heads ({heads})", path + ("kv_heads",))
    moe = None
    if merged.get("moe"):
        mo = merged["moe"]
        mo = mo if isinstance(mo, dict) else dict(mo)
        moe = MoESpec(experts=mo["experts"], top_k=mo["top_k"], shared_experts=mo.get("shared_experts", 0),
                      expert_ffn=mo.get("expert_ffn"), dense_layers=mo.get("dense_layers", 0),
                      groups=mo.get("groups", 1), group_top_k=mo.get("group_top_k"))
        if moe.top_k > moe.experts:
            found.error(f"moe.top_k ({moe.top_k}) exceeds moe.experts ({moe.experts})", path + ("moe", "top_k"))
        if moe.experts % moe.groups:
            found.error(f"moe.groups ({moe.groups}) must divide moe.experts ({moe.experts})", path + ("moe", "groups"))
        elif moe.group_top_k is not None and moe.group_top_k > moe.groups:
            found.error(f"moe.group_top_k ({moe.group_top_k}) exceeds moe.groups ({moe.groups})",
                        path + ("moe", "group_top_k"))
        elif moe.group_top_k is not None and moe.top_k > moe.group_top_k * (moe.experts // moe.groups):
            found.error(f"moe.top_k ({moe.top_k}) exceeds the experts of moe.group_top_k ({moe.group_top_k}) groups",
                        path + ("moe", "top_k"))
        if moe.dense_layers >= merged["layers"]:
            found.error("moe.dense_layers must be fewer than layers", path + ("moe", "dense_layers"))
    if len(found.errors) > errors:
        return None
    return ModelSpec(
        name=name or "custom", layers=merged["layers"], hidden=merged["hidden"], heads=heads,
        kv_heads=kv_heads, ffn=merged["ffn"], seq_len=merged["seq_len"], vocab=merged["vocab"],
        gated_mlp=gated, params=merged.get("params"), moe=moe,
        source=str(base.get("source", "given in the spec")), mla=mla, assumptions=tuple(assumptions),
        mtp_layers=int(merged.get("mtp_layers") or 0),
    )


def _build_software(top: SoftwareInput | None, own: SoftwareInput | None) -> SoftwareSpec:
    """A workload's stack: its own ``software:`` fields over the top-level ones."""
    values: dict[str, Any] = {}
    for block in (top, own):
        if block is not None:
            values.update(block.model_dump(exclude_none=True))
    if values.get("sequence_parallel") == "auto":
        values["sequence_parallel"] = None
    return SoftwareSpec(**values)


def _build_parallelism(p: Any) -> ParallelismSpec:
    if p == "auto":
        return ParallelismSpec()
    values = {k: (None if v == "auto" else v) for k, v in p.model_dump().items()}
    return ParallelismSpec(**values)


def _beyond(found: _Found, key: str, value: int | None, limit: int, path: tuple[Any, ...], what: str = "") -> None:
    if value is not None and value > limit:
        found.error(f"{key}={value:,} is beyond any buildable cluster (limit {limit:,}{what})", path)


def _warn_repeats(found: _Found, values: list[Any], path: tuple[Any, ...]) -> None:
    """A value listed twice is used once: say so, at the second mention."""
    seen: set[Any] = set()
    for i, value in enumerate(values):
        if value in seen:
            found.warn(f"{_dotted(path)} lists {value!r} twice; it counts once", path + (i,), hint="remove the repeat")
        seen.add(value)


def _dotted(path: tuple[Any, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p)) for i, p in enumerate(path))


def _workload(w: Any, i: int, found: _Found, horizon_s: float, software: SoftwareInput | None) -> WorkloadSpec | None:
    path = ("workloads", i)
    par = _build_parallelism(w.parallelism)
    for key in ("tp", "pp", "dp", "ep", "cp", "etp"):
        _beyond(found, key, getattr(par, key), MAX_GPUS_PER_WORKLOAD, path + ("parallelism", key), " GPUs")
    _beyond(found, "gpus", w.gpus, MAX_GPUS_PER_WORKLOAD, path + ("gpus",))
    model = _build_model(w.model, found, path + ("model",))
    if model is None:
        return None
    if w.tokens < model.seq_len:
        found.error(f"tokens ({w.tokens:g}) is less than one sequence ({model.seq_len})", path + ("tokens",))
        return None
    step_tokens = w.global_batch * model.seq_len
    if w.tokens < step_tokens:
        # Fewer tokens than one optimizer step: the time to train would be a fraction of a step.
        found.error(f"tokens ({w.tokens:,.0f}) is less than one step: global_batch {w.global_batch:,} x "
                    f"{model.seq_len:,} tokens per sequence = {step_tokens:,}", path + ("tokens",),
                    hint="lower global_batch or train more tokens")
        return None
    if w.deadline is not None and w.deadline > horizon_s:
        found.warn(f"the deadline ({w.deadline / units.SECONDS_PER_DAY:,.0f} days) is longer than the horizon "
                   f"({horizon_s / units.SECONDS_PER_DAY:,.0f} days), over which the cluster is paid for",
                   path + ("deadline",), hint="lengthen the horizon or shorten the deadline")
    if w.checkpoint_interval is not None and w.deadline is not None and w.checkpoint_interval >= w.deadline:
        found.warn("checkpoint_interval is not shorter than the deadline: no checkpoint is taken",
                   path + ("checkpoint_interval",))
    return WorkloadSpec(
        name=w.name, model=model, tokens=w.tokens, global_batch=w.global_batch, precision=w.precision,
        recompute=w.recompute, parallelism=par, deadline_s=w.deadline,
        checkpoint_interval_s=w.checkpoint_interval, gpus=w.gpus, software=_build_software(software, w.software),
    )


def _build(raw: SpecInput, found: _Found, base_dir: Path, digest: str) -> Spec:
    names: set[str] = set()
    workloads = []
    for i, w in enumerate(raw.workloads):
        if w.name in names:
            found.error(f"duplicate workload name '{w.name}'", ("workloads", i, "name"),
                        hint="give each workload its own name")
        names.add(w.name)
        built = _workload(w, i, found, raw.horizon, raw.software)
        if built is not None:
            workloads.append(built)
    c = raw.constraints
    _beyond(found, "max_nodes", c.max_nodes, MAX_NODES, ("constraints", "max_nodes"))
    s = raw.system
    _beyond(found, "nodes", s.nodes, MAX_NODES, ("system", "nodes"))
    if c.min_utilization >= 1.0:
        found.error("constraints.min_utilization must be below 1 (no GPU computes 100% of the time)",
                    ("constraints", "min_utilization"))
    for key in ("deployments", "fabrics", "topologies", "gpus", "oversubscription"):
        _warn_repeats(found, list(getattr(c, key)), ("constraints", key))
    _warn_repeats(found, list(raw.catalogs), ("catalogs",))
    constraints = Constraints(
        min_utilization=c.min_utilization, deployments=tuple(Deployment(d) for d in dict.fromkeys(c.deployments)),
        fabrics=tuple(dict.fromkeys(c.fabrics)), topologies=tuple(dict.fromkeys(c.topologies)),
        gpus=tuple(dict.fromkeys(c.gpus)), max_power_w=c.max_power, max_racks=c.max_racks, max_nodes=c.max_nodes,
        oversubscription=tuple(sorted(set(c.oversubscription))),
        pricing=tuple(Pricing(p) for p in dict.fromkeys([c.pricing] if isinstance(c.pricing, str) else c.pricing)),
        allow_nic_downrate=c.allow_nic_downrate,
    )
    if not constraints.pricing:
        found.error("constraints.pricing needs at least one pricing model", ("constraints", "pricing"))
    inventory = _inventory(raw, found)
    prefer = _preferences(raw, found)
    catalogs = []
    for i, entry in enumerate(raw.catalogs):
        # Whether the file exists and is a catalog is for the catalog loader to say, in one
        # message for every way it can fail (designer.catalog.load): nothing here may tell
        # whether a path exists.
        p = Path(entry)
        catalogs.append(p if p.is_absolute() else (base_dir / p))
    found.raise_if_any()
    return Spec(
        version=raw.version, name=raw.name, objective=Objective(raw.objective), horizon_s=raw.horizon,
        budget=Budget(raw.budget.capex, raw.budget.total), workloads=tuple(workloads), constraints=constraints,
        facility=_facility(raw.facility),
        catalogs=tuple(catalogs),
        system=SystemPin(
            deployment=Deployment(s.deployment) if s.deployment else None, server=s.server, switch=s.switch,
            nodes=s.nodes, fabric=s.fabric, topology=s.topology, oversubscription=s.oversubscription,
            gpus_per_domain_used=s.gpus_per_domain_used,
        ),
        file=found.doc.file, digest=digest, doc=found.doc, warnings=tuple(found.warnings),
        storage=StorageSpec(enabled=raw.storage.enabled, system=raw.storage.system,
                            capacity_bytes=raw.storage.capacity, write_Bps=raw.storage.write_bandwidth,
                            read_Bps=raw.storage.read_bandwidth),
        licences=tuple(dict.fromkeys(raw.licences)), inventory=inventory, price_book=raw.price_book,
        prefer=prefer,
        networks=_networks(raw.networks),
    )


# Spec facility keys -> the Facility attribute they set (the catalog's own names, see designer.catalog.schema).
_FACILITY_ATTRS = {
    "rack_units": "rack_units", "rack_price": "rack_price_usd", "installation_fraction": "installation_fraction",
    "maintenance_fraction_per_year": "maintenance_fraction_per_year", "space": "space",
    "colocation_price": "colocation_usd_per_w_s", "build_cost": "build_usd_per_w", "build_life": "build_life_s",
    "training_power_fraction": "training_power_fraction", "idle_power_fraction": "idle_power_fraction",
    "useful_life": "useful_life_s", "spares": "spares", "storage_bytes_per_token": "storage_bytes_per_token",
    "storage_checkpoints_kept": "storage_checkpoints_kept", "storage_read_per_node": "storage_read_Bps_per_node",
    "storage_write_per_node": "storage_write_Bps_per_node",
}


def _facility(f: Any) -> FacilitySpec:
    given = f.model_dump(exclude_none=True)
    overrides = {attr: given[key] for key, attr in _FACILITY_ATTRS.items() if key in given}
    if "spares" in overrides:
        overrides["spares"] = MappingProxyType(dict(sorted(overrides["spares"].items())))
    return FacilitySpec(f.electricity, f.pue, f.rack_power, MappingProxyType(overrides))


def _inventory(raw: SpecInput, found: _Found) -> tuple[OwnedSpec, ...]:
    seen: dict[str, int] = {}
    out = []
    for i, item in enumerate(raw.inventory):
        if item.name in seen:
            found.error(f"'{item.name}' is listed twice in inventory (first at item {seen[item.name] + 1})",
                        ("inventory", i, "name"), hint="give one count")
            continue
        seen[item.name] = i
        out.append(OwnedSpec(item.name, item.count, i))
    return tuple(out)


def _preferences(raw: SpecInput, found: _Found) -> tuple[PreferenceSpec, ...]:
    """The ``prefer:`` items: each names exactly one property; the percentages stay under 100% in all."""
    out = []
    for i, item in enumerate(raw.prefer):
        named = [k for k in PREFERENCE_KEYS if getattr(item, k) is not None]
        if len(named) != 1:
            found.error(f"prefer[{i}] names {'no property' if not named else ' and '.join(named)}; "
                        "a preference names exactly one", ("prefer", i),
                        hint=f"one of {', '.join(PREFERENCE_KEYS)}, with a weight")
            continue
        kind, amount = item.weight
        out.append(PreferenceSpec(named[0], str(getattr(item, named[0])), usd=amount if kind == "usd" else 0.0,
                                  share=amount if kind == "share" else 0.0, index=i))
    shares = sum(p.share for p in out)
    if shares >= 1:
        found.error(f"the preferences' percentages add up to {shares:.0%}; they must stay below 100% in all",
                    ("prefer",), hint="a preference is a credit on the cost, never more than the cost itself")
    return tuple(out)


def _check_valid_workloads(data: dict[str, Any], found: _Found) -> None:
    """When the spec as a whole is refused, still run the later checks (model shape, tokens per
    step) on each workload that is valid by itself, so that one pass reports them too."""
    listed = data.get("workloads")
    if not isinstance(listed, list):
        return
    for i, item in enumerate(listed):
        try:
            w = _Workload.model_validate(item)
        except pydantic.ValidationError:
            continue
        _workload(w, i, _Found(found.doc, errors=found.errors), float("inf"), None)


def parse_spec(doc: YamlDoc, *, base_dir: Path | None = None, digest: str = "") -> Spec:
    """Validate a parsed YAML document into a :class:`Spec`, checking the whole document.

    Raises:
        SpecError: located at the YAML node of the first problem in the file; ``problems`` lists
            every problem found, in document order.
    """
    if not isinstance(doc.data, dict):
        shown = {type(None): "nothing", list: "a list", str: "text"}.get(type(doc.data), type(doc.data).__name__)
        raise SpecError(f"expected a mapping at the top level (version, name, workloads, ...), got {shown}",
                        doc.locate(()))
    if not {"version", "name", "workloads"} & {k for k in doc.data if isinstance(k, str)}:
        # Not recognisably a spec (another file named by mistake): nothing of it is quoted.
        raise SpecError("not a spec: a spec is a YAML mapping with version, name and workloads "
                        "(`designer schema` describes it)", doc.locate(()))
    found = _Found(doc)
    try:
        raw = SpecInput.model_validate(doc.data)
    except pydantic.ValidationError as exc:
        for p in messages.problems(exc.errors(include_url=False), doc.data, SpecInput):
            found.error(p.message, p.loc, hint=p.hint, key=p.key)
        _check_valid_workloads(doc.data, found)
        found.raise_if_any()
        raise  # pragma: no cover - a validation error always yields a problem
    return _build(raw, found, base_dir or Path("."), digest)


def parse_spec_text(text: str, file: str, *, base_dir: Path) -> Spec:
    """Validate a spec given as text (``designer validate -`` reads one from standard input).

    Args:
        text: the spec's YAML.
        file: the name used in locations (``<stdin>``).
        base_dir: the folder catalog paths resolve against.

    Raises:
        SpecError: as :func:`parse_spec`, or malformed YAML.
    """
    try:
        doc = load_yaml_text(text, file)
    except InputError as exc:
        raise SpecError(exc.problem, exc.location, hint=exc.hint) from None
    return parse_spec(doc, base_dir=base_dir, digest=spec_digest(text))


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
        raise SpecError(exc.problem, exc.location, hint=exc.hint) from None
    # The digest of the bytes just read (UTF-8 decoding round-trips exactly): reading the file a
    # second time could see another version of it, or nothing at all from a pipe.
    return parse_spec(doc, base_dir=Path(path).resolve().parent, digest=spec_digest(text))


def spec_digest(text: str) -> str:
    """sha256 of a spec's text, as recorded in design files."""
    return hashlib.sha256(text.encode()).hexdigest()


def _load_text(text: str, file: str = "<string>") -> Spec:
    """Parse a spec from text (tests and fuzzing)."""
    return parse_spec(load_yaml_text(text, file), digest=spec_digest(text))
