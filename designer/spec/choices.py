"""The closed sets a spec chooses from: objectives, deployments, cloud pricing models, fabrics and topologies.

These words are shared below the planner (a candidate's deployment, a cloud line's pricing model)
without anything there reading a spec; :mod:`designer.spec.models` uses them in the spec's types.
"""

from __future__ import annotations

__all__ = ["Objective", "Deployment", "Pricing", "FABRICS", "TOPOLOGIES", "SOFTWARE_PRESETS", "ATTENTION_KERNELS",
           "CHECKPOINT_SAVES", "MOE_DISPATCHERS", "CUDA_GRAPHS"]

from enum import Enum


class Objective(str, Enum):
    MIN_TOTAL_COST = "min_total_cost"
    MIN_TIME = "min_time"
    MIN_COST_PER_TOKEN = "min_cost_per_token"


class Deployment(str, Enum):
    ON_PREM = "on_prem"
    CLOUD = "cloud"


class Pricing(str, Enum):
    """How cloud hours are paid for."""

    ON_DEMAND = "on_demand"
    RESERVED_1Y = "reserved_1y"  # committed for a year: the whole term is paid for
    RESERVED_3Y = "reserved_3y"  # committed for three years
    CAPACITY_BLOCK = "capacity_block"  # instances reserved for fixed dates, paid up front


# What `constraints.fabrics` and `system.fabric` may name, and what `constraints.topologies` and
# `system.topology` may name.
FABRICS = ("ethernet", "roce", "infiniband", "efa", "gpudirect-tcpx", "gpudirect-tcpxo")
TOPOLOGIES = ("single_switch", "fat_tree", "rail_optimized", "rail_only")

# What `software.preset` may name: the training stacks of designer/perf/software.py (a test checks
# that the two lists agree), and the attention kernels `software.attention` may name.
SOFTWARE_PRESETS = ("megatron-core", "megatron-lm-2021", "deepspeed", "fsdp2", "torchtitan")
ATTENTION_KERNELS = ("flash", "unfused")

# What `software.checkpoint_saves` may name: what a selective recomputation keeps, as
# designer/perf/software.py's CHECKPOINT_SAVES (a test checks that the two lists agree).
CHECKPOINT_SAVES = ("all_but_attention_core", "every_other_matmul", "linear_outputs")

# What `software.moe_dispatcher` and `software.cuda_graphs` may name, as designer/perf/software.py's
# MOE_DISPATCHERS and CUDA_GRAPHS (a test checks that the lists agree).
MOE_DISPATCHERS = ("nccl", "deepep", "hybridep")
CUDA_GRAPHS = ("none", "partial", "full")
