"""The planner's promises about a design's own figures: what the design shows (its bill of
materials and floor layout) meets the spec's limits, and the constraint table reports those
figures, not the program's approximations.

The SuperPOD example is used where the program must undercount: its 128 DGX lay out in 4 more
racks than the program's pooled rack count (48 against 44), so its exact total is $47,250 above
the program's. (The pre-training example's program and design now agree to the cent.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from designer import planner
from designer.catalog import load_builtin
from designer.errors import InfeasibleError
from designer.planner.inputs import load_inputs
from tiny_spec import TINY

CATALOG = load_builtin()

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = (ROOT / "examples" / "pretrain-large.yaml").read_text()
BUDGET = "budget: {capex: $400M, total: $500M}"


def _plan(tmp_path: Path, text: str):
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    spec, catalog = load_inputs(path)
    return planner.plan(spec, catalog)


@pytest.fixture(scope="module")
def free(tmp_path_factory):
    return _plan(tmp_path_factory.mktemp("free"), EXAMPLE)


def test_the_constraint_table_reports_the_designs_own_figures(free):
    status = {c.name: c for c in free.constraints}
    assert status["budget.total"].value == pytest.approx(free.cost.total_usd, abs=0.005)
    assert status["budget.capex"].value == pytest.approx(free.cost.capex_usd, abs=0.005)
    assert status["constraints.max_power"].value == pytest.approx(free.system.power_kw * 1e3, rel=1e-9)


def test_a_budget_the_program_meets_but_the_laid_out_design_does_not_is_infeasible(tmp_path):
    superpod = (ROOT / "examples" / "superpod-h100.yaml").read_text()
    exact = _plan(tmp_path, superpod).cost.total_usd
    program = exact - 4 * 11_250.0 * 1.05  # 4 racks fewer with their installation (module docstring)
    between = f"budget: {{total: \"${(program + exact) / 2:,.2f}\"}}\n"
    with pytest.raises(InfeasibleError) as info:
        _plan(tmp_path, superpod.replace("horizon: 3 years\n", "horizon: 3 years\n" + between))
    (suggestion,) = info.value.relaxations
    assert suggestion.endswith(f"to ${exact + 0.01:,.2f}"), suggestion
    assert "once" in info.value.reasons[0] and "laid out" in info.value.reasons[0]


def test_the_suggested_budget_buys_a_design_that_fits_it(tmp_path, free):
    limit = round(free.cost.total_usd + 0.01, 2)
    d = _plan(tmp_path, EXAMPLE.replace(BUDGET, f"budget: {{capex: $400M, total: \"${limit:,.2f}\"}}"))
    assert d.cost.total_usd <= limit
    status = {c.name: c for c in d.constraints}
    assert status["budget.total"].slack >= 0


def test_the_design_records_the_facility_it_was_priced_for(free):
    """The pre-training example sets electricity $0.078/kWh, PUE 1.25 and 40 kW racks; its power
    bill is the energy at that PUE and price over the horizon (3 years): servers idle at the
    facility's idle share of their rating, plus (training - idle) x utilization while the job runs
    (the linear server power model), the network and storage at their rating around the clock."""
    f = free.facility
    assert (f.electricity_usd_per_kwh, f.pue, f.rack_power_kw) == pytest.approx((0.078, 1.25, 40.0))
    assert f.from_spec == ("electricity", "pue", "rack_power")
    assert f.source and f.as_of
    server = CATALOG.servers[free.system.server]
    nodes, hours = free.system.nodes, free.horizon_days * 24
    idle_kw, train_kw = server.power_w * f.idle_power_fraction / 1e3, server.power_w * f.training_power_fraction / 1e3
    rest_kw = free.system.power_kw - nodes * server.power_w / 1e3
    (w,) = free.workloads
    busy_kwh = (train_kw - idle_kw) * w.utilization * w.gpus / server.gpus * w.time_to_train_days * 24
    kwh = (idle_kw * nodes + rest_kw) * hours + busy_kwh
    assert free.cost.power_usd == pytest.approx(kwh * f.pue * f.electricity_usd_per_kwh, rel=1e-6)
    # Below the old bill at nameplate around the clock, above the idle floor.
    assert idle_kw * nodes * hours < kwh < free.system.power_kw * hours


def test_a_facility_the_spec_leaves_alone_is_the_catalogs(tmp_path):
    d = _plan(tmp_path, TINY)
    assert d.facility.from_spec == ()
    assert d.facility.name == "default"


def test_the_design_file_records_the_whole_stack_as_run(tmp_path):
    """Every software knob the prediction used is in the design file, so the workload can be run
    and re-estimated as written: here the SHARP reductions and DeepEP dispatch the spec asks for,
    and a round trip through the file keeps them (docs/contract.md, design file)."""
    from designer.design import io as design_io

    text = TINY.replace("    deadline: 30 days\n", "    deadline: 30 days\n"
                        "    software: {preset: megatron-core, in_network_reduction: true, moe_dispatcher: deepep}\n")
    design = _plan(tmp_path, text)
    (w,) = design.workloads
    sw = w.software
    assert (sw.preset, sw.in_network_reduction, sw.moe_dispatcher, sw.compile, sw.dropout) == (
        "megatron-core", True, "deepep", False, False)
    # Megatron-Core overlaps pipeline sends only in the interleaved schedule.
    assert sw.p2p_overlap is (w.virtual_stages > 1)
    path = tmp_path / "design.yaml"
    path.write_text(design_io.dump_design(design))
    assert design_io.load_design(path).workloads[0].software == sw
    text = path.read_text()
    assert "in_network_reduction: true" in text and "moe_dispatcher: deepep" in text
