"""Loading a spec: YAML text -> validated input models -> the frozen :class:`~designer.spec.models.Spec`.

``load_spec(path)`` reads YAML, validates it with pydantic (:mod:`designer.spec.schema`: strict
keys, units parsed once through :mod:`designer.spec.units`) and returns frozen dataclasses in SI
units. Every problem is raised as a :class:`~designer.errors.SpecError` located ``FILE:LINE:COL``
at the offending YAML node, with a "did you mean" for misspelt keys and names
(:mod:`designer.spec.messages`).
"""

from __future__ import annotations

__all__ = ["MAX_NODES", "MAX_GPUS_PER_WORKLOAD", "DEFAULT_VOCAB", "default_ffn", "load_spec", "parse_spec",
           "spec_digest"]

import difflib
import hashlib
from pathlib import Path
from typing import Any

import pydantic

from designer.errors import InputError, SpecError
from designer.spec import messages, presets
from designer.spec.choices import Deployment, Objective, Pricing
from designer.spec.models import (
    Budget, Constraints, FacilitySpec, MLASpec, ModelSpec, MoESpec, ParallelismSpec, SoftwareSpec, Spec, SystemPin,
    WorkloadSpec,
)
from designer.spec.schema import SoftwareInput, SpecInput, _Model
from designer.spec.yamlio import YamlDoc, load_yaml_text, read_text

MAX_NODES = 100_000  # 800k GPUs: beyond any cluster built; larger asks are refused, not attempted
MAX_GPUS_PER_WORKLOAD = 1_000_000
# Megatron-LM's defaults for what a model may leave out (megatron/training/arguments.py):
# ffn_hidden_size = 4 x hidden, or int(4 x hidden x 2/3 / 64) x 64 with --swiglu; the GPT-2 BPE
# vocabulary of 50,257 padded to a multiple of 128 (make_vocab_size_divisible_by) is 50,304.
DEFAULT_VOCAB = 50_304


def default_ffn(hidden: int, gated: bool) -> int:
    """Megatron-LM's MLP width when none is given: ``4 h``, or ``int(8 h / 3 / 64) x 64`` gated.

    Examples:
        >>> default_ffn(4096, False), default_ffn(4096, True)
        (16384, 10880)
    """
    return int((4 * hidden * 2 / 3) / 64) * 64 if gated else 4 * hidden


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
    for key in ("moe", "mla"):
        if key in given:
            merged[key] = given[key]
    required = ("layers", "hidden", "heads", "seq_len")
    missing = [k for k in required if k not in merged]
    if missing:
        raise SpecError(f"model needs a preset or the architecture: missing {', '.join(missing)}",
                        doc.locate(path))
    assumptions: list[str] = []
    if m.mlp is not None and m.gated_mlp is not None and (m.mlp == "gated") != m.gated_mlp:
        raise SpecError(f"mlp: {m.mlp} contradicts gated_mlp: {str(m.gated_mlp).lower()}; give one of them",
                        doc.locate(path + ("gated_mlp",)))
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
        gated_mlp=gated, params=merged.get("params"), moe=moe,
        source=str(base.get("source", "given in the spec")), mla=mla, assumptions=tuple(assumptions),
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


def _build(raw: SpecInput, doc: YamlDoc, base_dir: Path, digest: str) -> Spec:
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
            software=_build_software(raw.software, w.software),
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
        # Whether the file exists and is a catalog is for the catalog loader to say, in one
        # message for every way it can fail (designer.catalog.load): nothing here may tell
        # whether a path exists.
        p = Path(entry)
        catalogs.append(p if p.is_absolute() else (base_dir / p))
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
    if not {"version", "name", "workloads"} & {k for k in doc.data if isinstance(k, str)}:
        # Not recognisably a spec (another file named by mistake): nothing of it is quoted.
        raise SpecError("not a spec: a spec is a YAML mapping with version, name and workloads "
                        "(`designer schema` describes it)", doc.locate(()))
    try:
        raw = SpecInput.model_validate(doc.data)
    except pydantic.ValidationError as exc:
        err, loc = messages.best_error(exc.errors(include_url=False), doc.data)
        key = err["type"] == "extra_forbidden"
        raise SpecError(messages.message(err, loc, SpecInput), doc.locate(loc, key=key)) from None
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


def _load_text(text: str, file: str = "<string>") -> Spec:
    """Parse a spec from text (tests and fuzzing)."""
    return parse_spec(load_yaml_text(text, file), digest=spec_digest(text))
