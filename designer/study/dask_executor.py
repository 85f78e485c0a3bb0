"""The Dask backend of :mod:`designer.study.executor`: a study's tasks on an existing Dask cluster.

``designer study|frontier|sweep SPEC --scheduler tcp://HOST:8786`` connects to a running
``dask scheduler`` (or any Dask deployment: Kubernetes, SLURM through dask-jobqueue) with
``distributed`` (``pip install 'designer[dask]'``). The shared spec and catalog are scattered
to every worker once, as data; each task then carries only its own small item. Results come
back in item order, so a study gives the same bytes on a cluster as on local cores.

Every worker must run the same designer code as the client, or its answers would differ: the
version and a digest of the package's source are compared before anything is sent.
"""

from __future__ import annotations

__all__ = ["DaskExecutor", "code_identity", "CONNECT_TIMEOUT_S"]

import functools
import hashlib
import pickle
import uuid
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from designer import __version__
from designer.errors import InputError
from designer.study.executor import Executor, join_shared, split_shared

CONNECT_TIMEOUT_S = 20  # to reach the scheduler, and for a first worker to join it


@functools.lru_cache(maxsize=1)
def code_identity() -> tuple[str, str]:
    """(designer version, sha256 of every module's source under ``designer/``, first 16 hex digits)."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return __version__, digest.hexdigest()[:16]


def _run(task: Any) -> Any:
    return task.run()


class DaskExecutor(Executor):
    """Tasks on the workers of the Dask scheduler at ``address`` (``tcp://host:port``).

    :meth:`submit` hands a task to the cluster and returns a :class:`concurrent.futures.Future`
    that settles when the cluster's does, so :meth:`Executor.map` (results in task order,
    failures in place, cancel on Ctrl-C) works unchanged. A task's shared data
    (:func:`~designer.study.executor.split_shared`) is scattered to every worker once.

    Raises:
        InputError: ``distributed`` is not installed, the scheduler cannot be reached or has no
            worker, or a worker runs other designer code.
    """

    def __init__(self, address: str, *, timeout_s: float = CONNECT_TIMEOUT_S):
        try:
            import distributed
        except ImportError:
            raise InputError("--scheduler needs the Dask client: pip install 'designer[dask]'") from None
        self.address = address
        self._futures: list[Any] = []
        self._shared: dict[str, Any] = {}  # token of the shared data -> its scattered future
        try:
            self.client = distributed.Client(address, timeout=timeout_s, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise InputError(f"--scheduler {address}: cannot connect ({type(exc).__name__}: "
                             f"{str(exc).splitlines()[0] if str(exc) else 'no answer'})") from None
        try:
            self._check_workers(timeout_s)
        except BaseException:
            self.client.close()
            raise

    def _check_workers(self, timeout_s: float) -> None:
        try:
            self.client.wait_for_workers(1, timeout=timeout_s)
        except TimeoutError:
            raise InputError(f"--scheduler {self.address}: no worker joined within {timeout_s:g} s; "
                             f"start some with `dask worker {self.address}`") from None
        mine = code_identity()
        theirs = self.client.run(code_identity)
        other = sorted(w for w, ident in theirs.items() if tuple(ident) != mine)
        if other:
            got = tuple(theirs[other[0]])
            raise InputError(f"--scheduler {self.address}: worker {other[0]} runs designer {got[0]} "
                             f"(source {got[1]}), this client {mine[0]} (source {mine[1]}); install the same "
                             f"designer on every worker ({len(other)} of {len(theirs)} differ)")
        info = self.client.scheduler_info()["workers"]
        threads = sum(int(w.get("nthreads", 1)) for w in info.values())
        self.workers = max(1, threads)
        self.description = (f"Dask scheduler {self.address}: {len(info)} worker{'s' if len(info) != 1 else ''}, "
                            f"{threads} thread{'s' if threads != 1 else ''}")

    def _scattered(self, shared: Any) -> Any:
        key = getattr(shared, "token", None) or hashlib.sha256(pickle.dumps(shared, protocol=4)).hexdigest()
        if key not in self._shared:
            self._shared[key] = self.client.scatter(shared, broadcast=True, hash=False)
        return self._shared[key]

    def submit(self, task: Any) -> Future:
        split = split_shared(task)
        key = f"designer-{type(task).__name__}-{uuid.uuid4().hex}"
        if split is None:
            remote = self.client.submit(_run, task, key=key, pure=False)
        else:
            shared, light = split
            remote = self.client.submit(join_shared, light, self._scattered(shared), key=key, pure=False)
        self._futures.append(remote)
        local: Future = Future()

        def settle(done: Any) -> None:  # on the client's thread
            try:
                local.set_result(done.result())
            except BaseException as exc:  # noqa: BLE001 - the failure travels to map()
                local.set_exception(exc)
            done.release()
        remote.add_done_callback(settle)
        return local

    def cancel(self) -> None:
        """Cancel every queued task (a solve already running on a worker finishes; its result is dropped)."""
        if self._futures:
            self.client.cancel(self._futures, force=True)
            self._futures = []

    def close(self) -> None:
        self._futures = []
        self.client.close()
