"""The executor behind frontier and sweep: results in task order, errors and Ctrl-C cancel the
rest, and worker processes (and what they start) die with their parent, even after ``kill -9``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from designer.study import executor, processes

ROOT = Path(__file__).resolve().parents[2]
LINUX = sys.platform.startswith("linux")


@dataclass(frozen=True)
class Sleep:
    seconds: float
    value: int

    def run(self) -> int:
        time.sleep(self.seconds)
        return self.value


@dataclass(frozen=True)
class Fail:
    def run(self) -> int:
        raise ValueError("task failed")


@dataclass(frozen=True)
class WhereAmI:
    def run(self) -> tuple[bool, list[str], int]:
        streams = [os.readlink(f"/proc/self/fd/{fd}") for fd in (0, 1, 2)]
        return os.getpgid(0) == os.getpid(), streams, signal.getsignal(signal.SIGINT) == signal.SIG_IGN


@dataclass(frozen=True)
class Pid:
    path: str

    def run(self) -> None:
        # Written whole, then renamed: a reader polling for the file never sees it empty.
        Path(self.path + ".part").write_text(str(os.getpid()))
        os.replace(self.path + ".part", self.path)
        time.sleep(120)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


def _gone(pids, within: float = 3.0) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not any(_alive(p) for p in pids):
            return True
        time.sleep(0.02)
    return False


@pytest.mark.parametrize("workers", [1, 3])
def test_results_come_in_task_order_whatever_finishes_first(workers):
    tasks = [Sleep(0.3 - 0.1 * (i % 3), i) for i in range(7)]
    ticks: list[int] = []
    with executor.make_executor(workers) as pool:
        assert isinstance(pool, executor.InlineExecutor if workers == 1 else executor.ProcessExecutor)
        assert pool.map(tasks, lambda: ticks.append(1)) == list(range(7))
    assert len(ticks) == 7


def test_the_inline_executor_ticks_as_each_task_ends():
    seen: list[float] = []
    start = time.monotonic()
    executor.InlineExecutor().map([Sleep(0.1, 0), Sleep(0.1, 1)], lambda: seen.append(time.monotonic() - start))
    assert seen[0] < 0.19 <= seen[1]


@pytest.mark.skipif(not LINUX, reason="reads /proc")
def test_a_failing_task_cancels_the_rest_and_its_workers(tmp_path):
    pool = executor.ProcessExecutor(2)
    marker = tmp_path / "pid"
    with pytest.raises(ValueError, match="task failed"):
        with pool:
            pool.map([Pid(str(marker)), Sleep(0.2, 0), Fail()])
    assert marker.exists()
    assert _gone([int(marker.read_text())])


@pytest.mark.skipif(not LINUX, reason="reads /proc")
def test_workers_lead_their_own_group_ignore_ctrl_c_and_keep_off_the_streams():
    with executor.ProcessExecutor(2) as pool:
        (leads, streams, ignores), = pool.map([WhereAmI()])
    assert leads and ignores
    assert streams == ["/dev/null"] * 3


@pytest.mark.skipif(not LINUX, reason="reads /proc")
def test_cancel_kills_running_workers_at_once(tmp_path):
    marker = tmp_path / "pid"
    pool = executor.ProcessExecutor(2)
    pool.submit(Pid(str(marker)))
    end = time.monotonic() + 30
    while not marker.exists() and time.monotonic() < end:
        time.sleep(0.01)
    worker = int(marker.read_text())
    started = time.monotonic()
    pool.cancel()
    assert _gone([worker], within=2.0) and time.monotonic() - started < 2.0


_PARENT = """
import subprocess, sys, time
from pathlib import Path
from designer.study import executor, processes

class Grandchild:
    def __init__(self, folder):
        self.folder = folder
    def run(self):
        import os
        child = subprocess.Popen(["sleep", "120"])  # like CBC, started by the worker
        Path(self.folder, "pids.part").write_text(f"{os.getpid()} {child.pid}")
        os.replace(Path(self.folder, "pids.part"), Path(self.folder, "pids"))
        time.sleep(120)

pool = executor.ProcessExecutor(1)
pool.submit(Grandchild(sys.argv[1]))
time.sleep(120)
"""


@pytest.mark.skipif(not LINUX, reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_workers_and_what_they_started_die_when_the_parent_is_killed(tmp_path, sig):
    """The parent-death check: a worker whose parent is gone kills its whole process group."""
    script = tmp_path / "parent.py"
    script.write_text(_PARENT)
    parent = subprocess.Popen([sys.executable, str(script), str(tmp_path)], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    marker = tmp_path / "pids"
    end = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < end:
        time.sleep(0.02)
    time.sleep(0.05)
    pids = [int(p) for p in marker.read_text().split()]
    assert all(_alive(p) for p in pids)
    parent.send_signal(sig)
    parent.communicate(timeout=30)  # the pipes close: no worker holds them
    assert _gone(pids, within=2.0), [p for p in pids if _alive(p)]


@pytest.mark.skipif(not LINUX, reason="reads /proc")
def test_children_are_found_and_killed_with_their_group():
    """What kill_children does for each child (not run here: it would end every child of pytest)."""
    child = subprocess.Popen(["sh", "-c", "sleep 60 & wait"], start_new_session=True)
    try:
        time.sleep(0.2)
        grandchildren = [int(p) for p in Path(f"/proc/{child.pid}/task/{child.pid}/children").read_text().split()]
        assert child.pid in processes._child_pids() and grandchildren
        processes.kill_group(child.pid)
        assert child.wait(timeout=5) == -signal.SIGKILL
        assert _gone(grandchildren)
    finally:
        if child.poll() is None:
            child.kill()


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="unknown executor backend 'dask'"):
        executor.make_executor(2, backend="dask")
