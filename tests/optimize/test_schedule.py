"""The schedule of fixed-size jobs: packings never exceed the cluster and meet every deadline; designs carry one."""

from __future__ import annotations

import math

from hypothesis import given, settings, strategies as st

from designer.optimize.schedule import Job, Slot, fits, pack


def _jobs(draw_list):
    return [Job(f"w{i}", g, t, d) for i, (g, t, d) in enumerate(draw_list)]


job_sets = st.lists(
    st.tuples(st.integers(1, 64), st.floats(0.5, 100.0), st.floats(1.0, 400.0)), min_size=1, max_size=30,
).map(_jobs)


def _usage_at(slots, t):
    return sum(s.gpus for s in slots if s.start_s <= t < s.end_s)


@given(job_sets, st.integers(1, 256))
def test_a_packing_never_exceeds_the_cluster_and_meets_every_deadline(jobs, capacity):
    placed = pack(jobs, capacity)
    if placed is None:
        return
    assert set(placed) == {j.name for j in jobs}
    slots = list(placed.values())
    by_name = {j.name: j for j in jobs}
    for s in slots:
        job = by_name[s.name]
        assert s.start_s >= 0
        assert math.isclose(s.end_s - s.start_s, job.time_s)
        assert s.gpus == job.gpus
        assert s.end_s <= job.deadline_s * (1 + 1e-9)
    assert fits(slots, capacity)
    # Checked again by brute force at every start (usage is highest right after one).
    assert all(_usage_at(slots, s.start_s) <= capacity for s in slots)


@given(job_sets)
def test_jobs_that_fit_side_by_side_always_pack(jobs):
    """Every job alone meeting its deadline, a cluster holding all of them at once always packs
    (the bound the planner's repair relies on)."""
    jobs = [Job(j.name, j.gpus, min(j.time_s, j.deadline_s), j.deadline_s) for j in jobs]
    assert pack(jobs, sum(j.gpus for j in jobs)) is not None


def test_jobs_larger_than_the_cluster_do_not_pack():
    assert pack([Job("big", 9, 1.0, 10.0)], 8) is None


def test_two_jobs_of_the_whole_cluster_run_one_after_the_other():
    placed = pack([Job("a", 8, 10.0, 10.0), Job("b", 8, 5.0, 15.0)], 8)
    assert placed == {"a": Slot("a", 0.0, 10.0, 8), "b": Slot("b", 10.0, 15.0, 8)}


def test_a_small_job_backfills_beside_a_large_one():
    # a holds 6 of 8 GPUs for 10 days; c (2 GPUs) runs beside it; b (8 GPUs) after a.
    placed = pack([Job("a", 6, 10.0, 10.0), Job("b", 8, 5.0, 15.0), Job("c", 2, 9.0, 20.0)], 8)
    assert placed["c"].start_s == 0.0 and placed["b"].start_s == 10.0


def test_malleable_area_fits_but_fixed_sizes_do_not():
    """The example of a GPU-time bound that a schedule cannot meet: 512 GPUs, run-a on all of them
    for 330 days, run-b on 256 for 641 days by day 730 (area fits: 330x512 + 641x256 < 730x512)."""
    jobs = [Job("run-a", 512, 330.0, 365.0), Job("run-b", 256, 641.0, 730.0)]
    assert 330 * 512 + 641 * 256 <= 730 * 512
    assert pack(jobs, 512) is None
    assert pack(jobs, 768) is not None


def test_fits_counts_a_job_ending_as_another_starts_once():
    assert fits([Slot("a", 0.0, 1.0, 8), Slot("b", 1.0, 2.0, 8)], 8)
    assert not fits([Slot("a", 0.0, 1.5, 8), Slot("b", 1.0, 2.0, 8)], 8)


def test_jobs_that_only_fit_packed_back_from_their_deadlines_pack():
    """Forward from 0 in every order the 4-GPU job waits behind the 8-GPU one and ends at 11,
    past its deadline of 10; placed from the deadlines back (latest first, as late as each may
    run), all three fit."""
    jobs = [Job("a", 2, 2.0, 6.0), Job("b", 4, 6.0, 10.0), Job("c", 8, 3.0, 8.0)]
    placed = pack(jobs, 8)
    assert placed == {"b": Slot("b", 4.0, 10.0, 4), "c": Slot("c", 1.0, 4.0, 8), "a": Slot("a", 4.0, 6.0, 2)}

