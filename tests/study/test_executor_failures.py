"""Executors with ``failures=True``: a task that raises, or whose worker dies, is a failure in its
place and the others finish; shared data splits off a task and joins it again; --jobs and
--scheduler choose the executor."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass

import pytest

from designer.errors import InputError
from designer.study import backends
from designer.study import executor as ex


@dataclass(frozen=True)
class Scaled:
    shared: dict | None
    item: object

    def run(self):
        if self.item == "boom":
            raise ValueError("no scenario here\nsecond line")
        if self.item == "die":
            os._exit(3)  # a worker killed mid-task (out of memory, a crash in native code)
        if self.item == "sigint":
            os.kill(os.getpid(), signal.SIGINT)  # a terminal's Ctrl-C reaches every process of the group
            time.sleep(0.2)
            return "survived"
        return self.shared["factor"] * self.item


def _tasks(items, factor=1):
    return [Scaled({"factor": factor}, i) for i in items]


@pytest.fixture(params=["inline", "processes"])
def executor(request):
    with (ex.InlineExecutor() if request.param == "inline" else ex.ProcessExecutor(2)) as e:
        yield e


def test_a_failing_task_is_reported_in_its_place_and_the_others_finish(executor):
    ticks = []
    out = executor.map(_tasks([1, "boom", 3], 2), lambda: ticks.append(1), failures=True)
    assert out[0] == 2 and out[2] == 6
    assert out[1] == ex.TaskFailure(1, "ValueError: no scenario here")
    assert len(ticks) == 3


def test_a_worker_that_dies_loses_only_its_own_task():
    with ex.ProcessExecutor(2) as e:
        out = e.map(_tasks([1, 2, "die", 4, 5, 6]), failures=True)
        assert [out[i] for i in (0, 1, 3, 4, 5)] == [1, 2, 4, 5, 6]
        assert out[2] == ex.TaskFailure(2, ex._LOST, lost=True)
        # The pool that broke is replaced: the executor takes more work.
        assert e.map(_tasks([7, 8]), failures=True) == [7, 8]


def test_workers_survive_a_ctrl_c_sent_to_the_group():
    with ex.ProcessExecutor(2) as e:
        assert e.map(_tasks(["sigint", 5]), failures=True) == ["survived", 5]


def test_shared_data_splits_off_a_task_and_joins_it_again():
    task = Scaled({"factor": 4}, 3)
    shared, light = ex.split_shared(task)
    assert shared == {"factor": 4} and light.shared is None
    assert ex.join_shared(light, shared) == 12
    assert ex.split_shared(object()) is None


def test_open_executor_picks_by_options():
    assert isinstance(backends.open_executor(1), ex.InlineExecutor)
    with backends.open_executor(3) as three:
        assert isinstance(three, ex.ProcessExecutor) and three.workers == 3
    with backends.open_executor() as default:
        assert default.workers == (backends.available_cores() if backends.available_cores() > 1 else 1)
    with pytest.raises(InputError, match="at least 1"):
        backends.open_executor(0)
    with pytest.raises(InputError, match="exclude each other"):
        backends.open_executor(2, "tcp://127.0.0.1:1")
