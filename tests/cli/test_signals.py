"""Signals end a command with one line and 128 + the signal's number, at any moment, and leave
nothing behind: no traceback, no worker process, no solver file, no held pipe.

These run the real command in its own process (a signal cannot be tested through CliRunner). The
moment the command's handlers are in place is read from ``/proc``: :func:`designer.cli.main`
opens the watchdog's pipe first thing, so signals are sent at fixed offsets from then on,
including while the command's libraries are still being imported.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from designer import planner
from designer.cli import app, interrupt
from designer.errors import SolverError
from tiny_spec import TINY

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart.yaml"
LINUX = sys.platform.startswith("linux") and Path("/proc/self/fd").is_dir()
pytestmark = pytest.mark.skipif(not LINUX, reason="reads /proc to find the command's state and its workers")


@pytest.fixture
def tiny_spec_path(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY)
    return path


def _designer(*args: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "designer", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT, **kwargs)


def _pipes(pid: int) -> int:
    count = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            count += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("pipe:")
        except OSError:
            pass
    return count


def _wait_for_handlers(proc: subprocess.Popen, timeout: float = 30.0) -> None:
    """Until the watchdog's pipe exists (two pipes beyond stdout and stderr)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            return
        try:
            if _pipes(proc.pid) >= 4:
                return
        except OSError:
            return
        time.sleep(0.002)
    raise AssertionError("the command never installed its signal handlers")


def _children(pid: int) -> set[int]:
    out: set[int] = set()
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            out.update(int(p) for p in Path(f"/proc/{pid}/task/{tid}/children").read_text().split())
    except OSError:
        pass
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize("delay", [0.0, 0.02, 0.08, 0.2, 0.5, 1.0, 2.0])
def test_ctrl_c_at_any_moment_is_one_line_and_exit_130(tmp_path, delay):
    """From the first line of the command's code: during imports, loading, candidates, the solve."""
    out = tmp_path / "design.yaml"
    proc = _designer("solve", str(QUICKSTART), "-o", str(out))
    _wait_for_handlers(proc)
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    sent = time.monotonic()
    stdout, stderr = proc.communicate(timeout=60)
    ended = time.monotonic() - sent
    if proc.returncode == 0:  # finished before the signal came
        assert out.exists() and b"Traceback" not in stderr
        return
    assert (proc.returncode, stderr, stdout) == (130, b"interrupted; no output was written\n", b"")
    assert ended < interrupt.GRACE_S + 2.0, ended
    assert not out.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("sig, code, line", [(signal.SIGTERM, 143, b"terminated; no output was written\n"),
                                             (signal.SIGHUP, 129, b"hung up; no output was written\n")])
def test_sigterm_and_sighup_have_their_own_line_and_code(sig, code, line):
    proc = _designer("solve", str(QUICKSTART))
    _wait_for_handlers(proc)
    time.sleep(0.5)
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=60)
    assert (proc.returncode, stderr, stdout) == (code, line, b"")


def test_an_ignored_sighup_stays_ignored():
    """``nohup designer ...``: a signal ignored by whoever started the command stays ignored."""
    proc = subprocess.Popen([sys.executable, "-m", "designer", "solve", str(QUICKSTART)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=ROOT,
                            preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    _wait_for_handlers(proc)
    time.sleep(0.3)
    proc.send_signal(signal.SIGHUP)
    time.sleep(1.0)
    assert proc.poll() is None  # still solving
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=60)
    assert (proc.returncode, stderr) == (143, b"terminated; no output was written\n")


def test_a_swallowed_interrupt_is_still_an_interrupt(tiny_spec_path, monkeypatch):
    """PuLP's ``except:`` around ``import highspy`` once turned Ctrl-C into "solver highs is not
    available": after a signal, whatever the command raises is reported as the interruption."""
    def swallowed(*args, **kwargs):
        monkeypatch.setattr(interrupt._state, "signum", signal.SIGINT)  # the handler ran, PuLP ate it
        raise SolverError("solver highs is not available (pip install highspy)")

    monkeypatch.setattr(planner, "plan", swallowed)
    result = CliRunner().invoke(app, ["solve", str(tiny_spec_path)])
    assert (result.exit_code, result.stderr) == (130, "interrupted; no output was written\n")


# A Ctrl-C that lands in importlib between a lock's acquire and its release leaves the import lock
# held by the main thread; a library then swallows the KeyboardInterrupt and the command runs on.
# The watchdog must still end it: it may import nothing (opening a file with encoding="ascii"
# once imported encodings.ascii and waited on that lock for ever: a hang after an early Ctrl-C).
_LEAKED_IMPORT_LOCK = """
import _imp, os, signal, sys, time
from designer.cli import interrupt
interrupt.install()
from designer.study.processes import kill_children
interrupt.on_kill(kill_children)
sub = __import__("subprocess").Popen([sys.executable, "-c", "import time; time.sleep(60)"])
_imp.acquire_lock()
assert "encodings.ascii" not in sys.modules
try:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(1)
except KeyboardInterrupt:
    pass
print(sub.pid, flush=True)
time.sleep(30)
"""


def test_the_watchdog_ends_a_command_whose_interrupt_was_swallowed_while_the_import_lock_was_held():
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", _LEAKED_IMPORT_LOCK], capture_output=True, cwd=ROOT, timeout=60)
    assert (proc.returncode, proc.stderr) == (130, b"interrupted; no output was written\n")
    assert time.monotonic() - start < 10
    assert not _alive(int(proc.stdout))  # its child went with it


def test_no_design_is_put_in_place_after_a_swallowed_interrupt(tiny_spec_path, tmp_path, monkeypatch):
    real = planner.plan

    def plan_then_signal(*args, **kwargs):
        design = real(*args, **kwargs)
        monkeypatch.setattr(interrupt._state, "signum", signal.SIGINT)
        return design

    monkeypatch.setattr(planner, "plan", plan_then_signal)
    out = tmp_path / "design.yaml"
    result = CliRunner().invoke(app, ["solve", str(tiny_spec_path), "-o", str(out)])
    assert result.exit_code == 130 and not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [tiny_spec_path.name]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL, signal.SIGINT])
