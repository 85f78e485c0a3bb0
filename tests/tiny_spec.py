"""A small valid spec shared by the input and command-line tests: Llama 3 8B on 20B tokens,
on-prem InfiniBand, a few nodes on one switch. It solves in about a second."""

TINY = """\
version: 1
name: tiny
horizon: 1 years
budget: {total: $2M}
workloads:
  - name: small
    model: {preset: llama3-8b}
    tokens: 20B
    global_batch: 64
    deadline: 30 days
constraints:
  min_utilization: 0.5
  deployments: [on_prem]
  fabrics: [infiniband]
  topologies: [single_switch]
  max_nodes: 4
"""
