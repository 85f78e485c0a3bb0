"""Properties of the performance model (Hypothesis): monotone in the network, bounded outputs."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from designer.perf import Cluster, Job, Plan, estimate_step
from designer.perf import network as netm

from .factories import GPT_1B, H100, MIXTRAL, NDR

PLANS = [
    Plan(tp=1, pp=1, dp=64, zero=1),
    Plan(tp=2, pp=2, dp=16, microbatch=2),
    Plan(tp=8, pp=4, dp=2, virtual_stages=2),
    Plan(tp=16, pp=1, dp=4, sequence_parallel=False),
    Plan(tp=1, pp=1, dp=64, zero=3),
    Plan(tp=2, pp=1, dp=16, cp=2),
]
MOE_PLAN = Plan(tp=1, pp=1, dp=64, ep=8, zero=2)
JOBS = [Job(GPT_1B, global_batch=256, tokens=1e10, recompute=r) for r in ("none", "selective", "full")]
MOE_JOB = Job(MIXTRAL, global_batch=256, tokens=1e10, recompute="full")

cases = st.one_of(
    st.tuples(st.sampled_from(JOBS), st.sampled_from(PLANS)),
    st.just((MOE_JOB, MOE_PLAN)),
)
factor = st.floats(min_value=1.0, max_value=16.0)


def _network(inter=50e9, latency=1e-6, oversub=1.0, scaleup=450e9, sharp=False, rail_only=False):
    return replace(NDR, inter_Bps_per_gpu=inter, host_latency_s=latency, oversubscription=oversub,
                   scaleup_Bps=scaleup, in_network_reduction=sharp, rail_only=rail_only)


def _step(job, plan, **net) -> float:
    return estimate_step(job, plan, Cluster(H100, _network(**net))).step_time_s


@settings(max_examples=40, deadline=None)
@given(cases, factor)
def test_more_scaleout_bandwidth_never_slows_a_step(case, k):
    job, plan = case
    assert _step(job, plan, inter=50e9 * k) <= _step(job, plan, inter=50e9) * (1 + 1e-12)


@settings(max_examples=40, deadline=None)
@given(cases, factor)
def test_more_scaleup_bandwidth_never_slows_a_step(case, k):
    job, plan = case
    assert _step(job, plan, scaleup=450e9 * k) <= _step(job, plan, scaleup=450e9) * (1 + 1e-12)


@settings(max_examples=40, deadline=None)
@given(cases, factor)
def test_less_latency_never_slows_a_step(case, k):
    job, plan = case
    assert _step(job, plan, latency=20e-6 / k) <= _step(job, plan, latency=20e-6) * (1 + 1e-12)


@settings(max_examples=40, deadline=None)
@given(cases, factor)
def test_oversubscription_never_speeds_a_step(case, k):
    job, plan = case
    assert _step(job, plan, oversub=k) >= _step(job, plan) * (1 - 1e-12)


@settings(max_examples=40, deadline=None)
@given(cases, st.booleans(), st.booleans(), st.floats(min_value=1e9, max_value=100e9))
def test_utilization_and_mfu_are_fractions(case, sharp, rail_only, inter):
    job, plan = case
    est = estimate_step(job, plan, Cluster(H100, _network(inter=inter, sharp=sharp, rail_only=rail_only)))
    assert 0.0 < est.utilization <= 1.0
    assert 0.0 < est.mfu < 1.0
    assert est.step_time_s > 0 and est.memory_bytes_per_gpu > 0


links = netm.links_for(Cluster(H100, NDR))
groups = st.sampled_from([netm.group_layout(n, s, 8) for n, s in
                          ((2, 1), (8, 1), (16, 1), (64, 8), (256, 1), (32, 2))])
sizes = st.floats(min_value=1.0, max_value=1e11)


@settings(max_examples=60, deadline=None)
@given(groups, sizes, st.floats(min_value=1.0, max_value=100.0))
def test_collective_time_grows_with_message_size(group, n, k):
    for fn in (netm.all_reduce_s, netm.reduce_scatter_s, netm.all_gather_s, netm.all_to_all_s):
        assert fn(n * k, group, links) >= fn(n, group, links)
    assert netm.all_reduce_s(n, group, links) > 0 or group.size == 1
