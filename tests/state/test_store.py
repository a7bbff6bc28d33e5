"""FsDatasetStateStore: Gobblin's layout and lookup rules, atomic writes, sidecars, history, retention."""

import hashlib
import os
import shutil
import zlib

import pytest

from gobblin_py.sdk.errors import CorruptFileError, StateStoreError
from gobblin_py.sdk.watermarks import LongWatermark
from gobblin_py.store import FsDatasetStateStore
from gobblin_py.store.store import GuidUrnNameParser, sanitize_job_id
from tests.support.paths import GOBBLIN_DATA
from tests.support.states import make_state


def test_layout_and_sanitising(tmp_path):
    store = FsDatasetStateStore(str(tmp_path))
    path = store.persist_dataset_state(make_state("db:sch:t-1", job_id="job_Pull-x/y_1"))
    assert sanitize_job_id("job_Pull-x/y_1") == "job_Pull_x_y_1"
    assert path == f"{tmp_path}/Pull/db.sch.t-1-job_Pull_x_y_1.jst"
    assert sorted(os.listdir(tmp_path / "Pull")) == ["db.sch.t-1-current.jst", "db.sch.t-1-job_Pull_x_y_1.jst"]
    # the current file is a byte copy of the run file
    assert (tmp_path / "Pull/db.sch.t-1-current.jst").read_bytes() == (tmp_path / "Pull/db.sch.t-1-job_Pull_x_y_1.jst").read_bytes()


def test_default_urn_uses_bare_names(tmp_path):
    store = FsDatasetStateStore(str(tmp_path))
    store.persist_dataset_state(make_state(""))
    assert sorted(os.listdir(tmp_path / "Pull")) == ["current.jst", "job_Pull_1000.jst"]
    assert store.get_latest_dataset_state("Pull", "").dataset_urn == ""


def test_record_key_is_the_raw_urn_and_lookup_matches_it(tmp_path):
    store = FsDatasetStateStore(str(tmp_path))
    state = make_state("kafka:topic:3")
    store.persist_dataset_state(state)
    [(key, read_back)] = store.read_table("Pull", "kafka.topic.3-current.jst")
    assert key == "kafka:topic:3"
    assert read_back == state
    assert store.get_latest_dataset_state("Pull", "kafka:topic:3") == state
    assert store.get_latest_dataset_state("Pull", "kafka:topic:4") is None
    assert store.get_latest_dataset_state("NoSuchJob", "kafka:topic:3") is None


@pytest.mark.parametrize("urn", ["/data/in/orders", "a/b", "..", ".", "line\nbreak", "x" * 151])
def test_urns_that_cannot_be_file_names_are_hashed_inside_the_job_folder(tmp_path, urn):
    store = FsDatasetStateStore(str(tmp_path / "store"))
    store.persist_dataset_state(make_state(urn))
    stem = "urn_" + hashlib.sha1(urn.encode()).hexdigest()
    assert sorted(os.listdir(tmp_path / "store" / "Pull")) == [f"{stem}-current.jst", f"{stem}-job_Pull_1000.jst"]
    assert sorted(os.listdir(tmp_path)) == ["store"]  # nothing written beside the store
    assert store.get_latest_dataset_state("Pull", urn).dataset_urn == urn
    assert [r.state.job_id for r in store.history("Pull", urn)] == ["job_Pull_1000"]


def test_a_long_urns_earlier_current_file_is_replaced_not_kept_beside(tmp_path):
    urn = "db:" + "t" * 160
    store = FsDatasetStateStore(str(tmp_path))
    legacy = tmp_path / "Pull" / f"{urn.replace(':', '.')}-current.jst"
    legacy.parent.mkdir()
    store.persist_dataset_state(make_state(urn, job_id="job_Pull_1000", high=10, start=1000))
    (tmp_path / "Pull" / f"urn_{hashlib.sha1(urn.encode()).hexdigest()}-current.jst").rename(legacy)  # a store written before
    assert store.get_latest_dataset_state("Pull", urn).job_id == "job_Pull_1000"
    store.persist_dataset_state(make_state(urn, job_id="job_Pull_2000", high=20, start=2000))
    assert not legacy.exists()
    assert store.get_latest_dataset_states_by_urns("Pull")[urn].job_id == "job_Pull_2000"


