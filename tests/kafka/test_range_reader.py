"""read_range against Tansu: every offset exactly once, fields preserved, gaps, errors."""

from __future__ import annotations

import time

import pyarrow as pa
import pytest
from confluent_kafka import KafkaError, Message, Producer
from hypothesis import given, settings
from hypothesis import strategies as st

from connector.kafka.offsets import OffsetRange, end_offsets
from connector.kafka.range_reader import (
    CREATE_TIME,
    LOG_APPEND_TIME,
    NO_TIMESTAMP_TYPE,
    RAW_SCHEMA,
    OffsetOutOfRangeError,
    RangeReader,
    RangeReadError,
    _RangeCursor,
    messages_to_batch,
    read_range,
)
from tests.support.tansu import create_topic, produce


@pytest.fixture
def conf(kafka_broker):
    return {"bootstrap.servers": kafka_broker.bootstrap}


def read_all(conf, rng, **kwargs) -> pa.Table:
    batches = list(read_range(conf, rng, **kwargs))
    for batch in batches:
        assert batch.schema.equals(RAW_SCHEMA, check_metadata=True)
    return pa.Table.from_batches(batches, schema=RAW_SCHEMA)


@pytest.fixture(scope="module")
def rich_topic(kafka_broker):
    """One partition of 1,000 records with keys, headers, timestamps and tombstones."""
    topic = "range-reader-rich"
    create_topic(kafka_broker.bootstrap, topic)
    count = 1000
    values = [None if i % 7 == 3 else b"value-%d" % i for i in range(count)]
    keys = [None if i % 5 == 0 else b"key-%d" % i for i in range(count)]
    headers = [None if i % 3 else [("h1", b"a%d" % i), ("h2", None), ("h1", b"dup")] for i in range(count)]
    timestamps = [1_700_000_000_000 + i for i in range(count)]
    produce(
        kafka_broker.bootstrap,
        topic,
        values,
        keys=keys,
        headers=headers,
        timestamps=timestamps,
        partition=0,
        batch_messages=64,
    )
    return topic, values, keys, headers, timestamps


def test_whole_partition_every_offset_once_fields_preserved(conf, rich_topic):
    topic, values, keys, headers, timestamps = rich_topic
    table = read_all(conf, OffsetRange(topic, 0, 0, len(values)), batch_size=300)
    assert table.column("offset").to_pylist() == list(range(len(values)))
    assert set(table.column("topic").to_pylist()) == {topic}
    assert set(table.column("partition").to_pylist()) == {0}
    assert table.column("value").to_pylist() == values
    assert table.column("key").to_pylist() == keys
    assert table.column("timestamp").to_pylist() == timestamps
    assert set(table.column("timestamp_type").to_pylist()) == {CREATE_TIME}
    expected_headers = [[{"key": k, "value": v} for k, v in h or []] for h in headers]
    assert table.column("headers").to_pylist() == expected_headers


def test_batches_respect_batch_size(conf, rich_topic):
    topic, values, *_ = rich_topic
    sizes = [batch.num_rows for batch in read_range(conf, OffsetRange(topic, 0, 0, len(values)), batch_size=128)]
    assert sum(sizes) == len(values)
    assert max(sizes) <= 128 and len(sizes) >= len(values) // 128


@pytest.mark.parametrize("cuts", [[0, 1000], [0, 1, 2, 1000], [0, 333, 334, 999, 1000], [10, 500, 501]])
def test_sub_ranges_read_exactly_their_offsets(conf, rich_topic, cuts):
    topic, values, *_ = rich_topic
    for first, last in zip(cuts, cuts[1:]):
        table = read_all(conf, OffsetRange(topic, 0, first, last), batch_size=97)
        assert table.column("offset").to_pylist() == list(range(first, last))
        assert table.column("value").to_pylist() == values[first:last]


def test_empty_range_yields_nothing(conf, rich_topic):
    topic, *_ = rich_topic
    assert list(read_range(conf, OffsetRange(topic, 0, 5, 5))) == []


def test_several_partitions_and_produce_batches(conf, kafka_broker, topic_name):
    topic = topic_name()
    create_topic(kafka_broker.bootstrap, topic, partitions=3)
    for round_ in range(3):
        for partition in range(3):
            produce(
                kafka_broker.bootstrap, topic, [b"%d-%d" % (partition, round_)] * (10 + partition), partition=partition
            )
    ends = end_offsets(conf, [(topic, p) for p in range(3)])
    for partition in range(3):
        table = read_all(conf, OffsetRange(topic, partition, 0, ends[(topic, partition)]))
        assert table.num_rows == 3 * (10 + partition)
        assert table.column("offset").to_pylist() == list(range(table.num_rows))


