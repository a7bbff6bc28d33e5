"""Converters that fail every task the way a user's input or the infrastructure would, referenced from job files
by dotted path like any user's plugin."""

from __future__ import annotations

import errno

from gobblin_py.sdk.contracts import Converter
from gobblin_py.sdk.errors import CorruptFileError


class RejectCorruptInput(Converter):
    """Fails each task on its first batch as a decoder does on a corrupt input file."""

    def convert_schema(self, schema, state):
        return schema

    def convert_batch(self, batch, state):
        raise CorruptFileError(state.get_prop("source.filebased.data.directory") + "/part.bin",
                               "truncated block: 12 bytes of 4096", offset=8192)


class ConnectionResets(Converter):
    """Fails each task on its first batch as a flaky network store does."""

    def convert_schema(self, schema, state):
        return schema

    def convert_batch(self, batch, state):
        raise ConnectionResetError(errno.ECONNRESET, "Connection reset by peer (store.example.com)")


class CorruptOrReset(Converter):
    """Fails a task whose first ``order_id`` is below 100 on a corrupt input, any other on a reset connection."""

    def convert_schema(self, schema, state):
        return schema

    def convert_batch(self, batch, state):
        if batch.column("order_id")[0].as_py() < 100:
            RejectCorruptInput().convert_batch(batch, state)
        ConnectionResets().convert_batch(batch, state)
