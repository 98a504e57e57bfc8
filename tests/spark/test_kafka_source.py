"""The icefloe-kafka Spark source: batch reads, offsets options, planning, and the stream reader's offsets."""

from __future__ import annotations

import pytest
from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

from connector.api.errors import ConfigException
from connector.spark.formats import register
from connector.spark.kafka_source import (
    KafkaOptions,
    KafkaStreamReader,
    _limit_rows,
    decode_offsets,
    parse_offsets_json,
    read_partition,
)
from tests.integration.harness import unique
from tests.support.tansu import create_topic, produce


@pytest.fixture(scope="module")
def formats(spark):
    register(spark)
    return spark


@pytest.fixture(scope="module")
def produced(kafka_broker):
    """A two-partition topic with keys, headers, explicit timestamps, a tombstone and a null key."""
    topic = unique("src")
    create_topic(kafka_broker.bootstrap, topic, 2)
    expected = []
    for partition, count in ((0, 7), (1, 5)):
        values = [f'{{"p":{partition},"i":{i}}}'.encode() for i in range(count)]
        values[2] = None  # tombstone
        keys = [None if i == 1 else f"k{i}".encode() for i in range(count)]
        headers = [[("h", f"v{i}"), ("empty", None)] if i % 2 else None for i in range(count)]
        timestamps = [1_700_000_000_000 + partition * 1000 + i for i in range(count)]
        produce(kafka_broker.bootstrap, topic, values, keys=keys, headers=headers, timestamps=timestamps,
                partition=partition)
        for i in range(count):
            expected.append({
                "topic": topic, "partition": partition, "offset": i, "timestamp": timestamps[i],
                "timestamp_type": 1, "key": keys[i], "value": values[i],
                "headers": [{"key": k, "value": v.encode() if v else None} for k, v in headers[i] or []],
            })
    return topic, expected


def _options(broker, topic, **extra):
    return {"bootstrap.servers": broker.bootstrap, "topics": topic, **extra}


def _rows(df):
    rows = [row.asDict(recursive=True) for row in df.collect()]
    for row in rows:
        row["key"] = bytes(row["key"]) if row["key"] is not None else None
        row["value"] = bytes(row["value"]) if row["value"] is not None else None
        row["headers"] = [{"key": h["key"], "value": bytes(h["value"]) if h["value"] is not None else None}
                          for h in row["headers"]]
    return sorted(rows, key=lambda r: (r["partition"], r["offset"]))


def test_batch_read_equals_what_was_produced(formats, kafka_broker, produced):
    topic, expected = produced
    options = _options(kafka_broker, topic, **{"tasks.max": "3", "minSplitRecords": "1"})  # split partition 0
    df = formats.read.format("icefloe-kafka").options(**options).load()
    assert df.schema.simpleString() == (
        "struct<topic:string,partition:int,offset:bigint,timestamp:bigint,timestamp_type:tinyint,"
        "key:binary,value:binary,headers:array<struct<key:string,value:binary>>>"
    )
    assert _rows(df) == expected


def test_tasks_max_bounds_the_partitions(formats, kafka_broker, produced):
    topic, _ = produced
    def partitions(**extra):
        return formats.read.format("icefloe-kafka").options(**_options(kafka_broker, topic, **extra)).load() \
            .rdd.getNumPartitions()

    assert partitions(**{"tasks.max": "1"}) == 1
    # Small reads keep each Kafka partition whole: one Spark partition per topic-partition at most.
    assert partitions() == 2
    assert partitions(**{"tasks.max": "3"}) == 2
    # Allowed to split, 12 offsets are dealt over tasks.max=3 (partition 0's range is cut).
    assert partitions(**{"tasks.max": "3", "minSplitRecords": "1"}) == 3


def test_starting_and_ending_offsets(formats, kafka_broker, produced):
    topic, _ = produced
    options = _options(kafka_broker, topic, startingOffsets=f'{{"{topic}":{{"0":3,"1":-2}}}}',
                       endingOffsets=f'{{"{topic}":{{"0":5,"1":-1}}}}')
    df = formats.read.format("icefloe-kafka").options(**options).load()
    got = sorted((r.partition, r.offset) for r in df.select("partition", "offset").collect())
    assert got == [(0, 3), (0, 4)] + [(1, i) for i in range(5)]


