"""A topic deleted and created again between two runs: the offsets stored for it belong to the old topic.

A recreated topic numbers its messages from 0 again, so an offset stored for the old one may well lie inside the
new one's range, and a run reading from there would skip the new topic's first messages without a word (or take
them all for "nothing new"). Before a topic is planned, the run looks for the evidence:

1. the topic's id, where the broker gives one (Apache Kafka does, since 2.8): another id than the stored one is
   another topic; the same id settles it, and nothing else is asked;
2. otherwise what can be seen: partitions of the stored state the topic no longer has (a topic never loses
   partitions), or the last message the previous runs read — its offset and timestamp are kept in the state
   (``<topic>.<partition>.last.record.offset`` / ``.last.record.timestamp``) — at its offset with another
   timestamp, or, where the partition now ends before the stored offset, a first message stamped after that last
   message read: the partition then holds only messages written since, at offsets the old topic had used (one
   small fetch per partition reads the message back).

Without a topic id, a recreated topic goes unseen when the previous runs read no message of it (offsets stored by
``bootstrap.with.offset`` alone), when the new topic's message at the offset looked at is a transaction marker or
was compacted away, or when it bears the same or an older timestamp (a copy made with its producers' timestamps):
a stored offset beyond the partition's end then follows ``reset.on.offset.out.of.range``, as before, and the last
message read is forgotten with the offsets it belonged to (:mod:`.planning`), so that a later run does not take
the topic for recreated once it grows past that offset. A recreated topic starts over per
``bootstrap.with.offset``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from gobblin_py.connectors.kafka.planning import Previous

ZERO_ID = "AAAAAAAAAAAAAAAAAAAAAA"  # the all-zero id, base64: a broker that keeps no topic ids answers it

# ``{partition: offset}`` → ``{partition: (offset, timestamp)}`` of the first message at or after each offset
Probe = Callable[[dict[int, int]], dict[int, tuple[int, int]]]


def known_id(topic_id: str | None) -> str | None:
    """A topic id worth comparing: None for none, and for the all-zero one."""
    return topic_id if topic_id and topic_id != ZERO_ID else None


def _numbers(pids: list[int]) -> str:
    return f"partition{'s' if len(pids) > 1 else ''} {', '.join(map(str, pids))}"


def recreation_evidence(topic: str, partitions: list[int], offsets: Mapping[int, tuple[int, int]],
                        previous: Mapping[tuple[str, int], Previous], topic_id: str | None,
                        probe: Probe) -> str | None:
    """Why ``topic`` is not the topic the stored offsets were read from, in a few words; None when nothing says so.

    ``partitions``: the topic's partitions now; ``offsets``: their ``(earliest, latest)``; ``topic_id``: its id
    now (None when the broker gives none)."""
    stored = {pid: prev for (name, pid), prev in previous.items() if name == topic and prev.complete}
    if not stored:
        return None
    stored_id = known_id(next((p.topic_id for p in stored.values() if p.topic_id), None))
    topic_id = known_id(topic_id)
    if topic_id is not None and stored_id is not None:
        return None if topic_id == stored_id else f"its topic id is {topic_id}, the stored state's {stored_id}"
    gone = sorted(set(stored) - set(partitions))
    if gone:
        return (f"{_numbers(gone)} of the stored state {'are' if len(gone) > 1 else 'is'} gone: the topic has "
                f"{len(partitions)} partition(s) now")
    wanted, short = {}, {}  # the offset to read back: the last message read, or the first of a shorter partition
    for pid, prev in stored.items():
        if prev.last_offset is None or prev.last_timestamp is None or pid not in offsets:
            continue
        earliest, latest = offsets[pid]
        if earliest <= prev.last_offset < latest:
            wanted[pid] = prev.last_offset
        elif prev.offset is not None and prev.offset > latest > earliest:
            wanted[pid] = short[pid] = earliest
    if not wanted:
        return None
    for pid, (offset, timestamp) in sorted(probe(wanted).items()):
        before = stored[pid].last_timestamp
        if pid in short and before is not None and timestamp > before:
            return (f"partition {pid} ends at offset {offsets[pid][1]}, before the stored offset "
                    f"{stored[pid].offset}, and its first message (offset {offset}) has timestamp {timestamp}, "
                    f"after the last message read ({before}): it holds only messages written since")
        if pid not in short and offset == wanted[pid] and timestamp != before:
            return (f"partition {pid}'s message at offset {offset} has timestamp {timestamp}, not {before} as when "
                    "it was read")
    return None
