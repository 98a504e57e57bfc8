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
refused by the broker while the group has active members (a Kafka Connect
worker still running the connector).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from confluent_kafka import ConsumerGroupTopicPartitions, KafkaError, KafkaException
from confluent_kafka import TopicPartition as KafkaTopicPartition
from confluent_kafka.admin import AdminClient

from connector.kafka.client_config import admin_config_from
from connector.kafka.offsets import TopicPartition


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
    request = [KafkaTopicPartition(topic, partition, offset) for (topic, partition), offset in sorted(offsets.items())]
    admin = AdminClient(admin_config_from(client_conf))
    futures = admin.alter_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(group_id, request)], request_timeout=timeout
    )
    result = futures[group_id].result(timeout=timeout)
    _raise_partition_errors(group_id, result.topic_partitions or [], "commit offsets of")


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


def _raise_partition_errors(group_id: str, result: Iterable[KafkaTopicPartition], action: str) -> None:
    failed = [(tp, tp.error) for tp in result if tp.error is not None]
    if failed:
        details = ", ".join(f"{tp.topic}[{tp.partition}]: {error.str()}" for tp, error in failed)
        raise KafkaException(KafkaError(failed[0][1].code(), f"Could not {action} group {group_id}: {details}"))
