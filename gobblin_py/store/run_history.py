"""The run history: one JSON record per run of a job, beside its state store.

Layout: ``<job.history.dir>/<job>/<started ms, 15 digits>-<run id>.json`` (default
``<state.store.dir>/_history``), on any fsspec filesystem, each record written atomically. A run writes its
record as ``RUNNING`` when it starts and again, complete, when it ends; a run that never wrote its end (killed
with SIGKILL, its machine stopped) is found out by the next run of the job, which marks it ``KILLED``. The store
keeps the newest ``job.history.retention`` records of a job (and, when ``state.store.retention`` is set, none
older than that, the newest excepted).
"""

from __future__ import annotations

import json
import posixpath
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gobblin_py.io import fs as fsutil
from gobblin_py.io.contained_paths import contained_join
from gobblin_py.io.processes import host_name, pid_alive
from gobblin_py.sdk.errors import CorruptFileError, UsageError
from gobblin_py.sdk.redact import redact_value
from gobblin_py.sdk.settings import Settings, setting

RUNNING = "RUNNING"
KILLED = "KILLED"
FORMAT = 1
_STAMP_DIGITS = 15


@dataclass(frozen=True)
class HistorySettings(Settings):
    """The keys of the run history."""

    enabled: bool = setting("job.history.enabled", default=True,
                            doc="record every run (outcome, counts, watermarks) for `gpy history`")
    root: str | None = setting("job.history.dir", default_doc="<state.store.dir>/_history",
                               doc="where run records are kept (a path or URL)")
    retention: int = setting("job.history.retention", default=100, minimum=1, maximum=1_000_000,
                             doc="run records kept per job: the newest")


def effective_status(record: Mapping[str, Any]) -> str:
    """A record's status as it stands: a ``RUNNING`` run of this host whose process is gone was killed."""
    status = str(record.get("status", ""))
    if status == RUNNING and record.get("host") == host_name() and not pid_alive(int(record.get("pid") or 0)):
        return KILLED
    return status


class RunHistoryStore:
    """Run records of every job under one directory, on any fsspec filesystem."""

    def __init__(self, root: str, fs_uri: str | None = None, keep: int = 100,
                 max_age_seconds: float | None = None) -> None:
        self.fs, self.root = fsutil.open_fs(root, fs_uri)
        self.url = root
        self.keep = keep
        self.max_age_seconds = max_age_seconds

    @classmethod
    def for_job(cls, props: Mapping[str, str], max_age_seconds: float | None = None) -> RunHistoryStore | None:
        """The store a job records its runs in; None when it records none (disabled, or no state store)."""
        settings = HistorySettings.load(props)
        if not settings.enabled:
            return None
        root = settings.root
        if not root:
            state_dir = props.get("state.store.dir")
            if not state_dir or (props.get("state.store.enabled") or "true").strip().lower() == "false":
                return None
            root = posixpath.join(str(state_dir), "_history")
        return cls(root, props.get("state.store.fs.uri"), settings.retention, max_age_seconds)

    # ------------------------------------------------------------ naming

    def job_dir(self, job: str) -> str:
        return contained_join(self.root, job, what="job.name")

    @staticmethod
    def file_name(record: Mapping[str, Any]) -> str:
        return f"{int(record['started_ms']):0{_STAMP_DIGITS}d}-{record['run_id']}.json"

    def _names(self, job: str) -> list[str]:
        """Record file names of a job, oldest first."""
        return [n for n in fsutil.list_names(self.fs, self.job_dir(job)) if n.endswith(".json") and "-" in n]

    # ------------------------------------------------------------ writing

    def put(self, job: str, record: Mapping[str, Any]) -> str:
        """Write (or rewrite) a run's record atomically; returns its path."""
        path = contained_join(self.job_dir(job), self.file_name(record), what="job.id")
        fsutil.atomic_write(self.fs, path, encode_record(redact_value(dict(record))))  # no credential kept
        return path

    def prune(self, job: str, now: float | None = None) -> list[str]:
        """Delete records beyond the newest ``keep`` and, with a maximum age, older ones (never the newest)."""
        names = self._names(job)
        doomed = names[: max(0, len(names) - self.keep)]
        if self.max_age_seconds is not None and names:
            now = time.time() if now is None else now
            cutoff_ms = (now - self.max_age_seconds) * 1000
            doomed += [n for n in names[:-1] if n not in doomed and int(n.split("-", 1)[0]) < cutoff_ms]
        for name in doomed:
            fsutil.remove(self.fs, posixpath.join(self.job_dir(job), name))
        return doomed

    # ------------------------------------------------------------ reading

    def _read(self, job: str, name: str) -> dict[str, Any]:
        path = posixpath.join(self.job_dir(job), name)
        return parse_run_record(self.fs.cat_file(path), path)

    def runs(self, job: str, limit: int | None = None) -> list[dict[str, Any]]:
        """The job's run records, newest first (at most ``limit``)."""
        names = list(reversed(self._names(job)))
        if limit is not None:
            names = names[:limit]
        return [self._read(job, name) for name in names]

    def get(self, job: str, run_id: str) -> dict[str, Any]:
        """One run's record (the newest of that id); exit 2 naming the id when there is none."""
        for name in reversed(self._names(job)):
            if name.split("-", 1)[1] == f"{run_id}.json":
                return self._read(job, name)
        raise UsageError(f"{job}: no run {run_id!r} in the run history under {self.url} "
                         f"(`gpy history JOB_FILE` lists the runs kept)")

    def mark_killed(self, job: str, own_run_id: str, lock_held: bool, scan: int = 20) -> list[str]:
        """Mark the newest ``RUNNING`` records of other runs ``KILLED`` when they cannot still be running: this run
        holds the job's lock, or the run was of this host and its process is gone. Returns their run ids."""
        marked = []
        for record in self.runs(job, limit=scan):
            if record.get("status") != RUNNING or record.get("run_id") == own_run_id:
                continue
            if lock_held or effective_status(record) == KILLED:
                record["status"] = KILLED
                record["message"] = ("the run ended without recording its end: it was killed (SIGKILL, out of "
                                     "memory) or its machine stopped")
                record["noticed_ms"] = int(time.time() * 1000)
                self.put(job, record)
                marked.append(str(record["run_id"]))
        return marked