@pytest.fixture(scope="module")
def transactional_topic(kafka_broker):
    """3 committed transactions of 5 records: offsets 5, 11 and 17 are commit markers."""
    topic = "range-reader-transactions"
    create_topic(kafka_broker.bootstrap, topic)
    producer = Producer({"bootstrap.servers": kafka_broker.bootstrap, "transactional.id": topic})
    producer.init_transactions(30)
    for txn in range(3):
        producer.begin_transaction()
        for i in range(5):
            producer.produce(topic, b"t%d-%d" % (txn, i), partition=0)
        producer.commit_transaction(30)
    return topic


@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_transaction_markers_at_the_end_do_not_stall(conf, transactional_topic, isolation):
    conf = {**conf, "isolation.level": isolation}
    end = end_offsets(conf, [(transactional_topic, 0)])[(transactional_topic, 0)]
    assert end == 18
    # a reader that waited for records past the trailing markers would stall and raise
    table = read_all(conf, OffsetRange(transactional_topic, 0, 0, end), stall_timeout=10)
    assert table.column("offset").to_pylist() == [0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 12, 13, 14, 15, 16]


@pytest.mark.parametrize(
    "start, end, offsets",
    [(5, 6, []), (5, 11, [6, 7, 8, 9, 10]), (4, 7, [4, 6]), (17, 18, []), (16, 18, [16]), (11, 12, [])],
)
def test_ranges_starting_or_ending_on_markers(conf, transactional_topic, start, end, offsets):
    table = read_all(conf, OffsetRange(transactional_topic, 0, start, end), stall_timeout=10)
    assert table.column("offset").to_pylist() == offsets


def test_one_reader_for_many_ranges(conf, rich_topic, transactional_topic):
    """Reuse across partitions, repeated partitions, markers at the end twice, abandoned reads."""
    topic, values, *_ = rich_topic
    ranges = [
        OffsetRange(transactional_topic, 0, 0, 18),
        OffsetRange(topic, 0, 0, 400),
        OffsetRange(topic, 0, 400, 1000),
        OffsetRange(transactional_topic, 0, 12, 18),  # EOF at 18 must be reported again
        OffsetRange(topic, 0, 5, 5),
        OffsetRange(topic, 0, 990, 1000),
    ]
    # a reader waiting for records that never come would stall and raise
    with RangeReader(conf, batch_size=250, stall_timeout=10) as reader:
        abandoned = reader.read(OffsetRange(topic, 0, 0, 1000))
        next(abandoned)
        abandoned.close()
        tables = [pa.Table.from_batches(list(reader.read(rng)), schema=RAW_SCHEMA) for rng in ranges]
    assert tables[0].column("offset").to_pylist() == [0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 12, 13, 14, 15, 16]
    assert tables[1].column("value").to_pylist() + tables[2].column("value").to_pylist() == values
    assert tables[3].column("offset").to_pylist() == [12, 13, 14, 15, 16]
    assert tables[4].num_rows == 0
    assert tables[5].column("offset").to_pylist() == list(range(990, 1000))


def test_range_beyond_the_partition_end_fails_fast(conf, rich_topic):
    topic, values, *_ = rich_topic
    # the range's end is checked against the partition's, not waited for (a stall would say so instead)
    with pytest.raises(RangeReadError, match=rf"{topic}\[0\]: the partition ends at offset 1000"):
        list(read_range(conf, OffsetRange(topic, 0, 990, 1010), stall_timeout=30))
    with pytest.raises(RangeReadError, match=rf"{topic}\[0\]") as beyond:
        list(read_range(conf, OffsetRange(topic, 0, 2000, 2010), stall_timeout=30))
    assert "no records for" not in str(beyond.value)  # not a stall


def test_unknown_topic_is_an_error_naming_it(conf):
    with pytest.raises(RangeReadError, match=r"no-such-topic-r\[0\]"):
        list(read_range(conf, OffsetRange("no-such-topic-r", 0, 0, 10), stall_timeout=5))


# --------------------------------------------------------------------------
# Cursor logic with a scripted consumer: broker behaviour Tansu cannot show
# --------------------------------------------------------------------------
class ScriptedConsumer:
    """Returns the scripted consume() results in turn, then nothing."""

    def __init__(self, script, watermarks=(-1, -1)):
        self.script = list(script)
        self.watermarks = watermarks

    def consume(self, num_messages, timeout):
        if self.script:
            return self.script.pop(0)[:num_messages]
        time.sleep(min(timeout, 0.01))
        return []

    def get_watermark_offsets(self, tp, cached=False):
        return self.watermarks


def record(offset):
    return Message(topic="t", partition=0, offset=offset, value=b"v", timestamp=(CREATE_TIME, 1))


def event(code, offset=0, retriable=False):
    return Message(topic="t", partition=0, offset=offset, error=KafkaError(code, "scripted", retriable=retriable))


def test_retention_gap_is_an_offset_out_of_range_error():
    consumer = ScriptedConsumer([[event(KafkaError._AUTO_OFFSET_RESET)]], watermarks=(500, 900))
    cursor = _RangeCursor(consumer, OffsetRange("t", 0, 100, 200), 0.01, 5)
    with pytest.raises(OffsetOutOfRangeError, match=r"t\[0\] at offset 100.*log start offset 500.*retention"):
        cursor.next_chunk(50)


