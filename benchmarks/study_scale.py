"""Monte Carlo study throughput: scenarios per second against worker count, locally and on Dask.

Runs ``designer study`` as a user would (a fresh process each time, JSON output) on local
processes (``--jobs N``) and on a real Dask cluster on 127.0.0.1 (a ``dask scheduler`` and N
``dask worker --nthreads 1`` processes), prints wall time, scenarios/s and solves/s (full
solves plus the pricing of every design in every scenario), and checks that every run printed
the same bytes.

Run: ``python benchmarks/study_scale.py`` (the quickstart, 64 scenarios, 1 and 2 workers, local
and Dask); ``--quick`` studies a small spec with 16 scenarios; ``--workers 1,2,4``; ``--no-dask``.
Exit 1 when two runs differ. On a machine whose cores are busy with other work, the figures say
what that machine gave, not what the cores can do.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.study.dask_cluster import DaskCluster  # noqa: E402
# A small job where buying and renting compete: the what-if tests' spec.
from tests.study.test_whatif import SMALL_SPEC as SMALL  # noqa: E402

VARY = ["gpu_price=normal:15%", "electricity=triangular:-10%..+5%..+40%", "tokens=uniform:-10%..+20%",
        "compute_efficiency", "network_efficiency"]


def designer() -> str:
    return str(pathlib.Path(sys.executable).with_name("designer"))


def run_study(spec: pathlib.Path, samples: int, where: list[str], vary: list[str]) -> tuple[float, bytes]:
    args = [designer(), "study", str(spec), "--samples", str(samples), "--seed", "0", "--format", "json",
            *(a for v in vary for a in ("--vary", v)), *where]
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, cwd=ROOT)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 3):
        sys.exit(f"designer study failed ({done.returncode}): {done.stderr.decode(errors='replace')[-800:]}")
    return wall, done.stdout


def solves_in(doc: dict) -> int:
    """Full solves (base + scenarios) plus the designs priced in every scenario but its own choice."""
    scenarios = doc["scenarios"]
    priced = sum(len(s["designs"]) - (s["chosen"] is not None) for s in scenarios if s["status"] != "error")
    return 1 + len(scenarios) + priced


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="a small spec, 16 scenarios")
    parser.add_argument("--spec", type=pathlib.Path, default=ROOT / "examples" / "quickstart.yaml")
    parser.add_argument("--samples", type=int)
    parser.add_argument("--workers", default="1,2", help="worker counts, e.g. 1,2,4")
    parser.add_argument("--no-dask", action="store_true", help="local processes only")
    args = parser.parse_args()
    counts = [int(x) for x in args.workers.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        folder = pathlib.Path(tmp)
        spec = args.spec
        if args.quick:
            spec = folder / "small.yaml"
            spec.write_text(SMALL)
            vary = ["cloud_price=normal:25%", *VARY]
        else:
            vary = VARY
        samples = args.samples or (16 if args.quick else 64)
        print(f"designer study {spec.name}: {samples} scenarios, --vary {' --vary '.join(vary)}")
        print(f"{'where':<24} {'workers':>7} {'wall s':>8} {'scenarios/s':>12} {'solves/s':>9}  json sha256")
        outputs = {}
        configs = [("local --jobs", n, ["--jobs", str(n)]) for n in counts]
        for label, n, where in configs:
            wall, out = run_study(spec, samples, where, vary)
            outputs[(label, n)] = out
            _line(label, n, wall, samples, out)
        if not args.no_dask:
            for n in counts:
                cluster = DaskCluster(folder / f"dask-{n}", workers=n)
                (folder / f"dask-{n}").mkdir()
                cluster.start()
                try:
                    cluster.wait_for_workers(n)
                    wall, out = run_study(spec, samples, ["--scheduler", cluster.address], vary)
                finally:
                    cluster.stop()
                outputs[("dask", n)] = out
                _line("dask", n, wall, samples, out)
        same = len(set(outputs.values())) == 1
        doc = json.loads(next(iter(outputs.values())))
        print(f"{len(doc['designs'])} distinct designs, {solves_in(doc)} solves; every run printed the same JSON: "
              f"{'yes' if same else 'NO'}")
        return 0 if same else 1


def _line(label: str, n: int, wall: float, samples: int, out: bytes) -> None:
    doc = json.loads(out)
    print(f"{label:<24} {n:>7} {wall:>8.1f} {samples / wall:>12.2f} {solves_in(doc) / wall:>9.1f}  "
          f"{hashlib.sha256(out).hexdigest()[:12]}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
