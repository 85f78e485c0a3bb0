"""The bound of a candidate's servers at their compute floor (designer.optimize.bounds.compute_bound) is below its first bounds."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

from designer.optimize import bounds
from designer.optimize.workspace import Workspace
from designer.planner.compile import compile_task
from designer.planner.inputs import load_inputs
from designer.spec.choices import Deployment

SPEC = """
    version: 1
    name: two
    horizon: 2 years
    workloads:
      - name: llama3-8b
        model: {preset: llama3-8b}
        tokens: 1T
        global_batch: 1024
        deadline: 40 days
      - name: small
        model: {preset: llama3-8b}
        tokens: 50B
        global_batch: 256
        deadline: 10 days
    constraints:
      min_utilization: 0.55
      deployments: [on_prem, cloud]
      gpus: [h100-sxm, a100-80g]
    """


def test_compute_bound_is_below_the_ideal_and_best_network_bounds(tmp_path: Path):
    path = tmp_path / "spec.yaml"
    path.write_text(textwrap.dedent(SPEC))
    spec, catalog = load_inputs(path)
    ws = Workspace(compile_task(spec, catalog))
    th = ws.task.thresholds
    cloud = [c.key for c in ws.candidates if c.deployment is Deployment.CLOUD and ws.prepare(c.key, th)]
    onprem = [c.key for c in ws.candidates if c.deployment is Deployment.ON_PREM]
    assert cloud and len(onprem) > 20
    positive = 0
    for key in onprem:
        floor = bounds.compute_bound(ws, key, th, cloud)
        first = bounds.lower_bound(ws, key, th, keys=cloud, best=False)
        second = bounds.lower_bound(ws, key, th, keys=cloud)
        assert floor <= first * (1 + 1e-12) and floor <= second * (1 + 1e-12), key
        positive += 0 < floor < math.inf
    # A real bound (the servers the GPU-time needs, or the cloud bill of what does not fit), not 0.
    assert positive == len(onprem)
