"""How many threads commit a run's datasets: job.commit.parallelCommits when set; by default Gobblin's 20 where a
commit waits on a remote store, 1 where the state store and every final folder are on local disk."""

from __future__ import annotations

import pytest

from gobblin_py.runtime.commit.datasets import commit_threads
from gobblin_py.runtime.commit.job_run import JobRun
from gobblin_py.store import FsDatasetStateStore


def _run(tmp_path, store: bool = True, **props: str) -> JobRun:
    keys = {k.replace("__", "."): v for k, v in props.items()}
    return JobRun(keys, "J", "job_J_1", 0, store=FsDatasetStateStore(str(tmp_path / "state")) if store else None)


@pytest.mark.parametrize("props,threads", [
    ({"data__publisher__final__dir": "/data/out"}, 1),
    ({"data__publisher__final__dir": "file:///data/out", "data__publisher__final__dir__1": "/data/b1"}, 1),
    ({"data__publisher__final__dir": "s3://bucket/out"}, 20),
    ({"data__publisher__final__dir": "/data/out", "data__publisher__final__dir__1": "s3a://bucket/b1"}, 20),
    ({"data__publisher__final__dir": "/out", "data__publisher__fs__uri": "hdfs://namenode:8020"}, 20),
    ({"data__publisher__final__dir__1": "/out", "writer__fs__uri__1": "s3://bucket"}, 20),
    ({"data__publisher__final__dir": "/out", "data__publisher__fs__uri": "file:///"}, 1),
    ({}, 20),  # no final folder: the publisher may publish anywhere
    ({"data__publisher__final__dir": "/data/out", "job__commit__parallelCommits": "8"}, 8),
    ({"data__publisher__final__dir": "s3://bucket/out", "job__commit__parallelCommits": "1"}, 1),
])
def test_commit_threads(tmp_path, props, threads):
    assert commit_threads(_run(tmp_path, **props)) == threads


def test_a_job_without_a_state_store_keeps_the_default(tmp_path):
    assert commit_threads(_run(tmp_path, store=False, data__publisher__final__dir="/out")) == 20
