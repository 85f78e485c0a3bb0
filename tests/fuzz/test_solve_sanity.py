"""Numerical sanity of solved designs on small generated specs: no negative cost, utilization in
(0, 1], the constraints the spec sets are met, and a bigger budget never buys a worse optimum.

Each solve takes a fraction of a second, so these keep their own small example counts in every
profile (they are not part of the fuzz case count), plus a few outcomes via the CLI (exit 0, 2 or 3).
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st
from typer.testing import CliRunner

from designer import catalog as catalog_mod, planner
from designer.cli import app
from designer.errors import InfeasibleError
from designer.planner import inputs
from designer.spec import load as spec_mod
from designer.spec import yamlio

from . import gen

CATALOG = catalog_mod.load_builtin()
RUNNER = CliRunner()
DAY_S = 86400.0
REL = 1e-9  # float noise when sums are compared


def small_spec(*, tokens_b: int, deadline_days: int, min_util: float, deployments: list[str], fabrics: list[str],
               topologies: list[str], max_nodes: int, budget: str | None, objective: str = "min_total_cost") -> str:
    """Llama 3 8B on a few nodes: small enough that a solve takes well under a second."""
    lines = [
        "version: 1", "name: sanity", f"objective: {objective}", "horizon: 1 years",
        *([f"budget: {{total: {budget}}}"] if budget else []),
        "workloads:", "  - name: w", "    model: {preset: llama3-8b}", f"    tokens: {tokens_b}B",
        "    global_batch: 64", f"    deadline: {deadline_days} days",
        "constraints:", f"  min_utilization: {min_util}", f"  deployments: [{', '.join(deployments)}]",
        f"  fabrics: [{', '.join(fabrics)}]", f"  topologies: [{', '.join(topologies)}]", f"  max_nodes: {max_nodes}",
    ]
    return "\n".join(lines) + "\n"


small_specs = st.builds(
    small_spec,
    tokens_b=st.integers(5, 60),
    deadline_days=st.integers(5, 60),
    min_util=st.sampled_from([0.0, 0.3, 0.5, 0.7, 0.9]),
    deployments=st.sampled_from([["on_prem"], ["cloud"], ["on_prem", "cloud"]]),
    fabrics=st.lists(st.sampled_from(["ethernet", "roce", "infiniband"]), min_size=1, max_size=3, unique=True),
    topologies=st.lists(st.sampled_from(["single_switch", "fat_tree", "rail_optimized", "rail_only"]),
                        min_size=1, max_size=2, unique=True),
    max_nodes=st.integers(1, 6),
    budget=st.sampled_from([None, "$50k", "$300k", "$2M"]),
)


def solve(text: str):
    s = spec_mod.parse_spec(yamlio.load_yaml_text(text, "sanity.yaml"), digest=spec_mod.spec_digest(text))
    inputs.check_references(s, CATALOG)
    # A generous limit: the tests fail, rather than hang, if the optimizer ever stalls.
    return s, planner.plan(s, CATALOG, solver="highs", time_limit_s=120)


@settings(max_examples=8, deadline=None)
@given(small_specs)
def test_solved_designs_are_numerically_sane(text):
    try:
        s, d = solve(text)
    except InfeasibleError as exc:
        assert exc.message and (exc.reasons or exc.relaxations)
        return
    c = d.cost
    for name in ("capex_usd", "opex_usd", "cloud_usd", "total_usd", "installation_usd", "power_usd", "maintenance_usd",
                 "residual_usd"):
        value = getattr(c, name)
        assert math.isfinite(value) and value >= 0, (name, value)
    assert c.total_usd == pytest.approx(c.capex_usd + c.opex_usd + c.cloud_usd - c.residual_usd, rel=REL)
    assert c.residual_usd <= c.capex_usd * (1 + REL)  # never more than was paid
    assert all(v >= 0 for v in c.capex_by_category.values())
    assert all(v >= 0 for v in c.opex_by_category.values())
    assert sum(l.amount_usd for l in c.lines if l.kind != "residual") - c.residual_usd == pytest.approx(
        c.total_usd, rel=REL, abs=0.05)
    for line in d.bom:
        assert line.quantity >= 0 and (line.unit_price_usd is None or line.unit_price_usd >= 0), line
        assert line.unit_power_w >= 0, line
    if s.budget.total_usd is not None:
        assert c.total_usd <= s.budget.total_usd * (1 + REL)
    assert d.system.nodes <= s.constraints.max_nodes
    for w in d.workloads:
        assert 0 < w.utilization <= 1 and 0 < w.mfu <= 1, w
        assert w.utilization >= s.constraints.min_utilization - 1e-9
        assert w.step_time_s > 0 and w.tokens_per_s > 0 and w.time_to_train_days > 0
        assert w.tp * w.pp * w.dp * w.cp <= w.gpus
        b = w.breakdown
        assert min(b.compute_s, b.tp_comm_s, b.pp_comm_s, b.dp_comm_s, b.ep_comm_s, b.bubble_s, b.exposed_comm_s) >= 0
        assert b.compute_s <= w.step_time_s * (1 + REL)
        if w.deadline_days is not None:
            assert w.time_to_train_days <= w.deadline_days * (1 + 1e-6)


def _best(text: str) -> tuple[float, float] | None:
    """(total cost, longest time to train in days) of the optimum, or None when infeasible."""
    try:
        _, d = solve(text)
    except InfeasibleError:
        return None
    return d.cost.total_usd, max(w.time_to_train_days for w in d.workloads)


@pytest.mark.parametrize("deployments, objectives", [
    (["on_prem"], ["min_total_cost", "min_time"]),
    (["on_prem", "cloud"], ["min_total_cost"]),
])
def test_a_bigger_budget_never_gives_a_worse_optimum(deployments, objectives):
    common = dict(tokens_b=20, deadline_days=30, min_util=0.5, deployments=deployments,
                  fabrics=["roce", "infiniband"], topologies=["single_switch"], max_nodes=4)
    cheapest = _best(small_spec(budget=None, **common))
    assert cheapest is not None
    tight, loose = f"${cheapest[0] * 1.05:.2f}", f"${cheapest[0] * 20:.2f}"
    for objective in objectives:
        small = _best(small_spec(budget=tight, objective=objective, **common))
        big = _best(small_spec(budget=loose, objective=objective, **common))
        assert small is not None and big is not None
        if objective == "min_total_cost":
            # The cheapest design was affordable under both budgets: the optimum cannot move.
            assert small[0] == pytest.approx(cheapest[0], rel=1e-6)
            assert big[0] == pytest.approx(cheapest[0], rel=1e-6)
        else:
            assert big[1] <= small[1] * (1 + 1e-6)  # more money never trains slower
            assert small[0] <= cheapest[0] * 1.05 * (1 + REL)


SMALL = small_spec(tokens_b=10, deadline_days=30, min_util=0.5, deployments=["on_prem"], fabrics=["infiniband"],
                   topologies=["single_switch"], max_nodes=2, budget="$1M")


@settings(max_examples=8, deadline=None)
@given(st.one_of(gen.mutated_data(SMALL).map(gen.dump), gen.mutated_text(SMALL)))
def test_solve_on_a_mutated_small_spec_exits_0_2_or_3_and_writes_only_on_success(text):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "spec.yaml"
        path.write_text(text, encoding="utf-8")
        out = Path(folder) / "design.yaml"
        result = RUNNER.invoke(app, ["solve", str(path), "-o", str(out), "--time-limit", "20"])
        gen.assert_cli_outcome(result, {str(path)}, allowed=frozenset({0, 2, 3}))
        assert out.exists() == (result.exit_code == 0)
