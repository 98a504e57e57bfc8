"""topics / topics.regex -> sorted topic-partitions, against Tansu."""

from __future__ import annotations

import pytest

from connector.kafka.client_config import KafkaConfigError
from connector.kafka.topics import UnknownTopicError, resolve_partitions
from tests.support.tansu import create_topic


@pytest.fixture
def conf(kafka_broker):
    return {"bootstrap.servers": kafka_broker.bootstrap}


def test_listed_topics_sorted_with_all_partitions(conf, kafka_broker, topic_name):
    b, a = topic_name("b"), topic_name("a")
    create_topic(kafka_broker.bootstrap, b, partitions=3)
    create_topic(kafka_broker.bootstrap, a, partitions=2)
    assert resolve_partitions(conf, [b, a, b], None) == sorted([(a, 0), (a, 1), (b, 0), (b, 1), (b, 2)])


def test_missing_listed_topic_is_named(conf, kafka_broker, topic_name):
    present = topic_name("present")
    create_topic(kafka_broker.bootstrap, present)
    with pytest.raises(UnknownTopicError, match="does-not-exist-x"):
        resolve_partitions(conf, [present, "does-not-exist-x"], None)


def test_regex_is_a_full_match_and_skips_internal_topics(conf, kafka_broker, topic_name):
    stem = topic_name("rx").replace("-", "_")
    for name in (f"{stem}_orders", f"{stem}_orders_dlq", f"__{stem}_orders"):
        create_topic(kafka_broker.bootstrap, name)
    assert resolve_partitions(conf, None, f"{stem}_orders") == [(f"{stem}_orders", 0)]
    assert resolve_partitions(conf, [], f"(__)?{stem}_.*") == [(f"{stem}_orders", 0), (f"{stem}_orders_dlq", 0)]
    assert resolve_partitions(conf, None, f"{stem}_ord") == []


@pytest.mark.parametrize(
    "topics, regex, message",
    [
        (["a"], "a.*", "mutually exclusive"),
        (None, None, "Must configure one of"),
        ([" "], "", "Must configure one of"),
        (None, "a(", "topics.regex"),
    ],
)
def test_invalid_topic_settings(conf, topics, regex, message):
    with pytest.raises(KafkaConfigError, match=message):
        resolve_partitions(conf, topics, regex)
