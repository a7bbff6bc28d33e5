"""A dataset's ``current`` state on S3 read while a commit replaces it: the reader gets the new version whole.

s3fs looks an object up, then fetches it on condition that it is still that version; a commit replacing
``current`` in between makes the fetch fail with EBUSY, which must not reach ``gpy state`` or a run's planning.
"""

from __future__ import annotations

from gobblin_py.store.store import FsDatasetStateStore
from tests.support.states import make_state


def test_a_current_state_replaced_while_it_is_read_is_read_again(s3_server, bucket):
    store = FsDatasetStateStore(f"s3://{bucket}/state")
    store.fs = s3_server.filesystem()
    store.persist_dataset_state(make_state("orders", job_id="job_Pull_1000", high=10), "orders")
    newer = FsDatasetStateStore(f"s3://{bucket}/state")
    newer.fs = s3_server.filesystem()  # another process's client
    real_open, replaced = store.fs.open, []

    def open_then_replace(name, mode="rb", **kwargs):
        stream = real_open(name, mode, **kwargs)  # the lookup: s3fs now holds the first version's ETag
        if not replaced:
            replaced.append(name)
            newer.persist_dataset_state(make_state("orders", job_id="job_Pull_2000", high=20), "orders")
        return stream

    store.fs.open = open_then_replace
    latest = store.get_latest_dataset_state("Pull", "orders")
    assert replaced and replaced[0].endswith("orders-current.jst")
    assert latest.job_id == "job_Pull_2000"