def test_of_two_current_files_of_one_dataset_the_later_run_counts(tmp_path):
    store = FsDatasetStateStore(str(tmp_path))
    store.persist_dataset_state(make_state("t", job_id="job_Pull_2000", start=2000))
    (tmp_path / "Pull" / "t-current.jst").rename(tmp_path / "Pull" / "zz-current.jst")
    store.persist_dataset_state(make_state("t", job_id="job_Pull_1000", start=1000))
    (tmp_path / "Pull" / "t-current.jst").rename(tmp_path / "Pull" / "aa-current.jst")
    for first, second in (("aa", "zz"), ("zz", "aa")):
        (tmp_path / "Pull" / f"{first}-current.jst").rename(tmp_path / "Pull" / "t-current.jst")
        assert store.get_latest_dataset_states_by_urns("Pull")["t"].job_id == "job_Pull_2000"
        (tmp_path / "Pull" / "t-current.jst").rename(tmp_path / "Pull" / f"{first}-current.jst")


def test_latest_states_by_urn_and_previous_workunit_states(tmp_path):
    store = FsDatasetStateStore(str(tmp_path))
    for urn in ("a", "b", "c"):
        store.persist_dataset_state(make_state(urn, high=ord(urn)))
    store.persist_dataset_state(make_state("b", job_id="job_Pull_2000", low=ord("b"), high=500, start=2000))
    latest = store.get_latest_dataset_states_by_urns("Pull")
    assert sorted(latest) == ["a", "b", "c"]
    assert latest["b"].job_id == "job_Pull_2000"
    previous = store.get_previous_workunit_states_by_urns("Pull")
    assert previous["b"][0].actual_high_watermark(LongWatermark) == LongWatermark(500)
    assert previous["a"][0].actual_high_watermark(LongWatermark) == LongWatermark(ord("a"))


def test_legacy_job_level_current_is_dropped_once_datasets_exist(tmp_path):
    store = FsDatasetStateStore(str(tmp_path))
    store.persist_dataset_state(make_state(""))
    assert list(store.get_latest_dataset_states_by_urns("Pull")) == [""]
    store.persist_dataset_state(make_state("x"))
    assert list(store.get_latest_dataset_states_by_urns("Pull")) == ["x"]


def test_reads_gobblins_store_layout_and_value_class(tmp_path):
    shutil.copy(GOBBLIN_DATA / "TestJob-current.jst", tmp_path / "current.jst")
    (tmp_path / "TestJob").mkdir()
    shutil.move(tmp_path / "current.jst", tmp_path / "TestJob" / "current.jst")
    store = FsDatasetStateStore(str(tmp_path))
    assert store.job_names() == ["TestJob"]
    latest = store.get_latest_dataset_states_by_urns("TestJob")
    assert list(latest) == [""] and latest[""].job_name == "GobblinTest2"


def test_history_lists_every_run_oldest_first(tmp_path):
    store = FsDatasetStateStore(str(tmp_path))
    for start in (3000, 1000, 2000):
        store.persist_dataset_state(make_state("d", job_id=f"job_Pull_{start}", start=start))
    store.persist_dataset_state(make_state("other", job_id="job_Pull_9000", start=9000))
    runs = store.history("Pull", "d")
    assert [r.state.job_id for r in runs] == ["job_Pull_1000", "job_Pull_2000", "job_Pull_3000"]
    assert all(r.table.startswith("d-job_Pull_") for r in runs)


