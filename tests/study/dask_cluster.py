"""A real Dask cluster on 127.0.0.1 for tests: one ``dask scheduler`` and ``dask worker`` processes.

Each process runs in a session of its own (so the worker's nanny and its child stop together)
with a temporary directory as its working directory, so the workers import designer as installed,
never from the test's folder. The scheduler picks a free port and writes its address to a
scheduler file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

_START_TIMEOUT_S = 90  # a loaded two-core CI machine starts a worker in a few seconds


class DaskCluster:
    """``dask scheduler`` and ``workers`` x ``dask worker --nthreads 1`` on 127.0.0.1."""

    def __init__(self, folder: Path, workers: int = 2):
        self.folder = folder
        self.processes: list[subprocess.Popen] = []
        self.address = ""
        self.workers = workers

    def _spawn(self, *args: str, log: str) -> subprocess.Popen:
        out = open(self.folder / log, "wb")
        process = subprocess.Popen([sys.executable, "-m", "dask", *args], cwd=self.folder, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        self.processes.append(process)
        return process

    def start(self, workers: int | None = None) -> DaskCluster:
        scheduler_file = self.folder / "scheduler.json"
        self._spawn("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                    "--scheduler-file", str(scheduler_file), log="scheduler.log")
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not scheduler_file.exists():
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Dask scheduler did not start: {self.log('scheduler.log')}")
            time.sleep(0.1)
        while not self.address:
            try:
                self.address = json.loads(scheduler_file.read_text())["address"]
            except (ValueError, KeyError):  # written but not complete yet
                time.sleep(0.1)
        for i in range(self.workers if workers is None else workers):
            self._spawn("worker", self.address, "--nthreads", "1", "--nworkers", "1", "--no-dashboard",
                        "--memory-limit", "0", "--local-directory", str(self.folder / f"worker-{i}"),
                        log=f"worker-{i}.log")
        return self

    def wait_for_workers(self, n: int) -> None:
        """Until ``n`` workers have joined the scheduler."""
        from distributed import Client

        with Client(self.address, timeout=_START_TIMEOUT_S, set_as_default=False) as client:
            client.wait_for_workers(n, timeout=_START_TIMEOUT_S)

    def log(self, name: str) -> str:
        path = self.folder / name
        return path.read_text(errors="replace")[-2000:] if path.exists() else ""

    def stop(self) -> None:
        for process in reversed(self.processes):
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for process in self.processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
