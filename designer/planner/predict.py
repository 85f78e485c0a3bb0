"""Predictions on the system a spec pins, without optimising: ``designer estimate``.

Each workload uses ``gpus`` if it gives it, else every GPU of the pinned nodes, with its pinned
parallelism or the fastest plan that fits, on the pinned system's network.
"""

from __future__ import annotations

__all__ = ["estimate", "Estimate", "WorkloadEstimate"]

from dataclasses import dataclass

from designer import perf
from designer.catalog.types import Catalog
from designer.errors import PerfError, SpecError
from designer.optimize.evaluate import Evaluator
from designer.planner.candidates import enumerate_candidates
from designer.planner.compile import compile_workload, facility_for
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


def estimate(spec: Spec, catalog: Catalog) -> Estimate:
    """Predict each workload on the system pinned under ``system`` (no optimisation).

    Each workload uses ``gpus`` if it gives it, else every GPU of the pinned nodes, with its
    pinned parallelism or the fastest plan that fits.

    Raises:
        SpecError: the spec does not pin enough of the system (server and nodes at least).
        PerfError: no plan fits (the message says why).
    """
    pin = spec.system
    missing = [k for k in ("server", "nodes") if getattr(pin, k) is None]
    if missing:
        raise SpecError(f"`designer estimate` needs a pinned system: set system.{' and system.'.join(missing)}",
                        spec.locate(("system",)))
    candidates, _ = enumerate_candidates(spec, catalog)
    if not candidates:
        raise SpecError("the pinned system is not a valid combination (check its fabric, switch and topology "
                        "against the server's NIC)", spec.locate(("system",)))
    # The pinned fields narrow the candidates; where some are left open the first in key order
    # is taken, and defaults favour the non-blocking ratio.
    cand = sorted(candidates, key=lambda c: (c.oversubscription, c.key))[0]
    facility = facility_for(spec, catalog)
    evaluator = Evaluator(catalog, facility)
    out = []
    for w in spec.workloads:
        gpus = w.gpus or pin.nodes * cand.gpus_per_node
        result = evaluator.evaluate(compile_workload(w), cand, gpus)
        if result.estimate is None:
            raise PerfError(f"workload '{w.name}' on {gpus} GPUs of {cand.server}: {result.reason}")
        out.append(WorkloadEstimate(w.name, result.estimate, w.model.assumptions))
    return Estimate(spec.name, cand.server, pin.nodes, cand.fabric, cand.topology, tuple(out),
                    tuple(w.located() for w in spec.warnings))
