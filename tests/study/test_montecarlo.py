"""Monte Carlo studies: statistics on hand-built scenarios, scenario inputs, and real studies of a
small spec (shares add up, same seed same bytes, any worker count same bytes, failures kept)."""

from __future__ import annotations

import dataclasses
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from designer.cli import app
from designer.design.montecarlo import Cell, StudyDesign
from designer.errors import InputError
from designer.perf import ModelEfficiency
from designer.planner.inputs import load_inputs
from designer.planner.pipeline import plan
from designer.report import montecarlo as report
from designer.study import executor as ex
from designer.study import montecarlo as mc
from designer.study.distributions import parse_uncertainty
from designer.study.scenarios import Solved, design_of, keeps, pinned_spec
from designer.study.variants import apply_factors
from tests.study.test_whatif import SMALL_SPEC

MIP_GAP = 1e-4  # HiGHS's relative gap: costs closer than this may come out either way


def _design(label: str, nodes: int = 3) -> StudyDesign:
    return StudyDesign(label, "on_prem", "srv", "gpu", nodes, "infiniband", "single_switch", "sw", 1.0)


# ---------------------------------------------------------------- statistics on hand-built cells


def _ok(x: float) -> Cell:
    return Cell("ok", x)


NO = Cell("infeasible", reason="misses its deadline")


def _summary(cells, chosen, min_share=0.75):
    designs = [_design("A"), _design("B", 4), _design("C", 5)]
    solved = [Solved(cells[i][chosen[i]] if chosen[i] is not None else NO,
                     designs[chosen[i]] if chosen[i] is not None else None) for i in range(len(cells))]
    draws = [(("tokens", 1.0 + i / 100),) for i in range(len(cells))]
    base = Solved(_ok(100.0), designs[0])
    return mc.summarize("t", 0, [parse_uncertainty("tokens=uniform:0%..+10%")], min_share, base, draws, solved,
                        designs, cells)


CELLS = [  # A is cheap but misses in 2 of 8 scenarios; B always fits; C is dear
    [_ok(100), _ok(110), _ok(150)],
    [_ok(102), _ok(111), _ok(151)],
    [_ok(104), _ok(112), _ok(152)],
    [_ok(106), _ok(113), _ok(153)],
    [_ok(108), _ok(114), _ok(154)],
    [_ok(130), _ok(115), _ok(155)],
    [NO, _ok(116), _ok(156)],
    [NO, _ok(117), _ok(157)],
]
CHOSEN = [0, 0, 0, 0, 0, 1, 1, 1]


def test_shares_count_where_each_design_is_cheapest():
    r = _summary(CELLS, CHOSEN)
    by = {s.design.label: s for s in r.designs}
    assert [s.design.label for s in r.designs] == ["A", "B", "C"]  # by share, then median cost
    assert (by["A"].cheapest, by["B"].cheapest, by["C"].cheapest) == (5, 3, 0)
    assert by["A"].share + by["B"].share + by["C"].share + r.no_design_share + r.failed_share == 1.0
    assert by["A"].infeasible_share == 2 / 8 and by["B"].infeasible_share == 0.0


def test_percentiles_interpolate_between_order_statistics():
    by = {s.design.label: s for s in _summary(CELLS, CHOSEN).designs}
    # B's totals are 110..117: p10 at rank 0.7, p50 at 3.5, p90 at 6.3.
    assert (by["B"].cost_p10_usd, by["B"].cost_p50_usd, by["B"].cost_p90_usd) == pytest.approx((110.7, 113.5, 116.3))
    assert by["B"].cost_mean_usd == pytest.approx(113.5)
    # A is feasible in 6: 100, 102, 104, 106, 108, 130.
    assert by["A"].cost_p90_usd == pytest.approx(108 + 0.5 * 22)
    # Regret: B costs 10, 9, 8, 7, 6 more than A in the first five and is cheapest in the rest.
    assert by["B"].regret_mean_usd == pytest.approx((10 + 9 + 8 + 7 + 6) / 8)


ROBUST = [  # A is cheaper but misses in 1 of 5; B always fits
    [_ok(100), _ok(120), _ok(200)],
    [_ok(101), _ok(121), _ok(201)],
    [_ok(102), _ok(122), _ok(202)],
    [_ok(103), _ok(123), _ok(203)],
    [NO, _ok(124), _ok(204)],
]


def test_the_robust_choice_has_the_lowest_p90_among_designs_that_fit_often_enough():
    loose = _summary(ROBUST, [0, 0, 0, 0, 1], min_share=0.8)
    assert loose.designs[loose.robust].design.label == "A"  # fits 4 of 5 = 80%, p90 102.7 < B's 123.6
    assert loose.designs[loose.robust].cost_p90_usd == pytest.approx(102.7)
    strict = _summary(ROBUST, [0, 0, 0, 0, 1], min_share=0.9)
    assert strict.designs[strict.robust].design.label == "B"
    assert [s.robust for s in strict.designs] == [s.design.label == "B" for s in strict.designs]


