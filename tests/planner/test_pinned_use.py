"""A spec that pins the system: a workload on fewer of its GPUs says why."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from designer import planner
from designer.errors import InfeasibleError, PerfError
from designer.planner.inputs import load_inputs

SUPERPOD = (Path(__file__).resolve().parents[2] / "examples" / "superpod-h100.yaml").read_text()


def _plan(tmp_path, text):
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    spec, catalog = load_inputs(path)
    return planner.plan(spec, catalog, explain_design=False)


def test_a_pinned_plan_uses_the_most_gpus_it_can_and_says_why_not_all(tmp_path):
    # 127 DGX H100 nodes (1,016 GPUs), tp 8 x pp 4 pinned and no GPU count: 32 GPUs per replica
    # do not divide 1,016, and of the replica counts 17 to 31 none splits the batch of 1,024, so
    # the job runs on 16 replicas (512 GPUs), not on the fewest that meet its deadline.
    text = SUPERPOD.replace("nodes: 128", "nodes: 127").replace("    gpus: 1024\n", "")
    design = _plan(tmp_path, text)
    (w,) = design.workloads
    assert design.system.gpus == 1016 and w.gpus == 512 and (w.tp, w.pp, w.dp) == (8, 4, 16)
    (found,) = [x for x in design.warnings if "of the 1,016 GPUs of the pinned system" in x]
    assert found.startswith("workload 'llama3-70b' runs on 512 of the 1,016 GPUs of the pinned system (tp 8 pp 4 dp 16)")
    assert "tp 8 x pp 4 = 32 GPUs per replica do not divide 1,016 GPUs" in found
    assert "no count of whole nodes between 512 and 1,016 GPUs" in found


def test_a_searched_plan_uses_the_largest_count_that_qualifies(tmp_path):
    # The plan searched too: 1,016 = 8 x 127 GPUs leave at least 127 replicas for a batch of
    # 1,024; the design runs on the largest whole-node count with a plan that meets its targets,
    # and no larger count of whole nodes has one (each checked by pinning it).
    text = (SUPERPOD.replace("nodes: 128", "nodes: 127").replace("    gpus: 1024\n", "")
            .replace("parallelism: {tp: 8, pp: 4, dp: auto, microbatch: 1}", "parallelism: auto"))
    design = _plan(tmp_path, text)
    (w,) = design.workloads
    assert w.gpus % 8 == 0 and w.gpus < 1016
    (found,) = [x for x in design.warnings if "of the 1,016 GPUs of the pinned system" in x]
    assert "the global batch of 1,024 sequences does not split" in found and "dp 127 at the fewest" in found
    for gpus in range(w.gpus + 8, 1016, 8):
        pinned = text.replace("    deadline: 120 days\n", f"    gpus: {gpus}\n    deadline: 120 days\n")
        try:
            other = _plan(tmp_path, pinned)
        except (InfeasibleError, PerfError):
            continue
        raise AssertionError(f"{gpus} GPUs also qualify: {other.workloads[0]}")


def test_a_utilization_target_caps_the_count(tmp_path):
    # Utilization falls as the job spreads: with a target above what all 1,024 GPUs reach at tp 8,
    # the design runs on the largest count that meets it, and gives the whole system's figure.
    text = (SUPERPOD.replace("    gpus: 1024\n", "")
            .replace("parallelism: {tp: 8, pp: 4, dp: auto, microbatch: 1}", "parallelism: {tp: 8, pp: 1}")
            .replace("min_utilization: 0.5", "min_utilization: 0.80"))
    design = _plan(tmp_path, text)
    (w,) = design.workloads
    assert w.utilization >= 0.80 and w.gpus < 1024
    (found,) = [x for x in design.warnings if "of the 1,024 GPUs of the pinned system" in x]
    whole = re.search(r"on all 1,024, its utilization (0\.\d+) \(tp 8 pp 1 dp 128\) is below "
                      r"constraints\.min_utilization 0\.800", found)
    assert whole and float(whole.group(1)) < 0.80


def test_a_pinned_gpu_count_gives_no_such_warning(tmp_path):
    design = _plan(tmp_path, SUPERPOD)
    assert not [x for x in design.warnings if "of the pinned system" in x]


def test_a_pinned_gpu_count_no_plan_fits_is_explained_at_the_gpus_line(tmp_path):
    text = SUPERPOD.replace("nodes: 128", "nodes: 127").replace("gpus: 1024", "gpus: 1016")
    with pytest.raises(InfeasibleError) as info:
        _plan(tmp_path, text)
    (reason,) = info.value.reasons
    assert "no candidate plan" not in reason
    assert "tp 8 x pp 4 = 32 GPUs per replica do not divide 1,016 GPUs" in reason
    assert "a plan fits on 512 GPUs (tp 8 pp 4 dp 16): set gpus to 512" in reason
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "gpus: 1016" in t)
    assert reason.endswith(f"spec.yaml:{line}:11)")


_GENERATED = """\
version: 1
name: generated
horizon: 1 years
workloads:
  - name: job
    model: {{preset: llama3-8b}}
    tokens: {tokens}B
    global_batch: {batch}
    parallelism: {parallelism}
    deadline: 90 days
