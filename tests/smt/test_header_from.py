"""HeaderFrom: ported from Kafka's HeaderFromTest."""

from __future__ import annotations

import pytest

from connector.api import (
    ConfigException,
    DataException,
    Header,
    Schema,
    SchemaBuilder,
    Struct,
)
from smt.transforms.header_from import Key, Value
from tests.smt import record

STRING_SCHEMA = Schema.STRING_SCHEMA


class RecordBuilder:
    def __init__(self):
        self.fields: list[str] = []
        self.field_schemas: list[Schema] = []
        self.field_values: list = []
        self.headers: list[Header] = []

    def with_field(self, name, schema, value):
        self.fields.append(name)
        self.field_schemas.append(schema)
        self.field_values.append(value)
        return self

    def add_header(self, name, schema, value):
        self.headers.append(Header(name, value, schema))
        return self

    def schemaless(self, key_transform):
        value = dict(zip(self.fields, self.field_values))
        return self._record(key_transform, None, value)

    def with_schema(self, key_transform):
        builder = SchemaBuilder.struct()
        for name, schema in zip(self.fields, self.field_schemas):
            builder.field(name, schema)
        schema = builder.build()
        struct = Struct(schema)
        for name, value in zip(self.fields, self.field_values):
            struct.put(name, value)
        return self._record(key_transform, schema, struct)

    def _record(self, key_transform, schema, value):
        headers = self.headers
        if schema is None:
            headers = [Header(h.key, h.value, None) for h in self.headers]
        return record(schema if key_transform else None, value if key_transform else "key",
                      schema if not key_transform else None, value if not key_transform else "value",
                      topic="topic", partition=0, timestamp=0, headers=headers)


def optional_with_default():
    return SchemaBuilder.string().default_value("default").optional().build()


