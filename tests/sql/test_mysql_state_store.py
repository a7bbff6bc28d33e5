"""``state.store.type=mysql``: a job keeps its dataset states in the table Gobblin's ``MysqlDatasetStateStore`` uses,
on the session's real MariaDB server. The rows are checked as Gobblin reads them (decoded here from Gobblin's
layout: gzip, a Text key, the Writable state), a store written here in Gobblin's layout is continued by gpy, and
``gpy state …`` works on it."""

from __future__ import annotations

import gzip
import json
import socket

from gobblin_py.store.hadoop_io import DataInput, encode_text
from gobblin_py.store.sequencefile import SequenceFileReader
from gobblin_py.store.writable import DATASET_STATE_CLASS, deserialize
from tests.support.cli import run_gpy_here
from tests.crash.harness import CrashJob

# Gobblin's MysqlStateStore.CREATE_JOB_STATE_TABLE_TEMPLATE
GOBBLIN_SCHEMA = ("CREATE TABLE IF NOT EXISTS gobblin_job_state (store_name varchar(100) CHARACTER SET latin1 COLLATE "
                  "latin1_bin not null,table_name varchar(667) CHARACTER SET latin1 COLLATE latin1_bin not null, "
                  "modified_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, "
                  "state longblob, primary key(store_name, table_name))")


def _rows(db) -> dict[tuple[str, str], bytes]:
    connection = db.connect()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT store_name, table_name, state FROM gobblin_job_state")
            return {(store, table): bytes(blob) for store, table, blob in cursor.fetchall()}
    finally:
        connection.close()


def _run(job: CrashJob):
    """One run of the job in this process (the crash campaigns run it as a subprocess)."""
    return run_gpy_here("run", str(job.job_file), "--engine", "local")


def _as_gobblin_reads(blob: bytes) -> tuple[str, bytes]:
    """MysqlStateStore.get: gunzip when the blob starts with gzip's magic, then a Text key and the state's bytes."""
    raw = gzip.decompress(blob) if blob[:2] == b"\x1f\x8b" else blob
    inp = DataInput(raw)
    key = inp.read_text()
    return key, raw[inp.pos:]


def test_a_jobs_state_in_mysql_reads_back_as_gobblin_reads_it_and_survives_a_dead_server(mariadb_server, mysql_db,
                                                                                          tmp_path):
    job = CrashJob(tmp_path, job_keys=mysql_db.state_store_keys())
    job.add_files(3)
    assert _run(job).returncode == 0
    rows = _rows(mysql_db)
    assert {store for store, _ in rows} == {"Crash"}
    tables = {table for _, table in rows}
    for urn in job.datasets:
        current = rows[("Crash", f"{urn}-current.jst")]
        runs = [t for t in tables if t.startswith(f"{urn}-job_Crash_") and t.endswith(".jst")]
        assert len(runs) == 1 and rows[("Crash", runs[0])] == current  # the alias: a copy of the run's row
        assert current[:2] == b"\x1f\x8b"  # gzip'd, as Gobblin's compressedValues default
        key, value = _as_gobblin_reads(current)
        state = deserialize(DATASET_STATE_CLASS, value)  # every byte a JobState$DatasetState
        assert key == urn and state.dataset_urn == urn and runs[0] == f"{urn}-{state.job_id}.jst"

    # the server unreachable: the run fails (1) naming the key, before it publishes or stores anything
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    good = job.job_file.read_text()
    job.job_file.write_text(good.replace(f":{mysql_db.port}/", f":{port}/"))
    job.add_files(3)
    failed = _run(job)
    assert failed.returncode == 1, failed.stderr
    assert "state.store.db.url" in failed.stderr and f"127.0.0.1:{port}" in failed.stderr
    assert mysql_db.password not in failed.stderr + failed.stdout
    assert _rows(mysql_db) == rows
    job.job_file.write_text(good)
    # the server refusing the states' writes mid-commit: the data is published, no state stored, the commit log
    # keeps the rest for the next run, which stores the states and publishes nothing twice
    _privileges(mariadb_server, mysql_db, "REVOKE INSERT, UPDATE ON {db}.* FROM 'gpy'@'127.0.0.1'")
    refused = _run(job)
    assert refused.returncode == 1 and job.pending_commits(), refused.stderr
    assert _rows(mysql_db) == rows
    _privileges(mariadb_server, mysql_db, "GRANT ALL ON {db}.* TO 'gpy'@'127.0.0.1'")
    assert _run(job).returncode == 0
    job.check()  # every row published once, the state (read from MySQL) matching the published files


def _privileges(server, db, statement: str) -> None:
    import pymysql

    admin = pymysql.connect(unix_socket=server["socket"], user="root", autocommit=True)
    try:
        with admin.cursor() as cursor:
            cursor.execute(statement.format(db=db.database))
    finally:
        admin.close()