def test_without_a_design_that_fits_often_enough_there_is_no_robust_choice():
    none = _summary([[NO, NO, _ok(1)]] * 4 + [[NO, NO, NO]] * 4, [2] * 4 + [None] * 4, 1.0)
    assert none.robust is None and none.no_design_share == 0.5


def test_ties_go_to_the_design_the_full_solve_chose():
    cells = [[_ok(100), _ok(100), _ok(200)]]
    assert _summary(cells, [1]).scenarios[0].cheapest == [s.design.label for s in _summary(cells, [1]).designs].index("B")


# ---------------------------------------------------------------- scenario inputs


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    path = tmp_path_factory.mktemp("mc") / "small.yaml"
    path.write_text(SMALL_SPEC)
    spec, catalog = load_inputs(path)
    return path, spec, catalog


def test_factors_multiply_tokens_deadlines_and_efficiencies(small):
    _, spec, catalog = small
    s, c, eff = apply_factors(spec, catalog, (("compute_efficiency", 0.9), ("deadline", 1.5), ("tokens", 1.2)))
    (w0,), (w1,) = spec.workloads, s.workloads
    assert w1.tokens == pytest.approx(1.2 * w0.tokens) and w1.deadline_s == pytest.approx(1.5 * w0.deadline_s)
    assert eff == ModelEfficiency(compute=0.9, network=1.0) and c is catalog
    with pytest.raises(InputError):
        apply_factors(spec, catalog, (("tokens", 0.0),))


def test_a_design_priced_alone_costs_what_the_full_solve_said(small):
    _, spec, catalog = small
    full = plan(spec, catalog, explain_design=False)
    d = design_of(full)
    alone = plan(pinned_spec(spec, d), catalog, explain_design=False, keep=keeps(d))
    assert design_of(alone) == d
    assert alone.cost.total_usd == pytest.approx(full.cost.total_usd, rel=MIP_GAP)


# ---------------------------------------------------------------- real studies

VARY = ["cloud_price=normal:25%", "gpu_price=uniform:-20%..+30%", "tokens=triangular:-10%..0%..+30%",
        "compute_efficiency"]


@pytest.fixture(scope="module")
def study(small):
    _, spec, catalog = small
    return mc.monte_carlo(spec, catalog, [parse_uncertainty(v) for v in VARY], samples=10, seed=4)


def test_a_study_adds_up(study):
    assert len(study.scenarios) == 10
    counts = sum(s.cheapest for s in study.designs)
    no_design = sum(1 for s in study.scenarios if s.cheapest is None)
    assert counts + no_design == 10
    assert sum(s.share for s in study.designs) + study.no_design_share + study.failed_share == pytest.approx(1.0, abs=1e-12)
    for s in study.designs:
        assert s.feasible + s.infeasible + s.unknown == 10
        if s.feasible:
            assert s.cost_p10_usd <= s.cost_p50_usd <= s.cost_p90_usd
    for sc in study.scenarios:  # the cheapest is the lowest feasible total
        ok = [c.total_usd for c in sc.cells if c.status == "ok"]
        if ok:
            assert sc.cells[sc.cheapest].total_usd == min(ok)
    assert study.designs[study.base].base


def test_the_same_seed_gives_the_same_bytes_on_any_number_of_workers(small, study):
    _, spec, catalog = small
    text = json.dumps(report.study_to_json_dict(study), indent=2)
    with ex.ProcessExecutor(2) as two:
        again = mc.monte_carlo(spec, catalog, [parse_uncertainty(v) for v in reversed(VARY)], samples=10, seed=4,
                               executor=two)
    again_json = report.study_to_json_dict(again)
    first_json = report.study_to_json_dict(study)
    # The inputs are listed as given; everything computed is the same.
    assert again_json["scenarios"] == first_json["scenarios"] and again_json["designs"] == first_json["designs"]
    repeat = mc.monte_carlo(spec, catalog, [parse_uncertainty(v) for v in VARY], samples=10, seed=4)
    assert json.dumps(report.study_to_json_dict(repeat), indent=2) == text
    other = mc.monte_carlo(spec, catalog, [parse_uncertainty(v) for v in VARY], samples=3, seed=5)
    assert [s.factors for s in other.scenarios] != [s.factors for s in study.scenarios[:3]]


class _Flaky(ex.InlineExecutor):
    """Loses the full solve of scenario 2 (task index 3: the base is task 0)."""

    def map(self, items, tick=None, *, failures=False):
        out = super().map(items, tick, failures=failures)
        if len(items) > 3 and items[3].design is None:
            out[3] = ex.TaskFailure(3, "RuntimeError: worker lost")
        return out


