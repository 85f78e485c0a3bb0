"""Loading a spec together with the catalogs it names, and checking the names it uses.

A spec can only be validated against a catalog: ``system.server: dgx-h100`` is a name that must
exist. This module does both loads and the cross-checks, locating every problem in the spec file.
"""

from __future__ import annotations

__all__ = ["load_inputs", "check_inputs", "check_references", "check_software", "spec_warnings",
           "spec_warning_text", "PARAMS_TOLERANCE"]

import difflib
from dataclasses import replace
from pathlib import Path
from typing import Any

from designer.catalog import domain
from designer.catalog.load import load_catalog
from designer.catalog.types import Catalog
from designer.errors import Diagnostic, InputError, PerfError, SpecError
from designer.spec.load import load_spec, parse_spec_text
from designer.spec.models import Spec

# A published parameter count further than this from the architecture's own count is warned about:
# the architecture is then probably not the one meant (a wrong ffn, vocabulary or MLP kind).
PARAMS_TOLERANCE = 0.05

_KNOBS = ("preset", "attention", "sequence_parallel", "tp_comm_overlap", "dp_overlap", "p2p_overlap", "dropout",
          "compile", "moe_dispatcher", "in_network_reduction", "checkpoint_saves", "cuda_graphs")
_PLAN_FIELDS = ("tp", "pp", "dp", "ep", "cp", "microbatch", "virtual_stages", "zero", "sequence_parallel",
                "first_stage_layers", "last_stage_layers")


def _has(spec: Spec, path: tuple[Any, ...]) -> bool:
    node: Any = spec.doc.data if spec.doc is not None else None
    for key in path:
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and isinstance(key, int) and key < len(node):
            node = node[key]
        else:
            return False
    return True


def _software_key(spec: Spec, i: int, knob: str) -> tuple[Any, ...]:
    """Where a workload's software knob was written: its own block, the top-level one, or the workload."""
    for path in (("workloads", i, "software", knob), ("software", knob)):
        if _has(spec, path):
            return path
    for path in (("workloads", i, "software"), ("software",)):
        if _has(spec, path):
            return path
    return ("workloads", i)


def _software_problems(spec: Spec) -> list[SpecError]:
    """Every knob, recomputation or pinned parallelism a workload's software stack cannot honour
    (one problem per workload at most: the first found)."""
    from designer import perf
    from designer.planner.jobs import plan_constraints, software_for

    out: list[SpecError] = []
    for i, w in enumerate(spec.workloads):
        try:
            software = software_for(w)
        except PerfError as exc:
            text = str(exc)
            knob = next((k for k in _KNOBS if text.startswith(f"software.{k}")), "preset")
            out.append(SpecError(text, spec.locate(_software_key(spec, i, knob))))
            continue
        if w.recompute == "selective" and not software.profile.selective_recompute:
            out.append(SpecError(f"recompute: {software.preset} has no selective recomputation (only full layers)",
                                 spec.locate(("workloads", i, "recompute")), hint="use none, full or auto"))
            continue
        fixed = plan_constraints(w.parallelism)
        if fixed is None:
            continue
        for field, why in perf.software_conflicts(software, fixed):
            if field == "sequence_parallel" and fixed.tp == 1:
                continue
            path = ("workloads", i, "parallelism", field)
            if not _has(spec, path):
                path = _software_key(spec, i, "sequence_parallel" if field == "sequence_parallel" else "preset")
            out.append(SpecError(f"parallelism.{field}: {why}", spec.locate(path)))
            break
    return out


def check_software(spec: Spec) -> None:
    """Check that each workload's software stack can honour its knobs, its recomputation and its
    pinned parallelism.

    Raises:
        SpecError: located at the first knob or parallelism key the stack cannot honour;
            ``problems`` lists one per workload.
    """
    found = _software_problems(spec)
    if found:
        raise found[0].with_others(tuple(found[1:]))


def spec_warnings(spec: Spec) -> tuple[Diagnostic, ...]:
    """Located warnings about a spec that do not stop it: a published ``params`` more than
    :data:`PARAMS_TOLERANCE` away from the count its architecture gives (the FLOPs follow the
    architecture, so a mismatch usually means a wrong ffn, vocabulary or MLP kind)."""
    from designer.planner.jobs import arch_for

    out = []
    for i, w in enumerate(spec.workloads):
        m = w.model
        if m.params is None:
            continue
        try:
            derived = arch_for(m).derived_params()[0]
        except PerfError:
            continue  # the model itself is refused later, with its own message
        off = m.params / derived - 1.0
        if abs(off) > PARAMS_TOLERANCE:
            path = ("workloads", i, "model", "params")
            if not _has(spec, path):
                path = ("workloads", i, "model")
            out.append(Diagnostic("warning", f"params {m.params / 1e9:,.2f}B is {off:+.0%} off the "
                                  f"{derived / 1e9:,.2f}B its architecture gives (layers, hidden, ffn, vocab, mlp); "
                                  "the FLOPs and memory follow the architecture", spec.locate(path)))
    return tuple(out)


