"""Data files opened as Arrow's native streams when they are on local disk, through fsspec otherwise.

Readers and writers of record data (CSV, Parquet, ORC, JSON, Avro) take either. A native stream keeps Python
out of the byte path: Arrow reads and writes local files in C++ without taking the interpreter lock per call,
where an fsspec file is a Python object Arrow must call back into for every read and write. Other filesystems
(S3, HDFS, memory …) keep fsspec's files; what is staged and how it is committed (a rename) does not change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gobblin_py.io.fs import is_local

if TYPE_CHECKING:
    from fsspec import AbstractFileSystem

WRITE_BUFFER = 1 << 20


def open_output(fs: AbstractFileSystem, path: str) -> Any:
    """A new (truncated) file at ``path`` to write bytes to; native and buffered on local disk."""
    if is_local(fs):
        import pyarrow as pa

        return pa.BufferedOutputStream(pa.OSFile(fs._strip_protocol(path), "wb"), buffer_size=WRITE_BUFFER)
    return fs.open(path, "wb")


def open_input(fs: AbstractFileSystem, path: str) -> Any:
    """``path`` opened for reading, with random access (Parquet footers); native on local disk."""
    if is_local(fs):
        import pyarrow as pa

        return pa.OSFile(fs._strip_protocol(path), "rb")
    return fs.open(path, "rb")
