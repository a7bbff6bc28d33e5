"""``--remote sc://HOST:PORT``: the tasks run on a Spark Connect server, no JVM on gpy's side.

Each task group becomes one row of a DataFrame (its index, its task ids, its work units in Gobblin's Writable
encoding), one row per Spark task, processed with ``mapInArrow`` by the classic Spark engine's own task function;
each TaskState comes back as a row (task id, TaskState in the same encoding, which carries the task's output files
and counts) and the driver commits as on any engine. PySpark's Connect client is Python and gRPC only (the
``connect`` extra installs what it needs).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import nullcontext, suppress
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from gobblin_py.runtime.engines.base import Engine, TaskGroup, _announce, _executor_log_settings
from gobblin_py.runtime.engines.cluster_tasks import run_cluster_tasks, split_cluster_tasks
from gobblin_py.runtime.engines.connect_environment import archive_for, ship_environment
from gobblin_py.runtime.engines.connect_session import CLOSED, session_url
from gobblin_py.runtime.engines.spark import _spark_partition, task_states
from gobblin_py.runtime.execute import signals, task_progress
from gobblin_py.runtime.execute.run_progress import SPARK_STARTED, SPARK_STARTING
from gobblin_py.sdk import interrupts
from gobblin_py.sdk.errors import GobblinPyError, UsageError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.states import TaskState
from gobblin_py.store.writable import serialize

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.connect.session import SparkSession

    from gobblin_py.runtime.execute.progress_channel import Address

log = get_logger(__name__)

RESULT_SCHEMA = "task_id string, state binary"
# a Spark Connect client retries an unreachable server for 10 minutes by default; a scheduled run says so sooner
CONNECT_RETRIES = 6  # about a minute of backoff
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
# the job's keys that choose where Spark runs, not how its session behaves
_NOT_SESSION_KEYS = {"spark.master", "spark.remote", "spark.app.name"}


def check_remote(remote: str, where: str) -> str:
    """``remote`` when it is a Spark Connect address (``sc://HOST[:PORT][/;param=value…]``), else UsageError."""
    parsed = urlparse(remote)
    if parsed.scheme != "sc" or not parsed.hostname:
        raise UsageError(f"{where}={remote!r}: a Spark Connect server is named sc://HOST:PORT")
    return remote


def _connect_partition(job_props: dict[str, str], job_id: str, log_settings: tuple[str, str],
                       channel: Address | None, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """Runs on the Connect server's executors: each row's task group through the Spark engine's task function."""
    import pyarrow as pa

    groups = ((row["group"], list(zip(row["task_ids"], row["units"], strict=True)))
              for batch in batches for row in batch.to_pylist())
    for task_id, state in _spark_partition(job_props, job_id, log_settings, channel, groups):
        yield pa.RecordBatch.from_pydict({"task_id": [task_id], "state": [state]})


class ConnectEngine(Engine):
    """Runs each task group as one Spark task of a Spark Connect server (``master`` is its ``sc://`` address)."""

    name = "connect"

    def __init__(self, master: str | None = None) -> None:
        super().__init__(check_remote(master, "--remote") if master else None)
        self._session: SparkSession | None = None
        self._tag = ""

    def stop(self) -> None:
        """Cancel what this run still runs on the server, and close the connection (the job's session stays
        open on the server for its next run: see :mod:`gobblin_py.runtime.engines.connect_session`)."""
        session, self._session = self._session, None
        if session is None:
            return
        with suppress(Exception):  # the server may be gone: there is nothing left to stop then
            session.interruptTag(self._tag)
        with suppress(Exception):
            session.client.close()

    def run(self, job_props: Mapping[str, str], job_id: str, groups: list[TaskGroup]) -> list[TaskState]:
        remote = self.master or check_remote(job_props.get("spark.remote") or "", "spark.remote")
        _announce(groups)
        session = self._connect(remote, job_props, job_id)
        try:
            ship_environment(session, archive_for(job_props))
            signals.raise_if_interrupted()
            source, groups, on_driver = split_cluster_tasks(job_props, groups)
            results = self._run_tasks(session, remote, dict(job_props), job_id, groups) if groups else None
            on_cluster = run_cluster_tasks(session, source, job_props, job_id, on_driver) if source else []
        except BaseException as exc:
            if interrupts.cancelled():
                # the signal cut the call to the server short: cancel the tasks there; their attempts' files
                # are never published
                self.stop()
                raise signals.JobInterrupted(signals.interrupted_by()) from None
            if isinstance(exc, Exception) and _is_spark_error(exc):
                raise GobblinPyError(f"the Spark Connect server at {remote} could not run the tasks: "
                                     f"{_first_lines(exc)}") from exc
            raise
        self.stop()
        return (self._states(results) if results is not None else []) + on_cluster

    def _connect(self, remote: str, job_props: Mapping[str, str], job_id: str) -> SparkSession:
        import warnings

        # the client imports pandas, which gpy never hands a row to (rows travel as Arrow)
        warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
        # an unreachable server: the run's own error says so, naming it
        warnings.filterwarnings("ignore", message=r"\[RETRIES_EXCEEDED\]", category=UserWarning)
        try:
            import pyspark.sql.connect.session  # noqa: F401  (checks the client's dependencies as it loads)
        except ImportError as exc:
            raise UsageError(f"running on a Spark Connect server needs PySpark's Connect client: install "
                             f"gobblin_py[connect] (pip install 'gobblin_py[connect]'): {exc}") from None

        log.info(SPARK_STARTING, master=remote)
        began = time.monotonic()
        job_name = job_props.get("job.name", "gpy")
        # runtime keys apply to the job's session; the server's own (executors, memory) it keeps, silently
        conf: dict[str, str | int | bool] = {
            k: v for k, v in job_props.items() if k.startswith("spark.") and k not in _NOT_SESSION_KEYS}
        try:
            try:
                version = self._open(session_url(remote, job_name), conf)
            except Exception as exc:
                if _error_class(exc) != CLOSED:
                    raise
                version = self._open(session_url(remote, job_name, renew=True), conf)  # the server closed it
        except Exception as exc:
            if interrupts.cancelled():
                raise
            raise GobblinPyError(f"cannot reach the Spark Connect server at {remote}: {_first_lines(exc)}") from exc
        self._tag = f"gpy-{job_id}"  # what a stopped run cancels: its own operations, not the session's
        assert self._session is not None
        self._session.addTag(self._tag)
        log.info(SPARK_STARTED, master=remote, spark_version=version, seconds=round(time.monotonic() - began, 3))
        return self._session

    def _open(self, url: str, conf: dict[str, str | int | bool]) -> str:
        """Attach to (or open) the session at ``url``; the server's Spark version (the first call to it)."""
        from pyspark.sql.connect.client.retries import DefaultPolicy
        from pyspark.sql.connect.session import SparkSession

        session = SparkSession.builder.remote(url).create()
        self._session = session
        session.client.set_retry_policies([DefaultPolicy(max_retries=CONNECT_RETRIES)])
        if conf:
            session.conf._set_all(configs=conf, silent=True)
        return session.version

    def _run_tasks(self, session: SparkSession, remote: str, job_props: dict[str, str], job_id: str,
                   groups: list[TaskGroup]) -> pa.Table:
        import pyarrow as pa

        from gobblin_py.runtime.execute.progress_channel import ProgressServer

        rows = pa.table({
            "id": pa.array(range(len(groups)), pa.int64()),
            "group": pa.array(range(len(groups)), pa.int64()),
            "task_ids": pa.array([[task_id for task_id, _ in g.tasks] for g in groups], pa.list_(pa.string())),
            "units": pa.array([[serialize(unit) for _, unit in g.tasks] for g in groups], pa.list_(pa.binary())),
        })
        # a range of one row per partition, joined to the broadcast rows, keeps one task group per Spark task
        # (a shuffle's partitions could be merged by adaptive execution, a local relation's sliced by cores)
        frame = session.range(0, len(groups), 1, len(groups)).join(session.createDataFrame(rows).hint("broadcast"), "id")
        sink = task_progress.driver_sink()
        host = urlparse(remote).hostname
        # executors on this machine reach the progress channel; elsewhere the display counts tasks as they return
        listening = ProgressServer(sink, "127.0.0.1") if sink is not None and host in LOOPBACK else nullcontext(None)
        with listening as channel:
            run = partial(_connect_partition, job_props, job_id, _executor_log_settings(), channel)
            return frame.mapInArrow(run, RESULT_SCHEMA).toArrow()

    @staticmethod
    def _states(results: pa.Table) -> list[TaskState]:
        pairs = zip(results.column("task_id").to_pylist(), results.column("state").to_pylist(), strict=True)
        return task_states(pairs, task_progress.driver_sink())


def _error_class(exc: Exception) -> str | None:
    condition = getattr(exc, "getCondition", None) or getattr(exc, "getErrorClass", None)
    return condition() if callable(condition) else None


def _is_spark_error(exc: Exception) -> bool:
    from pyspark.errors import PySparkException

    return isinstance(exc, PySparkException)


def _first_lines(exc: Any, lines: int = 12) -> str:
    """The error's text, a long traceback cut in its middle (its last lines name what failed)."""
    text = [line for line in str(exc).strip().splitlines() if line.strip()]
    if len(text) > lines:
        text = [*text[:2], "…", *text[-(lines - 3):]]
    said = "\n".join(text)
    if "ModuleNotFoundError" in said:
        said += ("\n(the server's Python runs the tasks: gobblin_py and the job's plugin modules must be importable "
                 "there)")
    return said
