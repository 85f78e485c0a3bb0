"""The bound-driven solve equals one program over every candidate.

:func:`designer.optimize.batches.solve` evaluates candidates lazily in order of a cost lower bound and solves
small programs over (cloud + a batch of on-prem systems), keeping the best. That is exact only if
the bounds are valid and the batches decompose the program correctly (a design builds at most
one on-prem system); here the answer is compared with the program over every candidate,
each evaluated.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from designer.optimize import batches, dominance
from designer.optimize.milp import solve_problem
from designer.optimize.rigid import solve_scheduled
from designer.optimize.task import Thresholds
from designer.optimize.workspace import Workspace
from designer.planner.compile import compile_task
from designer.planner.inputs import load_inputs
from tiny_spec import TWO_WORKLOADS

SPECS = {
    "one workload, on-prem": """
        version: 1
        name: one
        horizon: 3 years
        workloads:
          - name: llama3-8b
            model: {preset: llama3-8b}
            tokens: 300B
            global_batch: 512
            deadline: 30 days
        constraints:
          min_utilization: 0.6
          deployments: [on_prem]
          gpus: [h100-sxm, mi300x]
        """,
    "two workloads, hybrid": textwrap.indent(TWO_WORKLOADS, " " * 8),
}


def _workspace(tmp_path: Path, text: str) -> Workspace:
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(text))
    spec, catalog = load_inputs(path)
    return Workspace(compile_task(spec, catalog))


@pytest.mark.parametrize("name", sorted(SPECS))
def test_bound_driven_solve_equals_the_program_over_every_candidate(tmp_path, name):
    ws = _workspace(tmp_path, SPECS[name])
    th = ws.task.thresholds
    sol = batches.solve(ws, th)

    full = _workspace(tmp_path, SPECS[name])
    ready = [c.key for c in full.candidates if full.prepare(c.key, th)]
    assert len(ready) > 8 * batches._BATCH  # many programs, or the test proves nothing
    # Dominated candidates (a TCP twin of a RoCE one) tie at best, and lose the tie.
    ref = solve_scheduled(full.problem(dominance.undominated(full, ready), th))

    total = sol.capex_usd + sol.opex_usd + sol.cloud_usd
    assert total == pytest.approx(ref.capex_usd + ref.opex_usd + ref.cloud_usd, rel=1e-9, abs=0.01)
    assert sol.onprem_key == ref.onprem_key
    # The bounds did their work: far fewer systems were evaluated than exist.
    assert ws.evaluator.calls < full.evaluator.calls



@pytest.mark.parametrize("name", sorted(SPECS))
def test_min_cost_per_token_by_batches_equals_the_program_over_every_candidate(tmp_path, name):
    """Batches, and systems skipped by the usage-charge bound, give the optimum of the one
    program over every candidate."""
    text = SPECS[name].replace("horizon:", "objective: min_cost_per_token\n        horizon:")
    ws = _workspace(tmp_path, text)
    th = ws.task.thresholds
    sol = batches.solve(ws, th)

    full = _workspace(tmp_path, text)
    ready = [c.key for c in full.candidates if full.prepare(c.key, th)]
    # Over the undominated candidates: a TCP twin can win only by the tie-break of its key.
    ref = solve_scheduled(full.problem(dominance.undominated(full, ready), th))
    assert sol.objective == pytest.approx(ref.objective, rel=1e-9, abs=0.01)
    assert sol.onprem_key == ref.onprem_key and sol.nodes == ref.nodes
    assert ws.solves < len(ready) / (2 * batches._BATCH)  # the bound skipped most systems

MIN_TIME = """
    version: 1
    name: fastest
    objective: min_time
    horizon: 3 years
    budget: {total: $8M}
    workloads:
      - {name: big, model: {preset: llama3-8b}, tokens: 500B, global_batch: 512}
      - {name: small, model: {preset: llama3-8b}, tokens: 50B, global_batch: 256}
    constraints:
      min_utilization: 0.6
      deployments: [on_prem, cloud]
      gpus: [h100-sxm, mi300x]
      max_nodes: 64
    """


def test_min_time_by_system_equals_solving_every_system(tmp_path):
    """min_time skips a system's program when its fastest affordable options cannot beat the
    best time (or only tie it at a higher cost); the answer equals solving every system."""
    from designer.errors import InfeasibleError
    from designer.spec.choices import Deployment

    ws = _workspace(tmp_path, MIN_TIME)
    th = ws.task.thresholds
    sol = batches.solve(ws, th)

    full = _workspace(tmp_path, MIN_TIME)
    cloud = [c.key for c in full.candidates if c.deployment is Deployment.CLOUD and full.prepare(c.key, th)]
    best = None
    programs = 0
    for group in [[], *([c.key] for c in full.candidates if c.deployment is Deployment.ON_PREM)]:
        if group and not full.prepare(group[0], th):
            continue
        programs += 1
        try:
            s = solve_scheduled(full.problem([*cloud, *group], th, objective="min_time"))
        except InfeasibleError:
            continue
        rank = (s.max_time_s, s.capex_usd + s.opex_usd + s.cloud_usd)
        if best is None or rank[0] < best[0] * (1 - 1e-9) or (rank[0] <= best[0] * (1 + 1e-9) and rank[1] < best[1]):
            best = rank
    assert best is not None
    assert sol.max_time_s == pytest.approx(best[0], rel=2e-4)
    assert sol.capex_usd + sol.opex_usd + sol.cloud_usd == pytest.approx(best[1], rel=1e-6)
    assert ws.solves < programs / 2  # the skips did their work


def test_a_budget_with_slack_does_not_bind_and_a_resolve_agrees(tmp_path):
    """Minimizing total cost, a budget the chosen design stays under cannot bind (a looser
    budget only admits costlier designs); the status says so without solving, and solving with
    the budget loosened finds nothing cheaper."""
    from dataclasses import replace

    from designer.optimize import explain

    text = SPECS["one workload, on-prem"].replace("horizon: 3 years", "horizon: 3 years\n        budget: {capex: $90M, total: $100M}")
    ws = _workspace(tmp_path, text)
    th = ws.task.thresholds
    sol = batches.solve(ws, th)
    total = sol.capex_usd + sol.opex_usd + sol.cloud_usd
    assert total < 90e6
    status = {c.name: c for c in explain.constraint_status(ws, th, sol, solver="highs", time_limit_s=None)}
    assert not status["budget.total"].binding and not status["budget.capex"].binding
    for field, value in (("total_usd", 110e6), ("capex_usd", 99e6)):
        cheaper = explain._try(ws, th, limits=replace(ws.limits(), **{field: value}), solver="highs",
                               time_limit_s=None, cutoff=total * (1 - 1e-6))
        assert cheaper is None


def test_min_cost_per_token_builds_the_smallest_system_its_plan_needs(tmp_path):
    """The per-GPU-second charge does not see idle nodes, so a second phase sizes the system: it
    has exactly the nodes its workloads' options need to run by their deadlines (the smallest on
    which their fixed sizes pack), and the topology's own switch count for that size."""
    import math

    from designer import topology
    from designer.optimize import pricing
    from designer.optimize.schedule import Job, pack
    from designer.spec.choices import Deployment

    text = SPECS["two workloads, hybrid"].replace("name: two", "name: two\n        objective: min_cost_per_token")
    text = text.replace("deployments: [on_prem, cloud]", "deployments: [on_prem]")
    ws = _workspace(tmp_path, text)
    th = ws.task.thresholds
    sol = batches.solve(ws, th)
    cand = ws.by_key[sol.onprem_key]
    assert cand.deployment is Deployment.ON_PREM
    gpn = cand.gpus_per_node
    used = [(o.gpus, o.time_s, th.deadlines_s[w]) for w, (key, o) in sol.assignment.items()]
    need = max(math.ceil(g / gpn) for g, _, _ in used)
    for _, _, deadline in used:
        load = sum(g * t for g, t, d in used if d <= deadline)
        need = max(need, math.ceil(load / (gpn * deadline) - 1e-9))
    # GPU-time is not enough for jobs of fixed size: the smallest cluster on which they pack.
    jobs = [Job(w, o.gpus, o.time_s, th.deadlines_s[w]) for w, (key, o) in sol.assignment.items()]
    while pack(jobs, need * gpn) is None:
        need += 1
    assert sol.nodes == need
    s = topology.summarize(pricing.fabric_request(cand, ws.catalog, sol.nodes, ws.facility))
    assert sol.counts["leaf"] + sol.counts["spine"] + sol.counts["core"] == s.leaves + s.spines + s.cores