constraints:
  min_utilization: {util}
  deployments: [on_prem]
system:
  server: dgx-h100
  nodes: {nodes}
  fabric: infiniband
  topology: fat_tree
"""

pinned_specs = st.fixed_dictionaries({
    "tokens": st.sampled_from([50, 200]),
    "batch": st.sampled_from([96, 100, 256, 1000]),
    "parallelism": st.sampled_from(["auto", "{tp: 8, pp: 1}", "{tp: 4, pp: 3}", "{tp: 2, pp: 1, microbatch: 4}"]),
    "util": st.sampled_from([0.3, 0.6, 0.8]),
    "nodes": st.integers(1, 20),
})


@settings(max_examples=8, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
          deadline=None)
@given(pinned_specs)
def test_a_pinned_system_runs_each_workload_on_the_most_gpus_that_qualify(tmp_path, p):
    text = _GENERATED.format(**p)
    cluster = 8 * p["nodes"]
    try:
        design = _plan(tmp_path, text)
    except InfeasibleError as exc:
        assert exc.reasons or exc.relaxations  # says why
        return
    (w,) = design.workloads
    if w.gpus == cluster:
        return
    (found,) = [x for x in design.warnings if f"of the {cluster:,} GPUs of the pinned system" in x]
    assert found.startswith(f"workload 'job' runs on {w.gpus:,} of the {cluster:,} GPUs")
    above = (w.gpus // 8 + 1) * 8  # the next count of whole nodes does not qualify
    if above <= cluster:
        with pytest.raises((InfeasibleError, PerfError)):
            _plan(tmp_path, text.replace("    deadline:", f"    gpus: {above}\n    deadline:"))


def _two_runs(deadline_days: float) -> str:
    """The SuperPOD spec with two Llama 3 70B runs (2T tokens each, tp 8 x pp 4, no GPU count),
    both due by ``deadline_days``."""
    one = SUPERPOD.replace("    gpus: 1024\n", "").replace("deadline: 120 days", f"deadline: {deadline_days:g} days")
    run = one[one.index("  - name: llama3-70b"):one.index("constraints:")]
    return one.replace(run, run.replace("name: llama3-70b", "name: a") + run.replace("name: llama3-70b", "name: b"))


def test_two_runs_that_fit_back_to_back_each_use_the_whole_system(tmp_path):
    # On all 1,024 GPUs a run takes 2e12 tokens / 973,366 tokens/s = 23.78 days (designer estimate
    # with gpus: 1024): two back to back end on day 47.56, inside 48 days.
    design = _plan(tmp_path, _two_runs(48))
    a, b = sorted(design.workloads, key=lambda w: w.start_day)
    assert (a.gpus, b.gpus) == (1024, 1024)
    assert a.start_day == 0 and a.end_day == pytest.approx(23.78, abs=0.01)
    assert b.start_day == pytest.approx(a.end_day) and b.end_day == pytest.approx(47.56, abs=0.01)
    assert not [x for x in design.warnings if "cannot all run on the most GPUs" in x]


def test_runs_that_do_not_fit_at_the_largest_size_are_sized_by_the_program(tmp_path):
    # Due by 47.3 days, two runs on all 1,024 GPUs need 47.56 days back to back: the largest sizes
    # do not fit, so the program sizes them. On 512 GPUs a run takes 2e12 / 491,224 tokens/s =
    # 47.12 days at 0.807 utilization, so both run side by side on half the system each, and no
    # other split meets the deadline (on fewer GPUs a run takes longer than 47.3 days).
    design = _plan(tmp_path, _two_runs(47.3))
    assert design.system.gpus == 1024
    for w in design.workloads:
        assert w.gpus == 512 and (w.tp, w.pp, w.dp) == (8, 4, 16)
        assert w.start_day == 0 and w.end_day == pytest.approx(47.12, abs=0.01) and w.end_day <= 47.3
        assert w.utilization == pytest.approx(0.807, abs=0.001)
    assert ("the workloads cannot all run on the most GPUs of the pinned system their plans can use (with a on 1,024, "
            "b on 1,024 GPUs no design meets every deadline and limit); they are sized to meet every constraint") in design.warnings
