"""The bound of a candidate's servers at their compute floor (designer.optimize.bounds.compute_bound) is below its first bounds."""

from __future__ import annotations

import math
from pathlib import Path

from designer.optimize import bounds
from designer.optimize.workspace import Workspace
from designer.planner.compile import compile_task
from designer.planner.inputs import load_inputs
from designer.spec.choices import Deployment
from tiny_spec import TWO_WORKLOADS


def test_compute_bound_is_below_the_ideal_and_best_network_bounds(tmp_path: Path):
    path = tmp_path / "spec.yaml"
    path.write_text(TWO_WORKLOADS)
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
