"""Plugins used by the tests, referenced from job files by dotted path like any user's plugin."""

from __future__ import annotations

import os
import signal
import socket
import time

import pyarrow as pa
import pyarrow.compute as pc

from gobblin_py.sdk.contracts import Converter, DataPublisher, ForkOperator
from gobblin_py.connectors.files.file_extractor import FileExtractor
from gobblin_py.connectors.files.filebased import FileBasedSource
from gobblin_py.connectors.files.publisher import BaseDataPublisher


class UpperCaseNames:
    """A Gobblin-style per-record converter: one dict in, one dict out."""

    def convert_record(self, schema, record):
        record = dict(record)
        record["currency"] = (record.get("currency") or "").lower()
        return [record]


class DuplicateAndTag:
    """Per-record, with a schema and the state argument: emits each record twice with a tag."""

    def convert_schema(self, schema, state):
        return schema.append(pa.field("copy", pa.int8()))

    def convert_record(self, schema, record, state):
        return [{**record, "copy": 0}, {**record, "copy": 1}]


class FailOnMarker(Converter):
    """Fails any batch holding the value of ``test.fail.marker`` in column ``note``."""

    def init(self, state):
        self.marker = state.get_prop("test.fail.marker", "FAIL")

    def convert_schema(self, schema, state):
        return schema

    def convert_batch(self, batch, state):
        if "note" in batch.schema.names and self.marker in batch.column("note").to_pylist():
            raise RuntimeError(f"marker {self.marker} found")
        return batch


class FailFirstAttempt(Converter):
    """Fails the first attempt of each task (counted through files in ``test.attempts.dir``), then passes."""

    def init(self, state):
        directory = state.get_prop("test.attempts.dir")
        marker = os.path.join(directory, state.get_prop("task.id"))
        self.first = not os.path.exists(marker)
        open(marker, "a").close()

    def convert_schema(self, schema, state):
        return schema

    def convert_batch(self, batch, state):
        if self.first:
            raise RuntimeError("first attempt fails on purpose")
        return batch


class RouteByParity(ForkOperator):
    """Vectorised routing: even order ids to branch 0, odd to branch 1."""

    def get_branches(self, state):
        return 2

    def fork_batch(self, state, batch):
        even = pc.equal(pc.bit_wise_and(batch.column("order_id"), 1), 0)
        return [even, pc.invert(even)]


class RouteByCustomerPerRecord(ForkOperator):
    """Per-record routing (the slow path): customer id modulo 3 picks one of three branches."""

    def get_branches(self, state):
        return 3

    def fork_data_record(self, state, record):
        return [record["customer_id"] % 3 == i for i in range(3)]


class WrongLengthFork(ForkOperator):
    """Declares two branches, answers three masks."""

    def get_branches(self, state):
        return 2

    def fork_batch(self, state, batch):
        return [True, True, True]


class SlowConverter(Converter):
    """Passes batches through slowly, so that a branch queue fills up."""

    def convert_schema(self, schema, state):
        return schema

    def convert_batch(self, batch, state):
        time.sleep(0.02)
        return batch


class PositiveAmount:
    """A per-record row policy: amount must be positive."""

    def check_record(self, record):
        return (record.get("amount") or 0) > 0


class KillExecutorOnce(Converter):
    """On its second batch, the first time any task gets there, SIGKILLs the Spark executor it runs in.

    The Python worker's parent is PySpark's daemon, whose parent is the executor JVM. A marker file in
    ``test.kill.marker.dir`` makes it happen once per job run.
    """

    def init(self, state):
        self.marker = os.path.join(state.get_prop("test.kill.marker.dir"), "killed")
        self.batches = 0

    def convert_schema(self, schema, state):
        return schema

    def convert_batch(self, batch, state):
        self.batches += 1
        if self.batches == 2:
            try:
                fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                return batch
            os.write(fd, state.get_prop("task.attempt.id").encode())
            os.close(fd)
            daemon = os.getppid()
            with open(f"/proc/{daemon}/stat") as stat:
                jvm = int(stat.read().rsplit(")", 1)[1].split()[1])
            os.kill(jvm, 9)
            time.sleep(30)  # the executor is gone; this worker dies with it
        return batch


