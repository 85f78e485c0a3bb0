"""Solve time of portfolios: workloads (5, 10, 20, 50, 100) against cluster size (10,000 and 100,000 GPUs).

Each case is one ``designer solve`` in a fresh process on a spec of
:func:`specs_large.large_spec` (mixed pre-training runs, deadlines 15 days apart, on-prem or
cloud), with ``max_nodes`` set to the cluster size over 8 GPUs per node. Prints one row per case:
workloads, cluster GPUs, wall seconds, CPU seconds of the process, its own peak memory (resident
set), status and the design (or the exit code). Wall time is what a user waits for; on a shared machine the CPU time
says how much of it was this command's own work.

Run: ``python benchmarks/portfolio_scale.py`` (``--workloads 5,10 --gpus 10000`` for a subset,
``--timeout S`` to stop a case, ``--time-limit S`` to pass ``--time-limit`` to every solve).
Targets: 50 workloads on up to 100,000 GPUs under 30 s; 50 workloads at most 10x the 5. Past 10
workloads the search evaluates a budget of on-prem candidates (designer.optimize.batches.search_budget)
and reports its gap; the explanations share a budget of work of their own (designer.optimize.explain.budget),
and a row says how many of them it cut short.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from specs_large import large_spec  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _run_alone(cmd: list[str], timeout: float) -> tuple[int, str, str, float, float, float] | None:
    """Run ``cmd``; (exit code, stdout, stderr, wall s, CPU s, peak MB) of that process alone,
    or None when it outlives ``timeout`` (it is then stopped). ``os.wait4`` gives the child's own
    resource usage: ``getrusage(RUSAGE_CHILDREN)`` would report the largest peak of every child
    so far, not this one's."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=ROOT)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - start > timeout:
                proc.kill()
                os.wait4(proc.pid, 0)
                return None
            time.sleep(0.05)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        # ru_maxrss is in KiB on Linux.
        return (proc.returncode, out.read().decode(), err.read().decode(), wall,
                usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def case(workloads: int, gpus: int, timeout: float, time_limit: float | None) -> str:
    folder = pathlib.Path(tempfile.mkdtemp())
    spec = folder / "spec.yaml"
    spec.write_text(large_spec(workloads, max_nodes=gpus // 8))
    cmd = [sys.executable, "-m", "designer", "solve", str(spec), "--format", "json"]
    if time_limit is not None:
        cmd += ["--time-limit", str(time_limit)]
    done = _run_alone(cmd, timeout)
    if done is None:
        return f"{workloads:>9} {gpus:>9,} {'>' + format(timeout, 'g'):>8}        -        -  not finished"
    code, stdout, stderr, wall, cpu, peak_mb = done
    if code != 0:
        what = f"exit {code}: {stderr.strip().splitlines()[-1] if stderr.strip() else ''}"
    else:
        d = json.loads(stdout)
        s, solver = d["system"], d["solver"]
        # Explanations the command's budget for them (or --time-limit) cut short, by their warnings.
        cut = sum(("not explored" in x or "not checked" in x or "not complete" in x) for x in d.get("warnings", ()))
        what = (f"{solver['status']} gap {solver['gap']:.2%}  {s['deployment']} {s['gpus']:,} GPUs "
                f"{s['server']}  ${d['cost']['total_usd'] / 1e6:,.1f}M"
                + (f"  ({cut} explanations cut short)" if cut else ""))
    return f"{workloads:>9} {gpus:>9,} {wall:>8.1f} {cpu:>8.1f} {peak_mb:>8.0f}  {what}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workloads", default="5,10,20,50,100")
    parser.add_argument("--gpus", default="10000,100000")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--time-limit", type=float, default=None)
    args = parser.parse_args()
    print(f"{'workloads':>9} {'GPUs':>9} {'wall s':>8} {'cpu s':>8} {'peak MB':>8}  result", flush=True)
    for gpus in (int(g) for g in args.gpus.split(",")):
        for workloads in (int(w) for w in args.workloads.split(",")):
            print(case(workloads, gpus, args.timeout, args.time_limit), flush=True)


if __name__ == "__main__":
    main()
