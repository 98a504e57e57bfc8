"""CopyValue: ports TestCopyValue (3 cases) plus config and error cases."""

from __future__ import annotations

import pytest

from connector.api.errors import ConfigException, DataException
from connector.api.schema import Schema, SchemaBuilder
from connector.api.struct import Struct
from smt.iceberg import CopyValue
from tests.smt_iceberg import sink_record

CONFIG = {"source.field": "data", "target.field": "data_copy"}


def configured(config=CONFIG) -> CopyValue:
    smt = CopyValue()
    smt.configure(config)
    return smt


# --- TestCopyValue -------------------------------------------------------------------


def test_copy_value_null():
    smt = CopyValue()  # not configured, as in the Java test
    record = sink_record()
    assert smt.apply(record).value is None


def test_copy_value_schemaless():
    value = {"id": 123, "data": "foobar"}
    result = configured().apply(sink_record(None, value))
    assert len(result.value) == 3
    assert result.value["data_copy"] == "foobar"
    assert value == {"id": 123, "data": "foobar"}  # input left untouched


def test_copy_value_with_schema():
    schema = SchemaBuilder.struct().field("id", Schema.INT64_SCHEMA).field("data", Schema.STRING_SCHEMA).build()
    value = Struct(schema).put("id", 123).put("data", "foobar")
    result = configured().apply(sink_record(schema, value))
    assert len(result.value_schema.fields()) == 3
    assert result.value_schema.field("data_copy").schema == Schema.STRING_SCHEMA
    assert result.value.get("data_copy") == "foobar"
    assert result.value.get("id") == 123


# --- beyond the Java tests -------------------------------------------------------------


def test_schema_basics_copied_and_cached():
    schema = (
        SchemaBuilder.struct().name("com.example.Row").version(3).doc("a row")
        .field("data", Schema.OPTIONAL_STRING_SCHEMA).build()
    )
    smt = configured()
    first = smt.apply(sink_record(schema, Struct(schema).put("data", "x")))
    second = smt.apply(sink_record(schema, Struct(schema).put("data", None)))
    assert first.value_schema is second.value_schema
    assert first.value_schema.name == "com.example.Row"
    assert first.value_schema.version == 3
    assert first.value_schema.doc == "a row"
    assert first.value_schema.field("data_copy").schema == Schema.OPTIONAL_STRING_SCHEMA
    assert second.value.get("data_copy") is None


def test_schemaless_missing_source_copies_null():
    result = configured().apply(sink_record(None, {"id": 1}))
    assert result.value == {"id": 1, "data_copy": None}


def test_key_timestamp_and_headers_kept():
    from connector.api.record import Header

    record = sink_record(None, {"data": "x"}, Schema.STRING_SCHEMA, "k", timestamp=5, headers=(Header("h", "v"),))
    result = configured().apply(record)
    assert (result.key_schema, result.key, result.timestamp) == (Schema.STRING_SCHEMA, "k", 5)
    assert result.headers == record.headers


def test_requires_both_fields():
    with pytest.raises(ConfigException, match="source.field"):
        CopyValue().configure({"target.field": "x"})
    with pytest.raises(ConfigException, match="target.field"):
        CopyValue().configure({"source.field": "x"})


def test_wrong_value_types():
    smt = configured()
    with pytest.raises(DataException, match="Only Map objects supported in absence of schema for \\[copy value\\]"):
        smt.apply(sink_record(None, "text"))
    schema = SchemaBuilder.struct().field("data", Schema.STRING_SCHEMA).build()
    with pytest.raises(DataException, match="Only Struct objects supported for \\[copy value\\]"):
        smt.apply(sink_record(schema, {"data": "x"}))


def test_unknown_source_field_with_schema():
    schema = SchemaBuilder.struct().field("id", Schema.INT64_SCHEMA).build()
    with pytest.raises(DataException, match="data"):
        configured().apply(sink_record(schema, Struct(schema).put("id", 1)))


@pytest.mark.parametrize("prefix", ["org.apache.iceberg.connect.transforms", "io.tabular.iceberg.connect.transforms"])
def test_loads_by_class_name(prefix):
    import smt

    transform = smt.load(f"{prefix}.CopyValue", dict(CONFIG))
    result = transform.apply(sink_record(None, {"data": "foobar"}))
    assert result.value == {"data": "foobar", "data_copy": "foobar"}