def test_a_store_gobblin_wrote_in_mysql_is_continued_and_steered_by_gpy(mysql_db, tmp_path):
    # the states of a first run, taken as Writable bytes from Gobblin's file layout and put into MySQL rows exactly
    # as MysqlDatasetStateStore.persistDatasetState writes them (one dataset's row not compressed)
    first = CrashJob(tmp_path / "job")
    first.add_files(3)
    assert _run(first).returncode == 0
    mysql_db.execute(GOBBLIN_SCHEMA)
    for number, urn in enumerate(first.datasets):
        with open(first.state / "Crash" / f"{urn}-current.jst", "rb") as stream:
            ((_, value),) = list(SequenceFileReader(stream, "current"))
        state = deserialize(DATASET_STATE_CLASS, value)
        blob = encode_text(urn) + value
        blob = blob if number == 0 else gzip.compress(blob)
        for table in (f"{urn}-{state.job_id}.jst", f"{urn}-current.jst"):
            mysql_db.execute("INSERT INTO gobblin_job_state (store_name, table_name, state) VALUES (?, ?, ?)",
                             ("Crash", table, blob))
    (first.state / "Crash").rename(tmp_path / "fs-states")  # gpy must find the states in MySQL only
    job = CrashJob(tmp_path / "job", job_keys=mysql_db.state_store_keys())
    job.files_written = first.files_written
    job.add_files(3)
    assert _run(job).returncode == 0
    job.check()  # only the new files published: the watermarks came from Gobblin's rows

    shown = run_gpy_here("state", "show", str(job.job_file), "--json")
    assert shown.returncode == 0, shown.stderr
    report = json.loads(shown.stdout)
    assert report["store"].startswith("mysql://127.0.0.1:") and {d["urn"] for d in report["datasets"]} == {"eu", "us", "apac"}
    history = run_gpy_here("state", "history", str(job.job_file), "--dataset", "eu", "--json")
    assert history.returncode == 0 and len(json.loads(history.stdout)["runs"]) == 2, history.stderr
    watermark = run_gpy_here("state", "watermark", str(job.job_file), "--dataset", "us", "--json")
    assert watermark.returncode == 0 and json.loads(watermark.stdout)["dataset"] == "us", watermark.stderr
    exported = run_gpy_here("state", "export", str(job.job_file), str(tmp_path / "exported"))
    assert exported.returncode == 0, exported.stderr
    names = sorted(p.name for p in (tmp_path / "exported" / "Crash").iterdir())
    assert len(names) == 9 and "eu-current.jst" in names and all("-" not in n.split("-", 1)[1] for n in names)
    reset = run_gpy_here("state", "reset", str(job.job_file), "--dataset", "eu", "--yes")
    assert reset.returncode == 0, reset.stderr
    datasets = run_gpy_here("state", "datasets", str(job.job_file))
    assert datasets.returncode == 0 and "eu" in datasets.stdout, datasets.stderr
    key, value = _as_gobblin_reads(_rows(mysql_db)[("Crash", "eu-current.jst")])
    assert key == "eu" and deserialize(DATASET_STATE_CLASS, value).properties.get("gpy.reset") == "true"
    imported = run_gpy_here("state", "import", str(job.job_file), str(tmp_path / "exported"), "--replace")
    assert imported.returncode == 0, imported.stderr
    key, value = _as_gobblin_reads(_rows(mysql_db)[("Crash", "eu-current.jst")])
    assert key == "eu" and "gpy.reset" not in deserialize(DATASET_STATE_CLASS, value).properties


def test_retention_deletes_old_run_rows_of_its_dataset_only_and_never_current(mysql_db, tmp_path):
    from gobblin_py.sdk.run_states import DatasetState
    from gobblin_py.store import open_state_store

    job = CrashJob(tmp_path, job_keys=mysql_db.state_store_keys())
    job.state.mkdir()
    keys = dict(line.split("=", 1) for line in job.job_file.read_text().splitlines() if "=" in line)
    store = open_state_store(keys)
    for urn in ("a", "a-b"):  # "a-b"'s rows start as "a"'s do
        for millis in (1, 2):
            store.persist_dataset_state(DatasetState("Crash", f"job_Crash_{millis}", dataset_urn=urn,
                                                     start_time=millis))
    mysql_db.execute("UPDATE gobblin_job_state SET modified_time = modified_time - INTERVAL 2 HOUR")
    assert store.apply_retention("Crash", 3600, urn="a") == [f"{store.url} row Crash/a-job_Crash_1.jst"]
    assert [run.state.job_id for run in store.history("Crash", "a-b")] == ["job_Crash_1", "job_Crash_2"]
    dry = run_gpy_here("state", "clean", str(job.job_file), "--older-than", "1h", "--dry-run")
    assert dry.returncode == 0 and "1 state row(s) older than 1h would be deleted" in dry.stdout, dry.stdout + dry.stderr
    cleaned = run_gpy_here("state", "clean", str(job.job_file), "--older-than", "1h")
    assert cleaned.returncode == 0 and "row Crash/a-b-job_Crash_1.jst" in cleaned.stdout, cleaned.stdout + cleaned.stderr
    assert sorted(t for _, t in _rows(mysql_db)) == ["a-b-current.jst", "a-b-job_Crash_2.jst", "a-current.jst",
                                                     "a-job_Crash_2.jst"]
