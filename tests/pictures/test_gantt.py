"""designer draw DESIGN --schedule: the Gantt chart of a design's schedule, and the GPUs in use it plots."""

from __future__ import annotations

import dataclasses

from typer.testing import CliRunner

from designer.cli import app
from designer.design import io as design_io
from designer.pictures.gantt import usage_steps
from designer.planner import plan
from designer.planner.inputs import load_inputs

PORTFOLIO = """\
version: 1
name: portfolio-3
horizon: 1 years
workloads:
  - {name: a, model: {preset: llama3-8b}, tokens: 400B, global_batch: 512, deadline: 30 days}
  - {name: b, model: {preset: llama3-8b}, tokens: 300B, global_batch: 512, deadline: 40 days}
  - {name: c, model: {preset: llama3-8b}, tokens: 200B, global_batch: 256, deadline: 45 days}
constraints:
  min_utilization: 0.5
  deployments: [on_prem]
  fabrics: [infiniband]
  topologies: [single_switch, fat_tree]
"""


def test_a_portfolio_that_cannot_share_by_gpu_time_alone_gets_a_schedule_it_can_run(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(PORTFOLIO)
    spec, catalog = load_inputs(path)
    design = plan(spec, catalog)
    steps = usage_steps(design)
    assert max(g for _, g in steps) <= design.system.gpus
    assert steps[-1][1] == 0
    for w in design.workloads:
        assert w.end_day <= w.deadline_days
    out = tmp_path / "design.yaml"
    out.write_text(design_io.dump_design(design))
    svg = tmp_path / "schedule.svg"
    result = CliRunner().invoke(app, ["draw", str(out), "--schedule", "-o", str(svg)])
    assert result.exit_code == 0, result.output
    text = svg.read_text()
    assert text.startswith("<?xml") and "schedule on" in text
    # The same design gives the same bytes.
    again = tmp_path / "again.svg"
    CliRunner().invoke(app, ["draw", str(out), "--schedule", "-o", str(again)])
    assert again.read_bytes() == svg.read_bytes()


def test_usage_steps_count_a_job_ending_as_another_starts_once(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(PORTFOLIO)
    spec, catalog = load_inputs(path)
    design = plan(spec, catalog)
    a, b, c = design.workloads
    two = dataclasses.replace(design, workloads=(dataclasses.replace(a, start_day=0.0, end_day=1.0, gpus=8),
                                                 dataclasses.replace(b, start_day=1.0, end_day=2.0, gpus=8),
                                                 dataclasses.replace(c, deployment="cloud", start_day=0.0, end_day=2.0)))
    assert usage_steps(two) == [(0.0, 8), (1.0, 8), (2.0, 0)]
