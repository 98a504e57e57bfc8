"""The icefloe-iceberg Spark sink: batch and streaming writes, schema changes, exactly-once, input checks."""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pytest
from pyspark.sql.datasource import CaseInsensitiveDict
from pyspark.sql.types import BinaryType, IntegerType, LongType, StringType, StructField, StructType

from connector.api.errors import ConfigException
from connector.config.sink_config import SinkConfig
from connector.kafka.client_config import consumer_config
from connector.kafka.group_offsets import read_group_offsets
from connector.kafka.range_reader import RAW_SCHEMA
from connector.spark.formats import register
from connector.spark.iceberg_sink import (
    SPARK_BATCH_ID,
    SPARK_QUERY_ID,
    IcebergDataSource,
    abort_messages,
    commit_messages,
    conform,
    split_by_partition,
    split_options,
    write_batches,
)
from tests.integration.harness import load_table, sink_props, snapshot_offsets, table_rows, unique
from tests.support.tansu import create_topic, produce

ALL_COLUMNS = {name: name for name in RAW_SCHEMA.names}


@pytest.fixture(scope="module")
def formats(spark):
    register(spark)
    return spark


def _kafka(broker, topic, **extra):
    return {"bootstrap.servers": broker.bootstrap, "topics": topic, **extra}


def test_batch_write_creates_and_evolves_the_table(formats, kafka_broker, tmp_path):
    topic, name = unique("sinkb"), unique("sinkb")
    create_topic(kafka_broker.bootstrap, topic, 2)
    produce(kafka_broker.bootstrap, topic, [json.dumps({"id": i, "name": f"n{i}"}) for i in range(6)], partition=0)
    produce(kafka_broker.bootstrap, topic, [json.dumps({"id": 10 + i, "name": "x", "score": 1.5 * i})
                                            for i in range(4)], partition=1)
    props = sink_props(name, topic, "db.Events", tmp_path, **{"iceberg.tables.evolve-schema-enabled": True})
    # One Spark partition reads both Kafka partitions: the task buffers partition 0's rows, then
    # partition 1 needs a new column, so the task evolves the table and carries on in the same task.
    source = formats.read.format("icefloe-kafka").options(**_kafka(kafka_broker, topic, **{"tasks.max": "1"})).load()
    sink = {**props, "bootstrap.servers": kafka_broker.bootstrap}
    source.write.format("icefloe-iceberg").options(**sink).mode("append").save()

    rows = sorted(table_rows(props, "db.Events"), key=lambda r: r["id"])
    assert [r["id"] for r in rows] == [0, 1, 2, 3, 4, 5, 10, 11, 12, 13]
    assert [r["score"] for r in rows] == [None] * 6 + [0.0, 1.5, 3.0, 4.5]
    assert snapshot_offsets(props, "db.Events") == {f"{topic}.connect-{name}": {"0": 6, "1": 4}}
    client = consumer_config({"bootstrap.servers": kafka_broker.bootstrap}, {}, connector_name=name)
    assert read_group_offsets(client, f"connect-{name}", [(topic, 0), (topic, 1)]) == {(topic, 0): 6, (topic, 1): 4}



def test_user_dataframe_with_transforms_and_lower_cased_keys(formats, tmp_path):
    """A DataFrame built by hand (string values, no optional columns) through an SMT whose alias has capitals."""
    name = unique("sinku")
    props = sink_props(name, "orders", "db.Orders", tmp_path, **{
        "transforms": "AddSource",
        "transforms.AddSource.type": "org.apache.kafka.connect.transforms.InsertField$Value",
        "transforms.AddSource.topic.field": "source_topic",
        "iceberg.table.db.Orders.partition-by": "source_topic",
    })
    df = formats.createDataFrame([("orders", 0, i, json.dumps({"n": i})) for i in range(3)],
                                 "topic string, partition bigint, offset bigint, value string")
    df.write.format("icefloe-iceberg").options(**props).mode("append").save()
    rows = sorted(table_rows(props, "db.Orders"), key=lambda r: r["n"])
    assert rows == [{"n": i, "source_topic": "orders"} for i in range(3)]
    spec = load_table(props, "db.Orders").spec()
    assert [f.name for f in spec.fields] == ["source_topic"]
    assert snapshot_offsets(props, "db.Orders") == {f"orders.connect-{name}": {"0": 3}}


