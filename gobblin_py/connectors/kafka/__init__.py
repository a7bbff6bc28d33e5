"""Kafka topics into files, partition by partition, with offsets as watermarks (Gobblin's flagship job).

``source.class=gobblin_py.connectors.kafka.KafkaSimpleSource`` (Gobblin's ``KafkaSimpleSource`` and
``KafkaDeserializerSource`` resolve to it; ``KafkaSimpleStreamingSource`` runs Gobblin's streaming job files as
bounded batches). Each topic is a dataset (``dataset.urn`` = the topic), each
partition a work unit from the offset the previous run stopped at to the partition's latest offset when the
run is planned. The keys are declared in :mod:`.settings`; planning is :mod:`.planning` and :mod:`.packer`,
reading is :mod:`.extractor` with :mod:`.deserializers`. Needs the ``kafka`` extra (confluent-kafka).
"""

from gobblin_py.connectors.kafka.settings import KafkaSourceSettings
from gobblin_py.connectors.kafka.source import KafkaDeserializerSource, KafkaSimpleSource
from gobblin_py.connectors.kafka.streaming import KafkaSimpleStreamingSource

__all__ = ["KafkaDeserializerSource", "KafkaSimpleSource", "KafkaSimpleStreamingSource", "KafkaSourceSettings"]
