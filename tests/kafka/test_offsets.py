"""Log start and end offsets against Tansu, whose ListOffsets(latest) is wrong."""

from __future__ import annotations

import pytest
from confluent_kafka import OFFSET_END, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from connector.kafka.offsets import earliest_offsets, end_offsets, fetch_end_offsets
from tests.support.tansu import create_topic, produce


@pytest.fixture
def conf(kafka_broker):
    return {"bootstrap.servers": kafka_broker.bootstrap}


def list_offsets_latest(bootstrap, partitions):
    """What the broker answers to ListOffsets(latest)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.list_offsets({TopicPartition(t, p): OffsetSpec.latest() for t, p in partitions})
    return {(tp.topic, tp.partition): f.result().offset for tp, f in futures.items()}


def produce_batches(bootstrap, topic, partition, sizes):
    """Several produce calls, each flushed: several record batches in the log."""
    for size in sizes:
        produce(bootstrap, topic, [b"x"] * size, partition=partition)


def test_end_offsets_equal_records_produced_over_several_batches(conf, kafka_broker, topic_name):
    topic = topic_name()
    create_topic(kafka_broker.bootstrap, topic, partitions=3)
    produce_batches(kafka_broker.bootstrap, topic, 0, [10, 10, 10])
    produce_batches(kafka_broker.bootstrap, topic, 1, [7])
    partitions = [(topic, p) for p in range(3)]
    assert end_offsets(conf, partitions) == {(topic, 0): 30, (topic, 1): 7, (topic, 2): 0}


def test_tansu_list_offsets_is_the_last_batch_base_plus_one(conf, kafka_broker, topic_name):
    """Documents the broker quirk end_offsets works around. If Tansu fixes it,
    both answers agree and this test still holds for end_offsets."""
    topic = topic_name()
    create_topic(kafka_broker.bootstrap, topic)
    produce_batches(kafka_broker.bootstrap, topic, 0, [10, 10, 10])
    answered = list_offsets_latest(kafka_broker.bootstrap, [(topic, 0)])[(topic, 0)]
    assert answered in (21, 30)  # 21 = base offset of the last batch (20) + 1: Tansu 0.6
    assert end_offsets(conf, [(topic, 0)]) == {(topic, 0): 30}


@pytest.mark.parametrize("start", ["zero", "tansu-list-offsets", "true-high-watermark", "logical-end"])
def test_fetch_end_offsets_does_not_depend_on_the_list_offsets_answer(conf, kafka_broker, topic_name, start):
    """The fetch starts wherever ListOffsets pointed: at the true high watermark
    (real Kafka), inside the last batch (Tansu), or anywhere before. The answer
    must be the high watermark in every case."""
    topic = topic_name()
    create_topic(kafka_broker.bootstrap, topic)
    produce_batches(kafka_broker.bootstrap, topic, 0, [5, 25, 3])
    position = {
        "zero": 0,
        "tansu-list-offsets": 31,
        "true-high-watermark": 33,
        "logical-end": OFFSET_END,
    }[start]
    assert fetch_end_offsets(conf, [TopicPartition(topic, 0, position)]) == {(topic, 0): 33}


def test_end_offsets_fast_for_empty_and_many_partitions(conf, kafka_broker, topic_name):
    empty, busy = topic_name("empty"), topic_name("busy")
    create_topic(kafka_broker.bootstrap, empty, partitions=40)
    create_topic(kafka_broker.bootstrap, busy, partitions=40)
    producer = Producer({"bootstrap.servers": kafka_broker.bootstrap, "linger.ms": 5})
    for partition in range(40):
        for _ in range(partition):
            producer.produce(busy, b"v", partition=partition)
    producer.flush(30)
    partitions = [(empty, p) for p in range(40)] + [(busy, p) for p in range(40)]
    ends = end_offsets(conf, partitions)
    assert ends == {**{(empty, p): 0 for p in range(40)}, **{(busy, p): p for p in range(40)}}


def test_end_offsets_count_transaction_markers(conf, kafka_broker, topic_name):
    """Each committed transaction adds a control marker: the end is past it."""
    topic = topic_name()
    create_topic(kafka_broker.bootstrap, topic)
    producer = Producer({"bootstrap.servers": kafka_broker.bootstrap, "transactional.id": topic})
    producer.init_transactions(30)
    for _ in range(2):
        producer.begin_transaction()
        for i in range(4):
            producer.produce(topic, b"%d" % i, partition=0)
        producer.commit_transaction(30)
    expected = {(topic, 0): 10}  # 2 x (4 records + 1 commit marker)
    assert end_offsets(conf, [(topic, 0)]) == expected
    assert end_offsets({**conf, "isolation.level": "read_committed"}, [(topic, 0)]) == expected


def test_empty_partition_list(conf):
    assert end_offsets(conf, []) == {}
    assert earliest_offsets(conf, []) == {}


def test_earliest_offsets(conf, kafka_broker, topic_name):
    topic = topic_name()
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    produce(kafka_broker.bootstrap, topic, [b"a", b"b"], partition=1)
    assert earliest_offsets(conf, [(topic, 0), (topic, 1)]) == {(topic, 0): 0, (topic, 1): 0}


def test_end_offsets_of_unknown_partitions_fail_at_once_naming_them(conf, kafka_broker, topic_name):
    topic = topic_name()
    create_topic(kafka_broker.bootstrap, topic)
    with pytest.raises(KafkaException, match=r"no-such-topic-e\[0\].*\[3\]"):
        end_offsets(conf, [("no-such-topic-e", 0), (topic, 0), (topic, 3)])
