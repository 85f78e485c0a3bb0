"""Start-up time of the command line: `designer --help` and `designer validate` on an example.

``python benchmarks/startup.py [--runs N]`` prints, for each command, the best and the median wall
time of N runs (default 15) of a fresh ``python -m designer`` process, in two states:

* warm: the package's bytecode is cached (a private PYTHONPYCACHEPREFIX, filled by one run first);
  this is an installed designer's usual state (pip compiles on install).
* cold: no bytecode for designer's own modules (PYTHONDONTWRITEBYTECODE=1 and an empty cache
  prefix), so every module is compiled from source on each run, as in a source checkout where
  bytecode is never written. Third-party packages keep their installed bytecode in both.

Three floors are printed with them: the interpreter alone (``python -c pass``), the interpreter
importing typer, the command-line library ``--help`` cannot do without, and what reading a spec
cannot do without: pydantic (the spec's input models) and PyYAML. A plain ``designer validate``
does not load typer (designer.cli.shortcut), so the spec floor is its floor. What designer adds is
the rest.

The target is 0.25 s for both commands, warm. Best-of-N is the figure to compare (the machine's
other load only adds time); the median shows the spread. The CPU columns (user + system time of
the child process, best and median of N) move less than wall time on a machine shared with other
work: when the load average printed first is above the number of cores, compare those.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = {
    "--help": ["--help"],
    "validate": ["validate", str(ROOT / "examples" / "quickstart.yaml")],
}
TARGET_S = 0.25


FLOORS = {
    "python": ["-c", "pass"],
    "typer": ["-c", "import typer"],
    "spec floor": ["-c", "from pydantic import BaseModel; import yaml"],
}


def _time(args: list[str], env: dict[str, str], module: bool = True) -> tuple[float, float]:
    """Wall time and CPU time (user + system) of one run of a fresh process."""
    argv = [sys.executable, "-m", "designer", *args] if module else [sys.executable, *args]
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = proc.stderr.read() if proc.stderr else b""
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv[1:])} failed: {stderr.decode()[-500:]}")
    return elapsed, usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average {load:.2f} on {os.cpu_count()} cores")
    print(f"{'command':<10} {'state':<5} {'best s':>7} {'median s':>9} {'cpu s':>6} {'cpu med':>7}  target {TARGET_S} s, "
          f"{runs} runs each")
    for state in ("warm", "cold"):
        with tempfile.TemporaryDirectory() as prefix:
            env = {**os.environ, "PYTHONPYCACHEPREFIX": prefix}
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            if state == "cold":
                env["PYTHONDONTWRITEBYTECODE"] = "1"
            rows = [(name, args, True) for name, args in COMMANDS.items()]
            rows += [(name, args, False) for name, args in FLOORS.items()] if state == "warm" else []
            for name, args, module in rows:
                _time(args, env, module)  # warm: fills the cache; cold: nothing is written
                samples = [_time(args, env, module) for _ in range(runs)]
                times = [wall for wall, _ in samples]
                best = min(times)
                cpu = min(c for _, c in samples)
                cpu_median = statistics.median(c for _, c in samples)
                median = statistics.median(times)
                # The target is what a user meets on a typical run: the median, not the luckiest one.
                print(f"{name:<10} {state:<5} {best:7.3f} {median:9.3f} {cpu:6.3f} {cpu_median:7.3f}"
                      f"  {('ok' if median <= TARGET_S else 'over') if module else 'floor'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
