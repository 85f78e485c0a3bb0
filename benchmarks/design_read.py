"""Time reading a design file with its verification (bom, diff, explain, draw and report read one).

A file as ``designer solve`` wrote it has its content digest checked against its own text (one
sha256); a file reformatted by hand (same content, other layout) takes the slow path, a full
canonical re-dump. Totals, enumerations and ranges are checked on both. Target: well under 50 ms
per read of a file as written.

Run from the repository root:  python benchmarks/design_read.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from designer.design import io as design_io  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "tests" / "golden").glob("*/design.yaml"))
TARGET_S = 0.050
REPEATS = 20


def _median(fn) -> float:
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    """Print, per design file: size, first read, median read as written and median read reformatted."""
    start = time.perf_counter()
    design_io.load_design(FILES[0])
    first = time.perf_counter() - start
    worst = 0.0
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        reformatted = yaml.safe_dump(yaml.safe_load(text), sort_keys=True, width=60)
        as_written = _median(lambda: design_io.load_design(path))
        slow = _median(lambda: design_io.parse_design(reformatted, str(path)))
        worst = max(worst, as_written)
        print(f"design read: {path.parent.name:<24} {len(text) / 1024:5.1f} KiB  as written "
              f"{as_written * 1e3:6.1f} ms  reformatted {slow * 1e3:6.1f} ms")
    print(f"design read: first read in a process {first * 1e3:.1f} ms; slowest median as written "
          f"{worst * 1e3:.1f} ms (target < {TARGET_S * 1e3:.0f} ms: {'ok' if worst < TARGET_S else 'SLOW'})")


if __name__ == "__main__":
    main()
