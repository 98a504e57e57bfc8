"""HoistField: ported from Kafka's HoistFieldTest."""

from __future__ import annotations

import pytest

from connector.api import DataException, Schema, SchemaBuilder, Struct, Type
from smt.transforms.hoist_field import Key, Value
from tests.smt import record


def configured(cls=Key, field="magic"):
    xform = cls()
    xform.configure({"field": field})
    return xform


def test_schemaless():
    transformed = configured().apply(record(None, 42))
    assert transformed.key_schema is None
    assert transformed.key == {"magic": 42}


def test_with_schema():
    original = record(Schema.INT32_SCHEMA, 42)
    transformed = configured().apply(original)
    assert transformed.key_schema.type is Type.STRUCT
    assert transformed.key_schema.field("magic").schema == original.key_schema
    assert transformed.key.get("magic") == 42


def test_schemaless_map_is_mutable():
    transformed = configured().apply(record(None, 420))
    assert transformed.key_schema is None
    transformed.key["k"] = "v"
    assert transformed.key == {"k": "v", "magic": 420}


# --- beyond Kafka's tests: behaviour read from HoistField.java --------------------------------


def test_schemaless_null_is_wrapped():
    assert configured(Value).apply(record(value=None)).value == {"magic": None}


def test_with_schema_optional_null_is_wrapped():
    transformed = configured(Value).apply(record(value_schema=Schema.OPTIONAL_INT32_SCHEMA, value=None))
    assert transformed.value.get("magic") is None
    assert transformed.value_schema.field("magic").schema == Schema.OPTIONAL_INT32_SCHEMA


def test_with_schema_required_null_fails():
    with pytest.raises(DataException, match="null used for required field"):
        configured(Value).apply(record(value_schema=Schema.INT32_SCHEMA, value=None))


def test_struct_is_hoisted_and_schema_cached():
    inner = SchemaBuilder.struct().name("inner").field("a", Schema.STRING_SCHEMA).build()
    xform = configured(Value, "wrapped")
    first = xform.apply(record(value_schema=inner, value=Struct(inner).put("a", "x")))
    second = xform.apply(record(value_schema=inner, value=Struct(inner).put("a", "y")))
    assert first.value_schema is second.value_schema
    assert first.value_schema.name is None  # the wrapper struct is unnamed
    assert first.value.get("wrapped").get("a") == "x"


def test_field_is_required():
    from connector.api import ConfigException
    with pytest.raises(ConfigException, match='Missing required configuration "field"'):
        Key().configure({})
