"""Where a study's solves run: an executor interface (submit tasks, results in order, cancel) and its
local backends, in this process or in worker processes that die with their parent.

A task is any picklable object with a ``run()`` method (the tasks of :mod:`designer.study.workers`
and :mod:`designer.study.scenarios`). :meth:`Executor.map` returns results in task order
whatever order they finish in, so a study's result does not depend on the backend or the number
of workers; :meth:`Executor.cancel` stops everything at once. Another backend (a cluster
scheduler) implements :meth:`Executor.submit` and :meth:`Executor.cancel` and inherits the rest:
:class:`designer.study.dask_executor.DaskExecutor` runs tasks on a Dask cluster.

``map(tasks, failures=True)`` keeps going when a task fails: the task that raised, or whose
worker died, becomes a :class:`TaskFailure` in its place (a Monte Carlo study reports it with its
inputs and keeps the other scenarios). A task that is a dataclass with a ``shared`` field (the
spec and catalog every task of a study carries) may have it sent once per worker rather than once
per task (:func:`split_shared`, :func:`join_shared`); the Dask backend does.

Worker processes (:class:`ProcessExecutor`) are made to die with the command:

* each worker leads its own **process group**, so a terminal's Ctrl-C reaches only the parent
  (which cancels) and cancelling kills the group with ``SIGKILL``, including a CBC solver the
  worker started;
* each worker runs a **parent-death check**: a thread that polls ``getppid()`` every
  :data:`PARENT_POLL_S` and kills the worker's group the moment the parent is gone (``kill -9``
  of the command leaves no worker running, and no worker keeps the caller's pipes open);
* workers read nothing from and write nothing to the command's standard streams (they are
  ``/dev/null`` in a worker), and ignore Ctrl-C: their results and errors come back as values.
"""

from __future__ import annotations

__all__ = ["Task", "TaskFailure", "Executor", "InlineExecutor", "ProcessExecutor", "make_executor", "kill_children",
           "split_shared", "join_shared", "describe_error", "PARENT_POLL_S"]

import multiprocessing
import os
import signal
import sys
import threading
import time
from abc import ABC, abstractmethod
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Any, Callable, Protocol, Sequence

from designer.study.processes import kill_group, kill_children

PARENT_POLL_S = 0.1  # how often a worker checks that its parent is alive


class Task(Protocol):
    """A unit of work: picklable, and ``run()`` returns its (picklable) result."""

    def run(self) -> Any: ...


@dataclass(frozen=True, slots=True)
class TaskFailure:
    """A task that did not return: it raised, or its worker died (``lost``). ``error`` is one line."""

    index: int
    error: str
    lost: bool = False


def describe_error(exc: BaseException) -> str:
    """``Kind: first line of the message``: a failure in one line."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


_LOST = "worker process died (killed, out of memory or crashed)"


def split_shared(task: Any) -> tuple[Any, Any] | None:
    """(the data ``task`` shares with other tasks, ``task`` without it), or None when it shares none."""
    if is_dataclass(task) and any(f.name == "shared" for f in fields(task)) and task.shared is not None:
        return task.shared, replace(task, shared=None)
    return None


def join_shared(light: Any, shared: Any) -> Any:
    """The inverse of :func:`split_shared` (run on a worker)."""
    return replace(light, shared=shared).run()


def _run_task(task: Task) -> Any:
    return task.run()


class Executor(ABC):
    """Runs independent tasks; :meth:`map` gives their results in task order; :meth:`cancel`
    stops everything. Use as a context manager: leaving it by an exception (Ctrl-C included)
    cancels, leaving it normally waits for nothing more and releases the workers."""

    workers: int = 1
    description: str = "this process"  # where the tasks run, for progress messages

    @abstractmethod
    def submit(self, task: Task) -> Future:
        """Start ``task``; its future holds ``task.run()``'s result or exception."""

    @abstractmethod
    def cancel(self) -> None:
        """Stop every task now; workers end (killed if need be). Idempotent."""

    def close(self) -> None:
        """Release the workers once every task is done (the default: nothing to release)."""

    def map(self, tasks: Sequence[Task], tick: Callable[[], None] | None = None, *,
            failures: bool = False) -> list[Any]:
        """Run ``tasks`` and return their results in task order, calling ``tick`` as each ends.

        With ``failures``, a task that raised or was lost is a :class:`TaskFailure` in its place
        and the others go on.

        Raises:
            Without ``failures``, the first exception a task raised (the others are cancelled);
            ``KeyboardInterrupt`` always (everything is cancelled).
        """
        futures = [self.submit(task) for task in tasks]
        index = {id(f): i for i, f in enumerate(futures)}
        results: list[Any] = [None] * len(futures)
        pending = set(futures)
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=lambda f: index[id(f)]):
                    i = index[id(future)]
                    if failures and future.exception() is not None:
                        exc = future.exception()
                        lost = isinstance(exc, BrokenProcessPool) or type(exc).__name__ == "KilledWorker"
                        results[i] = TaskFailure(i, _LOST if lost else describe_error(exc), lost)
                    else:
                        results[i] = future.result()
                    if tick is not None:
                        tick()
        except BaseException:
            self.cancel()
            raise
        return results

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, kind: type | None, value: BaseException | None, traceback: Any) -> None:
        if kind is not None:
            self.cancel()
        else:
            self.close()


