"""What every file writer shares: Gobblin's staging → output commit protocol for one file (spec §6.2).

A :class:`StagedFileWriter` opens ``<staging>/<P>/<name>`` (deleting a leftover of an earlier attempt), streams
batches into it through a format-specific writer, and on ``commit`` closes it and moves it to
``<output>/<P>/<name>``, overwriting an existing output file (a retried task must not be blocked). ``cleanup``
closes what is open and deletes the staging file if it is still there; it never raises over the error that led
to it. Subclasses only say how to open, write and finish their format (:meth:`_open`, :meth:`_write`,
:meth:`_finish`). Writers are built lazily, on the first non-empty batch, so a branch without rows makes no file.
"""

from __future__ import annotations

import gzip
import posixpath
import re
from typing import Any, BinaryIO

import pyarrow as pa

from gobblin_py.io import fs as fsutil
from gobblin_py.io import object_store
from gobblin_py.io.native_io import open_output
from gobblin_py.sdk.contracts import CountingDataWriter
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.logs import get_logger

log = get_logger(__name__)

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]i?b?|b)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(key: str, value: str | None) -> int | None:
    """Bytes from ``134217728``, ``128MB``, ``128m``, ``1.5GiB`` (binary units); None when unset or <= 0."""
    if value is None or not str(value).strip():
        return None
    match = _SIZE.match(str(value))
    if not match:
        raise UsageError(f"{key}={value}: expected a size in bytes, e.g. 134217728 or 128MB")
    unit = (match.group(2) or "").lower()[:1]
    size = int(float(match.group(1)) * _UNITS[unit])
    return size if size > 0 else None


def with_record_count(name: str, records: int) -> str:
    """Gobblin's ``<name-without-ext>.<count>.<ext>`` (IngestionRecordCountProvider); unchanged if already counted."""
    parts = name.split(".")
    if len(parts) >= 3 and parts[-2].isdigit():
        return name
    stem, dot, ext = name.rpartition(".")
    if not dot:
        return f"{name}.{records}."  # Guava's getFileExtension("x") is "": Gobblin makes "x.<n>."
    return f"{stem}.{records}.{ext}"


