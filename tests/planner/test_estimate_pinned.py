"""``estimate`` on a pinned system always gives a plan or a reason that names where in the spec."""

from __future__ import annotations

import re

import pytest

from designer.errors import PerfError
from designer.planner import estimate
from designer.planner.inputs import load_inputs

SUPERPOD_127 = """\
version: 1
name: superpod-127
horizon: 3 years
workloads:
  - name: llama3-70b
    model: {preset: llama3-70b}
    tokens: 2T
    global_batch: 1024
    recompute: selective
    parallelism: {tp: 8, pp: 4, dp: auto, microbatch: 1}
    deadline: 120 days
constraints:
  min_utilization: 0.5
  deployments: [on_prem]
system:
  server: dgx-h100
  switch: nvidia-qm9700
  nodes: 127
  fabric: infiniband
  topology: rail_optimized
  oversubscription: 1
"""


def _estimate(tmp_path, text):
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    spec, catalog = load_inputs(path)
    return estimate(spec, catalog)


def test_a_pinned_plan_that_cannot_use_every_gpu_runs_on_the_largest_count_it_can(tmp_path):
    # 127 nodes are 1,016 GPUs: tp 8 x pp 4 = 32 per replica does not divide them, and of the
    # smaller replica counts only 16 (512 GPUs) splits the batch of 1,024 evenly (dp 31, 24, 20 ... do not).
    result = _estimate(tmp_path, SUPERPOD_127)
    (w,) = result.workloads
    assert w.estimate.gpus == 512
    assert (w.estimate.plan.tp, w.estimate.plan.pp, w.estimate.plan.dp) == (8, 4, 16)
    assert any("runs on 512 of the 1,016 GPUs" in x and "32 GPUs per replica do not divide 1,016" in x
               for x in result.warnings)


def test_no_plan_on_any_count_is_a_located_error(tmp_path):
    text = SUPERPOD_127.replace("tp: 8, pp: 4", "tp: 16, pp: 1").replace("nodes: 127", "nodes: 1")
    with pytest.raises(PerfError) as info:
        _estimate(tmp_path, text)
    message = str(info.value)
    assert message.startswith("workload 'llama3-70b' on 8 GPUs of dgx-h100: ")
    assert "; nor on fewer GPUs (the workload at " in message
    assert re.search(r"spec\.yaml:\d+:\d+\)$", message)


def test_a_pinned_system_no_catalog_part_links_is_predicted_with_a_warning(tmp_path):
    # A BlueField-3's QSFP112 cage signals 4 x 100G, the Arista 7060DX5's QSFP-DD 8 x 50G: no
    # built-in cable or optic pair joins them, which `solve` refuses; the step time still has a
    # 400 Gb/s link to stand on.
    text = (SUPERPOD_127.replace("server: dgx-h100", "server: hgx-h100-400gbe")
            .replace("switch: nvidia-qm9700", "switch: arista-7060dx5-64s")
            .replace("fabric: infiniband", "fabric: roce").replace("topology: rail_optimized", "topology: fat_tree")
            .replace("nodes: 127", "nodes: 16").replace("tp: 8, pp: 4", "tp: 8, pp: 1"))
    result = _estimate(tmp_path, text)
    assert result.server == "hgx-h100-400gbe" and result.workloads[0].estimate.gpus == 128
    (why,) = [w for w in result.warnings if "no link from" in w]
    assert why.startswith("hgx-h100-400gbe with arista-7060dx5-64s: no link from bluefield3-b3140h QSFP112 cage")
    assert why.endswith("no bill of materials can be built until a catalog holds the part")
