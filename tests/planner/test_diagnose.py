"""Suggested relaxations are the smallest that work, each checked by solving with it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from designer import planner
from designer.errors import InfeasibleError
from designer.planner.inputs import load_inputs

QUICKSTART = (Path(__file__).resolve().parents[2] / "examples" / "quickstart.yaml").read_text()
TOPOLOGIES = "  topologies: [single_switch, fat_tree, rail_optimized, rail_only]\n"


def _plan(tmp_path, racks: int):
    path = tmp_path / f"racks{racks}.yaml"
    path.write_text(QUICKSTART.replace(TOPOLOGIES, TOPOLOGIES + f"  max_racks: {racks}\n"))
    spec, catalog = load_inputs(path)
    return planner.plan(spec, catalog)


def test_the_suggested_rack_limit_is_the_smallest_that_works(tmp_path):
    # The design with fewest racks as the program counts them lays out in 4; a 2-rack-scale
    # system of 3 racks meets every other constraint, so 3 is the smallest limit that works.
    with pytest.raises(InfeasibleError) as info:
        _plan(tmp_path, 2)
    found = [r for r in info.value.relaxations if "max_racks" in r]
    assert found == ["raise constraints.max_racks from 2 to 3"]
    suggested = int(re.search(r"to (\d+)$", found[0]).group(1))
    design = _plan(tmp_path, suggested)
    status = {c.name: c for c in design.constraints}
    assert status["constraints.max_racks"].value <= suggested
    # At slack 0 the limit rules out the cheaper design without it: it binds, and the
    # constraint table and the re-solve agree.
    limit = status["constraints.max_racks"]
    assert limit.slack == 0 and limit.binding
    path = tmp_path / "unlimited.yaml"
    path.write_text(QUICKSTART)
    spec, catalog = load_inputs(path)
    free = planner.plan(spec, catalog, explain_design=False)
    assert free.cost.total_usd < design.cost.total_usd


SUPERPOD = (Path(__file__).resolve().parents[2] / "examples" / "superpod-h100.yaml").read_text()


def _superpod(tmp_path, target: str):
    path = tmp_path / f"u{target}.yaml"
    path.write_text(SUPERPOD.replace("min_utilization: 0.5", f"min_utilization: {target}"))
    spec, catalog = load_inputs(path)
    return planner.plan(spec, catalog)


def test_the_suggested_utilization_target_is_exact_and_agrees_with_the_reason(tmp_path):
    # The pinned system reaches a little over 0.8: the reason and the suggestion give the same
    # figure, the suggested target solves, and one a thousandth above it does not.
    with pytest.raises(InfeasibleError) as info:
        _superpod(tmp_path, "0.95")
    (relax,) = [r for r in info.value.relaxations if "min_utilization" in r]
    suggested = re.fullmatch(r"lower constraints\.min_utilization from 0\.95 to (0\.\d{3})", relax).group(1)
    (reason,) = info.value.reasons
    assert reason == f"llama3-70b: utilization {suggested} < 0.95 at the sizes that meet its 120-day deadline"
    design = _superpod(tmp_path, suggested)
    assert design.workloads[0].utilization >= float(suggested)
    with pytest.raises(InfeasibleError):
        _superpod(tmp_path, f"{float(suggested) + 0.001:.3f}")


def _three_runs(tmp_path, days: float, name: str = "three"):
    # Three copies of the 127-node SuperPOD's job, each due on day `days`: on their own each
    # qualifies (512 GPUs, about 45 days); together they fit only with more time.
    text = SUPERPOD.replace("nodes: 128", "nodes: 127").replace("    gpus: 1024\n", "")
    head, rest = text.split("workloads:\n", 1)
    job, tail = rest.split("constraints:\n", 1)
    jobs = "".join(job.replace("name: llama3-70b", f"name: run-{k}").replace("deadline: 120 days", f"deadline: {days} days")
                   for k in "abc")
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"{head}workloads:\n{jobs}constraints:\n{tail}")
    spec, catalog = load_inputs(path)
    return planner.plan(spec, catalog)


def test_runs_that_fit_alone_but_not_together_get_one_joint_relaxation_that_is_the_smallest(tmp_path):
    with pytest.raises(InfeasibleError) as info:
        _three_runs(tmp_path, 60)
    assert info.value.reasons == ("each workload qualifies on its own, but together their runs do not fit the GPUs "
                                  "the spec allows before their deadlines",)
    (relax,) = info.value.relaxations
    pct = float(re.fullmatch(r"extend every deadline by ([\d.]+)% \(run-a, run-b, run-c\)", relax).group(1))
    design = _three_runs(tmp_path, 60 * (1 + pct / 100), "relaxed")
    assert max(w.end_day for w in design.workloads) <= 60 * (1 + pct / 100)
    with pytest.raises(InfeasibleError):  # the smallest: 1% less is not enough
        _three_runs(tmp_path, 60 * (1 + (pct - 1) / 100), "less")
