"""Test plugins of the Kafka tests."""

from __future__ import annotations

import os

import pyarrow as pa

from gobblin_py.sdk.contracts import Converter


class ProduceWhileRunning(Converter):
    """Produces ``test.produce.count`` messages to every partition of the task's topic as the task starts (once per
    run: a marker file ``test.produce.marker`` says it happened): writes that arrive while the run is going."""

    def init(self, state) -> None:
        try:  # the first task of the run (tasks run in parallel threads) produces
            os.close(os.open(state.get_prop("test.produce.marker"), os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            return
        from confluent_kafka import Producer
        from confluent_kafka.admin import AdminClient

        brokers = state.get_prop("kafka.brokers")
        topic = state.get_prop("topic.name")
        count = int(state.get_prop("test.produce.count"))
        partitions = AdminClient({"bootstrap.servers": brokers}).list_topics(timeout=10).topics[topic].partitions
        producer = Producer({"bootstrap.servers": brokers})
        for partition in partitions:
            for i in range(count):
                producer.produce(topic, value=f"late-{partition}-{i}".encode(), partition=partition)
        producer.flush(30)

    def convert_schema(self, schema: pa.Schema, state) -> pa.Schema:
        return schema

    def convert_batch(self, batch: pa.RecordBatch, state) -> pa.RecordBatch:
        return batch


class PandasWitness(Converter):
    """Writes to ``test.pandas.witness``, at each batch, whether pandas has been imported in the task's process."""

    def convert_schema(self, schema: pa.Schema, state) -> pa.Schema:
        self.witness = state.get_prop("test.pandas.witness")
        return schema

    def convert_batch(self, batch: pa.RecordBatch, state) -> pa.RecordBatch:
        import sys

        with open(self.witness, "a") as out:
            out.write("imported\n" if "pandas" in sys.modules else "not imported\n")
        return batch
