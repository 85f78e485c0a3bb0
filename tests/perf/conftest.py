"""Fixtures of the performance-model tests."""

from __future__ import annotations

import pytest

from designer.perf import Cluster, Job

from .factories import A100, GPT_1B, H100, HDR, NDR


@pytest.fixture
def h100_cluster() -> Cluster:
    return Cluster(H100, NDR)


@pytest.fixture
def a100_cluster() -> Cluster:
    return Cluster(A100, HDR)


@pytest.fixture
def small_job() -> Job:
    return Job(GPT_1B, global_batch=64, tokens=1e11)
