"""How many GPUs of each scale-up domain a job uses: ``system.gpus_per_domain_used``.

NVIDIA's own GB200 NVL72 runs use 64 of each rack's 72 GPUs (NeMo's DGX-GB200 tables list 64,
128, 256 and 512 GPUs): 128 GPUs are two domains of 64, every TP or EP group of up to 64 on
NVLink. The spec states that placement; estimate and solve both keep to it.
"""

from __future__ import annotations

import json

import pytest

from designer.catalog import domain
from designer.errors import SpecError
from designer.planner import estimate
from designer.planner.inputs import load_inputs
from designer.report.estimate import estimate_to_json_dict, render_estimate

SPEC = """\
version: 1
name: gb200-64
workloads:
  - name: llama
    model: {{preset: llama3-70b}}
    tokens: 1T
    global_batch: 576
    precision: fp8
    recompute: selective
    parallelism: {{tp: 16, pp: 1, cp: 1, zero: 1}}
system:
  server: {server}
  switch: nvidia-qm9700
  nodes: {nodes}
  fabric: infiniband
  topology: rail_optimized
  oversubscription: 1
{extra}"""


def _estimate(tmp_path, server="gb200-nvl72", nodes=2, extra=""):
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC.format(server=server, nodes=nodes, extra=extra))
    spec, catalog = load_inputs(path)
    return estimate(spec, catalog)


@pytest.mark.parametrize("gpus, used, expected", [
    (128, 64, (2, 64)),  # two racks, 64 GPUs of each
    (144, 64, (3, 64)),  # where the default would take two whole racks of 72
    (8, 64, (1, 8)),  # a job inside one domain uses that one
    (144, 72, (2, 72)),
])
def test_the_pinned_share_of_each_domain_sets_the_domains(gpus, used, expected):
    assert domain.pinned_placement(gpus, used) == expected
    assert domain.placement_for(144, 72) == (2, 72)


def test_two_racks_at_64_each_run_128_gpus_and_say_so(tmp_path):
    result = _estimate(tmp_path, extra="  gpus_per_domain_used: 64\n")
    est = result.workloads[0].estimate
    assert est.gpus == 128 and est.plan.tp == 16 and est.plan.dp == 8 and not result.warnings
    assert ", 64 GPUs used of each scale-up domain" in render_estimate(result).splitlines()[0]
    system = json.loads(json.dumps(estimate_to_json_dict(result)))["system"]
    assert system["gpus_per_domain_used"] == 64
    # without the key the system's 144 GPUs are used, 72 per rack: TP16 groups at ranks 64-79
    # straddle two racks and the step is slower than with every group inside one
    plain = _estimate(tmp_path)
    default = plain.workloads[0].estimate
    assert default.gpus == 144 and default.plan.dp == 9
    assert "gpus_per_domain_used" not in estimate_to_json_dict(plain)["system"]
    per_mb, per_mb_default = (e.breakdown.tp_comm_s / e.microbatches for e in (est, default))
    assert per_mb_default > 1.5 * per_mb


@pytest.mark.parametrize("server, used, says", [
    ("gb200-nvl72", 80, "its scale-up domain has 72 GPUs"),
    ("dgx-b200", 16, "its scale-up domain has 8 GPUs"),
])
def test_more_gpus_than_the_domain_has_is_a_located_error(tmp_path, server, used, says):
    with pytest.raises(SpecError) as exc:
        _estimate(tmp_path, server=server, extra=f"  gpus_per_domain_used: {used}\n")
    assert says in str(exc.value)
    assert "spec.yaml:18:25:" in str(exc.value)  # the key's line
