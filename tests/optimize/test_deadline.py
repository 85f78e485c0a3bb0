"""One deadline for the whole command: the best design so far when it passes, exit 4 when there is none."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from designer.errors import SolverTimeoutError
from designer.optimize import batches
from designer.optimize.clock import Deadline
from designer.optimize.workspace import Workspace
from designer.planner.compile import compile_task
from designer.planner.inputs import load_inputs

HYBRID = """\
version: 1
name: hybrid
horizon: 1 years
workloads:
  - {name: a, model: {preset: llama3-8b}, tokens: 200B, global_batch: 512, deadline: 30 days}
  - {name: b, model: {preset: llama3-8b}, tokens: 100B, global_batch: 256, deadline: 40 days}
constraints:
  min_utilization: 0.5
  deployments: [on_prem, cloud]
  fabrics: [infiniband, efa]
  max_nodes: 16
"""


class _Clock:
    """A clock that stands still until told to jump past every deadline."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _workspace(tmp_path: Path) -> Workspace:
    path = tmp_path / "spec.yaml"
    path.write_text(HYBRID)
    spec, catalog = load_inputs(path)
    return Workspace(compile_task(spec, catalog))


def test_a_passed_deadline_before_any_design_is_a_timeout(tmp_path):
    ws = _workspace(tmp_path)
    clock = _Clock()
    ws.deadline = Deadline(1.0, clock)
    clock.now = 2.0
    with pytest.raises(SolverTimeoutError):
        batches.solve(ws, ws.task.thresholds)


def test_the_deadline_passing_after_the_first_program_keeps_its_design_as_feasible(tmp_path):
    full = _workspace(tmp_path)
    optimum = batches.solve(full, full.task.thresholds)
    ws = _workspace(tmp_path)
    clock = _Clock()
    ws.deadline = Deadline(1.0, clock)

    def expire(evaluated: int, solves: int, best) -> None:
        clock.now = 2.0  # time runs out once the first program (the cloud alone) is solved

    ws.progress = expire
    sol = batches.solve(ws, ws.task.thresholds)
    assert sol.status == "feasible"
    assert "time limit reached" in sol.note
    assert sol.onprem_key is None  # the cloud alone, solved first under a limit
    total = sol.capex_usd + sol.opex_usd + sol.cloud_usd
    best = optimum.capex_usd + optimum.opex_usd + optimum.cloud_usd
    assert total >= best * (1 - 1e-9)
    # The gap is measured against the lowest bound of the candidates left: it covers the optimum.
    assert 0.0 <= sol.gap <= 1.0
    assert total * (1 - sol.gap) <= best * (1 + 1e-6)


def test_solve_with_a_limit_too_short_for_any_design_exits_4_and_writes_nothing(tmp_path):
    spec = tmp_path / "spec.yaml"
    # On-prem only: under a limit the cloud is solved first and, on a fast machine, can give a
    # design within 0.1 s; the 112 on-prem candidates cannot all be bounded and solved in it.
    spec.write_text(HYBRID.replace("deployments: [on_prem, cloud]", "deployments: [on_prem]"))
    out = tmp_path / "design.yaml"
    # A fresh process: in this one, earlier tests' evaluations are cached and the cloud alone is
    # solved in a moment.
    result = subprocess.run([sys.executable, "-m", "designer", "solve", str(spec), "--time-limit", "0.1",
                             "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 4, result.stderr
    assert "time limit" in result.stderr
    assert not out.exists()
