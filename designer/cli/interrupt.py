"""Signals: Ctrl-C (SIGINT), SIGTERM and SIGHUP end any command with one line and a fixed exit code.

Python turns SIGINT into ``KeyboardInterrupt`` only when the interpreter next runs Python code,
and code that catches everything can swallow it: PuLP's ``except:`` around ``import highspy``
turned a Ctrl-C into "solver highs is not available"; HiGHS, inside its C solver loop, runs on
until its own time limit. So a signal is handled three ways:

1. The handler records it (:func:`received`) and raises ``KeyboardInterrupt`` (SIGINT) or
   :class:`Terminated` (SIGTERM, SIGHUP), so ``finally`` blocks run, temporary files go and the
   command's one-line message and exit code follow (:mod:`designer.cli.run`).
2. Whatever the command does next, :mod:`designer.cli.run` asks :func:`received` first: an
   exception (or a result) that follows a signal is the signal's, not a failure of its own; and
   :func:`check` stops an output file from being put in place after one.
3. A watchdog thread wakes on the signal itself (``signal.set_wakeup_fd`` writes its number from C,
   whatever the main thread is doing). If the command has not ended within :data:`GRACE_S`, it
   kills the worker processes, prints the line and exits with ``os._exit``. It imports nothing on
   the way (a Ctrl-C that lands inside ``importlib`` between a lock's acquire and its release
   leaves the import lock held by the main thread, and an import in another thread would wait
   for it forever), and it holds no lock the main thread waits for while it ends the process.

Exit codes: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP (128 + the signal's number, as shells
report a death by signal).
"""

from __future__ import annotations

__all__ = ["Terminated", "GRACE_S", "install", "received", "check", "finished", "is_finished", "ended", "on_kill", "kill_started", "message", "exit_code"]

import os
import signal
import sys
import threading
from typing import Callable

GRACE_S = 1.0  # seconds the command has to end by itself after a signal before it is ended

_NAMES = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}
if hasattr(signal, "SIGHUP"):
    _NAMES[signal.SIGHUP] = "hung up"


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where the command is, like ``KeyboardInterrupt`` for SIGINT."""


class _State:
    """The process's signal state: which signal came first, whether the command has ended."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.done = threading.Event()
        self.lock = threading.Lock()  # the watchdog and the command do not both print the line
        self.ending = False  # the watchdog has taken over: it prints the line and ends the process
        self.on_kill: list[Callable[[], None]] = []
        self.installed = False
        self.ended = False  # the command has done its work: a signal is no longer its to answer


_state = _State()


def message(signum: int | None = None) -> str:
    """The one line a signal ends a command with."""
    return f"{_NAMES.get(signum or _state.signum or signal.SIGINT, 'interrupted')}; no output was written"


def exit_code(signum: int | None = None) -> int:
    """128 + the signal's number: 130 for Ctrl-C."""
    return 128 + int(signum or _state.signum or signal.SIGINT)


def received() -> int | None:
    """The first signal received since :func:`install`, or None."""
    return _state.signum


def check() -> None:
    """Raise the pending signal's exception, if one arrived (call before putting output in place)."""
    if _state.signum is not None:
        raise Terminated() if _state.signum != signal.SIGINT else KeyboardInterrupt()


_TAKEOVER_S = 5.0  # how long the command waits for a watchdog that took over to end the process


def finished() -> None:
    """The command is ending and prints its own last line: the watchdog stands down. When the
    watchdog has already taken over, waits for it to end the process, so the line is never
    printed twice; should it not within :data:`_TAKEOVER_S`, the command ends by itself."""
    with _state.lock:
        _state.done.set()
        ending = _state.ending
    if ending:
        threading.Event().wait(_TAKEOVER_S)


def is_finished() -> bool:
    """Whether :func:`finished` was called: the command printed (or is printing) its last line."""
    return _state.done.is_set()


def on_kill(action: Callable[[], None]) -> None:
    """Run ``action`` (kill the processes the command started) when a signal ends the command."""
    _state.on_kill.append(action)


def kill_started() -> None:
    """Run the :func:`on_kill` actions (none unless the command line registered them)."""
    for action in list(_state.on_kill):
        try:
            action()
        except Exception:  # noqa: BLE001 - ending the process matters more than one cleanup
            pass


def ended() -> None:
    """The command has done its work (its output is in place) and the process is about to exit with
    its code: a signal from now on is not the command's to answer. The handler stops raising and
    the signals are blocked, so one that comes while the interpreter shuts down (it puts back
    the default handlers, which would end the process by SIGINT, with no line) waits until the
    process has exited with the command's own code. Only where :func:`install` ran."""
    if not _state.installed or _state.ended:
        return
    _state.ended = True
    try:
        signal.pthread_sigmask(signal.SIG_BLOCK, set(_NAMES))
    except (AttributeError, OSError, ValueError):
        pass


def _handler(signum: int, frame: object) -> None:
    if _state.ended:
        return
    if _state.signum is None:
        _state.signum = signum
    raise KeyboardInterrupt() if signum == signal.SIGINT else Terminated()


def _watch(read_fd: int) -> None:
    while True:
        try:
            data = os.read(read_fd, 16)
        except InterruptedError:
            continue
        except OSError:
            return
        if not data:
            return
        signum = data[0]
        if signum not in _NAMES:
            continue
        if _state.done.wait(GRACE_S):
            return
        with _state.lock:
            if _state.done.is_set():
                return
            _state.ending = True
        kill_started()
        try:
            sys.stderr.write(message(_state.signum or signum) + "\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os._exit(exit_code(_state.signum or signum))


def _unraisable(hook: Callable[[object], None]) -> Callable[[object], None]:
    """Python prints an exception it cannot raise ("Exception ignored in ...") with a traceback: a
    signal that lands in an at-fork callback (``logging``'s, while a worker starts) or in a
    ``__del__``. The signal is recorded and ends the command anyway; only the traceback goes."""
    def unraisable(info: object) -> None:
        if _state.signum is not None and isinstance(getattr(info, "exc_value", None), KeyboardInterrupt):
            return
        hook(info)
    return unraisable


def install() -> None:
    """Install the watchdog and the handlers (the command line calls it first thing; idempotent).

    Only in the main thread of the main interpreter, where Python allows signal handlers. A
    ``KeyboardInterrupt`` may come out of this very call (a signal that arrived while it ran, raised
    by our handler as the signals are unblocked): the caller treats it like any other.
    """
    if _state.installed or threading.current_thread() is not threading.main_thread():
        return
    _state.installed = True
    sys.unraisablehook = _unraisable(sys.unraisablehook)
    # The signals wait (blocked) until both the watchdog and the handlers are in place: one that
    # came between the two would meet Python's own SIGINT handler, unrecorded, or a handler whose
    # watchdog is not yet awake. The watchdog thread starts with them blocked, as they stay for it.
    blocked = set(_NAMES)
    try:
        signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
    except (AttributeError, OSError, ValueError):  # no pthread_sigmask (Windows)
        blocked = set()
    try:
        try:  # the watchdog first: from the first handled signal on, it is awake
            read_fd, write_fd = os.pipe()
            os.set_blocking(write_fd, False)
            signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
            threading.Thread(target=_watch, args=(read_fd,), name="designer-signal-watchdog", daemon=True).start()
        except (OSError, ValueError, RuntimeError):
            pass
        for signum in _NAMES:
            if signal.getsignal(signum) is signal.SIG_IGN:
                continue  # ignored on purpose by whoever started us (nohup, a background job)
            signal.signal(signum, _handler)
    finally:
        if blocked:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, blocked)  # a signal that waited is handled here
