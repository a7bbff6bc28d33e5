"""Which failures a retry can help: real exceptions from the real libraries, classified transient, permanent or
unknown (``gobblin_py.sdk.failures.classify``)."""

from __future__ import annotations

import errno
import socket
import sqlite3

import adbc_driver_sqlite.dbapi as adbc_sqlite
import botocore.exceptions as boto
import confluent_kafka as kafka
import psycopg
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from gobblin_py.sdk.errors import CorruptFileError, GobblinPyError, PermanentError, TransientError, UsageError
from gobblin_py.sdk.failures import PERMANENT, TRANSIENT, UNKNOWN, classify


def raised(call, *args) -> BaseException:
    """The exception ``call(*args)`` raises (it must raise)."""
    try:
        call(*args)
    except Exception as exc:  # noqa: BLE001 - whatever the library raises is what is classified
        return exc
    raise AssertionError(f"{call} did not raise")


def refused() -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    socket.create_connection(("127.0.0.1", port), timeout=5)


def locked_sqlite(tmp_path) -> BaseException:
    path = str(tmp_path / "db.sqlite")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("create table t (x)")
    holder.execute("begin exclusive")
    try:
        return raised(sqlite3.connect(path, timeout=0).execute, "select * from t")
    finally:
        holder.execute("rollback")
        holder.close()


def client_error(code: str, status: int) -> boto.ClientError:
    return boto.ClientError({"Error": {"Code": code, "Message": code}, "ResponseMetadata": {"HTTPStatusCode": status}},
                            "GetObject")


def kafka_error(code: int) -> kafka.KafkaException:
    return kafka.KafkaException(kafka.KafkaError(code))


def test_transient_failures(tmp_path):
    cases = [
        raised(refused),
        ConnectionResetError(errno.ECONNRESET, "Connection reset by peer"),
        TimeoutError("timed out"),
        OSError(errno.EHOSTUNREACH, "No route to host"),
        kafka_error(kafka.KafkaError.LEADER_NOT_AVAILABLE),
        kafka_error(kafka.KafkaError.BROKER_NOT_AVAILABLE),
        kafka_error(kafka.KafkaError._ALL_BROKERS_DOWN),
        kafka.KafkaException(kafka.KafkaError(kafka.KafkaError._TRANSPORT, "down", retriable=True)),
        client_error("SlowDown", 503),
        client_error("InternalError", 500),
        client_error("ThrottlingException", 400),
        boto.EndpointConnectionError(endpoint_url="https://s3.example"),
        boto.ReadTimeoutError(endpoint_url="https://s3.example"),
        locked_sqlite(tmp_path),
        psycopg.errors.lookup("40P01")("deadlock detected"),
        psycopg.errors.lookup("57P01")("terminating connection due to administrator command"),
        psycopg.errors.lookup("08006")("connection failure"),
        OSError("When reading information for key 'a' in bucket 'b': AWS Error NETWORK_CONNECTION during "
                "HeadObject operation: curlCode: 7, Couldn't connect to server"),
        TransientError("the service said: come back later"),
    ]
    for exc in cases:
        assert classify(exc).kind == TRANSIENT, f"{type(exc).__name__}: {exc}"


def adbc_missing_table() -> BaseException:
    with adbc_sqlite.connect() as connection, connection.cursor() as cursor:
        return raised(cursor.execute, "select * from no_such_table")


def test_permanent_failures(tmp_path):
    (tmp_path / "junk.parquet").write_bytes(b"junk")
    sqlite = sqlite3.connect(":memory:")
    cases = [
        raised(pc.cast, pa.array(["abc"]), pa.int64()),  # ArrowInvalid from a cast
        raised(pa.table({"a": [1]}).column, "b"),  # a missing column
        raised(pa.table({"a": [1]}).cast, pa.schema([("b", pa.int64())])),  # a schema mismatch
        raised(pq.read_table, str(tmp_path / "junk.parquet")),  # a corrupt input
        raised(pq.read_table, str(tmp_path / "missing.parquet")),  # a missing file
        raised(open, str(tmp_path / "missing.csv")),
        PermissionError(errno.EACCES, "Permission denied", "/data/orders.csv"),
        raised(sqlite.execute, "select * from no_such_table"),
        raised(sqlite.execute, "select no_such_column from sqlite_master"),
        adbc_missing_table(),
        psycopg.errors.lookup("42P01")('relation "orders" does not exist'),
        psycopg.errors.lookup("42703")('column "amount" does not exist'),
        psycopg.errors.lookup("22P02")("invalid input syntax for type integer"),
        psycopg.errors.lookup("42501")("permission denied for table orders"),
        kafka_error(kafka.KafkaError.UNKNOWN_TOPIC_OR_PART),
        kafka_error(kafka.KafkaError.TOPIC_AUTHORIZATION_FAILED),
        client_error("NoSuchKey", 404),
        client_error("AccessDenied", 403),
        boto.NoCredentialsError(),
        CorruptFileError("/data/a.avro", "truncated block", 120),
        UsageError("converter.cast.fields: no field amount in the input"),
        PermanentError("orders.csv line 7: 'abc' is not a number"),
        ValueError("invalid literal for int() with base 10: 'abc'"),
        raised(int, "abc"),
    ]
    for exc in cases:
        assert classify(exc).kind == PERMANENT, f"{type(exc).__name__}: {exc}"


