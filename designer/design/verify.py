"""A design file read back is checked, not trusted: enumerations, ranges, totals re-added, its digest.

Two kinds of check. **Values** (an unknown topology, a utilization of 7.5, ``nodes: 0``, a money
figure beyond $10^15) would make a later command fail or print nonsense; they are always errors.
**Consistency** (a BOM line whose total is not quantity x price, a cost that no longer adds up, a
category of the BOM that differs from the capex it is said to make, a content digest that does not
match) says the file was edited or damaged after ``designer solve`` wrote it; each is a located
error, or a warning when the user passes ``--trust``.

The content digest (``design_digest``) is the sha256 of the design file's own canonical text without
that line; it is recomputed from the design as read, so reformatting a file keeps it valid and
changing any value (``spec_digest`` included) does not. It detects edits and damage, not forgery:
anyone can recompute it.
"""

from __future__ import annotations

__all__ = ["DIGEST_KEY", "MAX_MONEY_USD", "MAX_MAGNITUDE", "SIGNED", "content_digest", "check_values",
           "check_consistency"]

import hashlib
import re
from collections import defaultdict
from typing import Any, Callable, Iterator

from designer.design import bom, sections
from designer.design.model import Design
from designer.spec import choices
from designer.spec.bounds import MAX_GPUS_PER_WORKLOAD, MAX_NODES

DIGEST_KEY = "design_digest"
DIGEST_TEXT = re.compile(r"[0-9a-f]{64}")
# Money in a design file: ten trillion dollars is the largest budget a spec may give
# (designer.spec.bounds); a hundred times that leaves room for an alternative far over budget.
MAX_MONEY_USD = 1e15
# Any other number: far beyond every figure a design holds (tokens per second of 10^6 GPUs ~ 1e11).
MAX_MAGNITUDE = 1e18
# Fields that may be negative: differences and slacks.
SIGNED = frozenset({"delta_usd", "delta_by_line", "slack"})

Fail = Callable[[tuple[Any, ...], str], Exception]

_FRACTIONS = ("utilization", "mfu", "installation_fraction", "maintenance_fraction_per_year",
              "training_power_fraction", "idle_power_fraction")