def test_missing_raw_column_is_a_clear_error(formats, tmp_path):
    props = sink_props(unique("sinkm"), "t", "db.t", tmp_path)
    df = formats.createDataFrame([("t", b"{}")], "topic string, value binary")
    with pytest.raises(Exception, match="the input has no column 'partition', 'offset'"):
        df.write.format("icefloe-iceberg").options(**props).mode("append").save()


def test_overwrite_is_refused(tmp_path):
    source = IcebergDataSource(CaseInsensitiveDict(sink_props(unique("sinko"), "t", "db.t", tmp_path)))
    schema = StructType([StructField("topic", StringType()), StructField("partition", IntegerType()),
                         StructField("offset", LongType()), StructField("value", BinaryType())])
    with pytest.raises(ConfigException, match="only appends"):
        source.writer(schema, overwrite=True)
    assert source.writer(schema, overwrite=False).columns == {c: c for c in ("topic", "partition", "offset", "value")}


def test_streaming_available_now_lands_each_record_once(formats, kafka_broker, tmp_path):
    topic, name = unique("sinks"), unique("sinks")
    create_topic(kafka_broker.bootstrap, topic, 2)
    props = sink_props(name, topic, "db.stream", tmp_path)
    checkpoint = str(tmp_path / "checkpoint")

    def run() -> list[int]:
        query = (formats.readStream.format("icefloe-kafka")
                 .options(**_kafka(kafka_broker, topic, maxOffsetsPerTrigger="8")).load()
                 .writeStream.format("icefloe-iceberg").options(**props)
                 .option("checkpointLocation", checkpoint).trigger(availableNow=True).start())
        query.awaitTermination(120)
        assert query.exception() is None
        return sorted(r["id"] for r in table_rows(props, "db.stream"))

    produce(kafka_broker.bootstrap, topic, [json.dumps({"id": i}) for i in range(0, 12, 2)], partition=0)
    produce(kafka_broker.bootstrap, topic, [json.dumps({"id": i}) for i in range(1, 12, 2)], partition=1)
    assert run() == list(range(12))  # two micro-batches of at most 8 records
    summary = load_table(props, "db.stream").current_snapshot().summary.additional_properties
    with open(os.path.join(checkpoint, "metadata")) as handle:
        assert summary[SPARK_QUERY_ID] == json.loads(handle.readline())["id"]
    assert summary[SPARK_BATCH_ID] == "1"

    produce(kafka_broker.bootstrap, topic, [json.dumps({"id": i}) for i in range(12, 15)], partition=1)
    assert run() == list(range(15))
    assert snapshot_offsets(props, "db.stream") == {f"{topic}.connect-{name}": {"0": 6, "1": 9}}


# --- without Spark: the write, commit and abort steps themselves ------------------------------------

def _raw_batch(topic: str, partition: int, offsets, values) -> pa.RecordBatch:
    n = len(offsets)
    return pa.RecordBatch.from_pydict({
        "topic": [topic] * n, "partition": [partition] * n, "offset": list(offsets),
        "timestamp": [1_700_000_000_000 + o for o in offsets], "timestamp_type": [1] * n,
        "key": [None] * n, "value": [json.dumps(v).encode() for v in values], "headers": [[]] * n,
    }, schema=RAW_SCHEMA)


def _config(props) -> SinkConfig:
    return SinkConfig.parse(*split_options(props))


def test_replayed_streaming_batch_is_committed_once(tmp_path):
    props = sink_props(unique("replay"), "t", "db.replay", tmp_path)
    config = _config(props)
    batch = _raw_batch("t", 0, range(3), [{"a": i} for i in range(3)])
    first = write_batches(config, ALL_COLUMNS, [batch])
    # Spark re-runs batch 0 after a crash that happened after the table commit: the same files again.
    replay = write_batches(config, ALL_COLUMNS, [batch])
    assert commit_messages(config, [first], batch_id=0, query_id="q1")
    replayed_file = replay.data_files["db.replay"][0].file_path
    assert commit_messages(config, [replay], batch_id=0, query_id="q1") == {}
    assert len(table_rows(props, "db.replay")) == 3
    assert not os.path.exists(replayed_file.removeprefix("file://"))
    # Records below the table's offsets are skipped before any file is written.
    assert write_batches(config, ALL_COLUMNS, [batch]).data_files == {}
    later = write_batches(config, ALL_COLUMNS, [_raw_batch("t", 0, [3], [{"a": 3}])])
    assert commit_messages(config, [later, None], batch_id=1, query_id="q1")
    assert sorted(r["a"] for r in table_rows(props, "db.replay")) == [0, 1, 2, 3]
    assert snapshot_offsets(props, "db.replay") == {f"t.connect-{config.name}": {"0": 4}}