def _truncated_parquet(tmp_path) -> BaseException:
    """A Parquet file cut in the middle with its footer kept: pyarrow's OSError says "corrupt file?"."""
    path = tmp_path / "cut.parquet"
    pq.write_table(pa.table({"id": list(range(5000)), "a": [f"x{i}" for i in range(5000)]}), path,
                   row_group_size=1000)
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2] + data[-2000:])
    return raised(lambda: [b for b in pq.ParquetFile(path).iter_batches()])


def _truncated_avro(tmp_path) -> BaseException:
    import fastavro

    from gobblin_py.formats.avro_read import read_avro

    path = tmp_path / "cut.avro"
    schema = {"type": "record", "name": "R", "fields": [{"name": "id", "type": "long"}, {"name": "a", "type": "string"}]}
    with path.open("wb") as out:
        fastavro.writer(out, fastavro.parse_schema(schema), [{"id": i, "a": "x" * 50} for i in range(2000)])
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])
    with path.open("rb") as stream:
        return raised(lambda: list(read_avro(stream, str(path))[1]))


def test_a_truncated_data_file_is_a_permanent_failure_naming_it(tmp_path):
    """A cut file fails the same way on every attempt: retrying it (5 times, minutes apart) only delays the error."""
    parquet, avro = _truncated_parquet(tmp_path), _truncated_avro(tmp_path)
    assert classify(parquet).kind == PERMANENT, parquet
    assert classify(avro).kind == PERMANENT and str(tmp_path / "cut.avro") in str(avro), avro


def test_unknown_failures_are_retried():
    for exc in [RuntimeError("something broke"), GobblinPyError("a task failed"), OSError(errno.EIO, "I/O error"),
                kafka_error(kafka.KafkaError._PARTITION_EOF), Exception("?")]:
        failure = classify(exc)
        assert failure.kind == UNKNOWN and failure.retryable, f"{type(exc).__name__}: {exc}"


def test_a_wrapped_error_takes_its_causes_kind_unless_it_says_its_own():
    cast = raised(pc.cast, pa.array(["abc"]), pa.int64())
    try:
        raise GobblinPyError("converter.cast.fields: cannot cast field 'note'") from cast
    except GobblinPyError as exc:
        assert classify(exc).kind == PERMANENT
    try:
        raise TransientError("the broker is restarting") from cast
    except TransientError as exc:
        assert classify(exc).kind == TRANSIENT


class ServiceDown(Exception):
    """A plugin's own error that marks itself."""

    retryable = True


@pytest.mark.parametrize("exc, kind", [(ServiceDown("503 from the API"), TRANSIENT),
                                       (type("BadRecord", (Exception,), {"retryable": False})("row 7"), PERMANENT)])
def test_a_plugins_own_error_marks_itself_with_retryable(exc, kind):
    assert classify(exc).kind == kind


# A fresh process that imports the task runner and the libraries, never a connector, and runs a task whose body
# (a cluster task's Spark job on the driver; every task's pipeline on an executor) raises each library's error: the
# connectors' classifiers are loaded from their entry points the first time a failure is classified.
_FRESH_TASKS = """
import json, sys
import botocore.exceptions as boto, confluent_kafka as kafka, psycopg
from pyspark.errors import AnalysisException
from gobblin_py.runtime.execute.task import run_task
from gobblin_py.sdk.states import WorkUnit

errors = [kafka.KafkaException(kafka.KafkaError(kafka.KafkaError.LEADER_NOT_AVAILABLE)),
          kafka.KafkaException(kafka.KafkaError(kafka.KafkaError.TOPIC_AUTHORIZATION_FAILED)),
          psycopg.errors.lookup("57P01")("terminating connection"), psycopg.errors.lookup("42P01")("no relation"),
          boto.EndpointConnectionError(endpoint_url="https://s3.example"), boto.NoCredentialsError(),
          AnalysisException("[TABLE_OR_VIEW_NOT_FOUND] orders")]
before = sorted(m for m in sys.modules if m.startswith(("gobblin_py.connectors", "gobblin_py.io.failures",
                                                          "gobblin_py.runtime.engines")))

def fail(error):
    def body(task):
        raise error
    return body

kinds = []
for n, error in enumerate(errors):
    task = run_task({"task.maxretries": "0"}, WorkUnit(), "job_fresh", f"task_{n}", body=fail(error))
    kinds.append(json.loads(task.get_prop("gpy.task.attempts"))[0]["kind"])
print(json.dumps({"before": before, "kinds": kinds}))
"""


def test_a_fresh_process_classifies_every_connectors_errors_without_importing_them():
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _FRESH_TASKS], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["before"] == []
    assert found["kinds"] == [TRANSIENT, PERMANENT, TRANSIENT, PERMANENT, TRANSIENT, PERMANENT, PERMANENT]


def test_a_classifier_registered_in_process_is_asked_after_retryable_and_before_python_types():
    from gobblin_py.sdk.failures import Failure, register_classifier

    class AcmeError(ValueError):
        """A library's error that subclasses ValueError (permanent by Python's types) but says 503."""

        status = 503

    class Marked(AcmeError):
        retryable = False

    def acme(exc: BaseException) -> Failure | None:
        return Failure(TRANSIENT, "Acme 503") if isinstance(exc, AcmeError) else None

    assert classify(AcmeError("busy")).kind == PERMANENT
    register_classifier(acme)
    register_classifier(acme)
    try:
        assert classify(AcmeError("busy")) == Failure(TRANSIENT, "Acme 503")
        assert classify(Marked("bad")).kind == PERMANENT  # the error's own word wins
    finally:
        from gobblin_py.sdk import failures

        failures._registered.remove(acme)
    assert classify(AcmeError("busy")).kind == PERMANENT
