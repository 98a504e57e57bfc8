"""MaskField: ported from Kafka's MaskFieldTest."""

from __future__ import annotations

import datetime as _dt
import decimal

import pytest

from connector.api import (
    ConfigException,
    DataException,
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from smt.transforms.mask_field import Key, Value
from tests.smt import UTC, millis, record

SCHEMA = (SchemaBuilder.struct()
          .field("magic", Schema.INT32_SCHEMA)
          .field("bool", Schema.BOOLEAN_SCHEMA)
          .field("byte", Schema.INT8_SCHEMA)
          .field("short", Schema.INT16_SCHEMA)
          .field("int", Schema.INT32_SCHEMA)
          .field("long", Schema.INT64_SCHEMA)
          .field("float", Schema.FLOAT32_SCHEMA)
          .field("double", Schema.FLOAT64_SCHEMA)
          .field("string", Schema.STRING_SCHEMA)
          .field("date", Date.SCHEMA)
          .field("time", Time.SCHEMA)
          .field("timestamp", Timestamp.SCHEMA)
          .field("decimal", Decimal.schema(0))
          .field("array", SchemaBuilder.array(Schema.INT32_SCHEMA))
          .field("map", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA))
          .field("withDefault", SchemaBuilder.string().optional().default_value("default").build())
          .build())

NOW = _dt.datetime(2024, 5, 6, 7, 8, 9, 123000, tzinfo=UTC)


def values():
    """Kafka's VALUES (schemaless). Python has one int type, so byte/short/int/long/bigint are all ints."""
    return {
        "magic": 42, "bool": True, "byte": 42, "short": 42, "int": 42, "long": 42, "float": 42.0,
        "double": 42.0, "string": "55.121.20.20", "date": NOW, "bigint": 42,
        "bigdec": decimal.Decimal("42.0"), "list": [42], "map": {"key": "value"},
    }


def values_with_schema():
    return (Struct(SCHEMA)
            .put("magic", 42).put("bool", True).put("byte", 42).put("short", 42).put("int", 42).put("long", 42)
            .put("float", 42.0).put("double", 42.0).put("string", "hmm").put("date", NOW.date())
            .put("time", NOW.time()).put("timestamp", NOW).put("decimal", decimal.Decimal(42))
            .put("array", [1, 2, 3]).put("map", {"what": "what"}).put("withDefault", None))


def transform(fields, replacement):
    xform = Value()
    xform.configure({"fields": fields, "replacement": replacement, "replace.null.with.default": False})
    return xform


def sink_record(schema, value):
    return record(None, None, schema, value, topic="", partition=0, offset=0)


def check_replacement_with_schema(mask_field, replacement, expected):
    updated = transform([mask_field], str(replacement)).apply(sink_record(SCHEMA, values_with_schema())).value
    assert updated.get(mask_field) == expected, f"Invalid replacement for {mask_field} value"


def check_replacement_schemaless(mask_fields, replacement, expected):
    if isinstance(mask_fields, str):
        mask_fields = [mask_fields]
    updated = transform(mask_fields, str(replacement)).apply(sink_record(None, values())).value
    for mask_field in mask_fields:
        assert updated[mask_field] == expected, f"Invalid replacement for {mask_field} value"


def test_schemaless():
    mask_fields = [name for name in values() if name != "magic"]
    updated = transform(mask_fields, None).apply(sink_record(None, values())).value
    assert updated["magic"] == 42
    assert updated["bool"] is False
    assert updated["byte"] == 0
    assert updated["short"] == 0
    assert updated["int"] == 0
    assert updated["long"] == 0
    assert updated["float"] == 0.0
    assert updated["double"] == 0.0
    assert updated["string"] == ""
    assert updated["date"] == millis(0)
    assert updated["bigint"] == 0
    assert updated["bigdec"] == decimal.Decimal(0)
    assert updated["list"] == []
    assert updated["map"] == {}


def test_with_schema():
    mask_fields = [f.name for f in SCHEMA.fields() if f.name != "magic"]
    updated = transform(mask_fields, None).apply(sink_record(SCHEMA, values_with_schema())).value
    assert updated.get("magic") == 42
    assert updated.get("bool") is False
    assert updated.get("byte") == 0
    assert updated.get("short") == 0
    assert updated.get("int") == 0
    assert updated.get("long") == 0
    assert updated.get("float") == 0.0
    assert updated.get("double") == 0.0
    assert updated.get("string") == ""
    assert updated.get("date") == _dt.date(1970, 1, 1)
    assert updated.get("time") == _dt.time(0)
    assert updated.get("timestamp") == millis(0)
    assert updated.get("decimal") == decimal.Decimal(0)
    assert updated.get("array") == []
    assert updated.get("map") == {}
    assert updated.get_without_default("withDefault") is None


