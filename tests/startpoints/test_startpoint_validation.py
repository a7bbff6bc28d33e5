"""A startpoint is checked before it is stored, against the job's source; a bad one already stored stops a
run (and `startpoint list`) with one line naming its file, and is never silently taken as "read everything"."""

from __future__ import annotations

import json

import pytest

from tests.support.cli import run_gpy_here
from tests.support.file_events import EventJob


def set_startpoint(job_file, *args: str, dataset: str = ""):
    return run_gpy_here("state", "startpoint", "set", str(job_file), "--dataset", dataset, *args)


def assert_refused(result, *words: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    [line] = [line for line in result.stderr.splitlines() if line.startswith("gpy: error:")]
    assert all(word in line for word in words), line


def stored(job_file) -> dict:
    listed = run_gpy_here("state", "startpoint", "list", str(job_file), "--json")
    assert listed.returncode == 0, listed.stderr
    return json.loads(listed.stdout)


@pytest.fixture
def job(tmp_path) -> EventJob:
    job = EventJob(tmp_path)
    job.add(2)
    job.run()
    return job


@pytest.mark.parametrize("at", ["99999999999999999999999", "-5", "253402300800000", "1969-12-31T23:59:59Z"])
def test_a_timestamp_out_of_range_is_refused_and_nothing_is_stored(job, at):
    assert_refused(set_startpoint(job.file, "--timestamp", at), "--timestamp", at)
    assert stored(job.file) == {}


def test_a_time_after_the_latest_data_is_refused_unless_forced(job):
    """Without an event time to filter by, a replay from a time no record reaches would publish everything again:
    the file source cannot say what its newest record is, so no time after now (or after the newest event time
    committed) is taken without --force."""
    assert_refused(set_startpoint(job.file, "--timestamp", "9999-12-31"), "--timestamp 9999-12-31T00:00:00",
                   "after the latest data of dataset ''", "--force")
    assert stored(job.file) == {}
    assert set_startpoint(job.file, "--timestamp", "9999-12-31T23:59:59.999Z", "--force").returncode == 0
    listed = run_gpy_here("state", "startpoint", "list", str(job.file))
    assert listed.returncode == 0 and "TIMESTAMP 9999-12-31T23:59:59.999Z" in listed.stdout


@pytest.mark.parametrize("options", [["--oldest", "--upcoming"], ["--upcoming", "--oldest"],
                                     ["--oldest", "--timestamp", "2024-01-01T00:00:00Z"],
                                     ["--value", "5", "--upcoming"], []])
def test_exactly_one_position_option(job, options):
    assert_refused(set_startpoint(job.file, *options), "exactly one of --oldest, --upcoming")
    assert stored(job.file) == {}


def test_a_value_is_parsed_as_the_file_sources_watermark_a_modification_time(job):
    assert_refused(set_startpoint(job.file, "--value", "abc"), "'abc'", "modification time")
    assert_refused(set_startpoint(job.file, "--value", "99999999999999999999"), "99999999999999999999")
    assert stored(job.file) == {}
    assert set_startpoint(job.file, "--value", "2023-11-14T22:15:00Z").returncode == 0


def test_a_partition_is_refused_where_the_source_has_none(job):
    assert_refused(set_startpoint(job.file, "--partition", "3", "--oldest"), "partition '3'", "FileBasedSource")
    assert stored(job.file) == {}


def kafka_job(tmp_path, **extra: str):
    path = tmp_path / "kafka.pull"
    props = {"job.name": "Topics", "source.class": "org.apache.gobblin.source.extractor.extract.kafka.KafkaSimpleSource",
             "kafka.brokers": "127.0.0.1:9",
             "topic.whitelist": "orders", "data.publisher.final.dir": str(tmp_path / "published"),
             "state.store.dir": str(tmp_path / "state"), **extra}
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def test_kafka_partitions_and_offsets(tmp_path):
    job = kafka_job(tmp_path, **{"source.kafka.socketTimeoutMillis": "2000"})  # no broker: a short wait
    assert_refused(set_startpoint(job, "--partition", "x", "--oldest", dataset="orders"), "partition 'x'")
    assert_refused(set_startpoint(job, "--partition", "-1", "--oldest", dataset="orders"), "partition '-1'")
    for odd in (" 0", "00", "0 "):  # stored as given, they would never match partition 0, nor ever be consumed
        assert_refused(set_startpoint(job, "--partition", odd, "--oldest", dataset="orders"), f"partition {odd!r}",
                       "give --partition 0")
    assert_refused(set_startpoint(job, "--value", "abc", dataset="orders"), "'abc'", "Kafka offset")
    assert_refused(set_startpoint(job, "--value", "-3", dataset="orders"), "'-3'", "Kafka offset")
    assert_refused(set_startpoint(job, "--value", str(2**63), dataset="orders"), "Kafka offset")
    assert stored(job) == {}
    unchecked = set_startpoint(job, "--partition", "2", "--value", "42", dataset="orders")
    assert unchecked.returncode == 0, unchecked.stderr
    assert "gpy: warning: dataset 'orders' has no state, and the source could not plan" in unchecked.stderr
    assert set_startpoint(job, "--timestamp", "2024-01-01T00:00:00Z", dataset="orders").returncode == 0
    assert set(stored(job)["orders"]) == {"", "2"}


def sql_job(tmp_path, **extra: str):
    path = tmp_path / "shop.pull"
    props = {"job.name": "Shop", "source.class": "gobblin_py.connectors.sql.SqliteSource",
             "source.conn.host": str(tmp_path / "shop.db"), "source.entities": "orders,events",
             "extract.delta.fields": "updated_at", "data.publisher.final.dir": str(tmp_path / "published"),
             "state.store.dir": str(tmp_path / "state"), **extra}
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    return path


def test_sql_values_follow_the_tables_watermark_type(tmp_path):
    job = sql_job(tmp_path, **{"source.querybased.entity.events.source.querybased.watermark.type": "simple",
                               "source.querybased.entity.orders.source.querybased.watermark.type": "timestamp"})
    assert_refused(set_startpoint(job, "--value", "2024-01-01", dataset="events"), "'2024-01-01'", "whole number")
    assert_refused(set_startpoint(job, "--value", "soon", dataset="orders"), "'soon'", "not a time")
    assert_refused(set_startpoint(job, "--timestamp", "9999-12-31", dataset="orders"), "after the latest data")
    assert_refused(set_startpoint(job, "--partition", "1", "--oldest", dataset="orders"), "partition '1'")
    assert stored(job) == {}
    assert set_startpoint(job, "--value", "17", dataset="events").returncode == 0
    assert set_startpoint(job, "--value", "2024-01-01T10:00:00", dataset="orders").returncode == 0


def write_raw_startpoint(job: EventJob, partition: str, kind: str, value) -> str:
    """A startpoint file as an older gpy stored it, without the checks; its path."""
    folder = job.state / "_startpoints" / "Events"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "default_dataset_urn.json"
    path.write_text(json.dumps({"urn": "", "partitions": {
        partition: {"created_ms": 1_700_000_000_000, "id": "0123456789ab", "kind": kind, "value": value}}}))
    return str(path)


@pytest.mark.parametrize("partition, kind, value, words", [
    ("", "TIMESTAMP", "99999999999999999999999", ["99999999999999999999999"]),
    ("", "SPECIFIC", "abc", ["'abc'", "modification time"]),
    ("3", "OLDEST", None, ["partition", "FileBasedSource"]),
])
def test_a_bad_stored_startpoint_stops_list_and_run_naming_its_file(job, partition, kind, value, words):
    path = write_raw_startpoint(job, partition, kind, value)
    before = job.ids()
    listed = run_gpy_here("state", "startpoint", "list", str(job.file))
    if kind == "TIMESTAMP":  # cannot even be read back as a startpoint: list names the file too
        assert_refused(listed, path, *words)
    else:  # listed, with a warning that the next run refuses it
        assert listed.returncode == 0 and "0123456789ab" in listed.stdout, listed.stderr
        assert "gpy: warning:" in listed.stderr and path in listed.stderr
    refused = job.run(expect=2)
    assert_refused(refused, path, "gpy state startpoint clear", *words)
    assert job.ids() == before  # nothing read again
    cleared = run_gpy_here("state", "startpoint", "clear", str(job.file))
    assert cleared.returncode == 0, cleared.stderr
    assert stored(job.file) == {}
    job.run()
    assert job.ids() == before


@pytest.mark.parametrize("source", ["gobblin_py.connectors.kafka.source.KafkaSimpleSource",
                                    "gobblin_py.connectors.files.filebased.FileBasedSource",
                                    "gobblin_py.connectors.sql.source.QueryBasedSource"])
def test_gpys_startpoint_sources_declare_their_abilities(source):
    """The runtime finds these abilities by isinstance on the source's class: a renamed member would switch the
    check off silently, so each source gpy ships is held to its Protocols here."""
    from gobblin_py.sdk.plugins import resolve_class
    from gobblin_py.sdk.startpoints import ChecksStartpoints, ReportsNewestEvent, StartpointSource

    cls = resolve_class(source)
    assert isinstance(cls, StartpointSource) and cls.startpoint_kinds
    assert isinstance(cls, ChecksStartpoints) and isinstance(cls, ReportsNewestEvent)