def _hint(name: str, names) -> str | None:
    close = difflib.get_close_matches(name, list(names), n=1, cutoff=0.5)
    return f"did you mean '{close[0]}'?" if close else None


def _reference_problems(spec: Spec, catalog: Catalog) -> list[SpecError]:
    """Every catalog name the spec uses that is unknown or does not fit where it is used."""
    out: list[SpecError] = []

    def fail(message: str, path: tuple, hint: str | None = None) -> None:
        out.append(SpecError(message, spec.locate(path), hint=hint))

    pin = spec.system
    if pin.server is not None and pin.server not in catalog.servers and pin.server not in catalog.clouds:
        names = [*catalog.servers, *catalog.clouds]
        close = _hint(pin.server, names)
        fail(f"unknown server or cloud instance '{pin.server}'", ("system", "server"),
             (f"{close} " if close else "") + "`designer catalog list --kind server` lists them")
    if pin.switch is not None and pin.switch not in catalog.switches:
        fail(f"unknown switch '{pin.switch}'", ("system", "switch"),
             _hint(pin.switch, catalog.switches) or "`designer catalog list --kind switch` lists them")
    if pin.server in catalog.clouds:
        if pin.deployment is not None and pin.deployment.value != "cloud":
            fail(f"'{pin.server}' is a cloud instance but system.deployment is {pin.deployment.value}",
                 ("system", "deployment"))
        if pin.switch is not None:
            fail(f"'{pin.server}' is a cloud instance: it comes with its provider's network, "
                 "so system.switch cannot be set", ("system", "switch"), "remove system.switch")
        network = catalog.clouds[pin.server].network.value
        if pin.fabric is not None and pin.fabric != network:
            fail(f"'{pin.server}' comes with a {network} network, not {pin.fabric}", ("system", "fabric"))
    if pin.server in catalog.servers and pin.deployment is not None and pin.deployment.value == "cloud":
        fail(f"'{pin.server}' is an on-prem server but system.deployment is cloud", ("system", "deployment"))
    box = catalog.servers.get(pin.server) or catalog.clouds.get(pin.server) if pin.server is not None else None
    used = pin.gpus_per_domain_used
    if box is not None and used is not None:
        size = domain.domain_gpus(box)
        if used > size or size != box.gpus:
            what = (f"its scale-up domain has {size} GPUs" if size == box.gpus else
                    f"its node ({box.gpus} GPUs) is not one whole scale-up domain ({size} GPUs)")
            fail(f"system.gpus_per_domain_used {used} does not fit {pin.server}: {what}",
                 ("system", "gpus_per_domain_used"),
                 f"give at most {size}, or leave it out to use every GPU" if size == box.gpus else "leave it out")
            used = None
    if box is not None and pin.nodes is not None:
        per_node = used or box.gpus
        room = pin.nodes * per_node  # a workload cannot use more GPUs than the pinned system has
        for i, w in enumerate(spec.workloads):
            if w.gpus is not None and w.gpus > room:
                raise SpecError(f"gpus={w.gpus:,} is more than the pinned system has: system.nodes {pin.nodes:,} x "
                                f"{per_node} GPUs {'used of each' if used else 'per'} {pin.server} = {room:,}",
                                spec.locate(("workloads", i, "gpus")))
    known_gpus = set(catalog.gpus)
    for i, gpu in enumerate(spec.constraints.gpus):
        if gpu not in known_gpus:
            fail(f"unknown GPU '{gpu}'", ("constraints", "gpus", i),
                 _hint(gpu, known_gpus) or "`designer catalog list --kind gpu` lists them")
    for i, name in enumerate(spec.licences):
        if name not in catalog.licences:
            fail(f"unknown licence '{name}'", ("licences", i),
                 _hint(name, catalog.licences) or "`designer catalog list --kind licence` lists them")
    if spec.storage.system is not None and spec.storage.system not in catalog.storage:
        fail(f"unknown storage system '{spec.storage.system}'", ("storage", "system"),
             _hint(spec.storage.system, catalog.storage) or "`designer catalog list --kind storage` lists them")
    if spec.price_book is not None and spec.price_book not in catalog.price_books:
        fail(f"unknown price book '{spec.price_book}'", ("price_book",),
             _hint(spec.price_book, catalog.price_books)
             or "a price book is a `kind: price_book` catalog file listed under `catalogs:`")
    from designer.optimize import preferences

    for pref in spec.prefer:
        known = preferences.known_values(pref.key, catalog)
        value = pref.value.lower() if pref.key == "vendor" else pref.value
        if known and value not in known:
            fail(f"unknown {pref.key} '{pref.value}' in prefer[{pref.index}]", ("prefer", pref.index, pref.key),
                 _hint(value, known) or f"`designer catalog list --kind {pref.key if pref.key != 'vendor' else 'gpu'}` "
                 "lists them")
    ownable = {**catalog.servers, **catalog.switches, **catalog.storage}
    for item in spec.inventory:
        if item.name not in ownable:
            fail(f"unknown server, switch or storage system '{item.name}': an inventory lists catalog entries "
                 "the buyer owns", ("inventory", item.index, "name"), _hint(item.name, ownable))
    return out


