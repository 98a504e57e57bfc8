"""KafkaMetadataTransform: ports TestKafkaMetadataTransform (8 cases) plus schema details."""

from __future__ import annotations

import pytest

from connector.api.errors import ConfigException, DataException
from connector.api.record import Header, TimestampType
from connector.api.schema import Schema, SchemaBuilder
from connector.api.struct import Struct
from smt.iceberg import KafkaMetadataTransform
from tests.smt_iceberg import sink_record

SCHEMA = SchemaBuilder.struct().field("id", Schema.STRING_SCHEMA).build()
TOPIC = "topic"
PARTITION = 0
OFFSET = 1000
TIMESTAMP = 50000
KEY_SCHEMA = Schema.STRING_SCHEMA
KEY_VALUE = "key"


def value_struct() -> Struct:
    return Struct(SCHEMA).put("id", "value")


def record(value_schema, value, key_schema=None, key=None, timestamp=TIMESTAMP):
    return sink_record(
        value_schema, value, key_schema, key, topic=TOPIC, partition=PARTITION, offset=OFFSET,
        timestamp=timestamp, timestamp_type=TimestampType.CREATE_TIME,
    )


def configured(config: dict) -> KafkaMetadataTransform:
    smt = KafkaMetadataTransform()
    smt.configure(config)
    return smt


# --- TestKafkaMetadataTransform -----------------------------------------------------------


def test_null_record():
    rec = record(None, None)
    assert configured({}).apply(rec) is rec


def test_throw_if_not_expected_value():
    smt = configured({})
    with pytest.raises(DataException, match="Only Map objects supported in absence of schema"):
        smt.apply(record(None, "not a map"))
    with pytest.raises(DataException, match="Only Struct objects supported"):
        smt.apply(record(SCHEMA, "not a struct"))


def test_appends_to_structs():
    rec = record(SCHEMA, value_struct(), KEY_SCHEMA, KEY_VALUE)
    result = configured({"field_name": "_some_field"}).apply(rec)
    value = result.value
    assert isinstance(value, Struct)
    assert value.get("id") == "value"
    assert value.get("_some_field_topic") == result.topic
    assert value.get("_some_field_partition") == result.kafka_partition
    assert value.get("_some_field_offset") == result.kafka_offset
    assert value.get("_some_field_timestamp") == result.timestamp
    assert result.timestamp_type == rec.timestamp_type
    assert result.key == rec.key
    assert result.key_schema == rec.key_schema


def test_appends_to_structs_nested():
    rec = record(SCHEMA, value_struct(), KEY_SCHEMA, KEY_VALUE)
    result = configured({"nested": "true"}).apply(rec)
    metadata = result.value.get("_kafka_metadata")
    assert isinstance(metadata, Struct)
    assert metadata.get("topic") == result.topic
    assert metadata.get("partition") == result.kafka_partition
    assert metadata.get("offset") == result.kafka_offset
    assert metadata.get("timestamp") == result.timestamp
    assert result.timestamp_type == rec.timestamp_type
    assert (result.key, result.key_schema) == (rec.key, rec.key_schema)


def test_appends_to_structs_external():
    rec = record(SCHEMA, value_struct(), KEY_SCHEMA, KEY_VALUE)
    value = configured({"external_field": "external,value"}).apply(rec).value
    assert value.get("id") == "value"
    assert value.get("_kafka_metadata_topic") == TOPIC
    assert value.get("_kafka_metadata_partition") == PARTITION
    assert value.get("_kafka_metadata_offset") == OFFSET
    assert value.get("_kafka_metadata_timestamp") == TIMESTAMP
    assert value.get("_kafka_metadata_external") == "value"


def test_external_field_invalid():
    with pytest.raises(ConfigException, match="Could not parse external,\\*,,,value"):
        KafkaMetadataTransform().configure({"external_field": "external,*,,,value"})


def test_append_to_maps():
    rec = record(None, {"id": "value"})
    result = configured({}).apply(rec)
    assert result.value == {
        "id": "value",
        "_kafka_metadata_topic": TOPIC,
        "_kafka_metadata_partition": PARTITION,
        "_kafka_metadata_offset": OFFSET,
        "_kafka_metadata_timestamp": TIMESTAMP,
    }
    assert result.timestamp_type == rec.timestamp_type
    assert (result.key, result.key_schema) == (rec.key, rec.key_schema)


def test_append_to_maps_nested():
    result = configured({"nested": "true"}).apply(record(None, {"id": "value"}))
    assert result.value["_kafka_metadata"] == {
        "topic": TOPIC, "partition": PARTITION, "offset": OFFSET, "timestamp": TIMESTAMP,
    }


# --- beyond the Java tests ---------------------------------------------------------------


def test_flat_schema():
    schema = configured({}).apply(record(SCHEMA, value_struct())).value_schema
    assert [(f.name, f.schema) for f in schema.fields()] == [
        ("id", Schema.STRING_SCHEMA),
        ("_kafka_metadata_topic", Schema.STRING_SCHEMA),
        ("_kafka_metadata_partition", Schema.INT32_SCHEMA),
        ("_kafka_metadata_offset", Schema.INT64_SCHEMA),
        ("_kafka_metadata_timestamp", Schema.OPTIONAL_INT64_SCHEMA),
    ]


def test_nested_schema_with_external_field():
    smt = configured({"nested": True, "field_name": "meta", "external_field": "cluster,east"})
    result = smt.apply(record(SCHEMA, value_struct()))
    nested = result.value_schema.field("meta").schema
    assert [(f.name, f.schema) for f in nested.fields()] == [
        ("topic", Schema.STRING_SCHEMA),
        ("partition", Schema.INT32_SCHEMA),
        ("offset", Schema.INT64_SCHEMA),
        ("timestamp", Schema.OPTIONAL_INT64_SCHEMA),
        ("cluster", Schema.STRING_SCHEMA),
    ]
    assert result.value.get("meta").get("cluster") == "east"
    schemaless = smt.apply(record(None, {"id": "v"}))
    assert schemaless.value["meta"]["cluster"] == "east"


def test_missing_timestamp_is_left_out():
    smt = configured({})
    with_schema = smt.apply(record(SCHEMA, value_struct(), timestamp=None)).value
    assert with_schema.get("_kafka_metadata_timestamp") is None
    schemaless = smt.apply(record(None, {"id": "v"}, timestamp=None)).value
    assert "_kafka_metadata_timestamp" not in schemaless
    nested = configured({"nested": "true"}).apply(record(None, {"id": "v"}, timestamp=None)).value
    assert "timestamp" not in nested["_kafka_metadata"]


def test_headers_kept_and_instances_independent():
    rec = record(None, {"id": "v"})
    rec = rec.with_headers([Header("h", 1)])
    a = configured({"field_name": "a"})
    b = configured({"nested": "true", "field_name": "b"})
    assert "a_topic" in a.apply(rec).value
    assert "b" in b.apply(rec).value
    assert "a_topic" in a.apply(rec).value  # b's configuration did not leak into a
    assert a.apply(rec).headers == rec.headers


def test_invalid_nested_flag():
    with pytest.raises(ConfigException, match="nested"):
        KafkaMetadataTransform().configure({"nested": "yes"})


def test_loads_by_class_name():
    import smt

    transform = smt.load("io.tabular.iceberg.connect.transforms.KafkaMetadataTransform", {"nested": "true"})
    assert transform.apply(record(None, {"id": "v"})).value["_kafka_metadata"]["offset"] == OFFSET
