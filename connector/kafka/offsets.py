"""Driver-side offset planning: where partitions start and end, and who reads what.

:func:`earliest_offsets` and :func:`end_offsets` ask the brokers where each
partition's readable log starts and ends; :func:`plan_ranges` cuts the
offsets between a start (from the Iceberg table) and an end into task slots.

End offsets come from a Fetch response, not from ListOffsets alone: Tansu
0.6 answers ListOffsets(latest) with the last batch's base offset + 1 rather
than the high watermark. A consumer is assigned every partition at its
ListOffsets answer (librdkafka's logical ``OFFSET_END``) and reads until each
partition reports end-of-partition; the EOF event carries the fetch
response's end offset, which is the high watermark (``read_uncommitted``) or
the last stable offset (``read_committed``) on real Kafka and on Tansu
alike. On real Kafka the fetch starts at the end already and returns at
once; on Tansu it reads the tail of the last batch first. No consumer group
is joined (Tansu makes a new group wait ~23 s).
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from confluent_kafka import OFFSET_END, Consumer, KafkaError, KafkaException
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient, ClusterMetadata, OffsetSpec

from connector.api.record import TopicPartition
from connector.kafka.client_config import admin_config_from, reader_config

#: A source partition: (topic, partition). The one key type for offsets everywhere in icefloe.

# The probe only needs partition-EOF events; the record tail it reads on Tansu
# is discarded, so keep fetches small.
_END_PROBE_SETTINGS = {
    "enable.partition.eof": True,
    "enable.auto.commit": False,
    "enable.auto.offset.store": False,
    "auto.offset.reset": "latest",
    "fetch.wait.max.ms": 10,
    "queued.min.messages": 1,
    "max.partition.fetch.bytes": 1024 * 1024,
}


@dataclass(frozen=True, order=True)
class OffsetRange:
    """Offsets ``start`` (inclusive) to ``end`` (exclusive) of one partition."""

    topic: str
    partition: int
    start: int
    end: int

    @property
    def count(self) -> int:
        """Offsets covered (an upper bound on records: compaction and
        transaction markers leave gaps)."""
        return max(0, self.end - self.start)

    @property
    def key(self) -> TopicPartition:
        return (self.topic, self.partition)


# --------------------------------------------------------------------------
# Broker queries
# --------------------------------------------------------------------------
def earliest_offsets(
    client_conf: Mapping[str, object], partitions: Iterable[TopicPartition], *, timeout: float = 30.0
) -> dict[TopicPartition, int]:
    """Log start offset of each partition (one batched ListOffsets(earliest))."""
    keys = list(partitions)
    if not keys:
        return {}
    admin = AdminClient(admin_config_from(client_conf))
    request = {KafkaTopicPartition(topic, partition): OffsetSpec.earliest() for topic, partition in keys}
    futures = admin.list_offsets(request, request_timeout=timeout)
    return {(tp.topic, tp.partition): future.result(timeout=timeout).offset for tp, future in futures.items()}


def end_offsets(
    client_conf: Mapping[str, object], partitions: Iterable[TopicPartition], *, timeout: float = 30.0
) -> dict[TopicPartition, int]:
    """The offset a reader at the end of each partition would fetch next.

    That is the high watermark, or the last stable offset when the config
    says ``isolation.level=read_committed``. Correct on Tansu, whose
    ListOffsets(latest) answer is too low (see the module docstring).
    """
    keys = list(partitions)
    if not keys:
        return {}
    return fetch_end_offsets(client_conf, [KafkaTopicPartition(t, p, OFFSET_END) for t, p in keys], timeout=timeout)


def fetch_end_offsets(
    client_conf: Mapping[str, object], assignment: Sequence[KafkaTopicPartition], *, timeout: float = 30.0
) -> dict[TopicPartition, int]:
    """End offsets from partition-EOF events, fetching from the given positions.

    :func:`end_offsets` starts at ``OFFSET_END`` (the broker's ListOffsets
    answer); tests start elsewhere to check that the answer never depends
    on that starting point.
    """
    consumer = Consumer(reader_config(client_conf, _END_PROBE_SETTINGS))
    try:
        # With the leaders known before assign(), librdkafka sends ListOffsets
        # at once instead of retrying after a fixed 500 ms.
        topics = {tp.topic for tp in assignment}
        metadata = consumer.list_topics(next(iter(topics)) if len(topics) == 1 else None, timeout=timeout)
        _check_exist(metadata, assignment)
        consumer.assign(list(assignment))
        return _await_eof(consumer, {(tp.topic, tp.partition) for tp in assignment}, timeout)
    finally:
        consumer.close()


def _check_exist(metadata: ClusterMetadata, assignment: Sequence[KafkaTopicPartition]) -> None:
    """Fail at once, naming them, for partitions the cluster does not have."""
    missing = sorted(
        f"{tp.topic}[{tp.partition}]"
        for tp in assignment
        if tp.topic not in metadata.topics or tp.partition not in metadata.topics[tp.topic].partitions
    )
    if missing:
        raise KafkaException(
            KafkaError(KafkaError.UNKNOWN_TOPIC_OR_PART, f"Unknown topic-partitions: {', '.join(missing)}")
        )


def _await_eof(consumer: Consumer, pending: set[TopicPartition], timeout: float) -> dict[TopicPartition, int]:
    """Consume (discarding records) until every partition in ``pending`` hit EOF."""
    ends: dict[TopicPartition, int] = {}
    deadline = time.monotonic() + timeout
    while pending:
        if time.monotonic() > deadline:
            raise KafkaException(
                KafkaError(
                    KafkaError._TIMED_OUT,
                    f"No end of partition seen within {timeout:.0f}s for {sorted(pending)}",
                )
            )
        for message in consumer.consume(100_000, timeout=0.01):
            error = message.error()
            if error is None:
                continue
            topic, partition, offset = message.topic(), message.partition(), message.offset()
            if error.code() != KafkaError._PARTITION_EOF:
                raise KafkaException(KafkaError(error.code(), f"{topic}[{partition}]: {error.str()}"))
            if topic is not None and partition is not None and offset is not None:  # always, for an EOF event
                ends[(topic, partition)] = offset
                pending.discard((topic, partition))
    return ends


# --------------------------------------------------------------------------
# Planning
# --------------------------------------------------------------------------
def bounded_end(
    start: Mapping[TopicPartition, int], end: Mapping[TopicPartition, int], max_records: int
) -> dict[TopicPartition, int]:
    """End offsets for one cycle that covers at most ``max_records`` offsets over all partitions.

    ``max_records`` 0 means no bound. The budget is shared out fairly: a
    partition with less left than an equal share takes all it has, the others
    split the rest evenly (the first ones in sorted order get the remainder),
    so every partition with records moves on in every cycle as long as the
    budget allows one offset each. Partitions without a start keep their end.
    """
    bounded = dict(end)
    if max_records <= 0:
        return bounded
    left = {tp: end[tp] - start[tp] for tp in sorted(end) if tp in start and end[tp] > start[tp]}
    for tp in left:
        bounded[tp] = start[tp]
    budget = max_records
    pending = sorted(left, key=lambda tp: (left[tp], tp))
    while pending and budget > 0:
        share, extra = divmod(budget, len(pending))
        smallest = pending[0]
        if left[smallest] <= share:
            bounded[smallest] += left[smallest]
            budget -= left[smallest]
            pending.pop(0)
            continue
        for index, tp in enumerate(sorted(pending)):
            bounded[tp] += share + (1 if index < extra else 0)
        break
    return bounded


#: A backfill splits one partition's range only into tasks at least this big (the Spark format's default too).
MIN_SPLIT_RECORDS = 50_000


def plan_ranges(
    start: Mapping[TopicPartition, int],
    end: Mapping[TopicPartition, int],
    *,
    max_tasks: int,
    split_large: bool,
    min_split_records: int = 0,
) -> list[list[OffsetRange]]:
    """Group the ranges ``start[tp]..end[tp]`` into at most ``max_tasks`` task slots.

    Every partition in ``end`` must have a start. Empty ranges are dropped.
    Without ``split_large`` each partition's range stays whole and ranges
    are balanced over the slots by record count (largest first into the
    least-loaded slot). With ``split_large`` (backfills) the offsets are
    dealt out in order so that every slot gets the same count (within one),
    cutting ranges where a slot is full: parallelism is then not capped by
    the number of partitions. ``min_split_records`` keeps split slots at least
    that big (a task costs a consumer connection and a Python worker round
    trip; splitting a few records buys nothing). Slots and the ranges in them
    are sorted.
    """
    if max_tasks < 1:
        raise ValueError(f"max_tasks must be at least 1, got {max_tasks}")
    ranges = _nonempty_ranges(start, end)
    if not ranges:
        return []
    total = sum(r.count for r in ranges)
    split_slots = min(max_tasks, total // min_split_records) if min_split_records > 0 else max_tasks
    if split_large and split_slots >= 1:
        groups = _split_evenly(ranges, split_slots)
    else:
        groups = _balance_whole(ranges, max_tasks)
    return sorted(sorted(group) for group in groups if group)


def _nonempty_ranges(start: Mapping[TopicPartition, int], end: Mapping[TopicPartition, int]) -> list[OffsetRange]:
    ranges = []
    for key in sorted(end):
        if key not in start:
            raise ValueError(f"No start offset for {key[0]}[{key[1]}]")
        if start[key] > end[key]:
            raise ValueError(
                f"{key[0]}[{key[1]}]: start offset {start[key]} is beyond the end offset {end[key]} "
                "(was the topic deleted and recreated?)"
            )
        if start[key] < end[key]:
            ranges.append(OffsetRange(key[0], key[1], start[key], end[key]))
    return ranges


def _balance_whole(ranges: list[OffsetRange], max_tasks: int) -> list[list[OffsetRange]]:
    """Longest-processing-time-first: biggest range into the lightest slot."""
    slots = min(max_tasks, len(ranges))
    groups: list[list[OffsetRange]] = [[] for _ in range(slots)]
    heap = [(0, index) for index in range(slots)]
    for rng in sorted(ranges, key=lambda r: (-r.count, r.topic, r.partition)):
        load, index = heapq.heappop(heap)
        groups[index].append(rng)
        heapq.heappush(heap, (load + rng.count, index))
    return groups


def _split_evenly(ranges: list[OffsetRange], max_tasks: int) -> list[list[OffsetRange]]:
    """Deal offsets out in order; slot ``i`` gets ``total*(i+1)//n - total*i//n``."""
    total = sum(r.count for r in ranges)
    slots = min(max_tasks, total)
    quotas = [total * (i + 1) // slots - total * i // slots for i in range(slots)]
    groups: list[list[OffsetRange]] = []
    pending = list(reversed(ranges))  # a stack, so pop() takes them in order
    for quota in quotas:
        group: list[OffsetRange] = []
        while quota > 0:
            rng = pending.pop()
            take = min(quota, rng.count)
            group.append(OffsetRange(rng.topic, rng.partition, rng.start, rng.start + take))
            if take < rng.count:
                pending.append(OffsetRange(rng.topic, rng.partition, rng.start + take, rng.end))
            quota -= take
        groups.append(group)
    return groups