def test_schemaless_with_replacement():
    check_replacement_schemaless("short", 123, 123)
    check_replacement_schemaless("byte", 123, 123)
    check_replacement_schemaless("int", 123, 123)
    check_replacement_schemaless("long", 123, 123)
    check_replacement_schemaless("float", "123.0", 123.0)
    check_replacement_schemaless("double", "123.0", 123.0)
    check_replacement_schemaless("string", "123", "123")
    check_replacement_schemaless("bigint", 123, 123)
    check_replacement_schemaless("bigdec", "123.0", decimal.Decimal("123.0"))


def test_schemaless_unsupported_replacement_type():
    for fields, replacement in [("date", NOW), ("bool", False), ("list", ["123"]), ("map", {"123": "321"})]:
        with pytest.raises(DataException, match="Cannot mask value of type"):
            check_replacement_schemaless(fields, replacement, None)
    with pytest.raises(DataException):  # "int" fails first: the replacement is no number
        check_replacement_schemaless(["int", "date"], NOW, None)


def test_with_schema_and_replacement():
    check_replacement_with_schema("short", 123, 123)
    check_replacement_with_schema("byte", 123, 123)
    check_replacement_with_schema("int", 123, 123)
    check_replacement_with_schema("long", 123, 123)
    check_replacement_with_schema("float", "123.0", 123.0)
    check_replacement_with_schema("double", "123.0", 123.0)
    check_replacement_with_schema("string", "123", "123")
    check_replacement_with_schema("decimal", "123.0", decimal.Decimal("123.0"))


def test_with_schema_unsupported_replacement_type():
    for field, replacement in [("time", NOW), ("timestamp", NOW), ("array", [123])]:
        with pytest.raises(DataException, match="Cannot mask value of type"):
            check_replacement_with_schema(field, replacement, None)


def test_replacement_type_mismatch():
    for fields, replacement in [("byte", "foo"), ("short", "foo"), ("int", "foo"), ("long", "foo"),
                                ("float", "foo"), ("double", "foo"), ("bigint", "foo"), ("bigdec", "foo"),
                                ("int", NOW), ("int", object()), (["string", "int"], "foo")]:
        with pytest.raises(DataException):
            check_replacement_schemaless(fields, replacement, None)


def test_empty_string_replacement_value():
    with pytest.raises(ConfigException, match="String must be non-empty"):
        check_replacement_schemaless("short", "", None)


def test_null_list_and_map_replacements_are_mutable():
    updated = transform(["array", "map"], None).apply(sink_record(SCHEMA, values_with_schema())).value
    actual_list = updated.get("array")
    assert actual_list == []
    actual_list.append(0)
    assert actual_list == [0]
    actual_map = updated.get("map")
    assert actual_map == {}
    actual_map["k"] = "v"
    assert actual_map == {"k": "v"}


# --- beyond Kafka's tests --------------------------------------------------------------------


def test_missing_field_is_put_as_null_and_null_stays_null():
    updated = transform(["absent", "n"], None).apply(sink_record(None, {"n": None, "a": 1})).value
    assert updated == {"n": None, "a": 1, "absent": None}


def test_null_schemaless_value_fails():
    with pytest.raises(DataException, match=r"\[mask fields\], found: null$"):
        transform(["a"], None).apply(sink_record(None, None))


def test_replace_null_with_default_true_masks_the_default():
    xform = Value()
    xform.configure({"fields": "withDefault"})
    out = xform.apply(sink_record(SCHEMA, values_with_schema())).value
    assert out.get_without_default("withDefault") == ""


def test_bytes_cannot_be_masked():
    with pytest.raises(DataException, match="^Cannot mask value of type: bytes$"):
        transform(["b"], None).apply(sink_record(None, {"b": b"x"}))


def test_key_side_and_schema_kept():
    xform = Key()
    xform.configure({"fields": "a"})
    schema = SchemaBuilder.struct().field("a", Schema.STRING_SCHEMA).build()
    out = xform.apply(record(schema, Struct(schema).put("a", "secret"), Schema.STRING_SCHEMA, "v"))
    assert out.key_schema is schema
    assert out.key.get("a") == ""
    assert out.value == "v"
