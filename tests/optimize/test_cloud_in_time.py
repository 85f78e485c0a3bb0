"""A time limit that passes while the cloud offers are evaluated still yields a design when one runs every workload."""

from __future__ import annotations

from pathlib import Path

import pytest

from designer.errors import SolverTimeoutError
from designer.optimize import batches, bounds
from designer.optimize.clock import Deadline
from designer.optimize.rigid import solve_scheduled
from designer.optimize.workspace import Workspace
from designer.planner.compile import compile_task
from designer.planner.inputs import load_inputs
from designer.spec.choices import Deployment
from tiny_spec import TWO_WORKLOADS


def _workspace(tmp_path: Path, evaluations_in_time: int, prepared: list | None = None) -> Workspace:
    """A workspace whose deadline passes once ``evaluations_in_time`` cloud offers are prepared
    (their keys are put in ``prepared``, in order)."""
    path = tmp_path / "spec.yaml"
    path.write_text(TWO_WORKLOADS)
    spec, catalog = load_inputs(path)
    ws = Workspace(compile_task(spec, catalog))
    prepared = [] if prepared is None else prepared
    now = [0.0]
    prepare = ws.prepare

    def counting(key, th, **kw):
        out = prepare(key, th, **kw)
        if ws.by_key[key].deployment is Deployment.CLOUD:
            prepared.append(key)
            if len(prepared) >= evaluations_in_time:
                now[0] = 2.0  # past the deadline
        return out

    ws.prepare = counting
    ws.deadline = Deadline(1.0, clock=lambda: now[0])
    if evaluations_in_time == 0:
        now[0] = 2.0
    return ws


def test_the_cloud_offers_evaluated_in_time_give_a_feasible_design(tmp_path):
    # Of the 9 offers 2 are evaluated without a limit (the others bill no workload less, below):
    # the limit passes after the first.
    ws = _workspace(tmp_path, 1)
    sol = batches.solve(ws, ws.task.thresholds)
    assert sol.status == "feasible" and sol.gap == 1.0
    assert sol.onprem_key is None and sol.assignment
    assert all(ws.by_key[k].deployment is Deployment.CLOUD for k, _ in sol.assignment.values())
    assert "cloud offers" in sol.note and "not bounded" in sol.note


def test_no_offer_evaluated_in_time_is_no_design(tmp_path):
    ws = _workspace(tmp_path, 0)
    with pytest.raises(SolverTimeoutError):
        batches.solve(ws, ws.task.thresholds)


def test_under_a_limit_the_offers_of_the_least_compute_bill_are_evaluated_first(tmp_path):
    prepared: list[str] = []
    ws = _workspace(tmp_path, 1, prepared)
    sol = batches.solve(ws, ws.task.thresholds)

    def floor(key):
        system = ws.system(key)
        return sum(bounds.flops_gpu_seconds(ws, key).values()) / system.candidate.gpus_per_node * system.usd_per_node_s

    offers = [c.key for c in ws.candidates if c.deployment is Deployment.CLOUD and ws.system(c.key) is not None]
    assert prepared[0] == min(offers, key=lambda k: (floor(k), k))
    assert {k for k, _ in sol.assignment.values()} == {prepared[0]}



def test_an_offer_that_bills_no_workload_less_is_not_evaluated(tmp_path):
    # Minimizing cost, a cloud option adds only its bill: an offer whose least bill (the compute
    # floor in instance-seconds at its rate) exceeds every workload's best evaluated bill is left
    # out, and the design is the one over every offer evaluated.
    ws = _workspace(tmp_path, 100)
    sol = batches.solve(ws, ws.task.thresholds)
    th = ws.task.thresholds
    offers = sorted(c.key for c in ws.candidates if c.deployment is Deployment.CLOUD)
    evaluated = [k for k in offers if ws.evaluated(k)]
    skipped = [k for k in offers if k not in evaluated and ws.system(k) is not None]
    assert len(evaluated) == 2 and len(skipped) == 7
    best = {w.name: bounds.cloud_floor(ws, w.name, th, evaluated) for w in ws.workloads}
    for k in skipped:
        system = ws.system(k)
        floor = bounds.flops_gpu_seconds(ws, k)
        assert all(floor[w] / system.candidate.gpus_per_node * system.usd_per_node_s > best[w] for w in best)
    full = _workspace(tmp_path, 100)
    for k in offers:
        full.prepare(k, th)
    assert all(bounds.cloud_floor(full, w, th, offers) == pytest.approx(best[w]) for w in best)
    ready = [k for k in offers if full.system(k) is not None]
    every = solve_scheduled(full.problem(ready, th)).objective
    assert solve_scheduled(full.problem(evaluated, th)).objective == pytest.approx(every, rel=1e-12)
    assert sol.objective <= every * (1 + 1e-12)