class StagedFileWriter(CountingDataWriter):
    """One staged output file; subclasses implement the format in :meth:`_open`, :meth:`_write`, :meth:`_finish`."""

    #: ``writer.codec.type`` values the format accepts, mapped to what the format library calls them
    codecs: dict[str, str] = {}
    #: the format library's codec for a file built without one
    default_codec = "none"

    @classmethod
    def options(cls, settings: Any, state: Any, schema: pa.Schema | None) -> dict[str, Any]:
        """The constructor's format options from the branch's writer settings; UsageError naming the key when a
        value (or a column type of ``schema``) cannot be written. Called before any file exists, and with no
        schema before the run, to check the settings alone."""
        return {}

    @staticmethod
    def name_suffix(options: dict[str, Any]) -> str:
        """What the file name gets after the format's extension (``.gz`` for gzip text)."""
        return ""

    def __init__(self, fs, staging_path: str, output_path: str, schema: pa.Schema, *, codec: str | None = None,
                 include_record_count: bool = False, gzip_level: int | None = None) -> None:
        self.codec = codec or self.default_codec  # the format library's name (one of ``codecs``' values)
        self.fs = fs
        self.staging_path = staging_path
        self.output_path = output_path
        self.schema = schema
        self.include_record_count = include_record_count
        self._records = 0
        self._bytes = 0
        self._stream: BinaryIO | None = None
        self._sink: Any = None
        self._open_ok = False
        self._committed = False  # moved to the output folder: nothing of it is left in staging
        self._object_store = fsutil.is_object_store(fs)
        fsutil.makedirs(fs, posixpath.dirname(staging_path))
        # a leftover of an earlier attempt; an object store's upload replaces it whole (no lookup: a request)
        if not self._object_store and fs.exists(staging_path):
            log.warning("staging_file_exists", path=staging_path)
            fsutil.remove(fs, staging_path)
        self._stream = open_output(fs, staging_path)
        try:
            self._sink = gzip.GzipFile(fileobj=self._stream, mode="wb", compresslevel=gzip_level, mtime=0) \
                if gzip_level is not None else self._stream
            self._open(self._sink)
            self._open_ok = True
        except BaseException:
            self._abort()
            raise

    # -- what a format implements -------------------------------------------------------------------------------

    def _open(self, sink: BinaryIO) -> None:
        """Start the file on ``sink`` (write a header, build the format's writer)."""
        raise NotImplementedError

    def _write(self, batch: pa.RecordBatch) -> None:
        """Append one non-empty batch."""
        raise NotImplementedError

    def _finish(self) -> None:
        """Write what is buffered and the file's footer (``sink`` is closed by the base class)."""
        raise NotImplementedError

    def _drop(self) -> None:
        """Forget what the format holds in memory: the file is being discarded (before :meth:`_finish`)."""

    # -- the DataWriter contract ----------------------------------------------------------------------------------

    def write(self, batch: pa.RecordBatch) -> None:
        if batch.num_rows == 0:
            return
        if not self._open_ok:
            raise RuntimeError(f"{self.staging_path}: write after close")
        if batch.schema != self.schema:  # one file, one schema (raises when the batch cannot be cast)
            batch = batch.cast(self.schema)
        self._write(batch)
        self._records += batch.num_rows

    @property
    def size(self) -> int:
        """Bytes that reached the staging file so far (formats buffer: a block, a stripe, a row group)."""
        if self._stream is None or not self._open_ok:
            return self._bytes
        try:
            return int(self._stream.tell())
        except (OSError, ValueError):
            return 0

    def close(self) -> None:
        """Finish the file; idempotent. The file stays in staging until :meth:`commit`."""
        if not self._open_ok or self._stream is None:
            return
        self._open_ok = False
        try:
            self._finish()
            if self._sink is not self._stream:
                self._sink.close()
            written = int(self._stream.tell())  # what was sent is what the upload holds: no lookup afterwards
        finally:
            self._stream.close()
        self._bytes = written if self._object_store else int(self.fs.size(self.staging_path))

    def commit(self) -> list[str]:
        """Move the file to the output directory; returns its path (a URL on a non-local filesystem)."""
        self.close()
        output = self.output_path
        if self.include_record_count:
            output = posixpath.join(posixpath.dirname(output), with_record_count(posixpath.basename(output), self._records))
        fsutil.makedirs(self.fs, posixpath.dirname(output))
        # like Gobblin: a retried task overwrites its own earlier output (an object store's copy replaces it)
        if not self._object_store and self.fs.exists(output):
            fsutil.remove(self.fs, output)
        try:
            if self._object_store:
                object_store.move_file(self.fs, self.staging_path, output, self._bytes)
            else:
                self.fs.mv(self.staging_path, output)
        except FileNotFoundError:
            if not self.fs.exists(self.staging_path):
                raise FileNotFoundError(f"staging file {self.staging_path} does not exist") from None
            raise
        self.output_path = output
        self._committed = True
        return [output if fsutil.is_local(self.fs) else self.fs.unstrip_protocol(output)]

    def file_records(self) -> dict[str, int]:
        """``{output path: records}`` once committed (empty before)."""
        if not self._committed:
            return {}
        return {self.output_path: self._records}

    def cleanup(self) -> None:
        self._abort()

    def _abort(self) -> None:
        if self._open_ok:
            self._open_ok = False
            try:
                self._drop()
                self._finish()
            except Exception as exc:  # noqa: BLE001 - the file is discarded; the error that led here matters
                log.debug("close_on_cleanup_failed", path=self.staging_path, error=str(exc))
        for closable in (self._sink, self._stream):
            if closable is not None:
                try:
                    closable.close()
                except Exception:  # noqa: BLE001
                    pass
        if self._committed:
            return
        try:
            if self.fs.exists(self.staging_path):
                fsutil.remove(self.fs, self.staging_path)
        except FileNotFoundError:
            pass


def codec_for(cls: type[StagedFileWriter], fmt: str, key: str, value: str | None, default: str) -> str:
    """The format library's name for ``writer.codec.type`` (case-insensitive), or a UsageError listing choices."""
    codec = (value or default).strip().lower()
    if codec not in cls.codecs:
        raise UsageError(f"{key}={value}: {fmt} supports {', '.join(sorted(cls.codecs))}")
    return cls.codecs[codec]