class FlakyPublisher(BaseDataPublisher):
    """BaseDataPublisher whose second move fails once per marker directory (a transient storage error)."""

    def plan(self, task_states, allow_replace=False):
        steps = super().plan(task_states, allow_replace)
        marker = os.path.join(self.job_props["test.flaky.marker.dir"], "failed-once")
        if len(steps) > 1 and not os.path.exists(marker):
            def flaky(fresh=False):
                open(marker, "w").close()
                raise OSError(5, "Input/output error (injected)")

            steps[1].execute = flaky
        return steps


class MarkThenCrawl(Converter):
    """Touches ``test.marker`` on its first batch, then takes ``test.crawl.seconds`` (default 0.5) per batch:
    a task that is visibly running when a test signals the run."""

    def init(self, state):
        self.marker = state.get_prop("test.marker")
        self.seconds = float(state.get_prop("test.crawl.seconds") or 0.5)

    def convert_schema(self, schema, state):
        return schema

    def convert_batch(self, batch, state):
        open(self.marker, "a").close()
        time.sleep(self.seconds)
        return batch


class KillOwnProcess(Converter):
    """Kills the process it runs in (SIGKILL) on the first batch of a file whose first ``order_id`` is
    ``test.kill.order``: a worker process that dies mid-task (an out-of-memory kill, say)."""

    def init(self, state):
        self.order = int(state.get_prop("test.kill.order") or -1)

    def convert_schema(self, schema, state):
        return schema

    def convert_batch(self, batch, state):
        if batch.num_rows and batch.column("order_id")[0].as_py() == self.order:
            os.kill(os.getpid(), signal.SIGKILL)
        return batch


class DropEveryOther(Converter):
    """Drops every other row, and does not declare that it changes row counts: a lossy converter."""

    def convert_schema(self, schema, state):
        return schema

    def convert_batch(self, batch, state):
        return batch.filter(pa.array([i % 2 == 0 for i in range(batch.num_rows)]))


class DeleteFirstTaskOutput(Converter):
    """On the first batch of any task but the first, deletes the files the first task committed to its output
    (``test.output.dir``): a published file lost between a task's commit and the dataset's publishing."""

    def init(self, state):
        self.root = state.get_prop("test.output.dir")
        self.first = state.get_prop("task.id", "").endswith("_0")
        self.done = False

    def convert_schema(self, schema, state):
        return schema

    def convert_batch(self, batch, state):
        import glob

        if not self.first and not self.done:
            for path in glob.glob(f"{self.root}/**/part.*_0_0.parquet", recursive=True):
                os.unlink(path)
            self.done = True
        return batch


def _die_once(props) -> None:
    """SIGKILL this process unless ``test.die.marker`` (a file) exists; create it first, so a rerun lives."""
    marker = props.get("test.die.marker")
    if marker and not os.path.exists(marker):
        open(marker, "w").close()
        os.kill(os.getpid(), 9)


class DieAfterPublishing(BaseDataPublisher):
    """BaseDataPublisher whose process is killed right after it published, once per ``test.die.marker``: a crash
    between publishing a dataset and saving its state."""

    def publish(self, task_states):
        published = super().publish(task_states)
        _die_once(self.job_props)
        return published


class PublishOnly(DataPublisher):
    """A publisher with ``publish`` and no ``plan`` (at least once): BaseDataPublisher's moves, made at once; killed
    after publishing once per ``test.die.marker`` when that key is set."""

    def init(self, job_props):
        self.job_props = job_props
        self.inner = BaseDataPublisher()
        self.inner.init(job_props)

    def publish(self, task_states):
        published = self.inner.publish(task_states)
        _die_once(self.job_props)
        return published


class FailAttempts(Converter):
    """Fails the first ``test.fail.attempts`` attempts of each task (counted by files in ``test.attempts.dir``)."""

    def init(self, state):
        directory = os.path.join(state.get_prop("test.attempts.dir"), state.get_prop("task.id"))
        os.makedirs(directory, exist_ok=True)
        open(os.path.join(directory, state.get_prop("task.attempt.id")), "w").close()
        self.fail = len(os.listdir(directory)) <= int(state.get_prop("test.fail.attempts"))

    def convert_schema(self, schema, state):
        return schema

    def convert_batch(self, batch, state):
        if self.fail:
            raise RuntimeError("this attempt fails on purpose")
        return batch


