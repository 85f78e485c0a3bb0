"""``estimate`` on a pinned system always gives a plan or a reason that names where in the spec."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

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
    # A DGX A100's ConnectX-6 QSFP56 cage signals 4 x 50G, the SN5600's OSFP cage at 200G 2 x 100G:
    # no built-in cable or optic pair joins them, which `solve` refuses; the step time still has a
    # 200 Gb/s link to stand on.
    text = (SUPERPOD_127.replace("server: dgx-h100", "server: dgx-a100-80g")
            .replace("switch: nvidia-qm9700", "switch: nvidia-sn5600")
            .replace("fabric: infiniband", "fabric: roce").replace("topology: rail_optimized", "topology: fat_tree")
            .replace("nodes: 127", "nodes: 16"))
    result = _estimate(tmp_path, text)
    assert result.server == "dgx-a100-80g" and result.workloads[0].estimate.gpus == 128
    (why,) = [w for w in result.warnings if "no link from" in w]
    assert why.startswith("dgx-a100-80g with nvidia-sn5600: no link from connectx6-hdr-200g QSFP56 cage")
    assert why.endswith("no bill of materials can be built until a catalog holds the part")


def test_a_pinned_gpu_count_no_plan_fits_names_the_count_that_does(tmp_path):
    # The spec asks for all 1,016 GPUs: 1,016 = 8 x 127 leaves at least 127 replicas, which do not
    # split the batch of 1,024; the message says so at `gpus` and gives the largest count that fits.
    text = SUPERPOD_127.replace("parallelism: {tp: 8, pp: 4, dp: auto, microbatch: 1}", "parallelism: auto")
    text = text.replace("    deadline: 120 days\n", "    gpus: 1016\n    deadline: 120 days\n")
    with pytest.raises(PerfError) as info:
        _estimate(tmp_path, text)
    message = str(info.value)
    assert "no candidate plan" not in message
    assert "global batch of 1,024 sequences does not split" in message and "dp 127 at the fewest" in message
    fits = int(re.search(r"set gpus to ([\d,]+)", message).group(1).replace(",", ""))
    assert re.search(r"\(the workload at .*spec\.yaml:11:11\)$", message)  # the gpus line
    result = _estimate(tmp_path, text.replace("gpus: 1016", f"gpus: {fits}"))
    assert result.workloads[0].estimate.gpus == fits


_GENERATED = """\
version: 1
name: generated
horizon: 1 years
workloads:
  - name: job
    model: {{preset: {model}}}
    tokens: 100B
    global_batch: {batch}
    parallelism: {parallelism}
{gpus}    deadline: 200 days
constraints:
  deployments: [on_prem]
system:
  server: dgx-h100
  nodes: {nodes}
  fabric: infiniband
  topology: fat_tree
"""

pinned_specs = st.fixed_dictionaries({
    "model": st.sampled_from(["llama3-8b", "llama3-70b"]),
    "batch": st.sampled_from([96, 100, 256, 1000, 1024]),
    "parallelism": st.sampled_from(["auto", "{tp: 8, pp: 4}", "{tp: 4, pp: 3}", "{tp: 8, pp: 1, microbatch: 4}",
                                    "{tp: 2, pp: 5, dp: auto}"]),
    "nodes": st.integers(1, 24),
    "gpus": st.one_of(st.none(), st.integers(1, 192)),
})


@settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
          deadline=None)
@given(pinned_specs)
def test_estimate_on_a_pinned_system_gives_the_largest_plan_or_a_located_reason(tmp_path, p):
    gpus = p["gpus"] if p["gpus"] is not None and p["gpus"] <= 8 * p["nodes"] else None
    text = _GENERATED.format(model=p["model"], batch=p["batch"], parallelism=p["parallelism"], nodes=p["nodes"],
                             gpus=f"    gpus: {gpus}\n" if gpus else "")
    cluster = 8 * p["nodes"]
    try:
        result = _estimate(tmp_path, text)
    except PerfError as exc:
        message = str(exc)
        assert not message.rstrip(")").split(" (the workload at")[0].endswith("no candidate plan")
        assert re.search(r"\(the workload at .*spec\.yaml:\d+:\d+\)$", message)
        assert "set gpus to" in message or "nor on fewer GPUs" in message
        if "set gpus to" in message:  # the count it names runs
            fits = int(re.search(r"set gpus to ([\d,]+)", message).group(1).replace(",", ""))
            assert _estimate(tmp_path, text.replace(f"gpus: {gpus}", f"gpus: {fits}")).workloads[0].estimate.gpus == fits
        return
    (w,) = result.workloads
    if gpus:
        assert w.estimate.gpus == gpus
        return
    assert w.estimate.gpus <= cluster
    if w.estimate.gpus < cluster:  # said why, and no whole-node count above it runs
        assert any(f"runs on {w.estimate.gpus:,} of the {cluster:,} GPUs" in x for x in result.warnings)
        for nodes in range(w.estimate.gpus // 8 + 1, p["nodes"]):
            bigger = text.replace("parallelism:", f"gpus: {nodes * 8}\n    parallelism:")
            with pytest.raises(PerfError):
                _estimate(tmp_path, bigger)
