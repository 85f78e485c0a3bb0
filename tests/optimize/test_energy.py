"""Energetic reasoning (constraint 16): every packing meets it, so its cuts never remove a design that packs."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from designer.optimize.problem import min_overlap_s
from designer.optimize.schedule import Job, pack

job_sets = st.lists(st.tuples(st.integers(1, 64), st.floats(0.5, 100.0), st.floats(1.0, 400.0)),
                    min_size=1, max_size=20).map(lambda xs: [Job(f"w{i}", g, min(t, d), d) for i, (g, t, d) in enumerate(xs)])


def test_least_overlap_of_a_job_that_must_run_through_the_middle():
    # 8 s due by 10 s: whatever its start (0 to 2 s) it runs from 2 s to 8 s.
    assert min_overlap_s(8.0, 10.0, 2.0, 8.0) == 6.0
    assert min_overlap_s(8.0, 10.0, 0.0, 10.0) == 8.0
    assert min_overlap_s(4.0, 10.0, 3.0, 7.0) == 1.0  # started first or last, 1 s of it falls inside
    assert min_overlap_s(2.0, 10.0, 3.0, 7.0) == 0.0


@given(job_sets, st.integers(1, 256))
def test_every_packing_meets_the_energetic_constraint_of_every_interval(jobs, capacity):
    placed = pack(jobs, capacity)
    if placed is None:
        return
    points = sorted({0.0} | {j.deadline_s - j.time_s for j in jobs} | {j.time_s for j in jobs} | {j.deadline_s for j in jobs})
    for i, t1 in enumerate(points):
        for t2 in points[i + 1:]:
            need = sum(j.gpus * min_overlap_s(j.time_s, j.deadline_s, t1, t2) for j in jobs)
            used = sum(s.gpus * max(0.0, min(s.end_s, t2) - max(s.start_s, t1)) for s in placed.values())
            assert need <= used * (1 + 1e-9) + 1e-9
            assert used <= capacity * (t2 - t1) * (1 + 1e-9)


def _overfull_by_definition(jobs, capacity):
    """Every overfull interval with how overfull it is, by the definition (min_overlap_s)."""
    starts = sorted({0.0} | {d - t for _, t, d in jobs if d > t})
    ends = sorted({t for _, t, _ in jobs} | {d for _, _, d in jobs})
    found = {}
    for t1 in starts:
        for t2 in ends:
            if t2 <= t1:
                continue
            over = sum(g * min_overlap_s(t, d, t1, t2) for g, t, d in jobs) / (capacity * (t2 - t1))
            if over > 1 + 1e-6:
                found[(t1, t2)] = over
    return found


@given(job_sets, st.integers(1, 256))
def test_the_overfull_intervals_are_those_of_the_definition(jobs, capacity):
    from designer.optimize import rigid
    from designer.optimize.rigid import overfull

    rows = [(j.gpus, j.time_s, j.deadline_s) for j in jobs]
    got = overfull(rows, capacity)
    want = _overfull_by_definition(rows, capacity)
    # Every interval returned is overfull, and they are the most overfull ones (intervals overfull
    # alike to float noise may stand in for each other at the cut-off).
    assert all(pair in want for pair in got)
    top = sorted(want.values(), reverse=True)[:rigid._ENERGY_CUTS]
    assert [want[pair] for pair in got] == pytest.approx(top, rel=1e-9)
