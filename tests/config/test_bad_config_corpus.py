"""A corpus of bad job configurations, each as a careful operator could write it by mistake.

For every case, ``gpy run`` must exit 2 before any work, print exactly one ``gpy: error:`` line that names the
key (or the file) and says what is wrong, and leave the state store and the published data as they were.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from gobblin_py.cli import main
from tests.support.jobs import write_csv

BASE = {
    "job.name": "Orders",
    "source.class": "gobblin_py.connectors.files.filebased.FileBasedSource",
    "source.filebased.data.directory": "{root}/data",
    "source.filebased.file.pattern": "*.csv",
    "extract.namespace": "shop",
    "extract.table.name": "orders",
    "converter.classes": "gobblin_py.transforms.converters.cast.TypeCastConverter",
    "converter.cast.fields": "order_id:int64",
    "writer.output.format": "PARQUET",
    "task.data.root.dir": "{root}/work",
    "data.publisher.final.dir": "{root}/published",
    "state.store.dir": "{root}/state",
    "task.maxretries": "0",
}


@dataclass
class Case:
    """A change to the good job and what the one error line must say."""

    id: str
    changes: dict[str, str | None] = field(default_factory=dict)
    says: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    extra_text: str = ""  # raw lines appended to the job file
    job_name: str = "orders.pull"  # the file gpy is pointed at (another name for other formats)
    files: dict[str, str] = field(default_factory=dict)  # more files beside the job


def key(k: str, *more: str) -> tuple[str, ...]:
    return (f"key '{k}'", *more)


CASES = [
    # -- the issue's classes -----------------------------------------------------------------------------
    Case("unresolved-env-in-state-dir", {"state.store.dir": "${env:GPY_UNSET_DIR}/state"},
         key("state.store.dir", "${env:GPY_UNSET_DIR}", "nothing resolved")),
    Case("unresolved-key-in-namespace", {"extract.namespace": "${no.such.key}"}, key("extract.namespace", "${no.such.key}")),
    Case("max-files-negative", {"source.filebased.maxFilesPerRun": "-1"}, key("source.filebased.maxFilesPerRun", "at least 1")),
    Case("max-files-zero", {"source.filebased.maxFilesPerRun": "0"}, key("source.filebased.maxFilesPerRun", "at least 1")),
    Case("job-name-escapes", {"job.name": "../../x"}, key("job.name", "folder name")),
    Case("job-name-with-slash", {"job.name": "a/b"}, key("job.name", "folder name")),
    Case("retry-interval-negative", {"task.retry.intervalinsec": "-3"}, key("task.retry.intervalinsec", "at least 0")),
    Case("branches-unbounded", {"fork.branches": "5000"}, key("fork.branches", "at most 64")),
    Case("branches-zero", {"fork.branches": "0"}, key("fork.branches", "at least 1")),
    Case("format-xls", {"writer.output.format": "XLS"}, key("writer.output.format", "'XLS'", "PARQUET | AVRO")),
    Case("parquet-codec", {"writer.codec.type": "zip"}, key("writer.codec.type", "Parquet supports")),
    Case("avro-codec", {"writer.output.format": "AVRO", "writer.codec.type": "rar"}, key("writer.codec.type", "Avro supports")),
    Case("orc-codec", {"writer.output.format": "ORC", "writer.codec.type": "brotli"}, key("writer.codec.type", "ORC supports")),
    Case("json-codec", {"writer.output.format": "JSON", "writer.codec.type": "snappy"}, key("writer.codec.type", "JSON supports")),
    Case("csv-codec", {"writer.output.format": "CSV", "writer.codec.type": "zstd"}, key("writer.codec.type", "CSV supports")),
    Case("target-size-words", {"writer.target.file.size": "lots"}, key("writer.target.file.size", "not a size")),
    Case("target-size-zero", {"writer.target.file.size": "0"}, key("writer.target.file.size", "at least 1")),
    Case("cast-unknown-type", {"converter.cast.fields": "order_id:varchar"}, key("converter.cast.fields", "unknown type 'varchar'")),
    Case("cast-no-colon", {"converter.cast.fields": "order_id"}, key("converter.cast.fields", "not field:type")),
    Case("file-format-xml", {"source.filebased.format": "xml"}, key("source.filebased.format", "'xml'")),
    Case("csv-delimiter-two-chars", {"source.filebased.csv.delimiter": ";;"}, key("source.filebased.csv.delimiter", "one character")),
    Case("typo-strict", {"source.filebased.maxFilesPerRn": "3"}, key("source.filebased.maxFilesPerRn", "did you mean source.filebased.maxFilesPerRun"), args=("--strict",)),
    Case("typo-writer-strict", {"writer.outptu.format": "AVRO"}, key("writer.outptu.format", "did you mean writer.output.format"), args=("--strict",)),
    # -- the job and its run --------------------------------------------------------------------------------
    Case("no-job-name", {"job.name": None}, key("job.name", "is not set")),
    Case("no-source", {"source.class": None}, key("source.class", "is not set")),
    Case("unknown-source", {"source.class": "shop.NoSuchSource"}, ("source.class=shop.NoSuchSource", "no such plugin class")),
    Case("unported-gobblin-source", {"source.class": "org.apache.gobblin.zuora.ZuoraSource"},
         ("source.class=org.apache.gobblin.zuora.ZuoraSource", "no gobblin_py equivalent")),
    Case("converter-as-source", {"source.class": "gobblin_py.transforms.converters.cast.TypeCastConverter"},
         key("source.class", "is not a Source")),
    Case("source-as-converter", {"converter.classes": "gobblin_py.connectors.files.filebased.FileBasedSource"},
         key("converter.classes", "is not a Converter")),
    Case("unknown-converter", {"converter.classes": "gobblin_py.transforms.converters.cast.TypeCastConvertr"},
         ("converter.classes=gobblin_py.transforms.converters.cast.TypeCastConvertr",
          "did you mean gobblin_py.transforms.converters.cast.TypeCastConverter?")),
    Case("converter-not-a-class", {"converter.classes": "os.path.join"}, ("converter.classes=os.path.join", "not a class")),
    Case("unknown-writer-builder", {"writer.builder.class": "x.Y"}, ("writer.builder.class=x.Y",)),
    Case("source-as-writer", {"writer.builder.class": "gobblin_py.connectors.files.filebased.FileBasedSource"},
         key("writer.builder.class", "is not a DataWriterBuilder")),
    Case("unknown-publisher", {"data.publisher.type": "org.apache.gobblin.publisher.NoSuchPublisher"},
         ("data.publisher.type=org.apache.gobblin.publisher.NoSuchPublisher",)),
    Case("converter-as-fork", {"fork.operator.class": "gobblin_py.transforms.converters.identity.IdentityConverter"},
         key("fork.operator.class", "is not a ForkOperator")),
    Case("commit-policy", {"job.commit.policy": "sometimes"}, key("job.commit.policy", "full | successful | partial")),
    Case("partial-fail-flag", {"job.commit.partial.fail.task.fails.job.commit": "yes"},
         key("job.commit.partial.fail.task.fails.job.commit", "not a boolean")),
    Case("parallelize-flag", {"job.commit.parallelize": "maybe"}, key("job.commit.parallelize", "not a boolean")),
    Case("parallel-commits-zero", {"job.commit.parallelCommits": "0"}, key("job.commit.parallelCommits", "at least 1")),
    Case("delivery", {"gobblin.runtime.delivery.semantics": "AT_MOST_ONCE"}, key("gobblin.runtime.delivery.semantics", "'AT_MOST_ONCE'")),
    Case("sequence-retries-zero", {"gobblin.runtime.commit.sequence.max.retries": "0"},
         key("gobblin.runtime.commit.sequence.max.retries", "at least 1")),
    Case("retries-negative", {"task.maxretries": "-1"}, key("task.maxretries", "at least 0")),
    Case("retries-words", {"task.maxretries": "five"}, key("task.maxretries", "not a whole number")),
    Case("threads-zero", {"taskexecutor.threadpool.size": "0"}, key("taskexecutor.threadpool.size", "at least 1")),
    Case("queue-capacity-zero", {"fork.record.queue.capacity": "0"}, key("fork.record.queue.capacity", "at least 1")),
    Case("queue-timeout-negative", {"fork.record.queue.timeout": "-5"}, key("fork.record.queue.timeout", "at least 1")),
    Case("no-task-dirs", {"task.data.root.dir": None}, key("task.data.root.dir", "is not set")),
    Case("retry-policy", {"workunit.retry.policy": "sometimes"}, key("workunit.retry.policy", "always | onpartial")),
    Case("retry-enabled-flag", {"workunit.retry.enabled": "nope"}, key("workunit.retry.enabled", "not a boolean")),
    # -- state store and lock -------------------------------------------------------------------------------
    Case("no-state-dir", {"state.store.dir": None}, key("state.store.dir", "is not set")),
    Case("state-enabled-flag", {"state.store.enabled": "maybe"}, key("state.store.enabled", "not a boolean")),
    Case("retention-negative", {"state.store.retention": "-5"}, key("state.store.retention", "at least 0")),
    Case("retention-unit", {"state.store.retention": "2", "state.store.retention.timeunit": "FORTNIGHTS"},
         key("state.store.retention.timeunit", "'FORTNIGHTS'")),
    Case("state-store-type", {"state.store.type": "zk"}, key("state.store.type", "'zk' is not a state store gpy keeps")),
    Case("mysql-store-without-url", {"state.store.type": "mysql"}, key("state.store.db.url", "is not set")),
    Case("mysql-store-url", {"state.store.type": "mysql", "state.store.db.url": "mysql://db/gobblin?password=hush"},
         key("state.store.db.url", "is not a jdbc:mysql://host[:port]/database URL")),
    Case("name-parser", {"state.store.datasetUrnStateStoreNameParser": "x.Y"},
         key("state.store.datasetUrnStateStoreNameParser", "not a name parser")),
    Case("lock-flag", {"job.lock.enabled": "off"}, key("job.lock.enabled", "not a boolean")),
    Case("lock-timeout-zero", {"job.lock.timeout.seconds": "0"}, key("job.lock.timeout.seconds", "at least 1")),
    Case("lock-refresh-slower-than-timeout", {"job.lock.timeout.seconds": "10", "job.lock.refresh.seconds": "30"},
         key("job.lock.refresh.seconds", "not shorter than")),
    Case("fixed-job-id-exactly-once", {"job.id": "job_Orders_1"}, key("job.id", "exactly-once")),
    # -- file source ----------------------------------------------------------------------------------------
    Case("no-data-dir", {"source.filebased.data.directory": None}, key("source.filebased.data.directory", "is not set")),
    Case("urn-level", {"source.filebased.dataset.urn.level": "file"}, key("source.filebased.dataset.urn.level", "directory | subdirectory")),
    Case("csv-header-flag", {"source.filebased.csv.header": "maybe"}, key("source.filebased.csv.header", "not a boolean")),
    Case("csv-block-too-small", {"source.filebased.csv.block.size": "1k"}, key("source.filebased.csv.block.size", "at least")),
    Case("batch-size-zero", {"source.filebased.batch.size": "0"}, key("source.filebased.batch.size", "at least 1")),
    Case("partitions-zero", {"source.max.number.of.partitions": "0"}, key("source.max.number.of.partitions", "at least 1")),
    # -- writers, partitioners, publisher -------------------------------------------------------------------
    Case("deflate-level", {"writer.output.format": "AVRO", "writer.deflate.level": "10"}, key("writer.deflate.level", "at most 9")),
    Case("record-count-flag", {"writer.include.record.count.in.file.names": "yes"},
         key("writer.include.record.count.in.file.names", "not a boolean")),
    Case("path-type", {"writer.file.pathType": "HIVE"}, key("writer.file.pathType", "DEFAULT | TABLENAME")),
    Case("csv-out-delimiter", {"writer.output.format": "CSV", "writer.csv.delimiter": ";;"}, key("writer.csv.delimiter", "one character")),
    Case("csv-out-header-flag", {"writer.output.format": "CSV", "writer.csv.header": "no"}, key("writer.csv.header", "not a boolean")),
    Case("unknown-partitioner", {"writer.partitioner.class": "x.NoPartitioner"}, ("writer.partitioner.class=x.NoPartitioner",)),
    Case("partition-timezone", {"writer.partitioner.class": "TimeBasedWriterPartitioner", "writer.partition.columns": "order_id",
                                "writer.partition.timezone": "Mars/Olympus"}, key("writer.partition.timezone", "time zone")),
    Case("partition-pattern", {"writer.partitioner.class": "TimeBasedWriterPartitioner", "writer.partition.columns": "order_id",
                               "writer.partition.pattern": "yyyy/QQ"}, key("writer.partition.pattern", "'QQ' is not supported")),
    Case("partition-granularity", {"writer.partitioner.class": "TimeBasedWriterPartitioner", "writer.partition.columns": "order_id",
                                   "writer.partition.granularity": "FORTNIGHT"}, key("writer.partition.granularity", "YEAR | MONTH")),
    Case("partition-unit", {"writer.partitioner.class": "TimeBasedWriterPartitioner", "writer.partition.columns": "order_id",
                            "writer.partition.timeUnit": "JIFFIES"}, key("writer.partition.timeUnit", "'JIFFIES'")),
    Case("column-partitioner-no-columns", {"writer.partitioner.class": "ColumnValueWriterPartitioner"},
         key("writer.partition.columns", "is not set")),
    Case("no-final-dir", {"data.publisher.final.dir": None}, key("data.publisher.final.dir", "is not set")),
    Case("replace-final-dir-exactly-once", {"data.publisher.replace.final.dir": "true"},
         key("data.publisher.replace.final.dir", "AT_LEAST_ONCE")),
    Case("append-extract-flag", {"data.publisher.appendExtractToFinalDir": "yes"},
         key("data.publisher.appendExtractToFinalDir", "not a boolean")),
    # -- quality ----------------------------------------------------------------------------------------------
    Case("row-types-without-policies", {"qualitychecker.row.policy.types": "FAIL"}, key("qualitychecker.row.policy.types", "1 types for 0 policies")),
    Case("row-policy-type", {"qualitychecker.row.policies": "RequiredFieldsPolicy", "qualitychecker.row.policy.types": "SOMETIMES",
                             "qualitychecker.row.required.fields": "order_id"}, key("qualitychecker.row.policy.types", "'SOMETIMES'")),
    Case("err-file-without-folder", {"qualitychecker.row.policies": "RequiredFieldsPolicy", "qualitychecker.row.policy.types": "ERR_FILE",
                                     "qualitychecker.row.required.fields": "order_id"}, key("qualitychecker.row.err.file", "is not set")),
    Case("required-fields-missing", {"qualitychecker.row.policies": "RequiredFieldsPolicy", "qualitychecker.row.policy.types": "FAIL"},
         key("qualitychecker.row.required.fields", "is not set")),
    Case("task-policy-type", {"qualitychecker.task.policies": "RowCountPolicy", "qualitychecker.task.policy.types": "WARN"},
         key("qualitychecker.task.policy.types", "'WARN'")),
    Case("range-policy-without-range", {"qualitychecker.task.policies": "RowCountRangePolicy", "qualitychecker.task.policy.types": "FAIL"},
         key("qualitychecker.row.count.range", "is not set")),
    Case("range-negative", {"qualitychecker.task.policies": "RowCountRangePolicy", "qualitychecker.task.policy.types": "FAIL",
                            "qualitychecker.row.count.range": "-0.5"}, key("qualitychecker.row.count.range", "at least 0")),
    Case("enforce-flag", {"data.quality.enforce.failure": "perhaps"}, key("data.quality.enforce.failure", "not a boolean")),
    Case("projection-duplicate", {"converter.classes": "FieldProjectionConverter", "converter.projection.fields": "order_id:x,note:x"},
         key("converter.projection.fields", "two fields get the name x")),
    Case("cast-safe-flag", {"converter.cast.safe": "unsafe"}, key("converter.cast.safe", "not a boolean")),
    # -- forks: per-branch keys -------------------------------------------------------------------------------
    Case("branch-format", {"fork.branches": "2", "writer.output.format.1": "XLS", "data.publisher.final.dir.1": "{root}/p1"},
         key("writer.output.format.1", "'XLS'")),
    Case("branch-codec", {"fork.branches": "2", "writer.output.format.1": "AVRO", "writer.codec.type.1": "rar"},
         key("writer.codec.type.1", "Avro supports")),
    Case("branch-converter", {"fork.branches": "2", "converter.classes.0": "nope.Converter"}, ("converter.classes.0=nope.Converter",)),
    # -- the job file itself ----------------------------------------------------------------------------------
    Case("line-with-empty-key", extra_text="=false\n", says=("orders.pull:", "has an empty key")),
    Case("missing-include", extra_text="include=does-not-exist.properties\n", says=("does-not-exist.properties",)),
    Case("hocon-syntax", job_name="orders.conf", files={"orders.conf": 'job.name = "Orders"\nsource { class = \n'},
         says=("orders.conf:",)),
    Case("template-required-attribute", {"job.template": "{root}/t.template"},
         files={"t.template": "gobblin.template.required_attributes = \"the.topic\"\n"}, says=("the.topic", "is not set")),
    Case("missing-job-file", job_name="nope.pull", says=("nope.pull", "no such job file")),
    Case("missing-sysconfig", args=("--sysconfig", "{root}/none.properties"), says=("none.properties", "no such file")),
]


def render(props: dict[str, str | None], root: Path) -> str:
    return "".join(f"{k}={at(v, root)}\n" for k, v in props.items() if v is not None)


def at(text: str, root: Path) -> str:
    return text.replace("{root}", str(root))


def snapshot(*folders: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for folder in folders if folder.exists()
            for p in sorted(folder.rglob("*"))}


@pytest.fixture(scope="module")
def committed(tmp_path_factory) -> Path:
    """A job that ran once: state and published data exist, and must stay as they are."""
    root = tmp_path_factory.mktemp("bad-config")
    write_csv(root / "data" / "a.csv", 1)
    (root / "orders.pull").write_text(render(BASE, root))
    done = _gpy(root, "run", str(root / "orders.pull"), "--engine", "local")
    assert done.returncode == 0, done.stderr
    write_csv(root / "data" / "b.csv", 101)  # new data a bad run must not pull
    return root


@dataclass
class Outcome:
    returncode: int
    stderr: str


def _gpy(cwd: Path, *args: str) -> Outcome:
    """``gpy`` in this process (a subprocess each would cost the corpus most of its time), from ``cwd``."""
    before = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, ["--log-format", "json", *args], env={"GPY_UNSET_DIR": None})
    finally:
        os.chdir(before)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Outcome(result.exit_code, result.stderr)


def test_the_corpus_is_large_enough():
    assert len(CASES) >= 80 and len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_configuration_is_refused_before_any_work(committed, case):
    root = committed
    before = snapshot(root / "state", root / "published")
    props = {**BASE, **case.changes}
    job = root / case.job_name
    original = (root / "orders.pull").read_text()
    try:
        (root / "orders.pull").write_text(render(props, root) + case.extra_text)
        for name, text in case.files.items():
            (root / name).write_text(at(text, root))
        args = [at(a, root) for a in case.args]
        result = _gpy(root, "run", str(job), "--engine", "local", *args)
    finally:
        (root / "orders.pull").write_text(original)
        for name in case.files:
            (root / name).unlink(missing_ok=True)
    errors = [line for line in result.stderr.splitlines() if line.startswith("gpy: error:")]
    assert result.returncode == 2, result.stderr[-2000:]
    assert len(errors) == 1, errors
    for text in case.says:
        assert at(text, root) in errors[0], (text, errors[0])
    assert "Traceback" not in result.stderr
    assert snapshot(root / "state", root / "published") == before  # state and published data unchanged
