"""A parallelism plan, and the partial plan a search is given.

Plain frozen dataclasses, re-exported by :mod:`designer.perf.types` with the rest of the
performance model's inputs.
"""

from __future__ import annotations

__all__ = ["Plan", "PlanConstraints"]

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Plan:
    """A parallelism plan. ``tp * cp * pp * dp`` GPUs; ``ep`` divides ``dp``, or with an expert
    tensor-parallel size ``etp`` below ``tp``, ``etp * ep`` divides ``tp * cp * dp``.

    ``etp`` (``None``: ``tp``) is Megatron-Core's ``--expert-tensor-parallel-size``: the expert
    MLPs are split over ``etp`` ranks instead of ``tp``, and the experts are laid over the
    ``tp x cp x dp`` ranks of a stage as ``etp x ep x edp`` (MoE parallel folding, Liu et al.
    2025, arXiv:2504.14960): with ``etp`` 1, EP 64 runs over TP 2 x DP 32, one expert group of
    64 consecutive ranks.

    ``zero``: 0 replicated optimizer, 1 distributed optimizer (optimizer states sharded over
    the data-parallel group), 2 also gradients, 3 also weights (FSDP ``FULL_SHARD``).
    ``virtual_stages`` > 1 is the interleaved 1F1B schedule (Narayanan et al. SC21, sec. 2.2);
    ``schedule`` ``dualpipe`` is DeepSeek-V3's bidirectional pipeline (:mod:`designer.perf.pipeline`).
    ``first_stage_layers`` and ``last_stage_layers`` give the first and last pipeline stages
    other layer counts than the rest (Megatron-Core ``--decoder-first-pipeline-num-layers`` /
    ``--decoder-last-pipeline-num-layers``); ``None`` splits evenly, or as evenly as the stages
    allow when they do not divide the layers (:func:`designer.perf.pipeline.stage_layout`).
    """

    tp: int
    pp: int
    dp: int
    ep: int = 1
    cp: int = 1
    microbatch: int = 1
    virtual_stages: int = 1
    zero: int = 1
    sequence_parallel: bool = True
    first_stage_layers: int | None = None
    last_stage_layers: int | None = None
    schedule: str = "1f1b"
    etp: int | None = None

    @property
    def gpus(self) -> int:
        """GPUs the plan occupies."""
        return self.tp * self.cp * self.pp * self.dp

    @property
    def expert_tp(self) -> int:
        """Ranks one expert MLP is split over (``etp``, else ``tp``)."""
        return self.etp if self.etp is not None else self.tp

    @property
    def expert_dp(self) -> int:
        """Replicas of each expert in a stage: ``tp x cp x dp / (etp x ep)`` (with ``etp = tp``,
        ``cp x dp / ep``), the group expert gradients are reduced over."""
        return max(1, self.tp * self.cp * self.dp // (self.expert_tp * self.ep))

    @property
    def expert_stride(self) -> int:
        """Rank distance between members of an expert-parallel group: ``tp x cp`` when the
        experts are split like the dense layers, ``etp`` when they are folded over TP x DP
        (Megatron-Core numbers the expert ranks ETP fastest, then EP)."""
        return self.tp * self.cp if self.expert_tp == self.tp else self.expert_tp

    def describe(self) -> str:
        """Short human form, e.g. ``tp8 pp4 dp32 mb1``."""
        parts = [f"tp{self.tp}", f"pp{self.pp}", f"dp{self.dp}"]
        if self.cp > 1:
            parts.append(f"cp{self.cp}")
        if self.ep > 1:
            parts.append(f"ep{self.ep}")
        if self.etp is not None and self.etp != self.tp:
            parts.append(f"etp{self.etp}")
        parts.append(f"mb{self.microbatch}")
        if self.virtual_stages > 1:
            parts.append(f"v{self.virtual_stages}")
        if self.schedule != "1f1b":
            parts.append(self.schedule)
        if self.first_stage_layers is not None or self.last_stage_layers is not None:
            parts.append(f"layers{self.first_stage_layers or '='}/{self.last_stage_layers or '='}")
        parts.append(f"zero{self.zero}")
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class PlanConstraints:
    """Partial plan for :func:`designer.perf.search_plans`: ``None`` fields are searched."""

    tp: int | None = None
    pp: int | None = None
    dp: int | None = None
    ep: int | None = None
    cp: int | None = None
    microbatch: int | None = None
    virtual_stages: int | None = None
    zero: int | None = None
    sequence_parallel: bool | None = None
    first_stage_layers: int | None = None
    last_stage_layers: int | None = None
    schedule: str | None = None
    etp: int | None = None
