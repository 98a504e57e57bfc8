"""Consumer group offsets, committed and read without joining the group.

After each Iceberg commit icefloe stores the next offsets in Connect's
consumer group (``connect-<name>``), so that lag tooling and
``kafka-consumer-groups`` see progress and a move back to Kafka Connect
resumes where icefloe stopped. The table stays the source of truth.

Both calls are AdminClient requests (OffsetCommit through
``alter_consumer_group_offsets``, OffsetFetch through
``list_consumer_group_offsets``), the same ones ``kafka-consumer-groups
--reset-offsets`` / ``--describe`` send: no JoinGroup, so no rebalance wait
(Tansu 0.6 makes a new group wait ~23 s). Like that tool, a commit is
refused by the broker while the group has members (:func:`group_occupied`):
a Kafka Connect worker still running the connector, or one that was killed
and whose member the broker has not expired yet (real Kafka expires it after
its ``session.timeout.ms``, 45 s by default; Tansu 0.6 keeps it until a
rebalance).

:func:`commit_as_member` commits the way that works while a killed worker's
member lingers: it joins the group, which makes the broker rebalance and drop
the member that does not rejoin, commits with the generation it got, and
leaves, so the group is empty again. It takes the group's partitions for a
moment, so it is only for a group whose worker is known to be gone (a
takeover of a stopped Java sink).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping

from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, KafkaError, KafkaException
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient

from connector.api.record import TopicPartition
from connector.kafka.client_config import admin_config_from, reader_config


def commit_group_offsets(
    client_conf: Mapping[str, object],
    group_id: str,
    offsets: Mapping[TopicPartition, int],
    *,
    timeout: float = 30.0,
) -> None:
    """Commit ``offsets`` (next offset to read, per partition) to ``group_id``.

    Synchronous: returns once the group coordinator has stored them; raises
    :class:`KafkaException` naming the partitions it refused.
    """
    if not offsets:
        return
    request = _offset_request(offsets)
    admin = AdminClient(admin_config_from(client_conf))
    futures = admin.alter_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(group_id, request)], request_timeout=timeout
    )
    result = futures[group_id].result(timeout=timeout)
    _raise_partition_errors(group_id, result.topic_partitions or [], "commit offsets of")


#: What an OffsetCommit without a member gets while the group has members.
_OCCUPIED = {KafkaError.UNKNOWN_MEMBER_ID, KafkaError.ILLEGAL_GENERATION, KafkaError.REBALANCE_IN_PROGRESS}


def group_occupied(exc: BaseException) -> bool:
    """Whether ``exc`` is the broker refusing a commit because the group has members."""
    return isinstance(exc, KafkaException) and exc.args[0].code() in _OCCUPIED


def commit_as_member(
    client_conf: Mapping[str, object],
    group_id: str,
    offsets: Mapping[TopicPartition, int],
    *,
    timeout: float = 60.0,
) -> float:
    """Commit ``offsets`` to ``group_id`` as a member of it: join, commit, leave; the seconds it took.

    Joining waits for the rebalance, which ends when the members that do not
    rejoin are dropped (a killed worker's): raises :class:`KafkaException` when
    it has not ended within ``timeout``. The partitions this member is given
    are paused at once: it reads nothing.
    """
    began = time.monotonic()
    conf = reader_config(client_conf, {"group.id": group_id, "enable.auto.commit": False,
                                       "enable.auto.offset.store": False, "enable.partition.eof": False})
    consumer = Consumer(conf)
    joined: list[bool] = []

    def on_assign(member: Consumer, partitions: list) -> None:
        member.pause(partitions)
        joined.append(True)

    try:
        consumer.subscribe(sorted({topic for topic, _ in offsets}), on_assign=on_assign)
        while not joined:
            if time.monotonic() - began > timeout:
                raise KafkaException(KafkaError(KafkaError._TIMED_OUT, f"Could not join group {group_id} within "
                                                f"{timeout:.0f} s to commit its offsets: its members did not "
                                                "leave"))
            consumer.poll(0.2)
        _raise_partition_errors(group_id, consumer.commit(offsets=_offset_request(offsets), asynchronous=False) or [],
                                "commit offsets of")
    finally:
        consumer.close()  # LeaveGroup: the group is empty again
    return time.monotonic() - began


def read_group_offsets(
    client_conf: Mapping[str, object],
    group_id: str,
    partitions: Iterable[TopicPartition],
    *,
    timeout: float = 30.0,
) -> dict[TopicPartition, int]:
    """The committed next offsets of ``group_id``; partitions without one are absent."""
    request = [KafkaTopicPartition(topic, partition) for topic, partition in sorted(set(partitions))]
    if not request:
        return {}
    admin = AdminClient(admin_config_from(client_conf))
    futures = admin.list_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(group_id, request)], request_timeout=timeout
    )
    result = futures[group_id].result(timeout=timeout)
    committed = result.topic_partitions or []
    _raise_partition_errors(group_id, committed, "read offsets of")
    return {(tp.topic, tp.partition): tp.offset for tp in committed if tp.offset >= 0}


def _offset_request(offsets: Mapping[TopicPartition, int]) -> list[KafkaTopicPartition]:
    """``offsets`` as the partitions of a commit request, in partition order."""
    return [KafkaTopicPartition(topic, partition, offset) for (topic, partition), offset in sorted(offsets.items())]


def _raise_partition_errors(group_id: str, result: Iterable[KafkaTopicPartition], action: str) -> None:
    failed = [(tp, tp.error) for tp in result if tp.error is not None]
    if failed:
        details = ", ".join(f"{tp.topic}[{tp.partition}]: {error.str()}" for tp, error in failed)
        raise KafkaException(KafkaError(failed[0][1].code(), f"Could not {action} group {group_id}: {details}"))
