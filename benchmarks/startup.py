"""Start-up time of the command line: `designer --help` and `designer validate` on an example.

``python benchmarks/startup.py [--runs N]`` prints, for each command, the best and the median wall
time of N runs (default 15) of a fresh ``python -m designer`` process, in two states:

* warm: the package's bytecode is cached (a private PYTHONPYCACHEPREFIX, filled by one run first);
  this is an installed designer's usual state (pip compiles on install).
* cold: no bytecode for designer's own modules (PYTHONDONTWRITEBYTECODE=1 and an empty cache
  prefix), so every module is compiled from source on each run, as in a source checkout where
  bytecode is never written. Third-party packages keep their installed bytecode in both.

Two floors are printed with them: the interpreter alone (``python -c pass``) and the interpreter
importing typer, the command-line library every command needs; what designer adds is the rest.

The target is 0.25 s for both commands, warm. Best-of-N is the figure to compare (the machine's
other load only adds time); the median shows the spread.
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
}


def _time(args: list[str], env: dict[str, str], module: bool = True) -> float:
    start = time.perf_counter()
    argv = [sys.executable, "-m", "designer", *args] if module else [sys.executable, *args]
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"designer {' '.join(args)} failed: {proc.stderr.decode()[-500:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    print(f"{'command':<10} {'state':<5} {'best s':>7} {'median s':>9}  target {TARGET_S} s, {runs} runs each")
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
                times = [_time(args, env, module) for _ in range(runs)]
                best = min(times)
                print(f"{name:<10} {state:<5} {best:7.3f} {statistics.median(times):9.3f}"
                      f"  {('ok' if best <= TARGET_S else 'over') if module else 'floor'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