def test_frontier_workers_die_with_the_command(sig):
    """``kill -9`` too: each worker notices its parent is gone and kills its process group; the
    caller's pipes close at once (workers do not hold them)."""
    proc = _designer("frontier", str(QUICKSTART), "--utilization", "0.5:0.9:0.1", "-j", "2")
    workers: set[int] = set()
    end = time.monotonic() + 60
    while len(workers) < 2 and time.monotonic() < end and proc.poll() is None:
        workers |= _children(proc.pid)
        time.sleep(0.02)
    assert len(workers) == 2, "the frontier never started its two workers"
    # Each worker leads its own process group: it calls setpgid first thing after the fork, so a
    # worker caught just after its fork is given a moment to get there.
    end = time.monotonic() + 10
    while (groups := {os.getpgid(w) for w in workers}) != workers and time.monotonic() < end:
        time.sleep(0.01)
    assert groups == workers
    proc.send_signal(sig)
    sent = time.monotonic()
    stdout, stderr = proc.communicate(timeout=30)  # returns once every holder of the pipes is gone
    assert time.monotonic() - sent < 3.0
    deadline = time.monotonic() + 3.0
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [w for w in workers if _alive(w)]
    if sig != signal.SIGKILL:
        assert proc.returncode == 128 + sig and b"Traceback" not in stderr and stdout == b""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_cbc_leaves_no_file_and_no_process(tmp_path, sig):
    """CBC works through files: they live in a folder of the solve's own, removed on every way out."""
    env = dict(os.environ, TMPDIR=str(tmp_path), TMP=str(tmp_path))
    proc = _designer("solve", str(QUICKSTART), "--solver", "cbc", env=env)
    seen: set[str] = set()
    end = time.monotonic() + 60
    while not any(name.endswith(".mps") for name in seen) and time.monotonic() < end and proc.poll() is None:
        for _, _, files in os.walk(tmp_path):
            seen.update(files)
        time.sleep(0.01)
    solver = _children(proc.pid)
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=60)
    if proc.returncode == 0:
        pytest.skip("the solve ended before CBC was caught running")
    assert proc.returncode == 128 + sig and b"Traceback" not in stderr
    assert any(name.endswith("-pulp.mps") for name in seen)  # CBC was running when the signal came
    # A killed CBC may take a moment to be reaped on a loaded machine: wait for it, never forever.
    end = time.monotonic() + 10.0
    while (list(tmp_path.iterdir()) or [p for p in solver if _alive(p)]) and time.monotonic() < end:
        time.sleep(0.05)
    assert list(tmp_path.iterdir()) == [] and not [p for p in solver if _alive(p)]


# A signal that comes while the handlers are being put in place (here: as the watchdog starts,
# before the handlers exist) waits for them and is the command's, recorded and raised by its handler.
_DURING_INSTALL = """
import os, signal, threading
from designer.cli import interrupt
start = threading.Thread.start
def start_and_signal(self):
    start(self)
    os.kill(os.getpid(), signal.SIGINT)
threading.Thread.start = start_and_signal
try:
    interrupt.install()
    print("no interrupt")
except KeyboardInterrupt:
    print("interrupted", interrupt.received() == signal.SIGINT, signal.getsignal(signal.SIGINT) is not signal.default_int_handler)
os._exit(0)
"""


def test_a_signal_while_the_handlers_are_installed_is_handled_by_them():
    proc = subprocess.run([sys.executable, "-c", _DURING_INSTALL], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "interrupted True True\n", "")


# After the command has done its work, a late Ctrl-C (even one that lands while the interpreter
# shuts down, after it has put back the default handlers) leaves the command's own exit code.
_AFTER_THE_END = """
import os, signal
from designer.cli import interrupt
interrupt.install()
interrupt.ended()
os.kill(os.getpid(), signal.SIGINT)
os.kill(os.getpid(), signal.SIGTERM)
print("done", interrupt.received())
raise SystemExit(3)
"""


def test_a_signal_after_the_command_ended_leaves_its_exit_code():
    proc = subprocess.run([sys.executable, "-c", _AFTER_THE_END], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (3, "done None\n", "")
