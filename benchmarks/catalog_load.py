"""Time loading and validating the built-in catalogs (target: well under a second).

Run from the repository root:  python benchmarks/catalog_load.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from designer import catalog  # noqa: E402
from designer.catalog.types import KINDS  # noqa: E402

TARGET_S = 1.0
REPEATS = 20


def main() -> None:
    """Print the first (cold) load time and the median of warm reloads, with entry counts."""
    start = time.perf_counter()
    cat = catalog.load_builtin()
    cold = time.perf_counter() - start
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        catalog.load_builtin()
        times.append(time.perf_counter() - start)
    entries = sum(len(cat.by_kind(kind)) for kind in KINDS)
    warm = statistics.median(times)
    print(f"catalog load: {entries} entries in {len(catalog.BUILTIN_FILES)} files; "
          f"first {cold * 1e3:.1f} ms, median of {REPEATS} reloads {warm * 1e3:.1f} ms "
          f"(target < {TARGET_S * 1e3:.0f} ms: {'ok' if max(cold, warm) < TARGET_S else 'SLOW'})")


if __name__ == "__main__":
    main()