def test_retention_never_deletes_the_latest_state(tmp_path):
    store = FsDatasetStateStore(str(tmp_path))
    for start in (1000, 2000, 3000):
        store.persist_dataset_state(make_state("d", job_id=f"job_Pull_{start}", start=start))
    old = 1_000_000_000
    for name in os.listdir(tmp_path / "Pull"):
        os.utime(tmp_path / "Pull" / name, (old, old))
    deleted = store.apply_retention("Pull", max_age_seconds=60)
    assert sorted(os.path.basename(p) for p in deleted) == ["d-job_Pull_1000.jst", "d-job_Pull_2000.jst"]
    assert sorted(os.listdir(tmp_path / "Pull")) == ["d-current.jst", "d-job_Pull_3000.jst"]


def test_retention_from_job_properties_applies_on_persist(tmp_path):
    props = {"state.store.dir": str(tmp_path), "state.store.retention": "1", "state.store.retention.timeunit": "seconds"}
    store = FsDatasetStateStore.from_properties(props)
    assert store.retention_seconds == 1
    store.persist_dataset_state(make_state("d", job_id="job_Pull_1000"))
    os.utime(tmp_path / "Pull" / "d-job_Pull_1000.jst", (1, 1))
    store.persist_dataset_state(make_state("d", job_id="job_Pull_2000", start=2000))
    assert sorted(os.listdir(tmp_path / "Pull")) == ["d-current.jst", "d-job_Pull_2000.jst"]


def test_from_properties_errors_name_the_key(tmp_path):
    with pytest.raises(StateStoreError, match="key 'state.store.dir': is not set"):
        FsDatasetStateStore.from_properties({})
    with pytest.raises(StateStoreError, match="key 'state.store.retention.timeunit': 'fortnights'"):
        FsDatasetStateStore.from_properties(
            {"state.store.dir": str(tmp_path), "state.store.retention": "2", "state.store.retention.timeunit": "fortnights"}
        )
    with pytest.raises(StateStoreError, match="'x.Y' is not a name parser"):
        FsDatasetStateStore.from_properties(
            {"state.store.dir": str(tmp_path), "state.store.datasetUrnStateStoreNameParser": "x.Y"}
        )


def test_a_failed_write_leaves_the_previous_current_intact(tmp_path, monkeypatch):
    store = FsDatasetStateStore(str(tmp_path))
    store.persist_dataset_state(make_state("d", high=10))
    before = (tmp_path / "Pull/d-current.jst").read_bytes()

    real_replace = os.replace

    def fail_on_current(src, dst):
        if dst.endswith("current.jst"):
            raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", fail_on_current)
    with pytest.raises(StateStoreError, match="No space left on device"):
        store.persist_dataset_state(make_state("d", job_id="job_Pull_2000", high=20))
    monkeypatch.undo()
    assert (tmp_path / "Pull/d-current.jst").read_bytes() == before
    assert not [n for n in os.listdir(tmp_path / "Pull") if n.startswith("_tmp_")]  # no temporary left behind
    assert store.get_latest_dataset_state("Pull", "d").job_id == "job_Pull_1000"


def test_the_state_is_written_once_and_the_current_file_is_a_link_to_it(tmp_path):
    store = FsDatasetStateStore(str(tmp_path))
    store.persist_dataset_state(make_state("d", high=10))
    run, current = tmp_path / "Pull/d-job_Pull_1000.jst", tmp_path / "Pull/d-current.jst"
    assert os.path.samefile(run, current)
    first = run.read_bytes()
    store.persist_dataset_state(make_state("d", job_id="job_Pull_2000", high=20))  # replaces, never rewrites in place
    assert run.read_bytes() == first and not os.path.samefile(run, current)
    assert os.path.samefile(tmp_path / "Pull/d-job_Pull_2000.jst", current)
    assert store.get_latest_dataset_state("Pull", "d").job_id == "job_Pull_2000"
    assert not [n for n in os.listdir(tmp_path / "Pull") if n.startswith("_tmp_")]


