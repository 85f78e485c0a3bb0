"""Specs shared by the tests. ``TINY``: a small valid spec for the input and command-line tests,
Llama 3 8B on 20B tokens, on-prem InfiniBand, a few nodes on one switch; it solves in about a
second. ``EVERY_SYSTEM``: every on-prem system the catalogs can build (each fabric, topology and
oversubscription, NICs allowed below their rate), for properties over all the candidates."""

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

EVERY_SYSTEM = """\
version: 1
name: every-system
horizon: 3 years
workloads:
  - name: small
    model: {preset: llama3-8b}
    tokens: 1T
    global_batch: 1024
constraints:
  deployments: [on_prem]
  fabrics: [ethernet, roce, infiniband]
  topologies: [single_switch, fat_tree, rail_optimized, rail_only]
  oversubscription: [1, 2, 3]
  allow_nic_downrate: true
"""

# Two workloads, on-prem or cloud: a hybrid portfolio small enough for exact bounds.
TWO_WORKLOADS = """\
version: 1
name: two
horizon: 2 years
workloads:
  - name: llama3-8b
    model: {preset: llama3-8b}
    tokens: 1T
    global_batch: 1024
    deadline: 40 days
  - name: small
    model: {preset: llama3-8b}
    tokens: 50B
    global_batch: 256
    deadline: 10 days
constraints:
  min_utilization: 0.55
  deployments: [on_prem, cloud]
  gpus: [h100-sxm, a100-80g]
"""
