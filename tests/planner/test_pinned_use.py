"""A spec that pins the system: a workload on fewer of its GPUs says why."""

from __future__ import annotations

from pathlib import Path

from designer import planner
from designer.planner.inputs import load_inputs

SUPERPOD = (Path(__file__).resolve().parents[2] / "examples" / "superpod-h100.yaml").read_text()


def _plan(tmp_path, text):
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    spec, catalog = load_inputs(path)
    return planner.plan(spec, catalog, explain_design=False)


def test_a_workload_on_part_of_a_pinned_system_says_why(tmp_path):
    # 127 DGX H100 nodes (1,016 GPUs) and no pinned GPU count: the cheapest design meets the
    # 120-day deadline on fewer GPUs, and the design says so with both counts.
    text = SUPERPOD.replace("nodes: 128", "nodes: 127").replace("    gpus: 1024\n", "")
    design = _plan(tmp_path, text)
    (w,) = design.workloads
    assert design.system.gpus == 1016 and w.gpus < 1016
    (found,) = [x for x in design.warnings if "of the 1,016 GPUs of the pinned system" in x]
    assert found.startswith(f"workload 'llama3-70b' runs on {w.gpus:,} of the 1,016 GPUs")
    assert "least total cost" in found and "set its gpus" in found


def test_a_pinned_gpu_count_gives_no_such_warning(tmp_path):
    design = _plan(tmp_path, SUPERPOD)
    assert not [x for x in design.warnings if "of the pinned system" in x]