def test_a_budget_that_only_early_batches_meet_keeps_their_design(tmp_path):
    """Every batch is solved for min_cost_per_token; when the last batches hold only systems over
    the budget, their programs are infeasible, and the design found earlier stands."""
    text = SPECS["two workloads, hybrid"].replace("name: two", "name: two\n        objective: min_cost_per_token")
    text = text.replace("deployments: [on_prem, cloud]", "deployments: [on_prem]")
    free = _workspace(tmp_path, text)
    th = free.task.thresholds
    sol = batches.solve(free, th)
    total = sol.capex_usd + sol.opex_usd + sol.cloud_usd
    tight = _workspace(tmp_path, text.replace("horizon: 2 years", f"horizon: 2 years\n        budget: {{total: ${total * 1.02:.0f}}}"))
    again = batches.solve(tight, th)
    assert (again.onprem_key, again.nodes) == (sol.onprem_key, sol.nodes)


def test_thresholds_admit_a_run_exactly_at_a_limit_despite_float_noise():
    from types import MappingProxyType

    th = Thresholds(0.7, MappingProxyType({"w": 100.0}))
    assert th.admits("w", 100.0 * (1 + 1e-13), 0.7 - 1e-13)
    assert not th.admits("w", 100.0 * (1 + 1e-9), 0.7)
    assert not th.admits("w", 100.0, 0.7 - 1e-9)
    assert not th.admits("w", float("inf"), 1.0)  # an evaluation with no plan never qualifies


