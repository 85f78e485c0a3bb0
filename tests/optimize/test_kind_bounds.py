"""Bounds on the candidates a budgeted search leaves untried (designer.optimize.kind_bounds).

The best and worst of several networks bracket each of them in the performance model, and the
bound one program gives every candidate of a server is below the best design that builds it
(its own program, an on-prem system required), over generated portfolios.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings, strategies as st

from designer import perf
from designer.optimize import kind_bounds
from designer.optimize.rigid import solve_scheduled
from designer.optimize.workspace import Workspace
from designer.errors import InfeasibleError
from designer.planner.compile import compile_task
from designer.planner.inputs import load_inputs
from designer.spec.choices import Deployment
from tiny_spec import EVERY_SYSTEM

_WS: dict[str, Workspace] = {}


def _workspace(tmp_path_factory, text: str) -> Workspace:
    if text not in _WS:
        path = tmp_path_factory.mktemp("kind") / "spec.yaml"
        path.write_text(text)
        spec, catalog = load_inputs(path)
        _WS[text] = Workspace(compile_task(spec, catalog))
    return _WS[text]


@settings(max_examples=12, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
          deadline=None)
@given(server=st.integers(0, 50), picks=st.lists(st.integers(0, 200), min_size=2, max_size=5),
       nodes=st.sampled_from([1, 2, 4, 8, 16]))
def test_the_best_and_worst_of_several_networks_bracket_each_one(tmp_path_factory, server, picks, nodes):
    ws = _workspace(tmp_path_factory, EVERY_SYSTEM)
    onprem = [c for c in ws.candidates if c.deployment is Deployment.ON_PREM]
    servers = sorted({c.server for c in onprem})
    name = servers[server % len(servers)]
    members = sorted({c.key for c in onprem if c.server == name})
    chosen = sorted({members[p % len(members)] for p in picks})
    cand = ws.by_key[chosen[0]]
    gpus = nodes * cand.gpus_per_node
    views = [v for v in (ws.evaluator.view(ws.by_key[k], nodes) for k in chosen) if v is not None]
    best, worst = kind_bounds.best_of(views), kind_bounds.worst_of(views)
    if not views or best is None:
        return
    w = ws.workloads[0]
    gpu = ws.catalog.gpus[cand.gpu]

    def seconds(view):
        est = ws.evaluator.step(w, perf.Cluster(gpu=gpu, network=view, efficiency=ws.task.efficiency), gpus)
        return None if isinstance(est, str) else est.step_time_s

    times = [seconds(v) for v in views]
    fast, slow = seconds(best), seconds(worst)
    if fast is None:  # no plan fits these GPUs: no network changes that
        assert all(t is None for t in times) and slow is None
        return
    for t in times:
        assert t is not None and fast <= t * (1 + 1e-9) and t <= slow * (1 + 1e-9)


_PORTFOLIO = """\
version: 1
name: generated
horizon: 2 years
workloads:
{workloads}
constraints:
  min_utilization: 0.4
  deployments: [on_prem, cloud]
  fabrics: [infiniband, roce]
  topologies: [single_switch, fat_tree, rail_optimized]
  gpus: [h100-sxm]
  max_nodes: {max_nodes}
