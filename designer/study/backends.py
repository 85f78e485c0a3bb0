"""Choosing where a study runs: ``--jobs`` local processes, or the Dask cluster of ``--scheduler``.

:func:`open_executor` returns an :class:`~designer.study.executor.Executor`; the Dask backend
(:mod:`designer.study.dask_executor`) is imported only when a scheduler is named, so
``distributed`` stays optional.
"""

from __future__ import annotations

__all__ = ["available_cores", "open_executor"]

import os

from designer.errors import InputError
from designer.study.executor import Executor, make_executor


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity on Linux, else the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def open_executor(jobs: int | None = None, scheduler: str | None = None) -> Executor:
    """The executor for ``--jobs`` and ``--scheduler``.

    With a scheduler address, a Dask cluster (``jobs`` must be unset: the cluster's workers set
    the parallelism); otherwise ``jobs`` local processes (default: every available core), in
    this process when that is one.

    Raises:
        InputError: ``jobs`` below 1, both options given, or no Dask client installed.
    """
    if scheduler is not None:
        if jobs is not None:
            raise InputError("--jobs and --scheduler exclude each other: the cluster's workers set the parallelism")
        from designer.study.dask_executor import DaskExecutor  # only with --scheduler: distributed is optional
        return DaskExecutor(scheduler)
    if jobs is not None and jobs < 1:
        raise InputError(f"--jobs must be at least 1, got {jobs}")
    n = jobs if jobs is not None else available_cores()
    return make_executor(n)
