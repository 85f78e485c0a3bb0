"""The model against published measurements: training runs and collective bandwidth.

The data are the copies in benchmarks/data/ (sources in each row); benchmarks/validate.py builds
the model inputs and docs/validation.md shows the full tables.
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Targets (docs/validation.md): median absolute error over the compared runs, and the largest
# error any single run may have. Perf-model literature reaches 8-15 % for analytical models
# (vTrain 14.7 % multi-node; shared/perf facts, section 0).
MEDIAN_TOLERANCE = 0.10
RUN_TOLERANCE = 0.25
# Collective bus bandwidth for large messages (>= 256 MiB): within 15 %.
COLLECTIVE_TOLERANCE = 0.15


@pytest.fixture(scope="module")
def validate():
    spec = importlib.util.spec_from_file_location("validate", ROOT / "benchmarks" / "validate.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the file runs
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


@pytest.fixture(scope="module")
def runs(validate):
    compared, excluded = validate.run()
    return compared, excluded


def test_every_compared_run_is_predicted(runs):
    compared, excluded = runs
    assert len(compared) >= 40
    assert all(value is not None for _, _, value, _, _ in compared), [p for *_, p in compared if p]
    assert all(reason for _, reason in excluded)


def test_median_error_within_target_with_and_without_the_inconsistent_rows(runs, validate):
    compared, _ = runs
    errors = [abs(err) for _, _, _, err, _ in compared]
    counted = [abs(err) for rid, _, _, err, _ in compared if rid not in validate.INCONSISTENT]
    assert statistics.median(errors) <= MEDIAN_TOLERANCE
    assert statistics.median(counted) <= MEDIAN_TOLERANCE


def test_each_counted_run_within_tolerance(runs, validate):
    compared, _ = runs
    for rid, _, _, err, _ in compared:
        if rid not in validate.INCONSISTENT:
            assert abs(err) <= RUN_TOLERANCE, rid


def test_rows_not_counted_are_still_evaluated_and_shown(runs, validate):
    """A row the source contradicts is predicted and printed with its error, not dropped."""
    compared, _ = runs
    ids = {rid for rid, *_ in compared}
    assert set(validate.INCONSISTENT) <= ids
    table = validate.render(*runs)
    for rid in validate.INCONSISTENT:
        assert table.count(rid) == 1 and "Shown, not counted" in table


@pytest.mark.parametrize("rid, published_s, tol", [
    # Korthikanti et al. 2022, Table 5: 530B and 1T with sequence parallelism and selective
    # recomputation on 280 and 512 A100s.
    ("korthikanti-table5-530B-seq-par+selective-recompute", 37.83, 0.10),
    ("korthikanti-table5-1T-seq-par+selective-recompute", 71.49, 0.12),
])
def test_korthikanti_iteration_times(runs, rid, published_s, tol):
    compared, _ = runs
    value = next(v for r, _, v, _, _ in compared if r == rid)
    assert value == pytest.approx(published_s, rel=tol)


def test_collective_bus_bandwidth_for_large_messages(validate):
    rows = validate.collective_cases()
    large = [(rid, what, pub, pred) for rid, what, size, pub, pred, _ in rows
             if pred is not None and (size is None or size >= validate.LARGE_MESSAGE_BYTES)]
    # NVLink3/4/5, NVLS on and off, Infinity Fabric mesh, EFA across 4 nodes.
    assert len(large) >= 20
    for rid, what, pub, pred in large:
        assert pred == pytest.approx(pub, rel=COLLECTIVE_TOLERANCE), (rid, what)


def test_collective_rows_cover_each_fabric(validate):
    rows = validate.collective_cases()
    ids = " ".join(rid for rid, *_ in rows)
    for fabric in ("h200", "b200", "a100", "mi300x", "4nodes"):
        assert fabric in ids
