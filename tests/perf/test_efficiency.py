"""Efficiency multipliers of the performance model: every compute time, and the bandwidth term of
every transfer, is divided by its multiplier exactly."""

from __future__ import annotations

import pytest

from designer import perf
from designer.errors import PerfError
from designer.perf import ModelEfficiency
from designer.perf.step import estimate_step
from designer.perf.types import Job, Plan, Precision, Recompute
from tests.perf.factories import H100, MIXTRAL, NDR

REL = 1e-12  # float rounding of a product and a quotient

# Mixtral 8x7B on 64 H100 with every kind of parallelism, so that every breakdown term is non-zero.
JOB = Job(model=MIXTRAL, global_batch=256, tokens=1e12, precision=Precision.BF16, recompute=Recompute.SELECTIVE)
PLAN = Plan(tp=2, pp=2, dp=16, ep=4, cp=1, microbatch=1, zero=1)
COMM_TERMS = ("tp_comm_s", "pp_comm_s", "dp_comm_s", "ep_comm_s")


def _estimate(efficiency: ModelEfficiency | None = None) -> perf.StepEstimate:
    cluster = perf.Cluster(gpu=H100, network=NDR) if efficiency is None else \
        perf.Cluster(gpu=H100, network=NDR, efficiency=efficiency)
    return estimate_step(JOB, PLAN, cluster)


def test_nominal_multipliers_change_nothing():
    assert _estimate(ModelEfficiency(1.0, 1.0)) == _estimate()


def test_network_multiplier_divides_the_bandwidth_term_of_every_transfer():
    # Each communication term is latency + bytes / bandwidth, summed: a + b / f for a multiplier
    # f of every bandwidth. Fit a and b at f = 1 and 2; f = 0.5 and 4 must follow exactly (the
    # algorithms chosen do not change for these large messages).
    t = {f: _estimate(ModelEfficiency(network=f)).breakdown for f in (0.5, 1.0, 2.0, 4.0)}
    for term in COMM_TERMS:
        one, two = getattr(t[1.0], term), getattr(t[2.0], term)
        b = 2.0 * (one - two)
        a = one - b
        assert b > 0 and a >= -1e-12 * one, term
        for f in (0.5, 4.0):
            assert getattr(t[f], term) == pytest.approx(a + b / f, rel=1e-9), (term, f)
        assert t[0.5].compute_s == t[1.0].compute_s


@pytest.mark.parametrize("f", [0.5, 0.87, 1.15, 3.0])
def test_compute_multiplier_divides_every_compute_time(f):
    base, scaled = _estimate(), _estimate(ModelEfficiency(compute=f))
    assert scaled.breakdown.compute_s == pytest.approx(base.breakdown.compute_s / f, rel=REL)
    assert scaled.breakdown.optimizer_s == pytest.approx(base.breakdown.optimizer_s / f, rel=REL)
    for term in COMM_TERMS:
        assert getattr(scaled.breakdown, term) == getattr(base.breakdown, term), term
    # MFU stays measured against the datasheet peak: the same FLOPs in a shorter step.
    assert scaled.peak_flops == base.peak_flops
    assert scaled.mfu == pytest.approx(base.mfu * base.step_time_s / scaled.step_time_s, rel=REL)


def test_plan_search_honours_the_multipliers():
    slow = perf.Cluster(gpu=H100, network=NDR, efficiency=ModelEfficiency(compute=0.8, network=0.6))
    nominal = perf.search_plans(JOB, perf.Cluster(gpu=H100, network=NDR), 64)
    found = perf.search_plans(JOB, slow, 64)
    assert found.step_time_s > nominal.step_time_s
    # The search returns the fastest plan on the slowed cluster: timing the nominal winner there
    # is never faster.
    assert found.step_time_s <= estimate_step(JOB, nominal.plan, slow).step_time_s * (1 + 1e-12)


@pytest.mark.parametrize("bad", [0.0, -1.0, 0.01, 25.0, float("nan"), float("inf"), True])
def test_multipliers_outside_their_range_are_refused(bad):
    with pytest.raises(PerfError):
        ModelEfficiency(compute=bad)
    with pytest.raises(PerfError):
        ModelEfficiency(network=bad)
