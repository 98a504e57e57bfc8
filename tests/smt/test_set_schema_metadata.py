"""SetSchemaMetadata: ported from Kafka's SetSchemaMetadataTest."""

from __future__ import annotations

import pytest

from connector.api import ConfigException, DataException, Schema, SchemaBuilder, Struct
from smt.transforms.set_schema_metadata import Key, Value
from tests.smt import record


def configured(cls=Value, **config):
    xform = cls()
    xform.configure(config)
    return xform


def sink(value_schema, value):
    return record(None, None, value_schema, value, topic="")


def assert_matching_schema(value, schema):
    assert value.schema is schema
    assert value.schema.name == schema.name
    for field in schema.fields():
        assert value.schema.field(field.name).name == schema.field(field.name).name
        assert value.schema.field(field.name).index == schema.field(field.name).index
        assert value.schema.field(field.name).schema is schema.field(field.name).schema


def test_schema_name_update():
    updated = configured(**{"schema.name": "foo"}).apply(sink(SchemaBuilder.struct().build(), None))
    assert updated.value_schema.name == "foo"


def test_schema_version_update():
    updated = configured(**{"schema.version": 42}).apply(sink(SchemaBuilder.struct().build(), None))
    assert updated.value_schema.version == 42


def test_schema_name_and_version_update():
    xform = configured(**{"schema.name": "foo", "schema.version": "42"})
    updated = xform.apply(sink(SchemaBuilder.struct().build(), None))
    assert updated.value_schema.name == "foo"
    assert updated.value_schema.version == 42


def test_schema_name_and_version_update_with_struct():
    schema = (SchemaBuilder.struct().name("my.orig.SchemaDefn").field("f1", Schema.STRING_SCHEMA)
              .field("f2", Schema.INT32_SCHEMA).build())
    value = Struct(schema).put("f1", "value1").put("f2", 1)
    updated = configured(**{"schema.name": "foo", "schema.version": "42"}).apply(sink(schema, value))
    assert updated.value_schema.name == "foo"
    assert updated.value_schema.version == 42
    assert_matching_schema(updated.value, updated.value_schema)


@pytest.mark.parametrize("replace_null_with_default, expected", [(False, None), (True, "default")])
def test_schema_name_and_version_update_with_struct_and_null_field(replace_null_with_default, expected):
    schema = (SchemaBuilder.struct().name("my.orig.SchemaDefn")
              .field("f1", SchemaBuilder.string().default_value("default").optional().build())
              .field("f2", Schema.INT32_SCHEMA).build())
    value = Struct(schema).put("f1", None).put("f2", 1)
    xform = configured(**{"schema.name": "foo", "schema.version": "42",
                          "replace.null.with.default": replace_null_with_default})
    updated = xform.apply(sink(schema, value))
    assert updated.value_schema.name == "foo"
    assert updated.value_schema.version == 42
    assert_matching_schema(updated.value, updated.value_schema)
    assert updated.value.get_without_default("f1") == expected


def test_value_schema_required():
    with pytest.raises(DataException, match=r"^Schema required for \[updating schema metadata\]$"):
        Value().apply(sink(None, 42))


def test_ignore_record_with_null_value():
    updated = Value().apply(sink(None, None))
    assert updated.key is None
    assert updated.key_schema is None
    assert updated.value is None
    assert updated.value_schema is None


def test_update_schema_of_struct():
    schema = (SchemaBuilder.struct().name("my.orig.SchemaDefn").field("f1", Schema.STRING_SCHEMA)
              .field("f2", Schema.INT32_SCHEMA).build())
    value = Struct(schema).put("f1", "value1").put("f2", 1)
    new_schema = (SchemaBuilder.struct().name("my.updated.SchemaDefn").field("f1", Schema.STRING_SCHEMA)
                  .field("f2", Schema.INT32_SCHEMA).build())
    assert_matching_schema(Value().update_schema_in(value, new_schema), new_schema)


def test_update_schema_of_non_struct():
    value = 1
    assert Value().update_schema_in(value, Schema.INT32_SCHEMA) is value


def test_update_schema_of_null():
    assert Value().update_schema_in(None, Schema.INT32_SCHEMA) is None


# --- beyond Kafka's tests --------------------------------------------------------------------


def test_neither_name_nor_version():
    with pytest.raises(ConfigException, match="^Neither schema name nor version configured$"):
        configured()


def test_version_must_be_an_int():
    with pytest.raises(ConfigException, match=r"^Invalid value x for configuration schema.version: "
                                              r"Not a number of type INT$"):
        configured(**{"schema.version": "x"})


def test_key_side_array_and_map_keep_their_children():
    xform = configured(Key, **{"schema.name": "k"})
    array = SchemaBuilder.array(Schema.INT32_SCHEMA).optional().doc("d").build()
    out = xform.apply(record(array, [1, 2], Schema.STRING_SCHEMA, "v"))
    assert (out.key_schema.name, out.key_schema.value_schema, out.key_schema.optional, out.key_schema.doc) == (
        "k", Schema.INT32_SCHEMA, True, "d")
    assert out.key == [1, 2] and out.value == "v"
    mapping = SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).build()
    out = xform.apply(record(mapping, {"a": 1}))
    assert (out.key_schema.key_schema, out.key_schema.value_schema) == (Schema.STRING_SCHEMA, Schema.INT64_SCHEMA)


def test_schema_with_null_value_is_still_renamed_and_defaults_kept():
    schema = SchemaBuilder.int64().optional().default_value(5).version(1).build()
    out = configured(**{"schema.name": "renamed"}).apply(sink(schema, None))
    assert (out.value_schema.name, out.value_schema.version, out.value_schema.default) == ("renamed", 1, 5)
