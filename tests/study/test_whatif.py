"""What-if analyses: ranges, price and target variants, bisection, frontier and sweep on a small spec."""

from __future__ import annotations

import dataclasses
import json
import math
import pickle
import struct
import textwrap

import pytest
import typer
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from designer import study
from designer.catalog import load_catalog
from designer.catalog.types import MediaKind
from designer.cli import whatif as cli_whatif
from designer.errors import InputError
from designer.pictures import plot
from designer.planner.compile import facility_for
from designer.planner.inputs import load_inputs
from designer.report import study as report_study
from designer.spec.choices import Deployment
from designer.spec.units import parse_money
from designer.study import workers

# HiGHS stops at a relative MIP gap of 1e-4 by default (HiGHS option mip_rel_gap): two designs
# closer than that in cost may come out either way, so cost comparisons allow it.
MIP_GAP = 1e-4

# A small job where buying and renting are both in play: Llama 3 8B on 12T tokens within 700 days
# on at most 4 H100 servers. Buying 3 DGX H100 costs about $1.4M over 3 years, renting them about
# $2.4M, so the decision flips when cloud prices fall by roughly 40%. Pinned parallelism, one
# topology and two fabrics keep a solve to tens of milliseconds.
SMALL_SPEC = textwrap.dedent("""\
    version: 1
    name: small-h100
    objective: min_total_cost
    horizon: 3 years
    workloads:
      - name: llama3-8b
        model: {preset: llama3-8b, seq_len: 4096}
        tokens: 12T
        global_batch: 256
        precision: bf16
        recompute: selective
        parallelism: {tp: 1, pp: 3, dp: auto, microbatch: 1}
        deadline: 700 days
    constraints:
      min_utilization: 0.5
      deployments: [on_prem, cloud]
      gpus: [h100-sxm]
      fabrics: [infiniband, efa]
      topologies: [single_switch]
      max_nodes: 4
    """)


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    path = tmp_path_factory.mktemp("whatif") / "small.yaml"
    path.write_text(SMALL_SPEC)
    spec, catalog = load_inputs(path)
    return path, spec, catalog


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


# ---------------------------------------------------------------- parsing


def test_parse_range_includes_both_ends():
    values = cli_whatif.parse_range("0.5:0.95:0.05")
    assert len(values) == 10 and values[0] == 0.5 and values[-1] == 0.95
    assert all(math.isclose(b - a, 0.05) for a, b in zip(values, values[1:]))
    assert cli_whatif.parse_range("$5M:$15M:$5M", parse_money) == (5e6, 10e6, 15e6)
    assert cli_whatif.parse_range("0.9, 0.6,0.6") == (0.6, 0.9)


@pytest.mark.parametrize("text", ["1:0:0.1", "0:1:0", "0:1", "a,b", "", "0:1000:1"])
def test_parse_range_rejects(text):
    with pytest.raises(InputError):
        cli_whatif.parse_range(text)


def test_parse_variation():
    assert cli_whatif.parse_variation("gpu_price=-30%..+30%") == study.Variation("gpu_price", -0.3, 0.3)
    assert cli_whatif.parse_variation("electricity=+100%..-50%") == study.Variation("electricity", -0.5, 1.0)
    for bad in ("gpu=-30%..+30%", "gpu_price=-30..30", "gpu_price=-100%..0%", "gpu_price", "cloud_price=10%"):
        with pytest.raises(InputError):
            cli_whatif.parse_variation(bad)


def test_grid():
    assert study.grid(study.Variation("x", -0.5, 1.0), 4) == (-0.5, 0.0, 0.5, 1.0)
    assert study.grid(study.Variation("x", 0.2, 0.2), 5) == (0.2,)


# ---------------------------------------------------------------- variants


def test_gpu_price_moves_the_gpu_share_of_servers(catalog):
    _, changed = study.with_change(_spec_stub(), catalog, "gpu_price", 0.25)
    for name, server in catalog.servers.items():
        gpu = catalog.gpus[server.gpu]
        new = changed.servers[name]
        if gpu.price_usd is None:
            assert new.price_usd == server.price_usd
            continue
        assert math.isclose(changed.gpus[server.gpu].price_usd, gpu.price_usd * 1.25)
        # The rest of the server (chassis, CPUs, NICs) keeps its price.
        assert math.isclose(new.price_usd - new.gpus * changed.gpus[server.gpu].price_usd,
                            server.price_usd - server.gpus * gpu.price_usd)
    assert catalog.servers == load_catalog().servers  # the input catalog is untouched


def test_server_price_keeps_the_gpus(catalog):
    _, changed = study.with_change(_spec_stub(), catalog, "server_price", -0.2)
    for name, server in catalog.servers.items():
        if server.price_usd is None:  # unpriced (dgx-b300) stays unpriced, never $0
            assert changed.servers[name].price_usd is None
            continue
        gpus = server.gpus * (catalog.gpus[server.gpu].price_usd or 0.0)
        base = server.price_usd - gpus
        if base > 0:
            assert math.isclose(changed.servers[name].price_usd, gpus + base * 0.8)
    assert changed.gpus == catalog.gpus


