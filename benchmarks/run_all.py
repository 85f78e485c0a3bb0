"""Run every benchmark script and print its figures (they are records, not pass/fail gates).

``python benchmarks/run_all.py [--quick]``: ``--quick`` skips the slowest sizes where a script
offers it.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = [
    ("startup.py", ["--runs", "5"]),
    ("catalog_load.py", []),
    ("perf_speed.py", []),
    ("topology_scale.py", []),
    ("validate.py", []),
    ("design_read.py", []),
    ("solve_scale.py", ["--quick"]),
    ("study_scale.py", ["--quick"]),
]


def main() -> int:
    quick = "--quick" in sys.argv[1:]
    failed = 0
    for name, quick_args in SCRIPTS:
        path = HERE / name
        if not path.exists():
            continue
        args = [sys.executable, str(path), *(quick_args if quick else [])]
        print(f"== {name} {' '.join(quick_args if quick else [])}".rstrip(), flush=True)
        start = time.perf_counter()
        result = subprocess.run(args, cwd=HERE.parent)
        print(f"== {name}: exit {result.returncode}, {time.perf_counter() - start:.1f} s\n", flush=True)
        failed += result.returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