def check_references(spec: Spec, catalog: Catalog) -> None:
    """Check that every catalog name the spec uses exists and fits where it is used.

    Raises:
        SpecError: located at the spec key that names the first unknown or misplaced entry;
            ``problems`` lists all of them.
    """
    found = _reference_problems(spec, catalog)
    if found:
        raise found[0].with_others(tuple(found[1:]))


def _load_catalogs(spec: Spec) -> Catalog:
    """The built-in catalogs with the spec's own files merged over them; a file that cannot be
    used as a catalog is reported where the spec names it."""
    written = spec.doc.data.get("catalogs", []) if spec.doc is not None else []
    named_at = [(str(written[i]) if i < len(written) else str(path), spec.locate(("catalogs", i)))
                for i, path in enumerate(spec.catalogs)]
    return load_catalog(spec.catalogs, named_at=named_at)


def load_inputs(spec_path: str | Path) -> tuple[Spec, Catalog]:
    """Load a spec, the built-in catalogs and the spec's own catalog files, and cross-check them.

    Catalog paths in the spec resolve relative to the spec's folder. User catalogs override the
    built-ins in the order listed.

    The spec comes back with its warnings (:func:`spec_warnings`) in ``spec.warnings``.

    Raises:
        SpecError: the spec is invalid, names something the catalogs lack, or asks its software
            stack for something it cannot do.
        CatalogError: a catalog file is invalid (located in that file).
    """
    spec = load_spec(spec_path)
    catalog = _load_catalogs(spec)
    check_references(spec, catalog)
    check_software(spec)
    return replace(spec, warnings=spec.warnings + spec_warnings(spec)), catalog


def check_inputs(spec_path: str | Path | None = None, *, text: str | None = None, file: str = "<stdin>",
                 base_dir: Path | None = None) -> tuple[Diagnostic, ...]:
    """Every problem and warning of a spec and the catalogs it names, for ``designer validate``.

    Give ``spec_path``, or ``text`` (with the ``file`` name to locate it by and the ``base_dir``
    its catalog paths resolve against). The spec is checked whole (all its problems, in document
    order); its catalogs and the names it uses are checked when the spec itself is valid, since
    a name can only be looked up in the catalogs it lists.

    Returns:
        Errors and warnings in document order; empty when the spec is valid and clean.
    """
    try:
        spec = load_spec(spec_path) if text is None else parse_spec_text(text, file, base_dir=base_dir or Path.cwd())
    except InputError as exc:
        return tuple(p.diagnostic() for p in exc.problems)
    try:
        catalog = _load_catalogs(spec)
    except InputError as exc:  # located in the catalog file
        return tuple(p.diagnostic() for p in exc.problems) + spec.warnings
    problems = _reference_problems(spec, catalog) + _software_problems(spec)
    found = [p.diagnostic() for p in problems] + list(spec.warnings + spec_warnings(spec))
    return tuple(sorted(found, key=lambda d: (d.location.line or 0, d.location.col or 0)))


def spec_warning_text(warning: Diagnostic) -> str:
    """A spec warning as a design file records it: located by the spec's file name, not its folder
    (the same spec in two checkouts gives the same design file)."""
    loc = warning.location
    where = Path(loc.file).name + (f":{loc.line}:{loc.col or 1}" if loc.line is not None else "")
    text = warning.message if warning.hint is None else f"{warning.message}; {warning.hint}"
    return f"{where}: {text}"
