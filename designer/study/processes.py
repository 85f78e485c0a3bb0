"""Ending what a command started: every child process of this one and the process group each leads.

Only ``os`` and ``signal``: the command line's signal watchdog calls :func:`kill_children` and
must not import anything then (an import may wait forever on a module lock that the interrupted
main thread left held), so this module is loaded when the signal handlers are installed. Files
are read as bytes for the same reason: a text file opened with an encoding looks the codec up,
and the first lookup of ``ascii`` imports ``encodings.ascii``.
"""

from __future__ import annotations

__all__ = ["kill_children", "kill_group"]

import os
import signal


def _child_pids() -> list[int]:
    """This process's children (Linux ``/proc``), found without knowing who started them."""
    me = os.getpid()
    pids: set[int] = set()
    try:
        for tid in os.listdir(f"/proc/{me}/task"):
            with open(f"/proc/{me}/task/{tid}/children", "rb") as f:
                pids.update(int(p) for p in f.read().split())
        return sorted(pids)
    except (OSError, ValueError):
        pass
    try:  # kernels without /proc/.../children: read every process's parent
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat", "rb") as f:
                        fields = f.read().rpartition(b")")[2].split()
                    if int(fields[1]) == me:
                        pids.add(int(entry))
                except (OSError, ValueError, IndexError):
                    continue
    except OSError:
        pass
    return sorted(pids)


def kill_group(pid: int) -> None:
    """SIGKILL the process group ``pid`` leads (a worker and what it started), else ``pid`` alone."""
    try:
        if os.getpgid(pid) == pid:
            os.killpg(pid, signal.SIGKILL)
            return
    except OSError:
        pass
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


def kill_children() -> None:
    """SIGKILL every child of this process and the group each leads (workers, a CBC solver): for a
    command that is ending on a signal, nothing it started may outlive it."""
    for pid in _child_pids():
        kill_group(pid)
