"""``KafkaSimpleSource``: Kafka topics pulled partition by partition, offsets as watermarks (Gobblin's KafkaSource).

Planning, on the driver: list the topics that pass ``topic.whitelist`` / ``topic.blacklist``, ask the brokers
for every partition's earliest and latest offsets (topics in parallel), read the stored offsets, decide each
partition's range (:mod:`.planning`) and pack the work units (:mod:`.packer`). A topic with nothing new and
no offset to move plans no work unit: its dataset keeps its latest state, and a rerun prints "nothing new to
pull". Extraction, on the executors: :class:`~gobblin_py.connectors.kafka.extractor.KafkaExtractor`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor

from gobblin_py.connectors.kafka.client import BrokerClient
from gobblin_py.connectors.kafka.packer import pack
from gobblin_py.connectors.kafka.planning import PartitionPlan, Previous, plan_topic, previous_partitions
from gobblin_py.connectors.kafka.recreated import known_id, recreation_evidence
from gobblin_py.connectors.kafka.settings import KafkaSourceSettings
from gobblin_py.sdk.contracts import EmptyPlan, Extractor, Source
from gobblin_py.sdk.errors import GobblinPyError, UsageError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.states import WorkUnit, WorkUnitState
from gobblin_py.store.hadoop_io import INT_MAX, LONG_MAX
from gobblin_py.store.startpoints import Startpoint, StartpointKind, whole_number

log = get_logger(__name__)


class KafkaSimpleSource(Source):
    """Pulls Kafka topics into files: one dataset per topic, one work unit per partition, offsets as watermarks.

    Startpoints (per topic, or per partition: its number): ``OLDEST`` the earliest offset the topic still has,
    ``UPCOMING`` the latest (skip what is there now), ``TIMESTAMP`` the broker's offset for the time when that is
    before the stored offset (records read again that are stamped earlier are dropped; a partition with nothing
    to replay goes on from its stored offset), ``SPECIFIC`` an offset.
    """

    settings_class = KafkaSourceSettings
    startpoint_kinds = frozenset({"OLDEST", "UPCOMING", "TIMESTAMP", "SPECIFIC"})

    @classmethod
    def check_startpoint(cls, props: Mapping[str, str], urn: str, partition: str, point: Startpoint) -> None:
        """A partition must be a Kafka partition number and a SPECIFIC value a Kafka offset."""
        if partition:
            number = whole_number(partition, INT_MAX)
            if number is None:
                raise UsageError(f"partition {partition!r} is not a Kafka partition number (0, 1, 2 …)")
            if str(number) != partition:  # ' 0' or '00' would be stored as given and never match partition 0
                raise UsageError(f"partition {partition!r} is not written as Kafka numbers partitions: give "
                                 f"--partition {number}")
        if point.kind is StartpointKind.SPECIFIC and whole_number(str(point.value), LONG_MAX) is None:
            raise UsageError(f"value {point.value!r} is not a Kafka offset (a whole number from 0 to {LONG_MAX})")

    @classmethod
    def newest_event_ms(cls, props: Mapping[str, str], urn: str, partition: str) -> int | None:
        """The newest timestamp among the last messages of topic ``urn``'s partitions (of partition ``partition``
        only, when given); None when the brokers cannot say (unreachable) or hold no message. A partition the topic
        does not have is refused."""
        settings = KafkaSourceSettings.load(props)
        try:
            client = BrokerClient(settings)
            listed = client.topics()
            if urn not in listed:
                return None
            pids = [p.partition for p in listed[urn]]
            if partition and int(partition) not in pids:
                raise UsageError(f"topic {urn} has no partition {partition}: its {len(pids)} partition(s) are "
                                 f"{', '.join(map(str, pids[:10]))}{' …' if len(pids) > 10 else ''}")
            offsets = client.offsets(urn, [int(partition)] if partition else pids)
            ends = {pid: latest - 1 for pid, (earliest, latest) in offsets.items() if latest > earliest}
            stamps = [stamp for _, stamp in client.first_messages(urn, ends).values() if stamp >= 0]
        except UsageError:
            raise
        except GobblinPyError:  # the brokers cannot be asked: nothing is known
            return None
        return max(stamps, default=None)

    def get_workunits(self, state: SourceState) -> list[WorkUnit]:
        settings = KafkaSourceSettings.load(state)
        started = time.time()
        client = BrokerClient(settings)
        listed = client.topics()  # a dead broker fails here, before any work, naming kafka.brokers
        topics = sorted(t for t in listed if settings.topic_passes(t))
        previous = previous_partitions(state)
        ids = {topic: known_id(found) for topic, found in client.topic_ids(topics).items()}
        now_ms = int(time.time() * 1000)

        def plan(topic: str) -> list[PartitionPlan]:
            pids = [p.partition for p in listed[topic]]
            offsets = client.offsets(topic, pids)
            recreated = recreation_evidence(topic, pids, offsets, previous, ids.get(topic),
                                            lambda starts: client.first_messages(topic, starts))
            points = state.startpoints.get(topic)
            times: dict[int, int] = {}
            for pid in pids:
                point = points.for_partition(str(pid)) if points is not None else None
                if point is not None and point.kind is StartpointKind.TIMESTAMP:
                    times.update(client.offsets_for_time(topic, [pid], point.timestamp_ms))
            return plan_topic(settings, topic, listed[topic], offsets, previous, int(time.time() * 1000), points, times,
                              recreated, ids.get(topic))

        threads = max(1, min(settings.threads, len(topics)))
        with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="gpy-kafka-plan") as pool:
            planned = dict(zip(topics, pool.map(plan, topics), strict=True))
        plans = [p for topic in topics for p in planned[topic]]
        namespace, table_type = "KAFKA", "APPEND_ONLY"
        if settings.allow_namespace:
            namespace = state.get_prop("extract.namespace") or namespace
            table_type = (state.get_prop("extract.table.type") or table_type).upper()
        units = pack(settings, plans, now_ms, namespace, table_type)
        lost = sum(p.lost for p in plans)
        log.info("kafka_planned", topics=len(topics), topics_with_work=sum(1 for t in topics if planned[t]),
                 partitions=len(plans), offsets_to_read=sum(p.records for p in plans), work_units=len(units),
                 offsets_lost=lost, seconds=round(time.time() - started, 3))
        if not topics:
            log.warning("kafka_no_topic", brokers=settings.bootstrap_servers, topics_listed=len(listed),
                        note="no topic passes topic.whitelist / topic.blacklist")
        if not units:
            self._why_empty = _why_empty(settings, topics, listed, previous)
        return units

    def explain_empty_plan(self) -> EmptyPlan | None:
        """Why the last plan was empty: no topic passes the filters, no record in the topics (never pulled), or
        no new offsets."""
        return getattr(self, "_why_empty", None)

    def get_extractor(self, state: WorkUnitState) -> Extractor:
        from gobblin_py.connectors.kafka.extractor import KafkaExtractor

        return KafkaExtractor(state)


def _why_empty(settings: KafkaSourceSettings, topics: list[str], listed: Mapping[str, list],
               previous: Mapping[tuple[str, int], Previous]) -> EmptyPlan:
    """The reason a run planned nothing: no topic passes the filters, or the topics' partitions hold no record to
    read (nothing at all when none of them was pulled before; else nothing new)."""
    if not topics:
        asked = f"topic.whitelist={','.join(settings.whitelist)}" if settings.whitelist else "topic.blacklist"
        return EmptyPlan(f"no topic of the {len(listed)} on the brokers passes {asked}", nothing_found=True)
    partitions = sum(len(listed[t]) for t in topics)
    named = ", ".join(topics[:5]) + (f" and {len(topics) - 5} more" if len(topics) > 5 else "")
    where = f"{partitions} partition(s) of topic{'s' if len(topics) > 1 else ''} {named}"
    if not any(prev.complete for (topic, _), prev in previous.items() if topic in set(topics)):
        return EmptyPlan(f"no record to read in {where}", nothing_found=True)
    return EmptyPlan(f"no new offsets in {where}")


class KafkaDeserializerSource(KafkaSimpleSource):
    """Gobblin's KafkaDeserializerSource: the same source; ``kafka.deserializer.type`` decides the columns."""