def cases():
    struct_schema = SchemaBuilder.struct().field("foo", STRING_SCHEMA).build()
    struct = Struct(struct_schema).put("foo", "foo-value")
    result = []
    for key_transform in (True, False):
        result += [
            pytest.param(
                key_transform,
                RecordBuilder().with_field("field1", STRING_SCHEMA, "field1-value")
                .with_field("field2", STRING_SCHEMA, "field2-value")
                .add_header("header1", STRING_SCHEMA, "existing-value"),
                ["field1"], ["inserted1"], "copy", True,
                RecordBuilder().with_field("field1", STRING_SCHEMA, "field1-value")
                .with_field("field2", STRING_SCHEMA, "field2-value")
                .add_header("header1", STRING_SCHEMA, "existing-value")
                .add_header("inserted1", STRING_SCHEMA, "field1-value"),
                id=f"basic copy-{key_transform}"),
            pytest.param(
                key_transform,
                RecordBuilder().with_field("field1", STRING_SCHEMA, "field1-value")
                .with_field("field2", STRING_SCHEMA, "field2-value")
                .add_header("header1", STRING_SCHEMA, "existing-value"),
                ["field1"], ["inserted1"], "move", True,
                RecordBuilder().with_field("field2", STRING_SCHEMA, "field2-value")
                .add_header("header1", STRING_SCHEMA, "existing-value")
                .add_header("inserted1", STRING_SCHEMA, "field1-value"),
                id=f"basic move-{key_transform}"),
            pytest.param(
                key_transform,
                RecordBuilder().with_field("field1", STRING_SCHEMA, "field1-value")
                .with_field("field2", STRING_SCHEMA, "field2-value")
                .add_header("inserted1", STRING_SCHEMA, "existing-value"),
                ["field1"], ["inserted1"], "copy", True,
                RecordBuilder().with_field("field1", STRING_SCHEMA, "field1-value")
                .with_field("field2", STRING_SCHEMA, "field2-value")
                .add_header("inserted1", STRING_SCHEMA, "existing-value")
                .add_header("inserted1", STRING_SCHEMA, "field1-value"),
                id=f"copy with preexisting header-{key_transform}"),
            pytest.param(
                key_transform,
                RecordBuilder().with_field("field1", STRING_SCHEMA, "field1-value")
                .with_field("field2", STRING_SCHEMA, "field2-value")
                .add_header("inserted1", STRING_SCHEMA, "existing-value"),
                ["field1"], ["inserted1"], "move", True,
                RecordBuilder().with_field("field2", STRING_SCHEMA, "field2-value")
                .add_header("inserted1", STRING_SCHEMA, "existing-value")
                .add_header("inserted1", STRING_SCHEMA, "field1-value"),
                id=f"move with preexisting header-{key_transform}"),
            pytest.param(
                key_transform,
                RecordBuilder().with_field("field1", struct_schema, struct)
                .with_field("field2", STRING_SCHEMA, "field2-value")
                .add_header("header1", STRING_SCHEMA, "existing-value"),
                ["field1"], ["inserted1"], "copy", True,
                RecordBuilder().with_field("field1", struct_schema, struct)
                .with_field("field2", STRING_SCHEMA, "field2-value")
                .add_header("header1", STRING_SCHEMA, "existing-value")
                .add_header("inserted1", struct_schema, struct),
                id=f"copy with struct value-{key_transform}"),
            pytest.param(
                key_transform,
                RecordBuilder().with_field("field1", struct_schema, struct)
                .with_field("field2", STRING_SCHEMA, "field2-value")
                .add_header("header1", STRING_SCHEMA, "existing-value"),
                ["field1"], ["inserted1"], "move", True,
                RecordBuilder().with_field("field2", STRING_SCHEMA, "field2-value")
                .add_header("header1", STRING_SCHEMA, "existing-value")
                .add_header("inserted1", struct_schema, struct),
                id=f"move with struct value-{key_transform}"),
            pytest.param(
                key_transform,
                RecordBuilder().with_field("field1", STRING_SCHEMA, "field1-value")
                .with_field("field2", STRING_SCHEMA, "field2-value")
                .add_header("header1", STRING_SCHEMA, "existing-value"),
                ["field1", "field1"], ["inserted1", "inserted2"], "move", True,
                RecordBuilder().with_field("field2", STRING_SCHEMA, "field2-value")
                .add_header("header1", STRING_SCHEMA, "existing-value")
                .add_header("inserted1", STRING_SCHEMA, "field1-value")
                .add_header("inserted2", STRING_SCHEMA, "field1-value"),
                id=f"two headers from same field-{key_transform}"),
            pytest.param(
                key_transform,
                RecordBuilder().with_field("field1", STRING_SCHEMA, "field1-value")
                .with_field("field2", STRING_SCHEMA, "field2-value")
                .add_header("header1", STRING_SCHEMA, "existing-value"),
                ["field1", "field2"], ["inserted1", "inserted1"], "move", True,
                RecordBuilder()
                .add_header("header1", STRING_SCHEMA, "existing-value")
                .add_header("inserted1", STRING_SCHEMA, "field1-value")
                .add_header("inserted1", STRING_SCHEMA, "field2-value"),
                id=f"two fields to same header-{key_transform}"),
            pytest.param(
                key_transform,
                RecordBuilder().with_field("field1", optional_with_default(), "field1-value")
                .with_field("field2", optional_with_default(), None)
                .add_header("header1", STRING_SCHEMA, "existing-value"),
                ["field1", "field2"], ["inserted1", "inserted2"], "copy", False,
                RecordBuilder().with_field("field1", optional_with_default(), "field1-value")
                .with_field("field2", optional_with_default(), None)
                .add_header("header1", STRING_SCHEMA, "existing-value")
                .add_header("inserted1", optional_with_default(), "field1-value")
                .add_header("inserted2", optional_with_default(), None),
                id=f"Copy null field without default-{key_transform}"),
            pytest.param(
                key_transform,
                RecordBuilder().with_field("field1", optional_with_default(), "field1-value")
                .with_field("field2", optional_with_default(), None)
                .add_header("header1", STRING_SCHEMA, "existing-value"),
                ["field1", "field2"], ["inserted1", "inserted2"], "move", False,
                RecordBuilder()
                .add_header("header1", STRING_SCHEMA, "existing-value")
                .add_header("inserted1", optional_with_default(), "field1-value")
                .add_header("inserted2", optional_with_default(), None),
                id=f"Move null field without default-{key_transform}"),
        ]
    return result


