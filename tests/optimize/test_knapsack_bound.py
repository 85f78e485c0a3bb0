"""The cloud-spend knapsack of designer.optimize.bounds: one capacity per deadline (constraint 5)."""

from __future__ import annotations

import itertools
import math

from hypothesis import given, settings, strategies as st

from designer.optimize.bounds import _Knapsack

_GPN = 8


def _least_spend(need, gpu_s, floors, deadlines, n) -> float:
    """Exhaustively: the least cloud spend of any non-empty set S (a built system runs a workload)
    on n nodes whose GPU-time due by each deadline fits in G n D (every other workload at its
    cloud floor)."""
    names = list(floors)
    best = math.inf
    for r in range(1, len(names) + 1):
        for inside in itertools.combinations(names, r):
            if any(w not in need or need[w] > n for w in inside):
                continue
            if any(sum(gpu_s[v] for v in inside if deadlines[v] <= deadlines[w]) > _GPN * n * deadlines[w]
                   for w in inside):
                continue
            best = min(best, sum(floors[w] for w in names if w not in inside))
    return best


jobs = st.lists(st.tuples(st.integers(1, 4), st.floats(1.0, 400.0), st.one_of(st.just(math.inf), st.floats(1.0, 100.0)),
                          st.sampled_from([10.0, 20.0, 40.0, 80.0])), min_size=1, max_size=6)


@settings(max_examples=200, deadline=None)
@given(jobs, st.integers(1, 4))
def test_the_bound_is_below_every_set_that_fits_by_each_deadline(rows, n):
    names = [f"w{i}" for i in range(len(rows))]
    need = {w: r[0] for w, r in zip(names, rows)}
    gpu_s = {w: r[1] for w, r in zip(names, rows)}
    floors = {w: r[2] for w, r in zip(names, rows)}
    deadlines = {w: r[3] for w, r in zip(names, rows)}
    bound = _Knapsack(need, gpu_s, floors, deadlines, _GPN).cost(n)
    exact = _least_spend(need, gpu_s, floors, deadlines, n)
    assert bound <= exact * (1 + 1e-9) + 1e-9 or (bound == math.inf and exact == math.inf)


def test_work_due_early_counts_against_the_capacity_by_its_own_deadline():
    # 8 GPUs: 80 GPU-seconds by t=10, 800 by t=100. The early job's 160 GPU-seconds fit only by the
    # late deadline; the latest-deadline capacity alone would put it all on-prem at no cloud spend.
    need, gpu_s = {"early": 1, "late": 1}, {"early": 160.0, "late": 100.0}
    floors, deadlines = {"early": 50.0, "late": 10.0}, {"early": 10.0, "late": 100.0}
    spend = _Knapsack(need, gpu_s, floors, deadlines, _GPN).cost(1)
    assert spend == 25.0  # half of the early job (80 of its 160 GPU-seconds) in the cloud


def test_work_that_must_run_on_prem_and_misses_its_deadline_has_no_bound():
    need, gpu_s, floors, deadlines = {"a": 1}, {"a": 160.0}, {"a": math.inf}, {"a": 10.0}
    assert _Knapsack(need, gpu_s, floors, deadlines, _GPN).cost(1) == math.inf
