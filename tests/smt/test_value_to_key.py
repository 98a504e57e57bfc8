"""ValueToKey: ported from Kafka's ValueToKeyTest."""

from __future__ import annotations

import pytest

from connector.api import ConfigException, DataException, Schema, SchemaBuilder, Struct
from smt.transforms.value_to_key import ValueToKey
from tests.smt import record


def configured(**config):
    xform = ValueToKey()
    xform.configure(config)
    return xform


def test_schemaless():
    transformed = configured(fields="a,b").apply(record(None, None, None, {"a": 1, "b": 2, "c": 3}, topic=""))
    assert transformed.key_schema is None
    assert transformed.key == {"a": 1, "b": 2}


def test_with_schema():
    schema = (SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).field("b", Schema.INT32_SCHEMA)
              .field("c", Schema.INT32_SCHEMA).build())
    value = Struct(schema).put("a", 1).put("b", 2).put("c", 3)
    transformed = configured(fields="a,b").apply(record(None, None, schema, value, topic=""))
    expected_schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).field("b", Schema.INT32_SCHEMA).build()
    assert transformed.key_schema == expected_schema
    assert transformed.key == Struct(expected_schema).put("a", 1).put("b", 2)


def test_non_existing_field():
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataException) as raised:
        configured(fields="not_exist").apply(record(None, None, schema, Struct(schema).put("a", 1), topic=""))
    assert str(raised.value) == "Field does not exist: not_exist"


@pytest.mark.parametrize("replace_null_with_default, expected", [(False, None), (True, 42)])
def test_replace_null_with_default_config(replace_null_with_default, expected):
    xform = configured(fields="optional_with_default", **{"replace.null.with.default": replace_null_with_default})
    schema = SchemaBuilder.struct().field(
        "optional_with_default", SchemaBuilder.int32().optional().default_value(42).build()).build()
    transformed = xform.apply(record(None, None, schema, Struct(schema).put("optional_with_default", None)))
    assert transformed.key.get_without_default("optional_with_default") == expected


# --- beyond Kafka's tests --------------------------------------------------------------------


def test_missing_field_schemaless_gives_null_entry_and_value_kept():
    original = record(Schema.STRING_SCHEMA, "old", None, {"a": 1})
    out = configured(fields="a,zz").apply(original)
    assert out.key == {"a": 1, "zz": None}
    assert out.value == {"a": 1} and out.value_schema is None


def test_null_value_fails():
    with pytest.raises(DataException, match=r"\[copying fields from value to key\], found: null$"):
        configured(fields="a").apply(record(None, None, None, None))


def test_empty_fields_config():
    with pytest.raises(ConfigException, match=r"^Invalid value \[\] for configuration fields: Empty list$"):
        configured(fields="")


def test_key_schema_cached():
    xform = configured(fields="a")
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    first = xform.apply(record(value_schema=schema, value=Struct(schema).put("a", 1)))
    second = xform.apply(record(value_schema=schema, value=Struct(schema).put("a", 2)))
    assert first.key_schema is second.key_schema