def config(headers, fields, operation, use_field_default):
    return {"headers": headers, "fields": fields, "operation": operation,
            "replace.null.with.default": use_field_default}


def assert_same_record(expected, transformed):
    for attribute in ("topic", "kafka_partition", "key_schema", "key", "value_schema", "value", "timestamp",
                      "headers"):
        assert getattr(transformed, attribute) == getattr(expected, attribute), attribute


@pytest.mark.parametrize("key_transform, original, fields, headers, operation, use_default, expected", cases())
def test_schemaless(key_transform, original, fields, headers, operation, use_default, expected):
    xform = Key() if key_transform else Value()
    xform.configure(config(headers, fields, operation, use_default))
    assert_same_record(expected.schemaless(key_transform), xform.apply(original.schemaless(key_transform)))


@pytest.mark.parametrize("key_transform, original, fields, headers, operation, use_default, expected", cases())
def test_with_schema(key_transform, original, fields, headers, operation, use_default, expected):
    xform = Key() if key_transform else Value()
    xform.configure(config(headers, fields, operation, use_default))
    assert_same_record(expected.with_schema(key_transform), xform.apply(original.with_schema(key_transform)))


@pytest.mark.parametrize("key_transform", [True, False])
def test_invalid_config_extra_header_config(key_transform):
    with pytest.raises(ConfigException):
        (Key() if key_transform else Value()).configure(config(["foo"], ["foo", "bar"], "copy", True))


@pytest.mark.parametrize("key_transform", [True, False])
def test_invalid_config_extra_field_config(key_transform):
    with pytest.raises(ConfigException, match=r"^'fields' config must have the same number of elements as "
                                              r"'headers' config\.$"):
        (Key() if key_transform else Value()).configure(config(["foo", "bar"], ["foo"], "copy", True))


@pytest.mark.parametrize("key_transform", [True, False])
def test_invalid_config_empty_headers_and_fields_config(key_transform):
    with pytest.raises(ConfigException):
        (Key() if key_transform else Value()).configure(config([], [], "copy", True))


# --- beyond Kafka's tests --------------------------------------------------------------------


def test_invalid_operation():
    with pytest.raises(ConfigException, match=r"^Invalid value rename for configuration operation: "
                                              r"String must be one of: move, copy$"):
        Value().configure(config(["h"], ["f"], "rename", True))


def test_null_with_default_is_copied_as_default():
    schema = SchemaBuilder.struct().field("f", optional_with_default()).build()
    xform = Value()
    xform.configure(config(["h"], ["f"], "copy", True))
    out = xform.apply(record(value_schema=schema, value=Struct(schema).put("f", None)))
    assert out.headers == (Header("h", "default", optional_with_default()),)


def test_null_into_required_header_schema_fails():
    # A required field left unset holds null; ConnectHeaders.add refuses it for a required schema.
    schema = SchemaBuilder.struct().field("f", Schema.OPTIONAL_STRING_SCHEMA).field("r", STRING_SCHEMA).build()
    xform = Value()
    xform.configure(config(["h"], ["r"], "copy", True))
    with pytest.raises(DataException, match=r"^A null value requires an optional schema but was Schema\{STRING\}$"):
        xform.apply(record(value_schema=schema, value=Struct(schema).put("f", "x")))


def test_missing_field_schemaless_gives_null_header_and_with_schema_fails():
    xform = Value()
    xform.configure(config(["h"], ["missing"], "move", True))
    out = xform.apply(record(value={"a": 1}))
    assert out.value == {"a": 1}
    assert out.headers == (Header("h", None, None),)
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataException):  # Kafka: NullPointerException
        xform.apply(record(value_schema=schema, value=Struct(schema).put("a", 1)))


def test_null_value_is_not_a_map_or_struct():
    xform = Value()
    xform.configure(config(["h"], ["f"], "copy", True))
    with pytest.raises(DataException, match=r"^Only Map objects supported in absence of schema for "
                                            r"\[header copy\], found: null$"):
        xform.apply(record(value=None))
    with pytest.raises(DataException, match=r"\[header copy\], found: null$"):
        xform.apply(record(value_schema=SchemaBuilder.struct().optional().build(), value=None))