class WaitForRelease(Converter):
    """Touches ``test.marker`` as the task starts, then holds the task until the file ``test.release`` exists (at
    most a minute): a run that visibly holds its lock for as long as a test needs."""

    def init(self, state):
        open(state.get_prop("test.marker"), "a").close()
        release = state.get_prop("test.release")
        for _ in range(1200):
            if os.path.exists(release):
                break
            time.sleep(0.05)

    def convert_schema(self, schema, state):
        return schema

    def convert_batch(self, batch, state):
        return batch


class VanishingFilesSource(FileBasedSource):
    """Plans the files it finds, then deletes them: each task finds its input file gone (a cleanup job ran)."""

    def get_workunits(self, state):
        units = super().get_workunits(state)
        for name in os.listdir(state.get_prop("source.filebased.data.directory")):
            os.remove(os.path.join(state.get_prop("source.filebased.data.directory"), name))
        return units


class RefusedOnceExtractor(FileExtractor):
    """Its first attempt of each task connects to a port nobody listens on (a real ConnectionRefusedError); later
    attempts read the files. Attempts are counted by files in ``test.attempts.dir``."""

    def read_batches(self):
        directory = os.path.join(self.state.get_prop("test.attempts.dir"), self.state.get_prop("task.id"))
        os.makedirs(directory, exist_ok=True)
        open(os.path.join(directory, self.state.get_prop("task.attempt.id")), "w").close()
        if len(os.listdir(directory)) == 1:
            with socket.socket() as closed:
                closed.bind(("127.0.0.1", 0))
                port = closed.getsockname()[1]
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
        return super().read_batches()


class RefusedOnceSource(FileBasedSource):
    """A file source whose extractor's first attempt finds its server refusing connections."""

    def get_extractor(self, state):
        return RefusedOnceExtractor(state)


class LockedOnceExtractor(FileExtractor):
    """Its first attempt of each task finds its SQLite database locked by another connection (a real
    ``sqlite3.OperationalError``, SQLITE_BUSY: transient only by the SQL connector's classifier); later attempts read
    the files. Each attempt writes a file in ``test.attempts.dir`` holding whether the SQL connector's modules were
    loaded in its process when it failed (they are not imported by a task of this job)."""

    def read_batches(self):
        import sqlite3
        import sys

        directory = os.path.join(self.state.get_prop("test.attempts.dir"), self.state.get_prop("task.id"))
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, self.state.get_prop("task.attempt.id")), "w") as out:
            out.write(str(any(m.startswith("gobblin_py.connectors.sql") for m in sys.modules)))
        if len(os.listdir(directory)) == 1:
            database = os.path.join(directory, "db.sqlite")
            holder = sqlite3.connect(database, isolation_level=None)
            holder.execute("create table t (x)")
            holder.execute("begin exclusive")
            try:
                sqlite3.connect(database, timeout=0).execute("select * from t")
            finally:
                holder.execute("rollback")
                holder.close()
        return super().read_batches()


class LockedOnceSource(FileBasedSource):
    """A file source whose extractor's first attempt finds its database locked."""

    def get_extractor(self, state):
        return LockedOnceExtractor(state)


class TouchDataset(Converter):
    """Writes ``<test.touch.dir>/<dataset.urn>`` when its task starts, holding the id of the process it runs in:
    which tasks have begun, and where, seen from outside."""

    def init(self, state):
        with open(os.path.join(state.get_prop("test.touch.dir"), state.get_prop("dataset.urn")), "w") as out:
            out.write(str(os.getpid()))

    def convert_schema(self, schema, state):
        return schema

    def convert_batch(self, batch, state):
        return batch


class PaddedFileSource(FileBasedSource):
    """A file source whose work units each carry ``test.padding.bytes`` bytes more (and so do their tasks' states)."""

    def get_workunits(self, state):
        units = super().get_workunits(state)
        padding = "x" * int(state.get_prop("test.padding.bytes") or 0)
        for unit in units:
            unit.set_prop("test.padding", padding)
        return units
