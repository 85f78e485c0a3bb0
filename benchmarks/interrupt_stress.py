"""Ctrl-C at many moments of a command: every run must end with one line and exit 130.

``python benchmarks/interrupt_stress.py [--step K] [--timed N] [COMMAND ARGS...]`` (default:
``validate examples/quickstart.yaml``, then ``solve examples/quickstart.yaml -o <tmp>``) runs the
command in fresh processes and interrupts each one in two ways:

* at its Nth import, for N = 1, 1 + K, 1 + 2K, ... until a run finishes first: a finder placed
  first on ``sys.meta_path`` sends SIGINT to its own process when the Nth module is looked up
  after the command's handlers are in place (:mod:`designer.cli.interrupt`). The signal is
  handled inside ``importlib`` itself, the window where a Ctrl-C once escaped the handlers under
  load; bytecode is not written, so every module is compiled from source as in a checkout;
* ``N`` times (``--timed``) at a random moment from 0 to 0.4 s after the handlers are in place (the
  watchdog's pipe is open), as tests/cli/test_signals.py does at a few fixed moments.

Printed per command and way: runs interrupted as they should be, runs that finished before the
signal, and each bad run in full (exit code, stdout, stderr). Exit 1 if any run was bad.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXPECTED = b"interrupted; no output was written\n"

_TRIP = r'''
import os, signal, sys
N = int(sys.argv.pop(1))
class Trip:
    count = 0
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            return None  # the command's handlers are not in place yet
        cls.count += 1
        if cls.count == N:
            sys.meta_path.remove(cls)
            os.kill(os.getpid(), signal.SIGINT)
        return None
sys.meta_path.insert(0, Trip)
sys.argv[0] = "designer"
from designer.cli import main
main()
'''


def _verdict(code: int, out: bytes, err: bytes) -> str:
    if (code, out, err) == (130, b"", EXPECTED):
        return "interrupted"
    if code in (0, 1, 2) and b"Traceback" not in err and b"interrupted" not in err:
        return "finished"
    return "bad"


def _pipes(pid: int) -> int:
    count = 0
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                count += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("pipe:")
            except OSError:
                pass
    except OSError:
        pass
    return count


def at_imports(args: list[str], step: int) -> dict[str, int]:
    """Interrupt at every ``step``-th import until a run finishes before its signal."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    counts = {"interrupted": 0, "finished": 0, "bad": 0}
    n = 1
    while True:
        proc = subprocess.run([sys.executable, "-c", _TRIP, str(n), *args], cwd=ROOT, env=env,
                              capture_output=True, timeout=300)
        verdict = _verdict(proc.returncode, proc.stdout, proc.stderr)
        counts[verdict] += 1
        if verdict == "bad":
            print(f"  BAD at import {n}: exit {proc.returncode}\n{proc.stdout.decode()}{proc.stderr.decode()}")
        if verdict == "finished":
            return counts
        n += step


def at_random_moments(args: list[str], runs: int, seed: int = 1) -> dict[str, int]:
    """Interrupt ``runs`` times at a random moment up to 0.4 s after the handlers are in place."""
    rng = random.Random(seed)
    counts = {"interrupted": 0, "finished": 0, "bad": 0}
    for _ in range(runs):
        proc = subprocess.Popen([sys.executable, "-m", "designer", *args], cwd=ROOT, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        while _pipes(proc.pid) < 4 and proc.poll() is None:  # stdout, stderr and the watchdog's two
            time.sleep(0.001)
        delay = rng.uniform(0.0, 0.4)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=300)
        verdict = _verdict(proc.returncode, out, err)
        counts[verdict] += 1
        if verdict == "bad":
            print(f"  BAD {delay:.3f} s after the handlers: exit {proc.returncode}\n{out.decode()}{err.decode()}")
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", type=int, default=1, help="interrupt at every K-th import")
    parser.add_argument("--timed", type=int, default=50, help="runs interrupted at a random moment")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command and its arguments")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        commands = [opts.command] if opts.command else [
            ["validate", str(ROOT / "examples" / "quickstart.yaml")],
            ["solve", str(ROOT / "examples" / "quickstart.yaml"), "-o", str(Path(tmp) / "design.yaml")],
        ]
        bad = 0
        for args in commands:
            for way, counts in (("at imports", at_imports(args, opts.step)),
                                ("at random moments", at_random_moments(args, opts.timed))):
                bad += counts["bad"]
                print(f"{args[0]:<9} {way:<18} interrupted {counts['interrupted']:4d}  finished first "
                      f"{counts['finished']:3d}  bad {counts['bad']}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
