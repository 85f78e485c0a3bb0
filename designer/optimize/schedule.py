"""A schedule of rigid jobs on one cluster: each workload holds a fixed GPU count from its start to its end.

The integer program's GPU-time constraint (5) treats jobs as malleable (any GPU-seconds fit
once their area fits), which is necessary but not sufficient for jobs of fixed size. A design
must show a schedule a cluster can run, so every on-prem assignment is packed here: jobs are
placed one at a time, each at the earliest moment its GPUs are free for its whole run (list
scheduling with backfilling on the free-capacity profile), in earliest-deadline order and, when
that misses a deadline, in least-slack and largest-area order; when every forward order misses
one, backwards from the latest deadline (latest deadline first, each job as late as its GPUs
are free before its deadline: every job may start at 0, deadlines are what binds). A packing is
returned only when it is feasible: at no time more GPUs in use than the cluster has, every job ending by its
deadline (tests/optimize/test_schedule.py checks both over generated job sets). Rigid packing is
NP-hard (Garey & Johnson 1979, strip packing), so a None answer means "this heuristic found no
schedule", never "none exists"; the caller then grows the cluster or changes the assignment.
"""

from __future__ import annotations

__all__ = ["Job", "Slot", "pack", "fits"]

import bisect
from dataclasses import dataclass
from typing import Iterable, Sequence

# Relative slack forgiven on a deadline (the thresholds forgive 1e-12 on an option's own time).
_DEADLINE_TOL = 1e-9


@dataclass(frozen=True, slots=True)
class Job:
    """One workload to place: ``gpus`` GPUs for ``time_s`` seconds, ending by ``deadline_s``."""

    name: str
    gpus: int
    time_s: float
    deadline_s: float


@dataclass(frozen=True, slots=True)
class Slot:
    """Where a job runs: from ``start_s`` to ``end_s`` on ``gpus`` GPUs."""

    name: str
    start_s: float
    end_s: float
    gpus: int


def _place(times: list[float], free: list[int], job: Job, earliest: float = 0.0) -> float:
    """Earliest start, no sooner than ``earliest``, at which ``job`` fits the free-capacity
    profile (``free[i]`` GPUs free from ``times[i]`` to ``times[i + 1]``, the last segment
    open-ended), and book it there."""
    i = bisect.bisect_right(times, earliest) - 1
    if times[i] != earliest:  # split the profile where the job may first start
        times.insert(i + 1, earliest)
        free.insert(i + 1, free[i])
        i += 1
    while True:
        while free[i] < job.gpus:
            i += 1  # the last segment is the whole cluster, so this ends
        start, end = times[i], times[i] + job.time_s
        j = i
        while j + 1 < len(times) and times[j + 1] < end and free[j + 1] >= job.gpus:
            j += 1
        if j + 1 < len(times) and times[j + 1] < end:
            i = j + 1  # blocked inside the window: try after the blocking segment
            continue
        break
    # Split the profile at the end and take the job's GPUs off every segment it covers.
    k = bisect.bisect_left(times, end)
    if k == len(times) or times[k] != end:
        times.insert(k, end)
        free.insert(k, free[k - 1])
    for s in range(i, k):
        free[s] -= job.gpus
    return start


def _pack_in(order: Sequence[Job], capacity: int) -> dict[str, Slot] | None:
    times, free = [0.0], [capacity]
    out: dict[str, Slot] = {}
    for job in order:
        start = _place(times, free, job)
        end = start + job.time_s
        if end > job.deadline_s * (1 + _DEADLINE_TOL):
            return None
        out[job.name] = Slot(job.name, start, end, job.gpus)
    return out


def _pack_back(jobs: Sequence[Job], capacity: int) -> dict[str, Slot] | None:
    """The mirror of :func:`_pack_in`: time runs backwards from the latest deadline H, each job
    released at H - its deadline, placed latest deadline first at the latest moment its GPUs are
    free before its deadline (list scheduling on the reversed profile). Deadlines bind and every
    job may start at 0, so packing from the deadlines back often fits what packing forward does
    not; a job that would have to start before 0 fails it."""
    horizon = max(j.deadline_s for j in jobs)
    times, free = [0.0], [capacity]
    out: dict[str, Slot] = {}
    for job in sorted(jobs, key=lambda j: (-j.deadline_s, -j.gpus, j.name)):
        start = _place(times, free, job, horizon - job.deadline_s)
        end = start + job.time_s
        if end > horizon + _DEADLINE_TOL * horizon:
            return None
        begin = horizon - end
        out[job.name] = (Slot(job.name, begin, horizon - start, job.gpus) if begin >= 0.0
                         else Slot(job.name, 0.0, job.time_s, job.gpus))  # within the tolerance of 0
    return out


def pack(jobs: Iterable[Job], capacity: int) -> dict[str, Slot] | None:
    """A feasible schedule of rigid ``jobs`` on ``capacity`` GPUs, or None when the heuristic of
    the module docstring finds none (or a job is larger than the cluster)."""
    jobs = list(jobs)
    if any(j.gpus > capacity for j in jobs):
        return None
    orders = (
        sorted(jobs, key=lambda j: (j.deadline_s, -j.gpus, j.name)),  # earliest deadline first
        sorted(jobs, key=lambda j: (j.deadline_s - j.time_s, j.deadline_s, j.name)),  # least slack
        sorted(jobs, key=lambda j: (j.deadline_s, -j.gpus * j.time_s, j.name)),  # largest area first
    )
    for order in orders:
        found = _pack_in(order, capacity)
        if found is not None:
            return found
    return _pack_back(jobs, capacity) if jobs else None


def fits(slots: Iterable[Slot], capacity: int) -> bool:
    """Whether ``slots`` never use more than ``capacity`` GPUs at once (a sweep over start and
    end events, ends before starts at the same instant)."""
    events = sorted([(s.start_s, 1, s.gpus) for s in slots] + [(s.end_s, 0, -s.gpus) for s in slots])
    used = 0
    for _, _, delta in events:
        used += delta
        if used > capacity:
            return False
    return True
