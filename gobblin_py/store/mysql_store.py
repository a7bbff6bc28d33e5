"""The dataset state store in MySQL (``state.store.type=mysql``), in the table Gobblin's ``MysqlDatasetStateStore``
reads and writes, so either can run the job next.

Table (``state.store.db.table``, ``gobblin_job_state`` unless set; created if missing with Gobblin's statement)::

    store_name     varchar(100) latin1_bin   the job name
    table_name     varchar(667) latin1_bin   <urn'>-<job id>.jst (one row per run) or <urn'>-current.jst
    modified_time  timestamp                 set by the server on each write
    state          longblob                  gzip of: Text key (the dataset URN), then the DatasetState's Writable

where ``urn'`` is the URN with ``:`` replaced by ``.`` (the default dataset "": ``<job id>.jst`` and
``current.jst``). The ``current`` row is a copy of the dataset's latest run row, as Gobblin's alias is; the
latest state is the ``current`` row's record keyed by the URN.

Unlike Gobblin, which writes the run row and then copies it in a second transaction, gpy writes both in one
transaction: a crash or a lost server leaves either the new run and its ``current`` or neither. gpy's own files
(the commit log that makes publishing exactly-once, startpoints, run history) stay under ``state.store.dir``.
"""

from __future__ import annotations

import gzip
import time
import zlib
from collections.abc import Mapping
from typing import Any

from gobblin_py.sdk.errors import CorruptFileError, GobblinPyError, StateStoreError, StateStoreUnavailable
from gobblin_py.sdk.run_states import DatasetState
from gobblin_py.sdk.settings import SettingsError
from gobblin_py.sdk.states import DEFAULT_DATASET_URN
from gobblin_py.store import mysql_db
from gobblin_py.store.folders import require_folder
from gobblin_py.store.hadoop_io import DataInput, encode_text
from gobblin_py.store.state_files import MAX_STATE_BYTES, MAX_STATE_BYTES_KEY
from gobblin_py.store.store import (
    CURRENT,
    STATE_STORE_DIR_KEY,
    STATE_STORE_ENABLED_KEY,
    TABLE_SUFFIX,
    FsDatasetStateStore,
    StateStoreSettings,
    StoredRun,
)
from gobblin_py.store.writable import DATASET_STATE_CLASS, read_state, serialize

CREATE_TABLE = ("CREATE TABLE IF NOT EXISTS `{table}` (store_name varchar(100) CHARACTER SET latin1 COLLATE latin1_bin "
                "not null,table_name varchar(667) CHARACTER SET latin1 COLLATE latin1_bin not null, modified_time "
                "timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, state longblob, primary "
                "key(store_name, table_name))")
UPSERT = ("INSERT INTO `{table}` (store_name, table_name, state) VALUES(%s,%s,%s) "
          "ON DUPLICATE KEY UPDATE state = values(state)")
_NO_SUCH_TABLE = 1146
_MAX_TABLE_NAME = 667
_CURRENT_NAME = f"{CURRENT}{TABLE_SUFFIX}"


def encode_row_state(urn: str, serialized: bytes, compressed: bool = True) -> bytes:
    """The ``state`` blob of one row: Text key, Writable value; gzip'd unless ``compressed`` is false."""
    raw = encode_text(urn) + serialized
    return gzip.compress(raw, mtime=0) if compressed else raw


def decode_row_state(blob: bytes, where: str, max_bytes: int = MAX_STATE_BYTES) -> list[tuple[str, DatasetState]]:
    """Every ``(key, DatasetState)`` of a ``state`` blob, gzip'd (as Gobblin tells, by its magic bytes) or not."""
    raw = bytes(blob)
    if raw[:2] == b"\x1f\x8b":
        inflater = zlib.decompressobj(wbits=31)
        try:
            raw = inflater.decompress(raw, max_bytes + 1)
        except zlib.error as exc:
            raise CorruptFileError(where, f"the state is not valid gzip ({exc})") from None
        if len(raw) > max_bytes:
            raise CorruptFileError(where, f"the state inflates to more than {max_bytes} bytes ({MAX_STATE_BYTES_KEY})")
    inp = DataInput(raw, where)
    records = []
    while inp.remaining():
        key = inp.read_text("record key")
        state = read_state(DATASET_STATE_CLASS, inp)
        assert isinstance(state, DatasetState)
        records.append((key, state))
    return records


