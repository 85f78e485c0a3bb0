"""Every design's schedule is feasible: a property over generated multi-workload portfolios.

On-prem workloads never hold more GPUs than the cluster at any time (on a rack-scale system, more
whole racks: a job on part of each NVL72 keeps the rest of it), each ends by its deadline, and
each runs for the time the performance model predicts at its GPU count (its tokens at its
throughput). A design is `optimal` with no gap or `feasible` with its gap stated in a warning.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import math

from designer.catalog import domain
from designer.errors import InfeasibleError
from designer.planner import plan
from designer.planner.inputs import load_inputs

_TEMPLATE = """\
version: 1
name: generated
horizon: 1 years
workloads:
{workloads}
constraints:
  min_utilization: 0.4
  deployments: [{deployments}]
  fabrics: [infiniband]
  topologies: [single_switch, fat_tree]
  max_nodes: {max_nodes}
{gpus}"""

portfolios = st.fixed_dictionaries({
    "jobs": st.lists(st.tuples(st.sampled_from([50, 100, 200, 400]), st.integers(15, 90),
                               st.sampled_from([128, 256, 512])), min_size=2, max_size=5),
    "deployments": st.sampled_from(["on_prem", "on_prem, cloud"]),
    "max_nodes": st.sampled_from([4, 8, 16, 64]),
})


def _spec_text(p: dict) -> str:
    rows = [f"  - {{name: w{i}, model: {{preset: llama3-8b}}, tokens: {tokens}B, global_batch: {batch}, "
            f"deadline: {days} days}}" for i, (tokens, days, batch) in enumerate(p["jobs"])]
    gpus = f"  gpus: [{p['gpus']}]\n" if p.get("gpus") else ""
    return _TEMPLATE.format(workloads="\n".join(rows), deployments=p["deployments"], max_nodes=p["max_nodes"],
                            gpus=gpus)


def _usage_ok(design, catalog) -> bool:
    onprem = [w for w in design.workloads if w.deployment == "on_prem"]
    if not onprem:
        return True
    assert all(w.server == design.system.server for w in onprem)
    server = catalog.servers[design.system.server]
    racks = domain.is_rack_scale(server)
    for w in onprem:  # usage is highest just after some job starts
        running = [v for v in onprem if v.start_day <= w.start_day < v.end_day]
        if sum(v.gpus for v in running) > design.system.gpus:
            return False
        if racks and sum(math.ceil(v.gpus / server.gpus) for v in running) > design.system.nodes:
            return False
    return True


def _honest(design, tokens: dict[str, float]) -> None:
    """Each workload's time is its tokens at its throughput; the status says what is proven."""
    for w in design.workloads:
        assert w.time_to_train_days * 86400.0 * w.tokens_per_s == pytest.approx(tokens[w.name], rel=1e-6)
    if design.solver.status == "optimal":
        assert design.solver.gap <= 1e-6
    else:
        assert design.solver.status == "feasible" and 0.0 < design.solver.gap <= 1.0
        assert any(f"optimality gap {design.solver.gap:.2%}" in x for x in design.warnings)


def _tokens(p: dict) -> dict[str, float]:
    return {f"w{i}": tokens * 1e9 for i, (tokens, _, _) in enumerate(p["jobs"])}


def _planned(tmp_path_factory, p: dict, *, explain_design: bool = True):
    """The design of generated portfolio ``p`` and its catalog; ``None`` where no cluster within
    ``max_nodes`` can run it (an answer too)."""
    path = tmp_path_factory.mktemp("spec") / "spec.yaml"
    path.write_text(_spec_text(p))
    spec, catalog = load_inputs(path)
    try:
        return plan(spec, catalog, explain_design=explain_design), catalog
    except InfeasibleError:
        return None


def _holds(design, catalog, p: dict) -> None:
    """Every workload starts at or after day 0, runs its own time to train and ends by its
    deadline; the cluster is never oversubscribed; the times and status are honest."""
    for w in design.workloads:
        assert w.start_day is not None and w.end_day is not None
        assert 0 <= w.start_day and w.end_day <= w.deadline_days * (1 + 1e-9)
        assert abs((w.end_day - w.start_day) - w.time_to_train_days) <= 1e-9 * max(1.0, w.time_to_train_days)
    assert _usage_ok(design, catalog)
    _honest(design, _tokens(p))


@settings(max_examples=8, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(portfolios)
def test_every_design_has_a_feasible_schedule(tmp_path_factory, p):
    if (planned := _planned(tmp_path_factory, p)) is None:
        return
    design, catalog = planned
    _holds(design, catalog, p)
    if design.system.deployment != "cloud":
        assert design.system.gpus == design.system.nodes * (design.system.gpus // design.system.nodes)


large_portfolios = st.fixed_dictionaries({
    "jobs": st.lists(st.tuples(st.sampled_from([200, 400, 800, 1600]), st.integers(15, 300),
                               st.sampled_from([256, 512])), min_size=8, max_size=16),
    "deployments": st.sampled_from(["on_prem", "on_prem, cloud"]),
    "max_nodes": st.sampled_from([8, 16, 64]),
})


@settings(max_examples=5, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(large_portfolios)
def test_every_design_of_a_larger_portfolio_has_a_feasible_schedule(tmp_path_factory, p):
    """The same over portfolios of 8 to 16 workloads of up to 1.6T tokens sharing a cluster of
    at most 64 nodes."""
    if (planned := _planned(tmp_path_factory, p, explain_design=False)) is None:
        return
    design, catalog = planned
    _holds(design, catalog, p)



rack_portfolios = st.fixed_dictionaries({
    "jobs": st.lists(st.tuples(st.sampled_from([800, 1600, 3200]), st.integers(20, 60),
                               st.sampled_from([256, 512])), min_size=3, max_size=12),
    "deployments": st.just("on_prem"),
    "max_nodes": st.sampled_from([2, 3, 4, 6]),
    "gpus": st.just("b200-gb200"),
})


@settings(max_examples=6, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(rack_portfolios)
def test_every_design_on_nvl72_racks_holds_whole_racks(tmp_path_factory, p):
    """GB200 NVL72 racks of 72 GPUs, 2 to 6 of them, shared by 3 to 12 workloads: a job on part
    of each rack keeps the rest of it, so the racks in use never exceed the system's."""
    if (planned := _planned(tmp_path_factory, p, explain_design=False)) is None:
        return
    design, catalog = planned
    assert domain.is_rack_scale(catalog.servers[design.system.server])
    _holds(design, catalog, p)