def test_abort_deletes_the_written_files(tmp_path):
    props = sink_props(unique("abort"), "t", "db.aborted", tmp_path)
    config = _config(props)
    message = write_batches(config, ALL_COLUMNS, [_raw_batch("t", 0, range(2), [{"a": 1}, {"a": 2}])])
    paths = [f.file_path.removeprefix("file://") for f in message.data_files["db.aborted"]]
    assert paths and all(os.path.exists(p) for p in paths)
    abort_messages(config, [message, None])
    assert not any(os.path.exists(p) for p in paths)
    assert load_table(props, "db.aborted").current_snapshot() is None


def test_options_get_their_case_back(tmp_path):
    options = {k.lower(): v for k, v in sink_props("n", "t", "db.Events,db.other", tmp_path, **{
        "transforms": "Route", "transforms.Route.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "iceberg.table.db.Events.route-regex": "A.*", "bootstrap.servers": "b:9092",
        "consumer.override.fetch.min.bytes": "1", "checkpointLocation": "/x",
    }).items()}
    props, worker = split_options(options)
    assert props["iceberg.table.db.Events.route-regex"] == "A.*"
    assert props["transforms.Route.type"].endswith("RegexRouter")
    assert props["consumer.override.fetch.min.bytes"] == "1"
    assert worker == {"bootstrap.servers": "b:9092"}
    assert "checkpointlocation" not in props
    # A JSON config keeps every key's case; plain options override it.
    props, _ = split_options({"icefloe.config": json.dumps({"name": "n", "config": {"iceberg.tables": "A.B"}}),
                              "tasks.max": "3"})
    assert props["name"] == "n" and props["iceberg.tables"] == "A.B" and props["tasks.max"] == "3"
    with pytest.raises(ConfigException, match="icefloe.config"):
        split_options({"icefloe.config": "{"})


def test_conform_fills_defaults_and_split_orders_by_partition():
    batch = pa.RecordBatch.from_pydict({
        "Topic": ["b", "a", "a", "b"], "partition": pa.array([0, 1, 1, 0], pa.int64()),
        "offset": [5, 2, 1, 4], "value": ["x", "y", None, "z"],
        "timestamp": pa.array([1_000_000, None, 2_000_000, 3_000_000], pa.timestamp("us", tz="UTC")),
    })
    columns = {"topic": "Topic", "partition": "partition", "offset": "offset", "value": "value",
               "timestamp": "timestamp"}
    raw = conform(batch, columns)
    assert raw.schema == RAW_SCHEMA
    assert raw.column("timestamp").to_pylist() == [1000, None, 2000, 3000]
    assert raw.column("timestamp_type").to_pylist() == [1, 0, 1, 1]
    assert raw.column("headers").to_pylist() == [[]] * 4
    assert raw.column("value").to_pylist() == [b"x", b"y", None, b"z"]
    pieces = split_by_partition(raw)
    assert [(p.column("topic")[0].as_py(), p.column("partition")[0].as_py(), p.column("offset").to_pylist())
            for p in pieces] == [("a", 1, [1, 2]), ("b", 0, [4, 5])]


def test_batch_write_with_tolerance_sends_bad_records_to_the_dlq_and_records_its_position(
        formats, kafka_broker, tmp_path):
    from tests.integration.test_dead_letter_queue import _dlq_records

    topic, name, dlq = unique("sinkdlq"), unique("sinkdlq"), unique("sinkdlq_dlq")
    create_topic(kafka_broker.bootstrap, topic, 1)
    produce(kafka_broker.bootstrap, topic, [b'{"id": 0}', b'{"id": 1', b'{"id": 2}', b"[3]"], partition=0)
    props = sink_props(name, topic, "db.Dlq", tmp_path, **{
        "errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.context.headers.enable": "true"})
    source = formats.read.format("icefloe-kafka").options(**_kafka(kafka_broker, topic)).load()
    source.write.format("icefloe-iceberg").options(**props, **{"bootstrap.servers": kafka_broker.bootstrap}) \
        .mode("append").save()

    assert sorted(r["id"] for r in table_rows(props, "db.Dlq")) == [0, 2]
    assert [r["value"] for r in _dlq_records(kafka_broker.bootstrap, dlq)] == [b'{"id": 1', b"[3]"]
    summary = load_table(props, "db.Dlq").current_snapshot().summary.additional_properties
    assert json.loads(summary[f"icefloe.dlq.offsets.{dlq}.connect-{name}"]) == {"0": 2}