def content_digest(text: str) -> str:
    """sha256 (hex) of a design file's canonical text without its ``design_digest`` line."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _enum(fail: Fail, path: tuple[Any, ...], value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise fail(path, f"{value!r} is not one of: {', '.join(repr(a) for a in allowed)}")


def _range(fail: Fail, path: tuple[Any, ...], value: float | None, lo: float, hi: float) -> None:
    if value is not None and not lo <= value <= hi:
        raise fail(path, f"must lie between {lo:g} and {hi:g}; got {value:g}")


def check_values(design: Design, fail: Fail) -> None:
    """Enumerations and ranges of the fields later commands rely on (drawing, tables, diffs).

    Raises what ``fail(path, message)`` returns for the first value out of place.
    """
    s = design.system
    deployments = tuple(d.value for d in choices.Deployment) + ("hybrid",)
    topologies = choices.TOPOLOGIES + ("cloud",)
    _enum(fail, ("objective",), design.objective, tuple(o.value for o in choices.Objective))
    _enum(fail, ("system", "deployment"), s.deployment, deployments)
    _enum(fail, ("system", "fabric"), s.fabric, choices.FABRICS)
    _enum(fail, ("system", "topology"), s.topology, topologies)
    if s.pricing is not None:
        _enum(fail, ("system", "pricing"), s.pricing, tuple(p.value for p in choices.Pricing))
    _range(fail, ("system", "nodes"), s.nodes, 1, MAX_NODES)
    _range(fail, ("system", "gpus"), s.gpus, 1, MAX_GPUS_PER_WORKLOAD)
    _range(fail, ("system", "oversubscription"), s.oversubscription, 1, 1000)
    _range(fail, ("system", "tiers"), s.tiers, 0, 8)
    _range(fail, ("system", "racks"), s.racks, 0, 1_000_000)
    _enum(fail, ("solver", "name"), design.solver.name, ("highs", "cbc"))
    for i, w in enumerate(design.workloads):
        at = ("workloads", i)
        _enum(fail, at + ("deployment",), w.deployment, tuple(d.value for d in choices.Deployment))
        for name in ("gpus", "tp", "pp", "dp", "ep", "cp", "microbatch"):
            _range(fail, at + (name,), getattr(w, name), 1, MAX_GPUS_PER_WORKLOAD)
        _range(fail, at + ("zero",), w.zero, 0, 3)
        for name in ("utilization", "mfu"):
            _range(fail, at + (name,), getattr(w, name), 0, 1)
        _range(fail, at + ("step_time_s",), w.step_time_s, 1e-12, MAX_MAGNITUDE)
        _enum(fail, at + ("recompute",), w.recompute, ("", "none", "selective", "full"))
        if w.software is not None:
            _enum(fail, at + ("software", "preset"), w.software.preset, choices.SOFTWARE_PRESETS)
            _enum(fail, at + ("software", "attention"), w.software.attention, choices.ATTENTION_KERNELS)
    for i, a in enumerate(design.alternatives):
        at = ("alternatives", i)
        _enum(fail, at + ("deployment",), a.deployment, deployments + ("",))
        _enum(fail, at + ("fabric",), a.fabric, choices.FABRICS + ("",))
        _enum(fail, at + ("topology",), a.topology, topologies + ("",))
        _range(fail, at + ("nodes",), a.nodes, 0, MAX_NODES)
    for i, line in enumerate(design.cost.lines):
        _enum(fail, ("cost", "lines", i, "kind"), line.kind, ("capex", "opex", "residual", "cloud"))
    for i, item in enumerate(design.bom):
        _enum(fail, ("bom", i, "category"), item.category, bom.CATEGORIES)
    f = design.facility
    if f is not None:
        _enum(fail, ("facility", "space"), f.space, ("colocation", "owned"))
        _range(fail, ("facility", "pue"), f.pue, 1, 5)
        for name in _FRACTIONS[2:]:
            _range(fail, ("facility", name), getattr(f, name), 0, 1)
        for key, share in f.spares.items():
            _range(fail, ("facility", "spares", key), share, 0, 1)


def _tolerance(n: int) -> float:
    # Each written amount is rounded to the cent: a sum of n of them may be off by n half-cents.
    return 0.005 * n + 0.01


def _sums(design: Design) -> Iterator[tuple[tuple[Any, ...], float, float, float, str]]:
    """(where, written, re-added, tolerance, what) for every total a design file states."""
    c = design.cost
    parts = c.capex_usd + c.opex_usd + c.cloud_usd - c.residual_usd
    yield ("cost", "total_usd"), c.total_usd, parts, _tolerance(4), "capex_usd + opex_usd + cloud_usd - residual_usd"
    if c.capex_by_category:
        yield (("cost", "capex_usd"), c.capex_usd, sum(c.capex_by_category.values()),
               _tolerance(len(c.capex_by_category)), "the sum of capex_by_category")
    if c.opex_by_category:
        yield (("cost", "opex_usd"), c.opex_usd, sum(c.opex_by_category.values()),
               _tolerance(len(c.opex_by_category)), "the sum of opex_by_category")
    if c.lines:
        by_kind: dict[str, list[float]] = defaultdict(list)
        for line in c.lines:
            by_kind[line.kind].append(line.amount_usd)
        for kind, written in (("capex", c.capex_usd), ("opex", c.opex_usd), ("residual", c.residual_usd),
                              ("cloud", c.cloud_usd)):
            amounts = by_kind.get(kind, [])
            yield (("cost", f"{kind}_usd"), written, sum(amounts), _tolerance(len(amounts)),
                   f"the sum of the cost lines of kind {kind}")
    # A BOM line's total is its quantity times its unit price as written (to the cent), so it may
    # differ from the amount the cost holds by half a cent per unit (cloud lines count hours).
    by_category: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for line in design.bom:
        if line.unit_price_usd is not None:
            by_category[sections.capex_category(line) if line.category != "cloud" else "cloud"].append(
                (bom.line_total_usd(line), line.quantity))
    for category, items in sorted(by_category.items()):
        total = sum(t for t, _ in items)
        tol = _tolerance(len(items)) + 0.005 * sum(abs(q) for _, q in items)
        if category == "cloud":
            yield ("cost", "cloud_usd"), c.cloud_usd, total, tol, "the sum of the BOM's cloud lines"
        elif category in c.capex_by_category:
            yield (("cost", "capex_by_category", category), c.capex_by_category[category], total, tol,
                   f"the sum of the BOM's {category} lines")


def check_consistency(design: Design, fail: Fail) -> Iterator[Exception]:
    """Every total re-added and every plan re-multiplied; yields one located problem per mismatch.

    Model: money written to the cent, so a total of n amounts may differ from their sum by n half
    cents (a BOM line by half a cent per unit of its quantity, its unit price being rounded); a workload's GPUs are tp x pp x dp x cp (expert parallelism runs inside dp, Megatron-Core's
    layout); a workload on the bought system uses at most its GPUs.
    """
    for where, written, added, tol, what in _sums(design):
        if abs(written - added) > tol + 1e-12 * abs(added):
            yield fail(where, f"{bom.money_text(written)} is not {what} = {bom.money_text(added)}; "
                              "the file was changed after it was written")
    for i, w in enumerate(design.workloads):
        if w.gpus != w.tp * w.pp * w.dp * w.cp:
            yield fail(("workloads", i, "gpus"), f"{w.gpus} is not tp x pp x dp x cp = {w.tp * w.pp * w.dp * w.cp}")
        if w.deployment == "on_prem" and design.system.deployment != "cloud" and w.gpus > design.system.gpus:
            yield fail(("workloads", i, "gpus"), f"{w.gpus} is more than the system's {design.system.gpus} GPUs")

