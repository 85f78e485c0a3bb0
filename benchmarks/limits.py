"""Bounded time and memory on hostile or huge input: the figures docs/reliability.md quotes.

Each case is one ``designer`` command in a fresh process; its wall time, exit code and peak
resident memory (the command's own, read by a small wrapper process with ``getrusage``) are
printed. Cases:

* ``solve --time-limit 5`` on 40 workloads (:func:`specs_large.large_spec`): ends within a few
  seconds of the limit, exit 0 (a feasible design) or 4 (none found in time);
* ``solve --time-limit 60`` on 100 workloads: peak memory of the largest portfolio a spec holds
  in the benchmarks;
* ``validate`` and ``solve`` with a 10,000-switch user catalog (refused: at most 500 entries per
  file) and with 490 switches (with the built-in ones, just under the 500 a kind may hold);
* ``validate`` of a switch with ``ports: 1000000000`` (refused).

Run from the repository root:  python benchmarks/limits.py [--quick]  (``--quick`` skips the
100-workload solve).
"""

from __future__ import annotations

import pathlib
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from specs_large import large_spec  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Runs the command as its child and prints that child's peak RSS (KiB on Linux) as its last line.
_WRAPPER = ("import resource, subprocess, sys\n"
            "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
            "sys.exit(code)\n")

SMALL = """\
version: 1
name: many-switches
horizon: 1 years
catalogs: [switches.yaml]
workloads:
  - {name: small, model: {preset: llama3-8b}, tokens: 20B, global_batch: 64, deadline: 30 days}
constraints:
  min_utilization: 0.5
  deployments: [on_prem]
  fabrics: [roce]
  max_nodes: 64
"""
SWITCH = ("  - {{name: sw-{i}, description: generated switch {i}, protocol: ethernet, ports: 64, "
          "port_rate: 400 Gbps, cages: 64, latency: 600 ns, price: '${price:,}', power: 1 kW, rack_units: 2, "
          "source: generated for the benchmark, as_of: 2026}}\n")


def run(label: str, args: list[str], timeout: float = 900.0) -> None:
    """One command in a fresh process: wall seconds, exit code, peak RSS and the last stderr line."""
    start = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-c", _WRAPPER, sys.executable, "-m", "designer", *args],
                              capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        print(f"{label:<44} > {timeout:.0f} s  not finished", flush=True)
        return
    wall = time.perf_counter() - start
    lines = done.stderr.strip().splitlines()
    peak_mb = int(lines[-1]) / 1024 if lines and lines[-1].isdigit() else float("nan")
    said = lines[-2][:90] if len(lines) > 1 else ""
    print(f"{label:<44} {wall:7.1f} s  exit {done.returncode}  peak {peak_mb:5.0f} MB  {said}", flush=True)


def main() -> None:
    quick = "--quick" in sys.argv[1:]
    folder = pathlib.Path(tempfile.mkdtemp(prefix="designer-limits-"))
    for n in (40, 100):
        (folder / f"large-{n}.yaml").write_text(large_spec(n))
    run("solve, 40 workloads, --time-limit 5", ["solve", str(folder / "large-40.yaml"), "--time-limit", "5"])
    if not quick:
        run("solve, 100 workloads, --time-limit 60", ["solve", str(folder / "large-100.yaml"), "--time-limit", "60"])
    for count in (10_000, 490):  # 490 + the built-in switches stays under the 500 per kind
        case = folder / f"switches-{count}"
        case.mkdir()
        (case / "spec.yaml").write_text(SMALL)
        items = "".join(SWITCH.format(i=i, price=20_000 + i) for i in range(count))
        (case / "switches.yaml").write_text(f"schema_version: 1\nkind: switch\nitems:\n{items}")
        run(f"validate, {count:,}-switch user catalog", ["validate", str(case / "spec.yaml")])
        run(f"solve, {count:,}-switch user catalog", ["solve", str(case / "spec.yaml")])
    huge = folder / "ports"
    huge.mkdir()
    (huge / "spec.yaml").write_text(SMALL)
    (huge / "switches.yaml").write_text("schema_version: 1\nkind: switch\nitems:\n"
                                        + SWITCH.format(i=0, price=20_000).replace("ports: 64", "ports: 1000000000"))
    run("validate, a switch with ports: 1000000000", ["validate", str(huge / "spec.yaml")])


if __name__ == "__main__":
    main()