"""

portfolios = st.fixed_dictionaries({
    "jobs": st.lists(st.tuples(st.sampled_from([100, 200, 400, 800]), st.integers(20, 120),
                               st.sampled_from([256, 512])), min_size=2, max_size=4),
    "max_nodes": st.sampled_from([4, 8, 16]),
})

rack_portfolios = st.fixed_dictionaries({
    "jobs": st.lists(st.tuples(st.sampled_from([800, 1600, 3200]), st.integers(20, 60), st.sampled_from([256, 512])),
                     min_size=2, max_size=4),
    "max_nodes": st.sampled_from([2, 4, 6]),
})


@settings(max_examples=8, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
          deadline=None)
@given(p=st.one_of(portfolios.map(lambda p: {**p, "gpu": "h100-sxm"}),
                   rack_portfolios.map(lambda p: {**p, "gpu": "b200-gb200"})))
# 800B tokens in 20 days on at most 4 nodes: no member has an option, so no bound and no design.
@example(p={"jobs": [(100, 20, 256), (800, 20, 256)], "max_nodes": 4, "gpu": "h100-sxm"})
def test_a_servers_bound_is_below_each_members_own_program(tmp_path_factory, p):
    rows = [f"  - {{name: w{i}, model: {{preset: llama3-8b}}, tokens: {tokens}B, global_batch: {batch}, "
            f"deadline: {days} days}}" for i, (tokens, days, batch) in enumerate(p["jobs"])]
    ws = _workspace(tmp_path_factory, _PORTFOLIO.format(workloads="\n".join(rows), max_nodes=p["max_nodes"])
                    .replace("h100-sxm", p["gpu"]))
    th = ws.task.thresholds
    cloud = [c.key for c in ws.candidates if c.deployment is Deployment.CLOUD and ws.prepare(c.key, th)]
    onprem = [c.key for c in ws.candidates if c.deployment is Deployment.ON_PREM and ws.system(c.key) is not None]
    server = sorted({ws.by_key[k].server for k in onprem})[0]
    members = sorted(k for k in onprem if ws.by_key[k].server == server)
    assert len(members) >= 3
    exact = {}
    for k in members:  # the best design that builds each member, as the full search solves it
        if not ws.prepare(k, th):
            exact[k] = math.inf
            continue
        try:
            sol = solve_scheduled(replace(ws.problem([*cloud, k], th), onprem_required=True), learned=ws.energy)
        except InfeasibleError:
            exact[k] = math.inf
            continue
        exact[k] = sol.capex_usd + sol.opex_usd + sol.cloud_usd
    incumbent = math.inf
    ref = kind_bounds.reference(ws, members, incumbent)
    top = kind_bounds.top_nodes(ws, ref, incumbent)
    options = kind_bounds.server_options(ws, members, th, top * ws.by_key[ref].gpus_per_node)
    bound = kind_bounds.reference_bound(ws, ref, options, th, cloud)
    feasible = [k for k in members if exact[k] < math.inf]
    if bound is None:  # no member qualifies at any size it may reach: none has a design either
        assert not any(options.values()) and not feasible, (options, exact)
        return
    checked = 0
    for k in members:
        gap = kind_bounds.fabric_gap(ws, ref, k, incumbent)
        if gap is None:
            continue
        assert bound - gap <= exact[k] * (1 + 1e-9) + 1.0, (k, bound - gap, exact[k])
        checked += exact[k] < math.inf
    # every member with a design that builds it is checked (the gap is known between members
    # whose servers' unit costs agree, as here: one server)
    assert checked == len(feasible)
    # And through tighten, from the members' first bounds.
    lows = [0.0] * len(members)
    out = kind_bounds.tighten(ws, th, members, lows, cloud, min(exact.values()) * 1.5, lambda b: b, work=10_000)
    for k, b in zip(members, out):
        assert 0.0 <= b <= exact[k] * (1 + 1e-9) + 1.0
    assert ws.bound_work > 0


@settings(max_examples=10, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
          deadline=None)
@given(p=st.one_of(portfolios.map(lambda p: {**p, "gpu": "h100-sxm"}),
                   rack_portfolios.map(lambda p: {**p, "gpu": "b200-gb200"})))
def test_every_option_of_a_members_program_has_one_no_worse_among_the_servers(tmp_path_factory, p):
    # The reference program holds, for each option a member's program can choose, one on no more
    # GPUs, no longer and with no more GPU-time (so no constraint of the program, the energetic
    # intervals included, is harder on it): the counts above f_worst it leaves out are ones no
    # member's program keeps. On NVL72 racks a member keeps several (64 GPUs of a rack, or 72
    # in less time).
    rows = [f"  - {{name: w{i}, model: {{preset: llama3-8b}}, tokens: {tokens}B, global_batch: {batch}, "
            f"deadline: {days} days}}" for i, (tokens, days, batch) in enumerate(p["jobs"])]
    text = _PORTFOLIO.format(workloads="\n".join(rows), max_nodes=p["max_nodes"]).replace("h100-sxm", p["gpu"])
    ws = _workspace(tmp_path_factory, text)
    th = ws.task.thresholds
    onprem = [c.key for c in ws.candidates if c.deployment is Deployment.ON_PREM and ws.system(c.key) is not None]
    for server in sorted({ws.by_key[k].server for k in onprem}):
        members = sorted(k for k in onprem if ws.by_key[k].server == server)
        ref = kind_bounds.reference(ws, members, math.inf)
        top = kind_bounds.top_nodes(ws, ref, math.inf)
        options = kind_bounds.server_options(ws, members, th, top * ws.by_key[ref].gpus_per_node)
        for k in members:
            if not ws.prepare(k, th):
                continue
            program = ws.problem([k], th).options
            for w in ws.workloads:
                for o in program.get((w.name, k), ()):
                    assert any(r.gpus <= o.gpus and r.time_s <= o.time_s * (1 + 1e-9)
                               and r.gpu_seconds <= o.gpu_seconds * (1 + 1e-9) for r in options[w.name]), (k, w.name, o)
