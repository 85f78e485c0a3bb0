"""torchtitan's own activation and loss memory (the torchtitan preset, designer/perf/stacks.py).

Closed forms in units of ``s b h / t`` bytes per layer and micro-batch, Llama 3 405B at TP8 with
sequence parallelism (h 16,384, 128 query heads, 8 KV heads, SwiGLU 53,248): the fsdp2 preset counts
31.75 (tests/perf/test_memory.py); torchtitan's attention saves K and V repeated to all 128 heads
(4 q/h = 4 instead of 4 kv/h = 0.25: +3.75), and its DTensor TP saves the all-gathered QKV and
first-MLP inputs whole (4 t = 32 instead of 4: +28): 63.5.
"""

from __future__ import annotations

import pytest

from designer.perf import Job, ModelArch, Plan, resolve_software
from designer.perf.memory import layer_activation_bytes, memory_per_gpu
from designer.perf.stacks import PROFILES

from .factories import LLAMA3_8B

L405 = ModelArch("llama3-405b", 126, 16384, 128, 8, 53248, 128256, 8192, gated_mlp=True)
SBH_T = 8192 * 16384 / 8  # s b h / t at micro-batch 1


def _job(model, recompute, titan=True, batch=2048):
    sw = resolve_software("torchtitan" if titan else "fsdp2")
    return Job(model, global_batch=batch, tokens=1e9, precision="bf16", recompute=recompute, software=sw)


def test_repeated_kv_and_gathered_inputs_without_recompute():
    plan = Plan(tp=8, pp=16, dp=64, microbatch=1, zero=2, sequence_parallel=True)
    assert layer_activation_bytes(_job(L405, "none", titan=False), plan) == pytest.approx(31.75 * SBH_T)
    assert layer_activation_bytes(_job(L405, "none"), plan) == pytest.approx(63.5 * SBH_T)


def test_repeated_kv_alone_without_tensor_parallelism():
    """At TP1 nothing is gathered; Llama 3 8B (32 heads, 8 KV): K and V at 4 q/h = 4 instead of
    4 kv/h = 1, +3 s b h bytes per layer."""
    plan = Plan(tp=1, pp=1, dp=8, microbatch=1, zero=3)
    sbh = 8192 * 4096
    base = layer_activation_bytes(_job(LLAMA3_8B, "none", titan=False, batch=8), plan)
    assert layer_activation_bytes(_job(LLAMA3_8B, "none", batch=8), plan) - base == pytest.approx(3 * sbh)


def test_selective_op_checkpointing_recomputes_both():
    """torchtitan's op-level selective checkpointing recomputes the repeat and the all-gathers."""
    plan = Plan(tp=8, pp=16, dp=64, microbatch=1, zero=2, sequence_parallel=True)
    titan = layer_activation_bytes(_job(L405, "selective"), plan)
    assert titan == pytest.approx(layer_activation_bytes(_job(L405, "selective", titan=False), plan))


def test_loss_peaks_in_its_backward():
    """Last stage, full recomputation: torchtitan's loss holds 12 bytes per logit at its backward
    peak without TP and 16 with DTensor's loss_parallel (vocabulary split over tp); the preset
    counts 10 (its eager forward): 2 or 6 bytes x micro-batch x sequence x vocab / t more."""
    for tp, extra in ((1, 2.0), (8, 6.0)):
        plan = Plan(tp=tp, pp=1, dp=16, microbatch=2, zero=3, sequence_parallel=tp > 1)
        job = _job(L405, "full", batch=32)
        base = _job(L405, "full", titan=False, batch=32)
        layer_delta = layer_activation_bytes(job, plan) - layer_activation_bytes(base, plan)
        delta = memory_per_gpu(job, plan, 1).activations - memory_per_gpu(base, plan, 1).activations
        assert delta - layer_delta == pytest.approx(extra * 2 * 8192 * 128256 / tp)


def test_only_the_torchtitan_preset_counts_torchtitans_memory():
    """The fsdp2 preset also stands for Meta's Llama 3 stack and llm-foundry, whose published runs
    fit only without these (docs/validation.md, "Peak memory")."""
    others = [p for name, p in PROFILES.items() if name != "torchtitan"]
    assert not any(p.kv_repeat or p.tp_saves_gathered or p.tp_loss_bytes is not None for p in others)
    titan = PROFILES["torchtitan"]
    assert titan.kv_repeat and titan.tp_saves_gathered
    assert (PROFILES["fsdp2"].loss_bytes, titan.loss_bytes, titan.tp_loss_bytes) == (10.0, 12.0, 16.0)