def test_a_disk_without_hard_links_gets_two_copies(tmp_path, monkeypatch):
    def refuse(src, dst, **kwargs):
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", refuse)
    store = FsDatasetStateStore(str(tmp_path))
    store.persist_dataset_state(make_state("d", high=10))
    run, current = tmp_path / "Pull/d-job_Pull_1000.jst", tmp_path / "Pull/d-current.jst"
    assert not os.path.samefile(run, current) and run.read_bytes() == current.read_bytes()
    assert store.get_latest_dataset_state("Pull", "d").job_id == "job_Pull_1000"


def test_stale_hadoop_crc_sidecars_are_removed_on_rewrite(tmp_path):
    store = FsDatasetStateStore(str(tmp_path))
    store.persist_dataset_state(make_state("d"))
    sidecar = tmp_path / "Pull/.d-current.jst.crc"
    data = (tmp_path / "Pull/d-current.jst").read_bytes()
    sidecar.write_bytes(b"crc\x00" + (512).to_bytes(4, "big") + zlib.crc32(data[:512]).to_bytes(4, "big"))
    store.persist_dataset_state(make_state("d", job_id="job_Pull_2000"))
    assert not sidecar.exists()
    assert store.get_latest_dataset_state("Pull", "d").job_id == "job_Pull_2000"


def test_corrupt_state_file_names_the_file(tmp_path):
    store = FsDatasetStateStore(str(tmp_path))
    store.persist_dataset_state(make_state("d"))
    current = tmp_path / "Pull/d-current.jst"
    current.write_bytes(current.read_bytes()[:-1])
    with pytest.raises(CorruptFileError) as err:
        store.get_latest_dataset_states_by_urns("Pull")
    assert err.value.path == str(current)
    assert "truncated" in str(err.value)


def test_non_dataset_state_file_is_refused(tmp_path):
    (tmp_path / "Pull").mkdir()
    shutil.copy(GOBBLIN_DATA / "testTable", tmp_path / "Pull" / "x-current.jst")
    with pytest.raises(CorruptFileError, match="not a dataset state file"):
        FsDatasetStateStore(str(tmp_path)).get_latest_dataset_states_by_urns("Pull")


def test_guid_name_parser_hashes_urns_and_keeps_the_map(tmp_path):
    props = {
        "state.store.dir": str(tmp_path),
        "state.store.datasetUrnStateStoreNameParser": "org.apache.gobblin.metastore.nameParser.GuidDatasetUrnStateStoreNameParser",
    }
    store = FsDatasetStateStore.from_properties(props)
    assert isinstance(store.name_parser, GuidUrnNameParser)
    # an old plain-named current file is cleaned up when the dataset moves to its hashed name
    plain = FsDatasetStateStore(str(tmp_path))
    plain.persist_dataset_state(make_state("db:t"))
    store.persist_dataset_state(make_state("db:t", job_id="job_Pull_2000"))
    stem = hashlib.sha1(b"db.t").hexdigest()
    names = os.listdir(tmp_path / "Pull")
    assert f"{stem}-current.jst" in names and "db.t-current.jst" not in names
    assert (tmp_path / "Pull/datasetUrnNameMapV1").read_text() == f"{stem}\ndb.t\n"
    assert store.get_latest_dataset_state("Pull", "db:t").job_id == "job_Pull_2000"
    assert list(store.get_latest_dataset_states_by_urns("Pull")) == ["db:t"]


def test_store_on_an_object_store_filesystem():
    """fsspec's in-memory filesystem stands for S3-style stores: puts are atomic, no renames needed."""
    store = FsDatasetStateStore("memory://gpy-test-store")
    state = make_state("s3:bucket:t")
    store.persist_dataset_state(state)
    assert store.get_latest_dataset_state("Pull", "s3:bucket:t") == state
    assert store.job_names() == ["Pull"]
    assert store.display_path(store.job_dir("Pull")).startswith("memory://")
    store.fs.rm("/gpy-test-store", recursive=True)
