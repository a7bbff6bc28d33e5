"""The bytes of one dataset-state file (``.jst``): a BLOCK-compressed SequenceFile whose records are
``Text`` URN keys and ``JobState$DatasetState`` values, as Gobblin's ``FsDatasetStateStore`` writes them.

Reading is bounded: a file whose records inflate to more than ``state.store.max.state.bytes`` (1 GiB unless
set) is refused as corrupt, naming the file and the offset, before the memory is spent.
"""

from __future__ import annotations

import io
from typing import BinaryIO

from gobblin_py.sdk.errors import CorruptFileError
from gobblin_py.sdk.run_states import DatasetState
from gobblin_py.store.hadoop_io import DataInput
from gobblin_py.store.sequencefile import (
    MAX_INFLATED_BYTES,
    TEXT_CLASS,
    Compression,
    SequenceFileReader,
    SequenceFileWriter,
)
from gobblin_py.store.writable import DATASET_STATE_CLASS, JOB_STATE_CLASS, canonical_class_name, deserialize, serialize

MAX_STATE_BYTES_KEY = "state.store.max.state.bytes"
MAX_STATE_BYTES = MAX_INFLATED_BYTES


def encode_dataset_state_file(urn: str, state: DatasetState, serialized: bytes | None = None) -> bytes:
    """The bytes of a ``.jst`` file holding ``state`` under the key ``urn`` (BLOCK, DefaultCodec); ``serialized``:
    the state's Writable bytes when the caller has them already."""
    buffer = io.BytesIO()
    with SequenceFileWriter(buffer, TEXT_CLASS, DATASET_STATE_CLASS, Compression.BLOCK) as writer:
        writer.append_text(urn, serialize(state) if serialized is None else serialized)
    return buffer.getvalue()


def read_state_file(data_or_stream: bytes | BinaryIO, path: str,
                    max_bytes: int = MAX_STATE_BYTES) -> list[tuple[str, DatasetState]]:
    """Decode every record of a dataset-state file as ``(key, DatasetState)``; legacy JobState values too.

    ``max_bytes``: the most its records may inflate to (``state.store.max.state.bytes``).
    """
    stream = io.BytesIO(data_or_stream) if isinstance(data_or_stream, bytes) else data_or_stream
    try:
        reader = SequenceFileReader(stream, path, max_bytes, MAX_STATE_BYTES_KEY)
        value_class = canonical_class_name(reader.header.value_class)
        if value_class not in (DATASET_STATE_CLASS, JOB_STATE_CLASS):
            raise CorruptFileError(
                path,
                f"holds {reader.header.value_class} values, not {DATASET_STATE_CLASS}: not a dataset state file",
            )
        records = []
        for index, (key_bytes, value_bytes) in enumerate(reader):
            what = f"record {index}"
            key_in = DataInput(key_bytes, what)
            key = key_in.read_text("record key")
            try:
                state = deserialize(value_class, value_bytes, f"the value of {what} (key {key!r})")
            except CorruptFileError as exc:
                raise CorruptFileError(path, f"{exc.path}: {exc.reason}" + (
                    f" at value byte {exc.offset}" if exc.offset is not None else "")) from None
            if not isinstance(state, DatasetState):
                state = DatasetState.from_job_state(state)  # type: ignore[arg-type]
            records.append((key, state))
        return records
    except CorruptFileError as exc:
        raise exc if exc.path == path else exc.with_path(path) from None