def test_broker_errors_name_topic_partition_offset_and_retriable_ones_are_skipped():
    script = [
        [record(10), event(KafkaError._TRANSPORT, retriable=True), record(11)],
        [event(KafkaError.TOPIC_AUTHORIZATION_FAILED)],
    ]
    cursor = _RangeCursor(ScriptedConsumer(script), OffsetRange("t", 0, 10, 20), 0.01, 5)
    with pytest.raises(RangeReadError, match=r"t\[0\] at offset 12: scripted"):
        cursor.next_chunk(50)


def test_eof_past_the_end_completes_the_range():
    script = [[record(10), record(12), event(KafkaError._PARTITION_EOF, offset=15)]]
    cursor = _RangeCursor(ScriptedConsumer(script), OffsetRange("t", 0, 10, 15), 0.01, 5)
    assert [m.offset() for m in cursor.next_chunk(50)] == [10, 12]
    assert cursor.done


def test_records_beyond_the_end_are_not_returned():
    script = [[record(10), record(13), record(15), record(16)]]
    cursor = _RangeCursor(ScriptedConsumer(script), OffsetRange("t", 0, 10, 15), 0.01, 5)
    assert [m.offset() for m in cursor.next_chunk(50)] == [10, 13]
    assert cursor.done


def test_stall_times_out_with_a_clear_error():
    cursor = _RangeCursor(ScriptedConsumer([], watermarks=(0, 50)), OffsetRange("t", 0, 10, 20), 0.01, 0.2)
    with pytest.raises(RangeReadError, match=r"t\[0\] at offset 10: no records for"):
        cursor.next_chunk(50)


def test_missing_timestamps_are_null_and_types_kept():
    messages = [
        Message(topic="t", partition=2, offset=0, value=b"a", timestamp=(NO_TIMESTAMP_TYPE, -1)),
        Message(topic="t", partition=2, offset=1, value=b"b", timestamp=(LOG_APPEND_TIME, 42)),
        Message(topic="t", partition=2, offset=2, value=None, timestamp=(CREATE_TIME, 7)),
    ]
    batch = messages_to_batch("t", 2, messages)
    assert batch.schema.equals(RAW_SCHEMA)
    assert batch.column("timestamp").to_pylist() == [None, 42, 7]
    assert batch.column("timestamp_type").to_pylist() == [0, 2, 1]
    assert batch.column("value").to_pylist() == [b"a", b"b", None]
    assert batch.column("headers").to_pylist() == [[], [], []]
    assert batch.column("partition").to_pylist() == [2, 2, 2]


_header = st.tuples(st.sampled_from(["h1", "h2", "trace"]), st.none() | st.binary(max_size=4))
_record = st.fixed_dictionaries({
    "gap": st.sampled_from([1, 1, 1, 2, 5]),  # offsets skipped before it: compaction, transaction markers
    "key": st.none() | st.binary(max_size=6),
    "value": st.none() | st.binary(max_size=6),
    "timestamp": st.tuples(st.sampled_from([NO_TIMESTAMP_TYPE, CREATE_TIME, LOG_APPEND_TIME]),
                           st.sampled_from([-1, 0, 1_700_000_000_000]) | st.integers(-5, 2**62)),
    "headers": st.none() | st.lists(_header, min_size=1, max_size=3),
})


@settings(max_examples=300, deadline=None)
@given(start=st.integers(0, 2**40), records=st.lists(_record, max_size=40))
def test_a_batch_holds_each_message_field_for_field(start, records):
    offset, messages = start, []
    for r in records:
        offset += r["gap"]
        messages.append(Message(topic="t", partition=3, offset=offset, key=r["key"], value=r["value"],
                                timestamp=r["timestamp"], headers=r["headers"]))
    batch = messages_to_batch("t", 3, messages)
    assert batch.schema.equals(RAW_SCHEMA)
    assert batch.to_pylist() == [
        {"topic": "t", "partition": 3, "offset": m.offset(), "key": m.key(), "value": m.value(),
         "timestamp": None if m.timestamp()[0] == NO_TIMESTAMP_TYPE or m.timestamp()[1] < 0 else m.timestamp()[1],
         "timestamp_type": m.timestamp()[0],
         "headers": [{"key": k, "value": v} for k, v in m.headers() or []]}
        for m in messages
    ]


def test_raw_schema_matches_spark_arrow_conventions():
    headers = RAW_SCHEMA.field("headers")
    assert not headers.nullable
    assert headers.type.value_field.name == "element" and not headers.type.value_field.nullable
    assert [f.nullable for f in headers.type.value_type] == [False, True]
    assert [f.name for f in RAW_SCHEMA] == [
        "topic",
        "partition",
        "offset",
        "timestamp",
        "timestamp_type",
        "key",
        "value",
        "headers",
    ]
