"""The ``software:`` block, model defaults stated as assumptions, ``params`` checked against the
architecture, ``recompute: auto`` and uneven pipeline stages, through the loader and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from designer.cli import app
from designer.planner import inputs
from designer.spec.load import DEFAULT_VOCAB, default_ffn

RUNNER = CliRunner()

PINNED = """\
version: 1
name: pinned
workloads:
  - name: llm
    model: {model}
    tokens: 1T
    global_batch: 512
    recompute: {recompute}
    parallelism: {parallelism}
{own}
system:
  server: dgx-h100
  switch: nvidia-qm9700
  nodes: 16
  fabric: infiniband
  topology: rail_optimized
{top}
"""


def write(tmp_path: Path, model="{preset: llama3-8b}", recompute="selective", parallelism="auto", own="",
          top="") -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(PINNED.format(model=model, recompute=recompute, parallelism=parallelism, own=own, top=top))
    return path


def estimate_json(path: Path) -> dict:
    result = RUNNER.invoke(app, ["estimate", str(path), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_workload_software_overrides_the_top_level_field_by_field(tmp_path):
    path = write(tmp_path, own="    software: {dp_overlap: false}",
                 top="software: {preset: fsdp2, attention: flash}")
    spec, _ = inputs.load_inputs(path)
    sw = spec.workloads[0].software
    assert (sw.preset, sw.attention, sw.dp_overlap, sw.sequence_parallel) == ("fsdp2", "flash", False, None)
    w = estimate_json(path)["workloads"][0]
    assert w["software"] == {"preset": "fsdp2", "attention": "flash", "sequence_parallel": "auto",
                             "tp_comm_overlap": False, "dp_overlap": False, "p2p_overlap": False, "dropout": False,
                             "compile": False, "moe_dispatcher": "nccl",
                             "in_network_reduction": False, "checkpoint_saves": "every_other_matmul",
                             "cuda_graphs": "none"}
    assert w["zero"] in (1, 2, 3)  # fsdp2: no-sync accumulation (ZeRO-1 schedule), reshard_after_forward=False, FULL_SHARD


def test_checkpoint_saves_states_what_selective_recomputation_keeps(tmp_path):
    """LLaMA (Touvron et al. 2023, sec. 2.4) keeps every linear layer's output: on the fsdp2 stack the
    knob replaces torchtitan's per-op policy (every second matmul recomputed), is recorded, and makes the
    step faster; a stack without the policy and an unknown value are located errors."""
    plan = "{tp: 1, pp: 1, dp: 128, microbatch: 1, zero: 3}"
    op = estimate_json(write(tmp_path, parallelism=plan, own="    software: {preset: fsdp2}"))["workloads"][0]
    linear = estimate_json(write(tmp_path, parallelism=plan, own="    software: {preset: fsdp2, "
                                 "checkpoint_saves: linear_outputs}"))["workloads"][0]
    assert op["software"]["checkpoint_saves"] == "every_other_matmul"
    assert linear["software"]["checkpoint_saves"] == "linear_outputs"
    assert linear["step_time_s"] < op["step_time_s"]
    for own, word in (("    software: {preset: megatron-core, checkpoint_saves: every_other_matmul}", "torchtitan"),
                      ("    software: {checkpoint_saves: everything}", "checkpoint_saves")):
        result = RUNNER.invoke(app, ["estimate", str(write(tmp_path, own=own)), "--json"])
        assert result.exit_code != 0 and "checkpoint_saves" in result.output and word in result.output


def test_in_network_reduction_is_a_software_knob(tmp_path):
    """SHARP through NCCL CollNet: recorded, and on a SHARP fabric an exposed gradient all-reduce is faster."""
    plan = "{tp: 8, pp: 1, dp: 16, microbatch: 1, zero: 0}"
    off = estimate_json(write(tmp_path, parallelism=plan, own="    software: {dp_overlap: false}"))["workloads"][0]
    on = estimate_json(write(tmp_path, parallelism=plan,
                             own="    software: {dp_overlap: false, in_network_reduction: true}"))
    on = on["workloads"][0]
    assert off["software"]["in_network_reduction"] is False
    assert on["software"]["in_network_reduction"] is True
    assert on["step_time_s"] < off["step_time_s"]
    bad = write(tmp_path, own="    software: {in_network_reduction: maybe}")
    result = RUNNER.invoke(app, ["estimate", str(bad), "--json"])
    assert result.exit_code != 0 and "in_network_reduction" in result.output


def test_default_stack_is_recorded(tmp_path):
    w = estimate_json(write(tmp_path))["workloads"][0]
    assert w["software"]["preset"] == "megatron-core"
    assert w["recompute"] == "selective"
    assert w["memory_gb_per_gpu"] <= w["memory_usable_gb_per_gpu"]


@pytest.mark.parametrize("own, top, line, col, pattern", [
    ("    software: {preset: megatron-lm-2021, attention: flash}", "", 10, 53, "fused attention"),
    ("", "software: {preset: deepspeed, tp_comm_overlap: true}", 17, 48, "cannot overlap"),
    ("    software: {preset: megatron-lm-2021, sequence_parallel: true}", "", 10, 61, "no sequence parallelism"),
])
def test_a_knob_the_stack_lacks_is_a_located_error(tmp_path, own, top, line, col, pattern):
    path = write(tmp_path, own=own, top=top)
    result = RUNNER.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {path}:{line}:{col}: "), result.stderr
    assert pattern in result.stderr


def test_pinned_parallelism_the_stack_lacks_is_located_at_its_key(tmp_path):
    path = write(tmp_path, parallelism="{tp: 8, pp: 2, cp: 2}", recompute="full",
                 own="    software: {preset: megatron-lm-2021}")
    result = RUNNER.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    assert f"{path}:9:37: parallelism.cp: megatron-lm-2021 has no context parallelism" in result.stderr


def test_selective_recompute_on_a_stack_without_it(tmp_path):
    path = write(tmp_path, own="    software: {preset: megatron-lm-2021}")
    result = RUNNER.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2 and "no selective recomputation" in result.stderr and ":8:16:" in result.stderr


def test_unknown_preset_is_refused_with_the_choices(tmp_path):
    result = RUNNER.invoke(app, ["validate", str(write(tmp_path, top="software: {preset: megatron}"))])
    assert result.exit_code == 2 and "megatron-core" in result.stderr


def test_model_without_ffn_or_vocab_takes_megatrons_defaults_and_says_so(tmp_path):
    model = "{layers: 24, hidden: 2048, heads: 16, seq_len: 2048}"
    path = write(tmp_path, model=model)
    w = estimate_json(path)["workloads"][0]
    assumed = " ".join(w["assumptions"])
    assert "ffn: 8,192 = 4 x hidden" in assumed and f"vocab: {DEFAULT_VOCAB:,}" in assumed
    assert "mlp: plain" in assumed
    text = RUNNER.invoke(app, ["estimate", str(path)]).stdout
    assert "assumed: ffn: 8,192" in text


def test_gated_mlp_default_width_is_megatrons_swiglu_rule(tmp_path):
    assert default_ffn(4096, True) == 10880 and default_ffn(4096, False) == 16384
    spec, _ = inputs.load_inputs(write(tmp_path, model="{layers: 32, hidden: 4096, heads: 32, seq_len: 4096, "
                                                      "mlp: gated, vocab: 32000}"))
    m = spec.workloads[0].model
    assert m.gated_mlp and m.ffn == 10880 and len(m.assumptions) == 1


def test_mlp_and_gated_mlp_must_agree(tmp_path):
    path = write(tmp_path, model="{preset: llama3-8b, mlp: plain, gated_mlp: true}")
    result = RUNNER.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2 and "contradicts" in result.stderr


def test_params_far_from_the_architecture_is_a_located_warning(tmp_path):
    path = write(tmp_path, model="{preset: llama3-8b, params: 9B}")
    result = RUNNER.invoke(app, ["validate", str(path)])
    assert result.exit_code == 0
    assert f"warning: {path}:5:40: params 9.00B is +12% off the 8.03B" in result.stderr
    assert RUNNER.invoke(app, ["validate", str(write(tmp_path, model="{preset: llama3-8b, params: 8.2B}"))]).stderr == ""


def test_recompute_auto_is_searched_and_reported(tmp_path):
    w = estimate_json(write(tmp_path, recompute="auto", model="{preset: llama3-70b}"))["workloads"][0]
    assert w["recompute"] in ("none", "selective", "full")


def test_uneven_pipeline_stages_from_the_spec(tmp_path):
    path = write(tmp_path, model="{preset: llama3-8b}", recompute="full",
                 parallelism="{tp: 1, pp: 4, first_stage_layers: 9, last_stage_layers: 7}")
    w = estimate_json(path)["workloads"][0]
    assert w["stage_layers"] == [9, 8, 7]
    bad = write(tmp_path, parallelism="{tp: 1, pp: 4, first_stage_layers: 9, last_stage_layers: 8}")
    result = RUNNER.invoke(app, ["estimate", str(bad)])
    assert result.exit_code == 2 and "do not divide evenly" in result.stderr


def test_group_limited_routing_is_read_and_checked(tmp_path):
    """The deepseek-v3 preset carries its node-limited routing; bad groups are located errors."""
    spec, _ = inputs.load_inputs(write(tmp_path, model="{preset: deepseek-v3}"))
    moe = spec.workloads[0].model.moe
    assert (moe.groups, moe.group_top_k) == (8, 4)
    moe_text = "{{preset: deepseek-v3, moe: {{experts: 256, top_k: 8, shared_experts: 1, expert_ffn: 2048, " \
               "dense_layers: 3, {extra}}}}}"
    for extra, message in (("groups: 7", "moe.groups (7) must divide moe.experts (256)"),
                           ("groups: 8, group_top_k: 9", "moe.group_top_k (9) exceeds moe.groups (8)")):
        result = RUNNER.invoke(app, ["validate", str(write(tmp_path, model=moe_text.format(extra=extra)))])
        assert result.exit_code != 0 and message in result.output and "spec.yaml:" in result.output, result.output