def test_offset_resolution_without_spark(kafka_broker, produced):
    topic, _ = produced
    options = KafkaOptions.parse({"Kafka.Bootstrap.Servers": kafka_broker.bootstrap,
                                  "subscribePattern": topic[:-3] + ".*", "StartingOffsets": "latest"})
    tps = options.partitions()
    assert tps == [(topic, 0), (topic, 1)]
    assert options.resolve(options.starting, tps, "startingOffsets") == {(topic, 0): 7, (topic, 1): 5}
    assert options.resolve("earliest", tps, "startingOffsets") == {(topic, 0): 0, (topic, 1): 0}
    # Partitions a JSON spec leaves out start at the log start.
    assert options.resolve(f'{{"{topic}":{{"1":4}}}}', tps, "startingOffsets") == {(topic, 0): 0, (topic, 1): 4}
    with pytest.raises(ConfigException, match="not subscribed"):
        options.resolve('{"other":{"0":1}}', tps, "startingOffsets")
    with pytest.raises(ConfigException, match=rf"beyond the end of the partition\(s\): {topic}\[1\]: 9 > 5"):
        options.resolve(f'{{"{topic}":{{"1":9}}}}', tps, "endingOffsets")
    planned = options.plan({(topic, 0): 0, (topic, 1): 5}, {(topic, 0): 7, (topic, 1): 5})
    assert [[(r.partition, r.start, r.end) for r in p.ranges] for p in planned] == [[(0, 0, 7)]]
    splitting = KafkaOptions.parse({"bootstrap.servers": kafka_broker.bootstrap, "topics": topic,
                                    "tasks.max": "2", "minSplitRecords": "3"})
    planned = splitting.plan({(topic, 0): 0, (topic, 1): 5}, {(topic, 0): 7, (topic, 1): 5})
    assert [[(r.partition, r.start, r.end) for r in p.ranges] for p in planned] == [[(0, 0, 3)], [(0, 3, 7)]]


@pytest.mark.parametrize("options, message", [
    ({"topics": "a", "topics.regex": "b.*"}, "mutually exclusive"),
    ({}, "needs the option topics"),
    ({"topics": "a", "tasks.max": "0"}, "at least 1"),
    ({"topics": "a", "maxOffsetsPerTrigger": "many"}, "integer"),
])
def test_option_errors(options, message):
    with pytest.raises(ConfigException, match=message):
        KafkaOptions.parse({"bootstrap.servers": "127.0.0.1:1", **options})


def test_offsets_json():
    assert parse_offsets_json('{"t":{"0":12,"1":-2}}', "startingOffsets") == {("t", 0): 12, ("t", 1): -2}
    for bad in ("{", '["t"]', '{"t":{"x":1}}', '{"t":{"0":-5}}'):
        with pytest.raises(ConfigException):
            parse_offsets_json(bad, "startingOffsets")


def test_read_limit_is_shared_fairly():
    begin = {("t", 0): 0, ("t", 1): 100, ("t", 2): 0}
    end = {("t", 0): 2, ("t", 1): 200, ("t", 2): 50}
    limited = _limit_rows(begin, end, 20, lambda tps: {})
    assert limited == {("t", 0): 2, ("t", 1): 109, ("t", 2): 9}
    assert _limit_rows(begin, end, 1000, lambda tps: {}) == end
    # A partition new since the start begins at its log start; one that gets nothing stays out.
    added = _limit_rows({("t", 0): 0}, {("t", 0): 10, ("t", 1): 10}, 1, lambda tps: {("t", 1): 0})
    assert added == {("t", 0): 0, ("t", 1): 1}
    assert _limit_rows({("t", 0): 0}, {("t", 0): 10, ("t", 1): 10}, 1, lambda tps: {("t", 1): 10}) \
        == {("t", 0): 1}


def test_stream_reader_offsets_and_available_now(kafka_broker):
    topic = unique("stream")
    create_topic(kafka_broker.bootstrap, topic, 2)
    produce(kafka_broker.bootstrap, topic, [b"a"] * 6, partition=0)
    produce(kafka_broker.bootstrap, topic, [b"b"] * 2, partition=1)
    reader = KafkaStreamReader(KafkaOptions.parse({"bootstrap.servers": kafka_broker.bootstrap, "topics": topic,
                                                   "maxoffsetspertrigger": "4"}))
    start = reader.initialOffset()
    assert start == {topic: {"0": 0, "1": 0}}
    assert reader.getDefaultReadLimit() == ReadMaxRows(4)
    reader.prepareForTriggerAvailableNow()
    produce(kafka_broker.bootstrap, topic, [b"late"] * 3, partition=1)  # after the target: not read

    first = reader.latestOffset(start, ReadMaxRows(4))
    assert first == {topic: {"0": 2, "1": 2}}
    second = reader.latestOffset(first, ReadAllAvailable())
    assert second == {topic: {"0": 6, "1": 2}}
    assert reader.latestOffset(second, ReadAllAvailable()) == second  # the target is reached
    assert reader.reportLatestOffset() == {topic: {"0": 6, "1": 2}}

    partitions = reader.partitions(first, second)
    rows = [(b.column("partition")[i].as_py(), b.column("offset")[i].as_py())
            for p in partitions for b in read_partition(p) for i in range(b.num_rows)]
    assert sorted(rows) == [(0, i) for i in range(2, 6)]
    assert reader.partitions(second, second) == []

    # Without Trigger.AvailableNow the end moves with the log.
    live = KafkaStreamReader(reader.options)
    assert decode_offsets(live.latestOffset(second, ReadAllAvailable())) == {(topic, 0): 6, (topic, 1): 5}
