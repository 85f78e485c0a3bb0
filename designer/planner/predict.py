"""Predictions on the system a spec pins, without optimising: ``designer estimate``.

Each workload uses ``gpus`` if it gives it, else every GPU of the pinned nodes, with its pinned
parallelism or the fastest plan that fits, on the pinned system's network.
"""

from __future__ import annotations

__all__ = ["estimate", "pinned_candidate", "Estimate", "WorkloadEstimate"]

from dataclasses import dataclass

from designer import perf
from designer.catalog.types import Catalog
from designer.errors import PerfError, SpecError
from designer.optimize.evaluate import Evaluator
from designer.planner.candidates import enumerate_candidates, link_speed
from designer.planner.compile import compile_workload, facility_for
from designer.planner.pinned import PINNED_NO_PLAN, largest_fit, plan_words, why_no_plan
from designer.optimize.candidates import Candidate
from designer.spec.models import Spec


@dataclass(frozen=True, slots=True)
class WorkloadEstimate:
    """One workload's prediction on the pinned system, and the figures of its model that were
    filled in by default (``assumptions``)."""

    name: str
    estimate: perf.StepEstimate
    assumptions: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Estimate:
    """Predictions for every workload of a spec on its pinned system."""

    spec_name: str
    server: str
    nodes: int
    fabric: str
    topology: str
    workloads: tuple[WorkloadEstimate, ...]
    warnings: tuple[str, ...] = ()
    gpus_per_domain_used: int | None = None  # system.gpus_per_domain_used, when the spec pins it
    switch: str | None = None  # the fabric's switch (pinned, or the first candidate in key order)
    link_gbps_per_gpu: float = 0.0  # scale-out Gb/s per GPU as the compute NICs run
    nic_native_gbps: float = 0.0  # the NICs' own rate where they run below it (0: native)


def estimate(spec: Spec, catalog: Catalog) -> Estimate:
    """Predict each workload on the system pinned under ``system`` (no optimisation).

    Each workload uses ``gpus`` if it gives it, else every GPU of the pinned nodes, with its
    pinned parallelism or the fastest plan that fits; when no plan fits on every GPU, the largest
    count at which one does, with a warning saying why.

    Raises:
        SpecError: the spec does not pin enough of the system (server and nodes at least).
        PerfError: no plan fits on any count of its GPUs (the message says why and names the
            workload's place in the spec).
    """
    pin = spec.system
    missing = [k for k in ("server", "nodes") if getattr(pin, k) is None]
    if missing:
        raise SpecError(f"`designer estimate` needs a pinned system: set system.{' and system.'.join(missing)}",
                        spec.locate(("system",)))
    cand, unlinked = pinned_candidate(spec, catalog)
    facility = facility_for(spec, catalog)
    evaluator = Evaluator(catalog, facility, gpus_per_domain_used=pin.gpus_per_domain_used)
    out = []
    warnings = [w.located() for w in spec.warnings] + list(unlinked)
    for i, w in enumerate(spec.workloads):
        job = compile_workload(w)
        gpus = w.gpus or pin.nodes * evaluator.gpus_used_per_node(cand)
        result = evaluator.evaluate(job, cand, gpus)
        if result.estimate is None:
            why = _reason(result.reason, job, gpus, evaluator.gpus_used_per_node(cand))
            # No plan on these GPUs (a pinned tp x pp that does not divide them, a batch that does
            # not split): the largest count below, whole nodes first, at which one does.
            found = largest_fit(evaluator, job, cand, gpus - 1) if gpus > 1 else None
            if found is not None and not w.gpus:
                warnings.append(f"workload '{w.name}' runs on {found.gpus:,} of the {gpus:,} GPUs of the pinned "
                                f"system: on all of them, {why}")
                result = found
            else:
                if w.gpus:
                    where = ("workloads", i, "gpus")
                    fewer = (f"; a plan fits on {found.gpus:,} GPUs ({plan_words(found)}): set gpus to "
                             f"{found.gpus:,}" if found is not None else "; nor on fewer GPUs")
                else:
                    where = ("workloads", i, "parallelism") if w.parallelism is not None else ("workloads", i)
                    fewer = "; nor on fewer GPUs"
                raise PerfError(f"workload '{w.name}' on {gpus} GPUs of {cand.server}: {why}{fewer} "
                                f"(the workload at {spec.locate(where)})")
        out.append(WorkloadEstimate(w.name, result.estimate, w.model.assumptions))
    link_gbps, native_gbps = link_speed(catalog, cand)
    if native_gbps:
        server = catalog.servers[cand.server]
        warnings.append(f"the {server.nics} {server.nic} NICs of each {server.name} run at "
                        f"{cand.link_rate_Bps * 8 / 1e9:g} Gb/s, below their {native_gbps:g} Gb/s, on {cand.switch} "
                        f"({link_gbps:g} Gb/s per GPU)")
    return Estimate(spec.name, cand.server, pin.nodes, cand.fabric, cand.topology, tuple(out), tuple(warnings),
                    pin.gpus_per_domain_used, cand.switch, link_gbps, native_gbps)


def pinned_candidate(spec: Spec, catalog: Catalog) -> tuple[Candidate, tuple[str, ...]]:
    """The candidate system a spec pins, and warnings where the catalog holds no parts to link it.

    The pinned fields narrow :func:`~designer.planner.candidates.enumerate_candidates`; where some
    are left open the first in key order is taken, and defaults favour the non-blocking ratio.
    A pinned server and switch that no catalog cable or optic joins are still predicted (the step
    time depends on the link rate, not on which part carries it), with a warning naming the
    missing link; ``designer solve`` refuses the same system.

    Raises:
        SpecError: the pinned parts cannot run together at all (protocol, rate, ports), located
            at ``system``.
    """
    candidates, _ = enumerate_candidates(spec, catalog)
    unlinked: tuple[str, ...] = ()
    if not candidates:
        candidates, rejected = enumerate_candidates(spec, catalog, links=False)
        unlinked = tuple(f"{r.what}: {r.reason}; the prediction stands, but no bill of materials can be built "
                         "until a catalog holds the part" for r in rejected if r.reason.startswith("no link from "))
    if not candidates:
        raise SpecError("the pinned system is not a valid combination (check its fabric, switch and topology "
                        "against the server's NIC)", spec.locate(("system",)))
    return sorted(candidates, key=lambda c: (c.oversubscription, c.key))[0], unlinked


def _reason(reason: str, w, gpus: int, gpus_per_node: int) -> str:
    """The performance model's reason, with why no plan has the structure to run where it found
    none (:func:`~designer.planner.pinned.why_no_plan`)."""
    why = why_no_plan(w, gpus, gpus_per_node)
    if not why:
        return reason
    if reason.endswith(PINNED_NO_PLAN):
        return reason[: -len(PINNED_NO_PLAN)] + why
    return f"{reason} ({why})"
