"""Every design's schedule is feasible: a property over generated multi-workload portfolios.

On-prem workloads never hold more GPUs than the cluster at any time, each ends by its deadline,
and each runs for the time the performance model predicts at its GPU count.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

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
"""

portfolios = st.fixed_dictionaries({
    "jobs": st.lists(st.tuples(st.sampled_from([50, 100, 200, 400]), st.integers(15, 90),
                               st.sampled_from([128, 256, 512])), min_size=2, max_size=5),
    "deployments": st.sampled_from(["on_prem", "on_prem, cloud"]),
    "max_nodes": st.sampled_from([4, 8, 16, 64]),
})


def _spec_text(p: dict) -> str:
    rows = [f"  - {{name: w{i}, model: {{preset: llama3-8b}}, tokens: {tokens}B, global_batch: {batch}, "
            f"deadline: {days} days}}" for i, (tokens, days, batch) in enumerate(p["jobs"])]
    return _TEMPLATE.format(workloads="\n".join(rows), deployments=p["deployments"], max_nodes=p["max_nodes"])


def _usage_ok(design) -> bool:
    onprem = [w for w in design.workloads if w.deployment == "on_prem"]
    for w in onprem:  # usage is highest just after some job starts
        used = sum(v.gpus for v in onprem if v.start_day <= w.start_day < v.end_day)
        if used > design.system.gpus:
            return False
    return True


@settings(max_examples=8, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(portfolios)
def test_every_design_has_a_feasible_schedule(tmp_path_factory, p):
    path = tmp_path_factory.mktemp("spec") / "spec.yaml"
    path.write_text(_spec_text(p))
    spec, catalog = load_inputs(path)
    try:
        design = plan(spec, catalog)
    except InfeasibleError:
        return  # a portfolio no cluster within max_nodes can run is an answer too
    for w in design.workloads:
        assert w.start_day is not None and w.end_day is not None
        assert w.start_day >= 0
        assert abs((w.end_day - w.start_day) - w.time_to_train_days) <= 1e-9 * max(1.0, w.time_to_train_days)
        assert w.end_day <= w.deadline_days * (1 + 1e-9)
    assert _usage_ok(design)
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
    path = tmp_path_factory.mktemp("spec") / "spec.yaml"
    path.write_text(_spec_text(p))
    spec, catalog = load_inputs(path)
    try:
        design = plan(spec, catalog, explain_design=False)
    except InfeasibleError:
        return
    for w in design.workloads:
        assert 0 <= w.start_day and w.end_day <= w.deadline_days * (1 + 1e-9)
        assert abs((w.end_day - w.start_day) - w.time_to_train_days) <= 1e-9 * max(1.0, w.time_to_train_days)
    assert _usage_ok(design)