def test_optics_cloud_switch_prices(catalog):
    stub = _spec_stub()
    _, optics = study.with_change(stub, catalog, "optics_price", 1.0)
    for name, cable in catalog.cables.items():
        factor = 1.0 if cable.media is MediaKind.DAC else 2.0
        assert math.isclose(optics.cables[name].price_usd, cable.price_usd * factor)
    assert all(math.isclose(optics.transceivers[n].price_usd, t.price_usd * 2) for n, t in catalog.transceivers.items())
    _, cloud = study.with_change(stub, catalog, "cloud_price", -0.5)
    for name, inst in catalog.clouds.items():
        for model in ("on_demand", "reserved_1y", "reserved_3y", "capacity_block"):
            old, new = inst.price_usd_per_s(model), cloud.clouds[name].price_usd_per_s(model)
            assert (new is None) == (old is None) and (old is None or math.isclose(new, old / 2))
    _, switches = study.with_change(stub, catalog, "switch_price", 0.1)
    assert all(switches.switches[n].price_usd is None if s.price_usd is None
               else math.isclose(switches.switches[n].price_usd, s.price_usd * 1.1) for n, s in catalog.switches.items())
    assert any(s.price_usd is None for s in catalog.switches.values())  # nvidia-q3400: no price found


def test_electricity(small):
    _, spec, catalog = small
    base = facility_for(spec, catalog).electricity_usd_per_j
    changed, same_catalog = study.with_change(spec, catalog, "electricity", -0.5)
    assert math.isclose(facility_for(changed, same_catalog).electricity_usd_per_j, base / 2)
    assert same_catalog is catalog


@settings(max_examples=30, deadline=None)
@given(a=st.floats(-0.9, 3.0), b=st.floats(-0.9, 3.0))
def test_changes_compose(catalog, a, b):
    stub = _spec_stub()
    _, once = study.with_change(stub, catalog, "switch_price", a)
    _, twice = study.with_change(stub, once, "switch_price", b)
    for name, switch in catalog.switches.items():
        if switch.price_usd is None:
            assert twice.switches[name].price_usd is None
            continue
        assert math.isclose(twice.switches[name].price_usd, switch.price_usd * (1 + a) * (1 + b), rel_tol=1e-12)


def test_with_target(small):
    _, spec, _ = small
    assert study.with_target(spec, "utilization", 0.8).constraints.min_utilization == 0.8
    assert study.with_target(spec, "deadline_scale", 0.5).workloads[0].deadline_s == spec.workloads[0].deadline_s / 2
    assert study.with_target(spec, "budget", 3e6).budget.total_usd == 3e6
    for target, value in (("utilization", 1.5), ("deadline_scale", 0.0), ("budget", -1.0), ("speed", 1.0)):
        with pytest.raises(InputError):
            study.with_target(spec, target, value)


def test_unused_variation(small):
    _, spec, _ = small
    assert all(study.unused_variation(spec, v) == "" for v in study.VARIABLES)
    on_prem_only = dataclasses.replace(spec, constraints=dataclasses.replace(
        spec.constraints, deployments=(Deployment.ON_PREM,)))
    assert study.unused_variation(on_prem_only, "cloud_price") == "the spec allows no cloud deployment"
    assert study.unused_variation(on_prem_only, "electricity") == ""
    cloud_only = dataclasses.replace(spec, constraints=dataclasses.replace(
        spec.constraints, deployments=(Deployment.CLOUD,)))
    assert study.unused_variation(cloud_only, "gpu_price") == "the spec allows no on-prem deployment"


def test_catalog_travels_to_workers(catalog):
    portable = workers.portable(catalog)
    assert workers.restored(pickle.loads(pickle.dumps(portable))) == catalog


# ---------------------------------------------------------------- bisection


@settings(max_examples=50, deadline=None)
@given(x0=st.floats(-0.49, 0.99), tol=st.sampled_from([0.01, 0.05]))
def test_bisection_brackets_the_change(x0, tol):
    calls = []

    def evaluate(x: float) -> study.Outcome:
        calls.append(x)
        return study.Outcome("ok", system="A" if x < x0 else "B")

    lo, hi = -0.5, 1.0
    found = study.bisect_change(evaluate, "gpu_price", lo, hi, evaluate(lo), evaluate(hi), tol)
    assert found.low < x0 <= found.high and found.high - found.low <= tol * (1 + 1e-9)
    assert (found.before.system, found.after.system) == ("A", "B")
    assert len(calls) - 2 == math.ceil(math.log2((hi - lo) / tol) - 1e-9)


# ---------------------------------------------------------------- frontier and sweep (real solves)


