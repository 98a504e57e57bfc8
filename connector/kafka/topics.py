"""Which topic-partitions a connector reads: ``topics`` or ``topics.regex``.

Kafka Connect subscribes to a list of topics or to a Java regex; icefloe
assigns partitions itself, so it resolves either setting to a sorted list of
``(topic, partition)`` from the cluster's metadata.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Optional

from confluent_kafka import Consumer

from connector.api.record import TopicPartition
from connector.kafka.client_config import KafkaConfigError, reader_config


class UnknownTopicError(KafkaConfigError):
    """A topic named in ``topics`` does not exist on the cluster."""


def resolve_partitions(
    client_conf: Mapping[str, object],
    topics: Optional[Sequence[str]],
    topics_regex: Optional[str],
    timeout: float = 30.0,
) -> list[TopicPartition]:
    """Sorted ``(topic, partition)`` pairs for ``topics`` or ``topics_regex``.

    Exactly one of the two must be given (as in Connect). The regex must
    match the whole topic name (Java ``Matcher.matches()``), and topics whose
    names start with ``__`` (``__consumer_offsets``, ...) are never matched.
    Every listed topic must exist: a missing one raises
    :class:`UnknownTopicError` naming it.
    """
    wanted = [topic.strip() for topic in topics or [] if topic.strip()]
    if wanted and topics_regex:
        raise KafkaConfigError("topics and topics.regex are mutually exclusive options, but both are set.")
    if not wanted and not topics_regex:
        raise KafkaConfigError("Must configure one of topics or topics.regex")
    available = _topic_partitions(client_conf, timeout)
    names = _listed(wanted, available) if wanted else _matching(topics_regex or "", available)
    return sorted((topic, partition) for topic in names for partition in available[topic])


def _topic_partitions(client_conf: Mapping[str, object], timeout: float) -> dict[str, list[int]]:
    """Every topic on the cluster with its partition ids (one metadata request)."""
    consumer = Consumer(reader_config(client_conf, {"enable.auto.commit": False}))
    try:
        metadata = consumer.list_topics(timeout=timeout)
    finally:
        consumer.close()
    return {name: sorted(topic.partitions) for name, topic in metadata.topics.items()}


def _listed(wanted: Sequence[str], available: Mapping[str, list[int]]) -> list[str]:
    missing = [topic for topic in wanted if topic not in available]
    if missing:
        raise UnknownTopicError(f"Topic(s) not found on the Kafka cluster: {', '.join(sorted(set(missing)))}")
    return sorted(set(wanted))


def _matching(regex: str, available: Mapping[str, list[int]]) -> list[str]:
    try:
        pattern = re.compile(regex)
    except re.error as exc:
        raise KafkaConfigError(f"Invalid value {regex} for configuration topics.regex: {exc}") from exc
    return sorted(name for name in available if not name.startswith("__") and pattern.fullmatch(name))
