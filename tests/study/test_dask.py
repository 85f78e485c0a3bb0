"""Studies on a real Dask cluster (a ``dask scheduler`` and two ``dask worker`` processes on
127.0.0.1): the same bytes as a local run, failures isolated, clear errors for a scheduler that
cannot serve."""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path

import pytest

from designer import study
from designer.errors import InputError
from designer.planner.inputs import load_inputs
from designer.report import study as report_study
from designer.study import executor as ex
from designer.study import workers
from designer.study.dask_executor import DaskExecutor, code_identity
from tests.study.dask_cluster import DaskCluster
from tests.study.test_whatif import SMALL_SPEC

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = DaskCluster(tmp_path_factory.mktemp("dask"), workers=2).start()
    try:
        c.wait_for_workers(2)
        yield c
    finally:
        c.stop()


@pytest.fixture(scope="module")
def dask(cluster):
    with DaskExecutor(cluster.address) as e:
        yield e


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    folder = tmp_path_factory.mktemp("spec")
    (folder / "small.yaml").write_text(SMALL_SPEC)
    spec, catalog = load_inputs(folder / "small.yaml")
    # The workers get the inputs as data: nothing they do may read the spec's folder.
    shutil.rmtree(folder)
    return spec, catalog


def test_the_executor_sees_both_workers(dask):
    assert dask.workers == 2
    assert "2 workers" in dask.description


def test_a_frontier_gives_the_same_bytes_on_the_cluster_as_in_this_process(dask, small):
    values = [0.3, 0.5, 0.7]
    local = study.frontier(*small, "utilization", values, executor=ex.InlineExecutor())
    remote = study.frontier(*small, "utilization", values, executor=dask)
    assert json.dumps(report_study.frontier_to_json_dict(remote)) == \
        json.dumps(report_study.frontier_to_json_dict(local))
    assert remote.points[0].outcome.status == "ok"


def test_a_sweep_gives_the_same_bytes_on_the_cluster(dask, small):
    # The base design rents (a Nebius H100 node at $2.95/GPU-hour): at twice the price owning wins.
    var = [study.Variation("cloud_price", 0.0, 1.0)]
    local = study.sweep(*small, var, steps=3, executor=ex.InlineExecutor())
    remote = study.sweep(*small, var, steps=3, executor=dask)
    assert report_study.sweep_to_json_dict(remote) == report_study.sweep_to_json_dict(local)
    assert remote.crossovers, "on-prem should win somewhere as the cloud price doubles"


def test_a_failing_task_on_the_cluster_keeps_the_others(dask, small):
    base = workers.base_of(*small, "highs", None)
    out = dask.map([workers.TargetSolve(base, "utilization", 0.5), workers.TargetSolve(base, "no_such_target", 1.0)],
                   failures=True)
    assert out[0].status == "ok"
    assert isinstance(out[1], ex.TaskFailure) and out[1].index == 1
    assert out[1].error.startswith("InputError: unknown target 'no_such_target'")


def test_without_failures_a_failing_task_on_the_cluster_raises(dask, small):
    base = workers.base_of(*small, "highs", None)
    with pytest.raises(InputError, match="unknown target"):
        dask.map([workers.TargetSolve(base, "no_such_target", 1.0)])


def test_the_workers_run_this_code():
    version, digest = code_identity()
    assert version and len(digest) == 16 and code_identity() == (version, digest)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_scheduler_is_bad_input():
    with pytest.raises(InputError, match="cannot connect"):
        DaskExecutor(f"tcp://127.0.0.1:{_free_port()}", timeout_s=2)


def test_a_scheduler_without_workers_is_bad_input(tmp_path):
    lonely = DaskCluster(tmp_path, workers=0).start()
    try:
        with pytest.raises(InputError, match="no worker joined"):
            DaskExecutor(lonely.address, timeout_s=2)
    finally:
        lonely.stop()


def test_frontier_and_sweep_take_the_scheduler_option(cluster, tmp_path):
    from typer.testing import CliRunner

    from designer.cli import app

    spec = tmp_path / "small.yaml"
    spec.write_text(SMALL_SPEC)
    runner = CliRunner()
    for args in (["frontier", str(spec), "--utilization", "0.3,0.6", "--json"],
                 ["sweep", str(spec), "--vary", "cloud_price=-40%..0%", "--steps", "2", "--json"]):
        local = runner.invoke(app, [*args, "--jobs", "1"])
        remote = runner.invoke(app, [*args, "--scheduler", cluster.address])
        assert local.exit_code == remote.exit_code == 0, remote.output
        assert remote.stdout == local.stdout
    both = runner.invoke(app, ["frontier", str(spec), "--jobs", "2", "--scheduler", cluster.address])
    assert both.exit_code == 2 and "exclude each other" in both.stderr


def test_a_study_gives_the_same_json_bytes_on_a_two_worker_cluster(cluster, tmp_path):
    from typer.testing import CliRunner

    from designer.cli import app

    spec = tmp_path / "small.yaml"
    spec.write_text(SMALL_SPEC)
    args = ["study", str(spec), "--samples", "12", "--seed", "3", "--format", "json",
            "--vary", "cloud_price=normal:25%", "--vary", "gpu_price=uniform:-20%..+30%",
            "--vary", "tokens=triangular:-10%..0%..+30%", "--vary", "compute_efficiency",
            "--vary", "network_efficiency"]
    runner = CliRunner()
    local = runner.invoke(app, [*args, "--jobs", "1"])
    remote = runner.invoke(app, [*args, "--scheduler", cluster.address])
    assert local.exit_code == remote.exit_code == 0, remote.output
    assert remote.stdout.encode() == local.stdout.encode()
    doc = json.loads(remote.stdout)
    assert len(doc["scenarios"]) == 12 and doc["designs"]
    shares = sum(d["share"] for d in doc["designs"]) + doc["no_design_share"] + doc["failed_share"]
    assert shares == pytest.approx(1.0, abs=1e-12)


@pytest.mark.skipif(not os.environ.get("DESIGNER_LONG_TESTS"),
                    reason="long (minutes): set DESIGNER_LONG_TESTS=1; benchmarks/study_scale.py checks the same")
def test_the_quickstart_with_64_scenarios_gives_the_same_json_on_the_cluster(cluster):
    from typer.testing import CliRunner

    from designer.cli import app

    args = ["study", str(ROOT / "examples" / "quickstart.yaml"), "--samples", "64", "--format", "json",
            "--vary", "gpu_price=normal:15%", "--vary", "tokens=uniform:-10%..+20%", "--vary", "compute_efficiency"]
    runner = CliRunner()
    local = runner.invoke(app, [*args, "--jobs", "2"])
    remote = runner.invoke(app, [*args, "--scheduler", cluster.address])
    assert local.exit_code == remote.exit_code == 0, remote.output
    assert remote.stdout.encode() == local.stdout.encode()