def test_frontier_budget_with_an_infeasible_point(small):
    _, spec, catalog = small
    result = study.frontier(spec, catalog, "budget", [20e6, 1.0, 10e6], workers=1)
    assert [p.value for p in result.points] == [1.0, 10e6, 20e6]
    poor, mid, rich = (p.outcome for p in result.points)
    assert poor.status == "infeasible" and poor.total_usd is None and poor.classes == ()
    assert mid.status == rich.status == "ok"
    # A budget above the optimum's total does not bind: same optimum.
    assert math.isclose(mid.total_usd, rich.total_usd, rel_tol=MIP_GAP)
    for o in (mid, rich):
        feasible = [t for _, t in o.classes if t is not None]
        assert feasible and min(feasible) >= o.total_usd * (1 - MIP_GAP)
        assert o.total_usd in feasible  # the chosen class carries the design's exact total
    assert set(result.classes) == {label for label, _ in rich.classes}
    pytest.importorskip("matplotlib")
    png = plot.render_frontier(result, "png", name="small")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">I", png[16:20])[0] > 800


def test_frontier_is_monotone_in_the_target(small):
    _, spec, catalog = small
    result = study.frontier(spec, catalog, "utilization", [0.5, 0.8, 0.95], workers=2)
    assert study.frontier(spec, catalog, "utilization", [0.95, 0.5, 0.8], workers=1) == result
    totals = [p.outcome.total_usd for p in result.points if p.outcome.status == "ok"]
    assert len(totals) >= 2
    # A higher target only removes designs, so the optimum never gets cheaper.
    assert all(b >= a * (1 - MIP_GAP) for a, b in zip(totals, totals[1:]))
    for s in result.switchovers:
        assert s.before != s.after and s.low < s.high


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_frontier_plot_without_any_design(fmt):
    pytest.importorskip("matplotlib")
    nothing = study.Outcome("infeasible", reason="no design meets every constraint")
    front = study.Frontier("budget", (study.FrontierPoint(1.0, nothing), study.FrontierPoint(2.0, nothing)), (), ())
    data = plot.render_frontier(front, fmt)
    assert data.startswith(b"\x89PNG" if fmt == "png" else b"<?xml")
    assert report_study.render_frontier_table(front).count("infeasible") == 2


def test_sweep_locates_the_buy_or_rent_switch(small):
    _, spec, catalog = small
    base = study.solve_outcome(spec, catalog)
    classes = dict(base.classes)
    buy, rent = classes["deployment=on_prem"], classes["deployment=cloud"]
    assert base.total_usd == pytest.approx(min(buy, rent), rel=MIP_GAP)
    # Cloud spend is instance-hours times price, so renting costs rent * (1 + x) and the decision
    # flips at x* = buy / rent - 1.
    x_star = buy / rent - 1
    assert -0.9 < x_star < 0.9
    var = study.Variation("cloud_price", x_star - 0.1, x_star + 0.1)
    result = study.sweep(spec, catalog, [var], steps=2, tolerance=0.05, workers=1)
    assert result.base.system == base.system
    assert [p.outcome.technology.split()[0] for p in result.points] == ["cloud", "on_prem"]
    (x,) = result.crossovers
    assert x.high - x.low <= 0.05 + 1e-9
    slack = 2 * MIP_GAP * buy / rent  # the gap lets near-ties go either way
    assert x.low - slack <= x_star <= x.high + slack
    assert x.before.technology.startswith("cloud") and x.after.technology.startswith("on_prem")


def test_sweep_rejects_duplicates(small):
    _, spec, catalog = small
    var = study.Variation("gpu_price", -0.1, 0.1)
    with pytest.raises(InputError, match="once"):
        study.sweep(spec, catalog, [var, var])


# ---------------------------------------------------------------- command line


@pytest.fixture
def runner_app():
    app = typer.Typer()
    app.command("frontier")(cli_whatif.frontier_command)
    app.command("sweep")(cli_whatif.sweep_command)
    return app


def test_cli_sweep_json(runner_app, small):
    path, _, _ = small
    result = CliRunner().invoke(runner_app, ["sweep", str(path), "--vary", "switch_price=0%..+10%", "--steps", "2",
                                             "--json", "--jobs", "1"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["base"]["status"] == "ok" and data["tolerance"] == study.TOLERANCE
    (var,) = data["variables"]
    assert var["name"] == "switch_price" and [p["change"] for p in var["points"]] == [0.0, 0.1]
    assert {"status", "system", "technology", "total_usd", "reason"} <= set(var["points"][0])


@pytest.mark.parametrize("args, message", [
    (["sweep", "{spec}", "--vary", "gpu=-10%..+10%"], "expected NAME=LOW..HIGH"),
    (["frontier", "{spec}", "--utilization", "0.5:0.9:0.1", "--budget", "$1M:$2M:$1M"], "give one of"),
    (["frontier", "{spec}", "--utilization", "0.5,1.5"], "between 0 and 1"),
    (["frontier", "{spec}", "-o", "plot.pdf"], "unknown picture format .pdf"),
])
def test_cli_bad_input(runner_app, small, args, message):
    path, _, _ = small
    result = CliRunner().invoke(runner_app, [a.replace("{spec}", str(path)) for a in args])
    assert result.exit_code == 2 and message in result.output


def _spec_stub():
    """Price variants other than electricity never read the spec; a bare object stands in for one."""
    return object()
