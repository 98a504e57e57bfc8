"""Committing and reading consumer group offsets without joining the group."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, KafkaException, TopicPartition

from connector.kafka.group_offsets import commit_group_offsets, read_group_offsets
from tests.support.tansu import create_topic


@pytest.fixture
def topic(kafka_broker, topic_name):
    name = topic_name("g")
    create_topic(kafka_broker.bootstrap, name, partitions=3)
    return name


def test_commit_persists_and_is_read_back_by_fresh_clients(kafka_broker, topic):
    conf = {"bootstrap.servers": kafka_broker.bootstrap, "group.id": "ignored", "queued.min.messages": "10"}
    group = f"connect-{topic}"
    started = time.monotonic()
    commit_group_offsets(conf, group, {(topic, 0): 10, (topic, 2): 7})
    elapsed = time.monotonic() - started
    assert elapsed < 5, f"commit took {elapsed:.1f}s: it must not wait for a group join"

    fresh = {"bootstrap.servers": kafka_broker.bootstrap}
    partitions = [(topic, p) for p in range(3)]
    assert read_group_offsets(fresh, group, partitions) == {(topic, 0): 10, (topic, 2): 7}

    # What kafka-consumer-groups and a Kafka Connect worker would see.
    consumer = Consumer({"bootstrap.servers": kafka_broker.bootstrap, "group.id": group})
    try:
        committed = consumer.committed([TopicPartition(topic, p) for p in range(3)], timeout=10)
    finally:
        consumer.close()
    assert [tp.offset for tp in committed][::2] == [10, 7]


def test_later_commit_overwrites_and_other_groups_are_separate(kafka_broker, topic):
    conf = {"bootstrap.servers": kafka_broker.bootstrap}
    commit_group_offsets(conf, "g-one", {(topic, 1): 3})
    commit_group_offsets(conf, "g-one", {(topic, 1): 9})
    assert read_group_offsets(conf, "g-one", [(topic, 1)]) == {(topic, 1): 9}
    assert read_group_offsets(conf, "g-two", [(topic, 1)]) == {}


def test_empty_requests_do_nothing(kafka_broker):
    conf = {"bootstrap.servers": kafka_broker.bootstrap}
    commit_group_offsets(conf, "g-empty", {})
    assert read_group_offsets(conf, "g-empty", []) == {}


def test_commit_for_unknown_topic_fails_naming_it(kafka_broker):
    conf = {"bootstrap.servers": kafka_broker.bootstrap}
    with pytest.raises(KafkaException, match="no-such-topic-g"):
        commit_group_offsets(conf, "g-bad", {("no-such-topic-g", 0): 1})
