"""Gobblin's ``KafkaSimpleStreamingSource`` job files, run as bounded batches.

Gobblin's streaming source reads one topic (``gobblin.streaming.kafka.topic.singleton``) for ever, with the
Kafka client's key and value deserializers named by class, starting a partition with no committed offset at its
beginning. gpy runs batches: each run reads every partition from the offset the previous run committed up to
the partition's latest offset when the run is planned, then commits, exactly as :class:`KafkaSimpleSource` —
to stream, schedule the job to run again and again. The streaming keys are translated to the batch source's
(the topic to an exact ``topic.whitelist``, the value deserializer to ``kafka.deserializer.type``, the consumer
configuration, ``bootstrap.with.offset=earliest``); the batch keys may still be set beside them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gobblin_py.connectors.kafka.settings import DESERIALIZER_KEY, KafkaSourceSettings
from gobblin_py.connectors.kafka.source import KafkaSimpleSource
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.settings import setting
from gobblin_py.sdk.states import MultiWorkUnit, WorkUnit

log = get_logger(__name__)

P = "gobblin.streaming.kafka."
_KAFKA = "org.apache.kafka.common.serialization."
# the Kafka client's deserializers a gpy batch reads the same way (values; keys are not part of the records)
VALUE_DESERIALIZERS = {_KAFKA + "ByteArrayDeserializer": "BYTE_ARRAY", _KAFKA + "StringDeserializer": "STRING"}
KEY_DESERIALIZERS = (_KAFKA + "ByteArrayDeserializer", _KAFKA + "StringDeserializer")


@dataclass(frozen=True)
class KafkaStreamingSettings(KafkaSourceSettings):
    """The keys of :class:`KafkaSimpleStreamingSource`: Gobblin's streaming keys, then the batch source's."""

    topic: str = setting(P + "topic.singleton", required=True, example="events",
                         doc="the one topic the job reads (Gobblin's streaming source reads a single topic)")
    key_deserializer: str = setting(P + "topic.key.deserializer", required=True, choices=KEY_DESERIALIZERS,
                                    doc="the Kafka client's key deserializer (keys are not part of the records, "
                                        "as in Gobblin)")
    value_deserializer: str = setting(P + "topic.value.deserializer", required=True,
                                      choices=tuple(VALUE_DESERIALIZERS),
                                      doc="the Kafka client's value deserializer: ByteArrayDeserializer gives a "
                                          "binary column, StringDeserializer a text column")
    streaming_consumer_config: dict = setting(P + "consumerConfig.*", default=None,
                                              doc="passed to the consumer, as source.kafka.consumerConfig.*")
    execution_mode: str = setting("task.executionMode", default="STREAMING", choices=("BATCH", "STREAMING"),
                                  doc="STREAMING runs as bounded batches in gpy: each run reads up to the offsets "
                                      "latest when it is planned")


def batch_props(settings: KafkaStreamingSettings, props: dict[str, str]) -> dict[str, str]:
    """The batch source's keys that the streaming keys stand for (where the job does not set them itself)."""
    out = {}
    if settings.topic and not props.get("topic.whitelist"):
        out["topic.whitelist"] = re.escape(settings.topic)
    if settings.value_deserializer and not props.get(DESERIALIZER_KEY):
        out[DESERIALIZER_KEY] = VALUE_DESERIALIZERS[settings.value_deserializer]
    if not props.get("bootstrap.with.offset"):
        out["bootstrap.with.offset"] = "earliest"  # Gobblin's streaming extractor seeks to the beginning
    if not props.get("source.kafka.group.id") and props.get("job.name"):
        out["source.kafka.group.id"] = props["job.name"]
    for name, value in settings.streaming_consumer_config.items():
        out.setdefault("source.kafka.consumerConfig." + name, value)
    return out


class KafkaSimpleStreamingSource(KafkaSimpleSource):
    """Gobblin's streaming Kafka source, run as repeated bounded batches of :class:`KafkaSimpleSource`."""

    settings_class = KafkaStreamingSettings

    def get_workunits(self, state: SourceState) -> list[WorkUnit]:
        settings = KafkaStreamingSettings.load(state)
        translated = batch_props(settings, state.all_properties())
        if settings.execution_mode == "STREAMING":
            log.warning("streaming_runs_as_batch", topic=settings.topic,
                        note="gpy runs bounded batches: this run reads each partition up to its latest offset now, "
                             "then commits; schedule the job again to keep reading")
        for key, value in translated.items():
            state.set_prop(key, value)
        units = super().get_workunits(state)
        for unit in units:  # the extractors read the translated keys from their work units
            for member in (unit, *(unit if isinstance(unit, MultiWorkUnit) else ())):
                for key, value in translated.items():
                    member.set_prop(key, value)
        return units
