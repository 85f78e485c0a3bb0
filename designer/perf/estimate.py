"""What the performance model predicts for one plan: the step-time breakdown and the estimate.

Computed by :mod:`designer.perf.step`; ``StepEstimate.to_json_dict`` is the ``estimate --json``
workload entry of docs/contract.md.
"""

from __future__ import annotations

__all__ = ["Breakdown", "StepEstimate"]

from dataclasses import dataclass

from designer.perf.memory import MemoryBreakdown
from designer.perf.software import Software
from designer.perf.types import Plan, Recompute
from designer.spec import units


@dataclass(frozen=True, slots=True)
class Breakdown:
    """Seconds per step. ``*_comm_s`` are total communication times, hidden or not;
    ``exposed_comm_s`` is the part that adds to the step. ``host_s``: the GPU waiting for its host
    to issue kernels outside the bubble (:mod:`designer.perf.host`)."""

    compute_s: float
    tp_comm_s: float
    pp_comm_s: float
    dp_comm_s: float
    ep_comm_s: float
    cp_comm_s: float
    bubble_s: float
    exposed_comm_s: float
    optimizer_s: float
    checkpoint_s: float
    host_s: float = 0.0


@dataclass(frozen=True, slots=True)
class StepEstimate:
    """Predicted performance of one plan. ``tflops_per_gpu`` is model TFLOP/s (10^12 FLOP/s).

    ``peak_flops`` is the dense peak FLOP/s of the training precision on the GPU the plan ran
    on (:func:`~designer.perf.compute.peak_rate`), so ``mfu == tflops_per_gpu * 1e12 /
    peak_flops``: an MFU only reads against the GPU it was computed for. ``mfu`` counts the
    attention core over the full square (Megatron's papers, NeMo up to 25.04); ``mfu_causal`` the
    same step with the causal count (Llama 3 paper, torchtitan, NeMo from 25.09;
    :func:`~designer.perf.flops.causal_model_flops_per_token`). ``recompute`` is the
    activation recomputation the plan runs (the search's choice under ``auto``), ``software``
    the stack, ``memory_usable_bytes`` the HBM a plan may fill (after the reserve).
    """

    plan: Plan
    gpus: int
    microbatches: int
    step_time_s: float
    utilization: float
    mfu: float
    tflops_per_gpu: float
    tokens_per_s: float
    time_to_train_s: float
    memory_bytes_per_gpu: float
    memory: MemoryBreakdown
    breakdown: Breakdown
    peak_flops: float
    recompute: Recompute = Recompute.NONE
    software: Software = Software()
    memory_usable_bytes: float = 0.0
    stage_layers: tuple[int, ...] = ()  # transformer layers on the first, each middle and the last stage
    offload_bytes_per_gpu: float = 0.0  # activations kept in host memory at the peak (designer.perf.offload)
    mfu_causal: float = 0.0  # MFU with causal attention FLOPs (half the score matrix)

    @property
    def time_to_train_days(self) -> float:
        """Time to train the job's tokens, in days."""
        return self.time_to_train_s / units.SECONDS_PER_DAY

    def to_json_dict(self, name: str | None = None) -> dict[str, object]:
        """The ``estimate --json`` workload entry (docs/contract.md keys; a few more are added)."""
        b = self.breakdown
        p = self.plan
        out: dict[str, object] = {}
        if name is not None:
            out["name"] = name
        out.update({
            "gpus": self.gpus,
            "tp": p.tp,
            "pp": p.pp,
            "dp": p.dp,
            "ep": p.ep,
            "etp": p.expert_tp,
            "cp": p.cp,
            "microbatch": p.microbatch,
            "virtual_stages": p.virtual_stages,
            "schedule": p.schedule,
            "zero": p.zero,
            "sequence_parallel": p.sequence_parallel,
            "stage_layers": list(self.stage_layers),
            "recompute": self.recompute.value,
            "software": self.software.describe(),
            "step_time_s": self.step_time_s,
            "utilization": self.utilization,
            "mfu": self.mfu,
            "mfu_causal": self.mfu_causal,
            "tflops_per_gpu": self.tflops_per_gpu,
            "tokens_per_s": self.tokens_per_s,
            "time_to_train_days": self.time_to_train_days,
            "memory_gb_per_gpu": self.memory_bytes_per_gpu / 1e9,
            "memory_usable_gb_per_gpu": self.memory_usable_bytes / 1e9,
            "activation_offload_gb_per_gpu": self.offload_bytes_per_gpu / 1e9,
            "breakdown": {
                "compute_s": b.compute_s,
                "tp_comm_s": b.tp_comm_s,
                "pp_comm_s": b.pp_comm_s,
                "dp_comm_s": b.dp_comm_s,
                "ep_comm_s": b.ep_comm_s,
                "cp_comm_s": b.cp_comm_s,
                "bubble_s": b.bubble_s,
                "exposed_comm_s": b.exposed_comm_s,
                "optimizer_s": b.optimizer_s,
                "checkpoint_s": b.checkpoint_s,
                "host_s": b.host_s,
            },
        })
        return out