def _like_prefix(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class MysqlDatasetStateStore(FsDatasetStateStore):
    """Dataset states in the rows of Gobblin's MySQL state table; the job's working files in ``state.store.dir``."""

    def __init__(self, root: str, db: mysql_db.MysqlStoreSettings, fs_uri: str | None = None,
                 retention_seconds: float | None = None, max_state_bytes: int = MAX_STATE_BYTES) -> None:
        super().__init__(root, fs_uri, retention_seconds=retention_seconds, max_state_bytes=max_state_bytes)
        self.db = db
        self.url = f"mysql://{mysql_db.where(db)}"
        self._table_ready = False

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> MysqlDatasetStateStore:
        try:
            settings = StateStoreSettings.load({**props, STATE_STORE_ENABLED_KEY: "true"})
            db = mysql_db.MysqlStoreSettings.load(props)
        except SettingsError as exc:
            raise StateStoreError(str(exc)) from None
        assert settings.root is not None
        store = cls(settings.root, db, settings.fs_uri, settings.retention_seconds, settings.max_state_bytes)
        require_folder(store.fs, store.root, STATE_STORE_DIR_KEY)
        return store

    # ------------------------------------------------------------ naming (Gobblin's: no name parser, raw job id)

    def _stem(self, urn: str) -> str:
        name = urn.replace(":", ".")
        try:
            fits = len(name.encode("latin-1")) <= _MAX_TABLE_NAME - 120  # room for "-<job id>.jst"
        except UnicodeEncodeError:
            fits = False  # the column is latin1: such a URN is named by its hash
        import hashlib  # only a name too long for its column is hashed

        return name if fits else "urn_" + hashlib.sha1(urn.encode("utf-8")).hexdigest()

    def table_name(self, urn: str, job_id: str) -> str:
        stem = self._stem(urn)
        return f"{stem}-{job_id}{TABLE_SUFFIX}" if stem else f"{job_id}{TABLE_SUFFIX}"

    def current_table_name(self, urn: str) -> str:
        stem = self._stem(urn)
        return f"{stem}-{_CURRENT_NAME}" if stem else _CURRENT_NAME

    def _earlier_current_names(self, urn: str) -> list[str]:
        return []

    def location(self, job_name: str, table: str) -> str:
        return f"{self.url} row {job_name}/{table}"

    # ------------------------------------------------------------ SQL

    def _query(self, sql: str, args: tuple = ()) -> list[tuple]:
        pymysql = mysql_db.driver()
        connection = mysql_db.connect(self.db)
        try:
            with connection.cursor() as cursor:
                cursor.execute(sql.format(table=self.db.table), args)
                return list(cursor.fetchall())
        except pymysql.err.ProgrammingError as exc:
            if exc.args and exc.args[0] == _NO_SUCH_TABLE:
                return []  # nothing stored yet: the table is created by the first write
            raise StateStoreError(f"{self.url}: {exc}") from None
        except pymysql.err.Error as exc:
            raise self._failed("cannot read the state rows", exc) from None
        finally:
            connection.close()

    def _failed(self, what: str, exc: Exception) -> GobblinPyError:
        pymysql = mysql_db.driver()
        if isinstance(exc, pymysql.err.OperationalError):  # the server went away: nothing was changed
            return StateStoreUnavailable(f"{mysql_db.DB_URL_KEY} ({self.url}): {what}: {exc}")
        return StateStoreError(f"{self.url}: {what}: {exc}")

    def _decode(self, job_name: str, table: str, blob: Any) -> list[tuple[str, DatasetState]]:
        return decode_row_state(blob, self.location(job_name, table), self.max_state_bytes)

    # ------------------------------------------------------------ writing

    def persist_dataset_state(self, state: DatasetState, urn: str | None = None, sync_folder: bool = True,
                              serialized: bytes | None = None) -> str:
        """Write the run row of ``state`` and its dataset's ``current`` row in one transaction."""
        urn = state.dataset_urn if urn is None else urn
        if not state.job_id:
            raise StateStoreError(f"dataset {urn!r}: a dataset state needs a job id")
        if not state.job_name or len(state.job_name.encode("latin-1", "replace")) > 100:
            raise StateStoreError(f"dataset {urn!r}: job.name must be 1 to 100 characters in a MySQL state store")
        blob = encode_row_state(urn, serialize(state) if serialized is None else serialized, self.db.compressed)
        run_table = self.table_name(urn, state.job_id)
        pymysql = mysql_db.driver()
        connection = mysql_db.connect(self.db, autocommit=False)
        try:
            with connection.cursor() as cursor:
                if not self._table_ready:
                    cursor.execute(CREATE_TABLE.format(table=self.db.table))
                    self._table_ready = True
                cursor.execute(UPSERT.format(table=self.db.table), (state.job_name, run_table, blob))
                cursor.execute(UPSERT.format(table=self.db.table), (state.job_name, self.current_table_name(urn), blob))
            connection.commit()
        except pymysql.err.Error as exc:
            raise self._failed(f"cannot write the state of dataset {urn!r}", exc) from None
        finally:
            connection.close()
        if self.retention_seconds is not None:
            self.apply_retention(state.job_name, self.retention_seconds, urn=urn)
        return self.location(state.job_name, run_table)

    def sync_job_dir(self, job_name: str) -> None:
        """Nothing to do: each state is committed by the server."""

    # ------------------------------------------------------------ reading

    def read_table(self, job_name: str, table: str) -> list[tuple[str, DatasetState]]:
        rows = self._query("SELECT state FROM `{table}` WHERE store_name = %s AND table_name = %s", (job_name, table))
        if not rows:
            raise StateStoreError(f"{self.location(job_name, table)}: no such state row")
        return self._decode(job_name, table, rows[0][0])

    def job_names(self) -> list[str]:
        return [row[0] for row in self._query("SELECT DISTINCT store_name FROM `{table}` ORDER BY store_name")]

    def tables(self, job_name: str) -> list[str]:
        rows = self._query("SELECT table_name FROM `{table}` WHERE store_name = %s ORDER BY table_name", (job_name,))
        return [row[0] for row in rows]

    def get_latest_dataset_state(self, job_name: str, urn: str) -> DatasetState | None:
        table = self.current_table_name(urn)
        rows = self._query("SELECT state FROM `{table}` WHERE store_name = %s AND table_name = %s", (job_name, table))
        for key, state in self._decode(job_name, table, rows[0][0]) if rows else []:
            if key == urn:
                return state
        return None

    def get_latest_dataset_states_by_urns(self, job_name: str) -> dict[str, DatasetState]:
        """Every dataset's latest state, from the ``current`` rows (Gobblin's start-of-run lookup)."""
        rows = self._query("SELECT table_name, state FROM `{table}` WHERE store_name = %s AND table_name LIKE %s",
                           (job_name, "%" + _CURRENT_NAME))
        latest: dict[str, DatasetState] = {}
        for table, blob in rows:
            for _, state in self._decode(job_name, table, blob)[:1]:
                latest[state.dataset_urn] = state
        if len(latest) > 1:
            latest.pop(DEFAULT_DATASET_URN, None)
        return latest

    def _run_rows(self, job_name: str, urn: str, columns: str) -> list[tuple]:
        """The rows that may be runs of ``urn`` (by name: the caller checks the key of what it reads)."""
        stem = self._stem(urn)
        pattern = _like_prefix(f"{stem}-") + "%" if stem else "%"
        rows = self._query(f"SELECT table_name, {columns} FROM `{{table}}` WHERE store_name = %s AND table_name LIKE %s",
                           (job_name, pattern))
        return [row for row in rows if not row[0].endswith(_CURRENT_NAME)]

    def history(self, job_name: str, urn: str) -> list[StoredRun]:
        runs = []
        for table, blob in self._run_rows(job_name, urn, "state"):
            for key, state in self._decode(job_name, table, blob):
                if key == urn:
                    runs.append(StoredRun(job_name, urn, table, self.location(job_name, table), state))
                    break
        return sorted(runs, key=lambda r: (r.state.start_time, r.state.job_id))

    def apply_retention(self, job_name: str, max_age_seconds: float, urn: str | None = None,
                        now: float | None = None, dry_run: bool = False) -> list[str]:
        """Delete run rows older than ``max_age_seconds`` (``modified_time``); never a ``current`` row nor the run
        it copies. ``dry_run``: only say which."""
        now = time.time() if now is None else now
        deleted = []
        for dataset_urn, keep in self._retained_datasets(job_name, urn):
            for table, modified in self._run_rows(job_name, dataset_urn, "UNIX_TIMESTAMP(modified_time)"):
                if table == keep or now - float(modified) <= max_age_seconds:
                    continue
                if any(key != dataset_urn for key, _ in self.read_table(job_name, table)):
                    continue  # another dataset's run whose name starts alike
                if not dry_run:
                    self._query("DELETE FROM `{table}` WHERE store_name = %s AND table_name = %s", (job_name, table))
                deleted.append(self.location(job_name, table))
        return deleted


def open_state_store(props: Mapping[str, str]) -> FsDatasetStateStore:
    """The dataset state store a job configures: files (``state.store.dir``) or MySQL (``state.store.type``)."""
    if (props.get(mysql_db.STORE_TYPE_KEY) or "fs").strip().lower() == "mysql":
        return MysqlDatasetStateStore.from_properties(props)
    return FsDatasetStateStore.from_properties(props)