def test_a_failed_scenario_is_reported_with_its_inputs_and_the_others_stand(small, study):
    _, spec, catalog = small
    r = mc.monte_carlo(spec, catalog, [parse_uncertainty(v) for v in VARY], samples=10, seed=4, executor=_Flaky())
    bad = r.scenarios[2]
    assert bad.status == "error" and bad.reason == "RuntimeError: worker lost"
    assert bad.factors == study.scenarios[2].factors
    assert all(c.status == "error" for c in bad.cells) and bad.cheapest is None
    assert r.failed_share == pytest.approx(0.1)
    # Every other scenario prices every design it shares with the full study the same.
    labels = [s.design.label for s in r.designs]
    full = {s.design.label: j for j, s in enumerate(study.designs)}
    for i in (0, 1, 3, 4, 5, 6, 7, 8, 9):
        for j, label in enumerate(labels):
            assert r.scenarios[i].cells[j] == study.scenarios[i].cells[full[label]], (i, label)
    assert [f.index for f in report.failed_scenarios(r)] == [2]
    assert "#2 (" in report.render_study_table(r)


def test_bad_study_options_fail_before_any_solve(small):
    _, spec, catalog = small
    u = parse_uncertainty("gpu_price=normal:15%")
    for kwargs, message in (({"samples": 0}, "--samples"), ({"samples": 2, "min_feasible_share": 1.5}, "--min-feasible")):
        with pytest.raises(InputError, match=message):
            mc.monte_carlo(spec, catalog, [u], **kwargs)
    with pytest.raises(InputError, match="given twice"):
        mc.monte_carlo(spec, catalog, [u, u], samples=2)
    wide = dataclasses.replace(parse_uncertainty("compute_efficiency=lognormal:150%"))
    with pytest.raises(InputError, match="leave the model's range"):
        mc.monte_carlo(spec, catalog, [wide], samples=2)


# ---------------------------------------------------------------- the command


def test_the_study_command_prints_json_and_a_picture(small, tmp_path):
    path, _, _ = small
    runner = CliRunner()
    out = tmp_path / "study.png"
    res = runner.invoke(app, ["study", str(path), "--vary", "gpu_price=normal:10%", "--samples", "3", "--jobs", "1",
                              "--format", "json", "-o", str(out)])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["format_version"] == 1 and doc["designs"] and len(doc["scenarios"]) == 3
    assert {"share", "cost_p10_usd", "cost_p50_usd", "cost_p90_usd", "infeasible_share"} <= set(doc["designs"][0])
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    table = runner.invoke(app, ["study", str(path), "--samples", "2", "--jobs", "1"])
    assert table.exit_code == 0 and "varying the model's compute and network efficiencies" in table.stderr
    assert "robust choice" in table.stdout


@pytest.mark.parametrize("args, message", [
    (["--vary", "gpu_price=normal:40%"], "use lognormal:40%"),
    (["--vary", "gpu_price"], "give a distribution"),
    (["--min-feasible", "lots"], "--min-feasible"),
    (["--vary", "deadline=normal:10%", "--samples", "0"], "--samples"),
])
def test_the_study_command_refuses_bad_options_with_exit_2(small, args, message):
    path, _, _ = small
    res = CliRunner().invoke(app, ["study", str(path), *args])
    assert res.exit_code == 2, res.output
    assert message in res.stderr


def _descendants(pid: int) -> set[int]:
    out, todo = set(), [pid]
    while todo:
        p = todo.pop()
        try:
            kids = Path(f"/proc/{p}/task/{p}/children").read_text().split()
        except OSError:
            continue
        for k in map(int, kids):
            out.add(k)
            todo.append(k)
    return out


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_ctrl_c_stops_a_study_and_its_workers_with_exit_130(small, tmp_path):
    path, _, _ = small
    out = tmp_path / "study.png"
    proc = subprocess.Popen([sys.executable, "-m", "designer", "study", str(path), "--samples", "400", "--jobs", "2",
                             "-o", str(out), "--vary", "gpu_price=normal:10%"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    workers: set[int] = set()
    while time.monotonic() < deadline and len(workers) < 2:  # wait until the pool is up
        workers = _descendants(proc.pid)
        time.sleep(0.1)
    assert len(workers) >= 2, "the study never started its workers"
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert stderr.decode().strip().splitlines()[-1] == "interrupted; no output was written"
    assert b"Traceback" not in stderr and stdout == b"" and not out.exists()
    time.sleep(0.5)
    assert not [p for p in workers if Path(f"/proc/{p}").exists()
                and Path(f"/proc/{p}/stat").read_text().split(") ")[1][0] != "Z"]
