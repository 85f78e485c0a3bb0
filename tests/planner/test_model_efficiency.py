"""The planner carries the performance model's efficiency multipliers to every estimate it makes."""

from __future__ import annotations

import pytest

from designer import planner
from designer.perf import ModelEfficiency
from designer.planner.inputs import load_inputs
from tests.tiny_spec import TINY

MIP_GAP = 1e-4  # HiGHS's relative MIP gap: costs closer than this may come out either way


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = tmp_path_factory.mktemp("eff") / "tiny.yaml"
    path.write_text(TINY)
    return load_inputs(path)


@pytest.fixture(scope="module")
def nominal(tiny):
    return planner.plan(*tiny)


def test_nominal_multipliers_give_the_same_design(tiny, nominal):
    assert planner.plan(*tiny, efficiency=ModelEfficiency(1.0, 1.0)) == nominal


def test_slower_compute_lengthens_every_run_and_never_lowers_the_cost(tiny, nominal):
    slow = planner.plan(*tiny, efficiency=ModelEfficiency(compute=0.8))
    assert slow.cost.total_usd >= nominal.cost.total_usd * (1 - MIP_GAP)
    (w0,), (w1,) = nominal.workloads, slow.workloads
    if (w1.gpus, w1.tp, w1.pp, w1.dp, w1.microbatch, w1.zero) == (w0.gpus, w0.tp, w0.pp, w0.dp, w0.microbatch, w0.zero):
        # The same plan on the same GPUs: its compute takes 1/0.8 as long.
        assert w1.breakdown.compute_s == pytest.approx(w0.breakdown.compute_s / 0.8, rel=1e-9)
    assert w1.time_to_train_days * w1.gpus >= w0.time_to_train_days * w0.gpus * (1 - 1e-9)


def test_a_slower_network_exposes_more_communication(tiny, nominal):
    slow = planner.plan(*tiny, efficiency=ModelEfficiency(network=0.25))
    (w0,), (w1,) = nominal.workloads, slow.workloads
    # One node: the plan stays (tp1 pp1 dp8 on 8 GPUs); its gradient reduction over NVLink has a
    # quarter of the bandwidth, so it takes longer, but less than four times as long (its latency
    # is unchanged), and the compute is the same.
    assert (w1.gpus, w1.tp, w1.pp, w1.dp) == (w0.gpus, w0.tp, w0.pp, w0.dp) == (8, 1, 1, 8)
    if (w1.microbatch, w1.zero) == (w0.microbatch, w0.zero):
        assert w1.breakdown.compute_s == w0.breakdown.compute_s
    assert w0.breakdown.dp_comm_s < w1.breakdown.dp_comm_s < 4 * w0.breakdown.dp_comm_s
    assert w1.breakdown.exposed_comm_s > w0.breakdown.exposed_comm_s
    assert w1.time_to_train_days > w0.time_to_train_days