@pytest.mark.parametrize("name", sorted(SPECS))
def test_a_dominated_candidate_never_beats_the_one_that_dominates_it(tmp_path, name):
    """Each candidate :func:`~designer.optimize.dominance.undominated` drops has a twin on the
    same fabric whose program, over the same workloads, is no dearer: the twin's network is
    no slower (the performance model's monotonicity) and its switches no dearer."""
    from designer.errors import InfeasibleError
    from designer.spec.choices import Deployment

    ws = _workspace(tmp_path, SPECS[name])
    th = ws.task.thresholds
    onprem = [c.key for c in ws.candidates if c.deployment is Deployment.ON_PREM]
    kept = set(dominance.undominated(ws, onprem))
    dropped = [k for k in onprem if k not in kept]
    assert dropped and len(kept) < len(onprem)
    checked = 0
    for key in dropped[::7]:
        twin = next(k for k in sorted(kept) if dominance._twin_key(ws, ws.by_key[k]) == dominance._twin_key(ws, ws.by_key[key])
                    and dominance._at_least_as_good(ws, ws.by_key[k], ws.by_key[key]))
        if not (ws.prepare(key, th) and ws.prepare(twin, th)):
            continue
        try:
            worse = solve_problem(ws.problem([key], th, objective="min_total_cost"))
        except InfeasibleError:
            continue
        better = solve_problem(ws.problem([twin], th, objective="min_total_cost"))
        # Busy energy follows the plan's compute seconds (ownership.busy_energy_j), and the faster
        # network's fastest plan may compute a little longer and communicate less: its opex may
        # exceed the slower twin's by that energy, a few dollars in a million.
        assert better.capex_usd <= worse.capex_usd * (1 + 1e-9)
        assert better.capex_usd + better.opex_usd <= (worse.capex_usd + worse.opex_usd) * (1 + 1e-4)
        checked += 1
    assert checked
