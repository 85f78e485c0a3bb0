"""Generated benchmark specs: many workloads, all catalogs, clusters up to 100,000 GPUs."""

from __future__ import annotations

MODELS = ["llama3-8b", "llama3-70b", "llama3-405b", "gpt3-175b", "mixtral-8x7b"]


def large_spec(workloads: int = 10, max_nodes: int = 12_500) -> str:
    """A spec with ``workloads`` pre-training runs of mixed sizes sharing one cluster."""
    lines = [
        "version: 1",
        f"name: large-{workloads}",
        "objective: min_total_cost",
        "horizon: 3 years",
        "workloads:",
    ]
    for i in range(workloads):
        model = MODELS[i % len(MODELS)]
        tokens = {"llama3-8b": "2T", "llama3-70b": "4T", "llama3-405b": "4T", "gpt3-175b": "1T",
                  "mixtral-8x7b": "2T"}[model]
        lines += [
            f"  - name: run-{i:02d}-{model}",
            f"    model: {{preset: {model}}}",
            f"    tokens: {tokens}",
            "    global_batch: 2048",
            # Deadlines 15 days apart from day 60; past 60 workloads they repeat, to stay within
            # the 3-year horizon.
            f"    deadline: {60 + 15 * (i % 60)} days",
        ]
    lines += [
        "constraints:",
        "  min_utilization: 0.6",
        "  deployments: [on_prem, cloud]",
        f"  max_nodes: {max_nodes}",
    ]
    return "\n".join(lines) + "\n"


def min_time_spec() -> str:
    """Two pre-training runs, as fast as a $60M budget allows, on-prem or in the cloud."""
    return "\n".join([
        "version: 1",
        "name: fastest-within-budget",
        "objective: min_time",
        "horizon: 3 years",
        "budget: {total: $60M}",
        "workloads:",
        "  - {name: llama3-70b, model: {preset: llama3-70b}, tokens: 2T, global_batch: 1024}",
        "  - {name: llama3-8b, model: {preset: llama3-8b}, tokens: 1T, global_batch: 512}",
        "constraints:",
        "  min_utilization: 0.6",
        "  deployments: [on_prem, cloud]",
    ]) + "\n"