class InlineExecutor(Executor):
    """Tasks run in this process, one at a time, as they are submitted (no processes, no pickling)."""

    def submit(self, task: Task) -> Future:
        future: Future = Future()
        try:
            future.set_result(task.run())
        except Exception as exc:  # noqa: BLE001 - the future carries it to map()
            future.set_exception(exc)
        return future

    def map(self, tasks: Sequence[Task], tick: Callable[[], None] | None = None, *,
            failures: bool = False) -> list[Any]:
        results = []
        for i, task in enumerate(tasks):  # one at a time, ticking as each ends (submit() would run them all first)
            if failures:
                try:
                    results.append(task.run())
                except Exception as exc:  # noqa: BLE001 - reported in its place; the others go on
                    results.append(TaskFailure(i, describe_error(exc)))
            else:
                results.append(task.run())
            if tick is not None:
                tick()
        return results

    def cancel(self) -> None:
        pass


def _prepare_worker(parent: int) -> None:
    """In a new worker: own process group, quiet standard streams, no Ctrl-C, a parent-death check."""
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    for signum in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
        if signum is not None:
            signal.signal(signum, signal.SIG_DFL)  # the parent's handlers do not apply here
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides; it cancels us
    try:
        signal.set_wakeup_fd(-1)
    except (ValueError, OSError):
        pass
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    threading.Thread(target=_watch_parent, args=(parent,), name="designer-parent-check", daemon=True).start()


def _watch_parent(parent: int) -> None:
    while True:
        if os.getppid() != parent:  # re-parented: the command is gone
            kill_group(os.getpid())
            os._exit(1)
        time.sleep(PARENT_POLL_S)


def _context() -> Any:
    # fork starts a worker in milliseconds with the parent's imports; elsewhere, spawn.
    return multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")


class ProcessExecutor(Executor):
    """Tasks run in up to ``workers`` local processes (each its own process group, each checking
    that its parent lives); results come back by pickling."""

    def __init__(self, workers: int):
        self.workers = max(1, int(workers))
        self.description = f"{self.workers} local process{'es' if self.workers != 1 else ''}"
        self._pool = self._new_pool(self.workers)
        self._cancelled = False

    @staticmethod
    def _new_pool(workers: int) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=workers, mp_context=_context(), initializer=_prepare_worker,
                                   initargs=(os.getpid(),))

    def submit(self, task: Task) -> Future:
        try:
            return self._pool.submit(_run_task, task)
        except BrokenProcessPool as exc:  # a worker died earlier: the pool takes nothing more
            future: Future = Future()
            future.set_exception(exc)
            return future

    def map(self, tasks: Sequence[Task], tick: Callable[[], None] | None = None, *,
            failures: bool = False) -> list[Any]:
        """As :meth:`Executor.map`; with ``failures``, a worker that dies takes every task it had not
        finished with it (they are lost with the pool). Those tasks then run once more, each in a
        process of its own, so only a task that kills its own worker again is a failure."""
        results = super().map(tasks, tick, failures=failures)
        if not failures:
            return results
        lost = [i for i, r in enumerate(results) if isinstance(r, TaskFailure) and r.lost]
        if lost:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = self._new_pool(self.workers)
        for start in range(0, len(lost), self.workers):
            batch = lost[start:start + self.workers]
            alone = [ProcessExecutor(1) for _ in batch]
            try:
                futures = [one.submit(tasks[i]) for one, i in zip(alone, batch)]
                for i, future in zip(batch, futures):
                    exc = future.exception()
                    if exc is None:
                        results[i] = future.result()
                    elif not isinstance(exc, BrokenProcessPool):
                        results[i] = TaskFailure(i, describe_error(exc))
            finally:
                for one in alone:
                    one.cancel()
        return results

    def _pids(self) -> list[int]:
        # ProcessPoolExecutor keeps its workers in ``_processes`` (pid -> Process) on every
        # Python this package supports; the public API has no way to kill a running task.
        processes = getattr(self._pool, "_processes", None) or {}
        return sorted(int(pid) for pid in list(processes))

    def cancel(self) -> None:
        if self._cancelled:
            return
        self._cancelled = True
        for pid in self._pids():
            kill_group(pid)
        self._pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        if not self._cancelled:
            self._pool.shutdown(wait=True)


def make_executor(workers: int, backend: str = "local") -> Executor:
    """The executor for ``workers`` parallel tasks: in this process for one, else local processes.

    Raises:
        ValueError: an unknown backend.
    """
    if backend != "local":
        raise ValueError(f"unknown executor backend {backend!r}")
    return InlineExecutor() if workers <= 1 else ProcessExecutor(workers)