def parse_run_record(raw: bytes, path: str) -> dict[str, Any]:
    """The run record in a history file's bytes; CorruptFileError naming ``path`` when it is not one."""
    try:
        record = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise CorruptFileError(path, f"not a run record ({exc})") from None
    except RecursionError:
        raise CorruptFileError(path, "not a run record (nested too deeply)") from None
    if not isinstance(record, dict) or "run_id" not in record:
        raise CorruptFileError(path, "not a run record (no run_id)")
    problem = _shape_problem(record, _RECORD_SHAPE, "")
    if problem is not None:
        raise CorruptFileError(path, f"not a run record: {problem}")
    return record



def encode_record(record: Mapping[str, Any]) -> bytes:
    """A run's record as its file holds it: JSON, a field a line and each dataset on a line of its own (JSON's
    indented writer is pure Python: for a run of thousands of datasets it took longer than the run's commit)."""
    fields = []
    for key, value in record.items():
        if key == "datasets" and isinstance(value, list) and value:
            text = "[\n  " + ",\n  ".join(json.dumps(d, ensure_ascii=False) for d in value) + "\n ]"
        else:
            text = json.dumps(value, ensure_ascii=False)
        fields.append(f" {json.dumps(key, ensure_ascii=False)}: {text}")
    return ("{\n" + ",\n".join(fields) + "\n}").encode("utf-8")

# What `gpy history` reads of a record, field by field: a type (None is allowed for each), or the shape of a
# list's items / a dict's fields; a field that is not there is as good as None.
_WHOLE = (int,)
_NUMBER = (int, float)
_ITEMS = object()  # the key under which a list's item shape is given
_BRANCH = {"records_written": _WHOLE, "bytes_written": _WHOLE}
_STARTPOINT: dict[Any, Any] = {"kind": None, "id": None, "set": None}  # None: required, any value
_ATTEMPT = {"retry_in_s": _NUMBER}
_DATASET = {
    "tasks": _WHOLE, "failed_tasks": _WHOLE, "records_read": _WHOLE, "records_written": _WHOLE, "bytes": _WHOLE,
    "seconds": _NUMBER, "branches": {_ITEMS: _BRANCH}, "watermark_from": {_ITEMS: (str,)},
    "watermark_to": {_ITEMS: (str,)}, "startpoints": {_ITEMS: _STARTPOINT}, "quality": {_ITEMS: None},
    "published": {_ITEMS: None}, "commits": {_ITEMS: (str,)}, "task_errors": {_ITEMS: None},
    "task_attempts": {_ITEMS: {"attempts": {_ITEMS: _ATTEMPT}}},
}
_RECORD_SHAPE = {"pid": _WHOLE, "exit_code": _WHOLE, "seconds": _NUMBER, "warnings": {_ITEMS: None},
                 "datasets": {_ITEMS: _DATASET}}


def _shape_problem(value: Any, shape: Any, where: str) -> str | None:
    """Where ``value`` does not have ``shape``, in words; None when it does."""
    if shape is None:
        return None
    shown = "an object" if isinstance(value, dict) else "a list" if isinstance(value, list) else json.dumps(value)[:60]
    if isinstance(shape, tuple):
        if isinstance(value, shape) and not (isinstance(value, bool) and bool not in shape):
            return None
        kind = "a number" if float in shape else "a whole number" if int in shape else "text"
        return f"{where} is {shown}, not {kind}"
    if _ITEMS in shape:
        if not isinstance(value, list):
            return f"{where} is {shown}, not a list"
        return next((problem for i, item in enumerate(value)
                     for problem in [_shape_problem(item, shape[_ITEMS], f"{where}[{i}]")] if problem), None)
    if not isinstance(value, dict):
        return f"{where or 'the record'} is {shown}, not an object"
    for key, inner in shape.items():
        name = f"{where}.{key}" if where else key
        if inner is None and key not in value:
            return f"{name} is missing"
        problem = None if value.get(key) is None else _shape_problem(value[key], inner, name)
        if problem:
            return problem
    return None
