"""Undecodable Kafka messages: counted, and written to an error file as the row-level ``ERR_FILE`` policy does.

The file sits in the folder ``qualitychecker.row.err.file`` names (on ``writer.fs.uri``), one per task:
``KafkaDeserializer-<task id>-<millis>.err``, one JSON object per message with its topic, partition, offset,
timestamp (epoch ms), key and value (base64) and the reason. Without that key the messages are only counted
and the first few logged. Either way the task goes on and its offsets move past them.
"""

from __future__ import annotations

import base64
import json

from gobblin_py.connectors.kafka.raw import RawBatch
from gobblin_py.io.error_files import ErrorFile
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.states import WorkUnitState

log = get_logger(__name__)

ERR_DIR_KEY = "qualitychecker.row.err.file"
POLICY_NAME = "KafkaDeserializer"
LOGGED = 5


def _b64(value: bytes | None) -> str | None:
    return None if value is None else base64.b64encode(value).decode("ascii")


class UndecodableLog:
    """Where one task's undecodable messages go."""

    def __init__(self, state: WorkUnitState, topic: str) -> None:
        self.state = state
        self.topic = topic
        self.directory = state.get_prop(ERR_DIR_KEY)
        task = state.get_prop("task.id") or state.id or "task"
        self.file = ErrorFile(self.directory, state.get_prop("writer.fs.uri"), POLICY_NAME, task) \
            if self.directory else None
        self.logged = 0

    def write(self, partition: int, raw: RawBatch, bad: list[tuple[int, str]]) -> None:
        """Record the messages of ``raw`` at the indices of ``bad`` (only those cross into Python)."""
        rows = []
        for index, reason in bad:
            key = raw.keys[index].as_py() if raw.keys is not None else None
            stamp = raw.timestamps[index].as_py()
            rows.append({"topic": self.topic, "partition": partition, "offset": raw.offsets[index].as_py(),
                         "timestamp": stamp if stamp is not None and stamp >= 0 else None, "key": _b64(key),
                         "value": _b64(raw.values[index].as_py()), "error": reason})
        for row in rows[: max(0, LOGGED - self.logged)]:
            log.warning("kafka_message_undecodable", topic=self.topic, partition=partition, offset=row["offset"],
                        error=row["error"], error_file=self.directory or "none (qualitychecker.row.err.file unset)")
        self.logged += len(rows)
        if self.file is not None:
            self.file.write(rows)

    @property
    def path(self) -> str | None:
        """The error file, once a message was written to it."""
        return self.file.path if self.file is not None else None

    def results(self, count: int) -> str:
        """The row-policy result line the run summary shows for these messages."""
        return json.dumps([{"policy": POLICY_NAME, "type": "ERR_FILE" if self.directory else "OPTIONAL",
                            "failed_rows": count}])

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
