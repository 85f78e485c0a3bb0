"""Solve time against problem size: workloads, candidates and cluster scale.

Prints one line per spec: workloads, candidates, evaluations, solves, seconds, and the design.
Run: ``python benchmarks/solve_scale.py`` (add ``--quick`` to skip the 10-workload and
``min_time`` specs). Targets: every example under 2 s, the 10-workload spec under 30 s.
"""

from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from specs_large import large_spec, min_time_spec  # noqa: E402

from designer.optimize import alternatives, batches, explain  # noqa: E402
from designer.optimize.workspace import Workspace  # noqa: E402
from designer.planner.assemble import assemble_design  # noqa: E402
from designer.planner.compile import compile_task  # noqa: E402
from designer.planner.inputs import load_inputs  # noqa: E402


def run(path: pathlib.Path) -> str:
    spec, catalog = load_inputs(path)
    start = time.perf_counter()
    ws = Workspace(compile_task(spec, catalog))
    th = ws.task.thresholds
    sol = batches.solve(ws, th)
    main = time.perf_counter() - start
    alts = alternatives.alternatives(ws, th, sol, solver="highs", time_limit_s=None)
    status = explain.constraint_status(ws, th, sol, solver="highs", time_limit_s=None)
    design = assemble_design(spec, ws, sol, alts, status, ())
    total = time.perf_counter() - start
    s = design.system
    return (f"{len(spec.workloads):>3} workloads {len(ws.candidates):>4} candidates {ws.evaluator.calls:>6} evaluations "
            f"{ws.solves:>3} solves  optimum {main:6.1f} s  with explanations {total:6.1f} s  -> {s.deployment} "
            f"{s.nodes} x {s.server} {s.fabric} {s.topology}, ${design.cost.total_usd / 1e6:,.1f}M")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="skip the 10-workload and min_time specs")
    args = parser.parse_args()
    root = pathlib.Path(__file__).resolve().parent.parent
    for example in sorted((root / "examples").glob("*.yaml")):
        print(f"{example.name:<24}", run(example), flush=True)
    # What a user waits for: a fresh process (start-up, catalogs, solve, explanations, writing).
    for example in sorted((root / "examples").glob("*.yaml")):
        out = pathlib.Path(tempfile.mkdtemp()) / "design.yaml"
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "designer", "solve", str(example), "-o", str(out)], check=True,
                       stdout=subprocess.DEVNULL, cwd=root)
        print(f"{example.name:<24}  designer solve (fresh process) {time.perf_counter() - start:5.2f} s  "
              f"(target < 2 s)", flush=True)
    sizes = (1, 3) if args.quick else (1, 3, 10)
    for workloads in sizes:
        path = pathlib.Path(tempfile.mkdtemp()) / "large.yaml"
        path.write_text(large_spec(workloads))
        print(f"{'large-' + str(workloads):<24}", run(path), flush=True)
    if not args.quick:
        # The quickstart under the other objective, which evaluates every candidate.
        text = (root / "examples" / "quickstart.yaml").read_text()
        path = pathlib.Path(tempfile.mkdtemp()) / "quickstart-per-token.yaml"
        path.write_text(text.replace("objective: min_total_cost", "objective: min_cost_per_token"))
        print(f"{'quickstart-per-token':<24}", run(path), flush=True)
        path = pathlib.Path(tempfile.mkdtemp()) / "min-time.yaml"
        path.write_text(min_time_spec())
        print(f"{'min-time-2':<24}", run(path), flush=True)


if __name__ == "__main__":
    main()
