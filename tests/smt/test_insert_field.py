"""InsertField: ported from Kafka's InsertFieldTest."""

from __future__ import annotations

import pytest

from connector.api import (
    ConfigException,
    DataException,
    Schema,
    SchemaBuilder,
    Struct,
    Timestamp,
)
from smt.transforms.insert_field import Key, Value
from tests.smt import millis, record, value_record

PROPS = {
    "topic.field": "topic_field!",
    "partition.field": "partition_field",
    "timestamp.field": "timestamp_field?",
    "static.field": "instance_id",
    "static.value": "my-instance-id",
}


def configured(cls=Value, **config):
    xform = cls()
    xform.configure(config)
    return xform


def simple_schema():
    return (SchemaBuilder.struct().name("name").version(1).doc("doc")
            .field("magic", Schema.OPTIONAL_INT64_SCHEMA).build())


def test_top_level_struct_required():
    xform = configured(**{"topic.field": "topic_field"})
    with pytest.raises(DataException):
        xform.apply(value_record(Schema.INT32_SCHEMA, 42, topic=""))


def test_copy_schema_and_insert_configured_fields():
    xform = configured(**PROPS)
    schema = simple_schema()
    original = record(None, None, schema, Struct(schema).put("magic", 42), topic="test", timestamp=789)
    transformed = xform.apply(original)
    out_schema, out = transformed.value_schema, transformed.value
    assert (out_schema.name, out_schema.version, out_schema.doc) == (schema.name, schema.version, schema.doc)
    assert out_schema.field("magic").schema == Schema.OPTIONAL_INT64_SCHEMA
    assert out.get("magic") == 42
    assert out_schema.field("topic_field").schema == Schema.STRING_SCHEMA
    assert out.get("topic_field") == "test"
    assert out_schema.field("partition_field").schema == Schema.OPTIONAL_INT32_SCHEMA
    assert out.get("partition_field") == 0
    assert out_schema.field("timestamp_field").schema == Timestamp.builder().optional().build()
    assert out.get("timestamp_field") == millis(789)
    assert out_schema.field("instance_id").schema == Schema.OPTIONAL_STRING_SCHEMA
    assert out.get("instance_id") == "my-instance-id"
    transformed2 = xform.apply(value_record(schema, Struct(schema), topic="test", partition=1))
    assert transformed.value_schema is transformed2.value_schema


def test_schemaless_insert_configured_fields():
    transformed = configured(**PROPS).apply(value_record(None, {"magic": 42}, topic="test", timestamp=123))
    assert transformed.value == {"magic": 42, "topic_field": "test", "partition_field": 0, "timestamp_field": 123,
                                 "instance_id": "my-instance-id"}


def test_insert_configured_fields_into_tombstone_event_without_schema_leaves_value_unchanged():
    transformed = configured(**PROPS).apply(value_record(None, None, topic="test"))
    assert transformed.value is None
    assert transformed.value_schema is None


def test_insert_configured_fields_into_tombstone_event_with_schema_leaves_value_unchanged():
    schema = simple_schema()
    transformed = configured(**PROPS).apply(value_record(schema, None, topic="test"))
    assert transformed.value is None
    assert transformed.value_schema == schema


def test_insert_key_fields_into_tombstone_event():
    transformed = configured(Key, **PROPS).apply(record(None, {"magic": 42}, None, None, topic="test"))
    assert transformed.key["magic"] == 42
    assert transformed.key["topic_field"] == "test"
    assert transformed.key["partition_field"] == 0
    assert transformed.key.get("timestamp_field") is None
    assert transformed.key["instance_id"] == "my-instance-id"
    assert transformed.value is None


def test_insert_into_null_key_leaves_record_unchanged():
    original = record(None, None, None, {"magic": 42}, topic="test")
    assert configured(Key, **PROPS).apply(original) is original


@pytest.mark.parametrize("replace_null_with_default, expected", [(False, None), (True, 42)])
def test_unset_optional_field(replace_null_with_default, expected):
    xform = configured(**PROPS, **{"replace.null.with.default": replace_null_with_default})
    magic_schema = SchemaBuilder.int64().optional().default_value(42).build()
    schema = (SchemaBuilder.struct().name("name").version(1).doc("doc")
              .field("magic_with_default", magic_schema).build())
    original = record(None, None, schema, Struct(schema).put("magic_with_default", None), topic="test",
                      timestamp=789)
    transformed = xform.apply(original)
    assert (transformed.value_schema.name, transformed.value_schema.version,
            transformed.value_schema.doc) == ("name", 1, "doc")
    assert transformed.value_schema.field("magic_with_default").schema == magic_schema
    assert transformed.value.get_without_default("magic_with_default") == expected


# --- beyond Kafka's tests: behaviour read from InsertField.java -------------------------------


def test_no_field_insertion_configured():
    with pytest.raises(ConfigException, match="^No field insertion configured$"):
        configured()


def test_static_field_without_value():
    with pytest.raises(ConfigException, match=r"^Invalid value null for configuration static.value: "
                                              r"No value specified for static field: sf$"):
        configured(**{"static.field": "sf"})


def test_offset_field_and_required_suffixes():
    xform = configured(**{"offset.field": "off!", "partition.field": "p!", "timestamp.field": "ts!"})
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    out = xform.apply(value_record(schema, Struct(schema).put("a", 1), offset=77, partition=3, timestamp=5))
    assert out.value_schema.field("off").schema == Schema.INT64_SCHEMA
    assert out.value_schema.field("p").schema == Schema.INT32_SCHEMA
    assert out.value_schema.field("ts").schema == Timestamp.SCHEMA
    assert (out.value.get("off"), out.value.get("p"), out.value.get("ts")) == (77, 3, millis(5))
    # Kafka adds them in the order topic, partition, offset, timestamp, static.
    assert [f.name for f in out.value_schema.fields()] == ["a", "p", "off", "ts"]


def test_null_partition_and_timestamp_are_skipped():
    xform = configured(**{"partition.field": "p", "timestamp.field": "ts"})
    assert xform.apply(value_record(None, {}, partition=None, timestamp=None)).value == {}
    schema = SchemaBuilder.struct().build()
    out = xform.apply(value_record(schema, Struct(schema), partition=None, timestamp=None))
    assert out.value.get("p") is None and out.value.get("ts") is None


def test_required_field_with_missing_metadata_fails():
    xform = configured(**{"timestamp.field": "ts!"})
    schema = SchemaBuilder.struct().build()
    out = xform.apply(value_record(schema, Struct(schema), timestamp=None))
    with pytest.raises(DataException):  # the record's Struct misses a required field
        out.value.validate()


def test_schemaless_requires_map():
    with pytest.raises(DataException, match=r"\[field insertion\], found: str$"):
        configured(**{"topic.field": "t"}).apply(value_record(None, "text"))
