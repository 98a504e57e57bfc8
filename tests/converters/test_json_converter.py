"""JsonConverter: Kafka's JsonConverterTest and JsonConverterConfigTest, ported, plus exact-bytes checks.

Each ``test_*`` named after a Kafka test keeps that test's inputs and expected
outputs (``java.util.Date`` values become ``date``/``time``/``datetime``, a
Java ``float`` becomes a float32-rounded Python float). The tests after the
port pin down what Kafka's tests leave implicit: the exact bytes written,
error texts, and Jackson's reading rules.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal

import pytest

from connector.api import (
    ConfigException,
    DataException,
    Date,
    Decimal,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from connector.api.java.jackson import read_tree
from connector.api.java.numbers import to_float32
from converters.json import DecimalFormat, JsonConverter, JsonConverterConfig

TOPIC = "topic"
UTC = dt.timezone.utc


@pytest.fixture
def converter() -> JsonConverter:
    c = JsonConverter()
    c.configure({}, False)
    return c


def parse(data: bytes | str):
    """The JSON tree of ``data``, read the way Kafka's test reads it (exact decimals)."""
    return read_tree(data.encode() if isinstance(data, str) else data)


def validate_envelope(env) -> None:
    assert isinstance(env, dict) and len(env) == 2
    assert isinstance(env["schema"], dict)
    assert "payload" in env


def validate_envelope_null_schema(env) -> None:
    assert isinstance(env, dict) and len(env) == 2
    assert env["schema"] is None
    assert "payload" in env


def to_connect(converter: JsonConverter, text: str) -> SchemaAndValue:
    return converter.to_connect_data(TOPIC, text.encode())


# ---------------------------------------------------------------- schema metadata ----


def test_connect_schema_metadata_translation(converter):
    assert to_connect(converter, '{ "schema": { "type": "boolean" }, "payload": true }') == \
        SchemaAndValue(Schema.BOOLEAN_SCHEMA, True)
    assert to_connect(converter, '{ "schema": { "type": "boolean", "optional": true }, "payload": null }') == \
        SchemaAndValue(Schema.OPTIONAL_BOOLEAN_SCHEMA, None)
    assert to_connect(converter, '{ "schema": { "type": "boolean", "default": true }, "payload": null }') == \
        SchemaAndValue(SchemaBuilder.bool().default_value(True).build(), True)
    expected = (SchemaBuilder.bool().required().name("bool").version(2).doc("the documentation")
                .parameter("foo", "bar").build())
    assert to_connect(
        converter,
        '{ "schema": { "type": "boolean", "optional": false, "name": "bool", "version": 2, '
        '"doc": "the documentation", "parameters": { "foo": "bar" }}, "payload": true }',
    ) == SchemaAndValue(expected, True)


# --------------------------------------------------------------- to Connect ----------


def test_boolean_to_connect(converter):
    assert to_connect(converter, '{ "schema": { "type": "boolean" }, "payload": true }') == \
        SchemaAndValue(Schema.BOOLEAN_SCHEMA, True)
    assert to_connect(converter, '{ "schema": { "type": "boolean" }, "payload": false }') == \
        SchemaAndValue(Schema.BOOLEAN_SCHEMA, False)


def test_byte_to_connect(converter):
    assert to_connect(converter, '{ "schema": { "type": "int8" }, "payload": 12 }') == \
        SchemaAndValue(Schema.INT8_SCHEMA, 12)


def test_short_to_connect(converter):
    assert to_connect(converter, '{ "schema": { "type": "int16" }, "payload": 12 }') == \
        SchemaAndValue(Schema.INT16_SCHEMA, 12)


def test_int_to_connect(converter):
    assert to_connect(converter, '{ "schema": { "type": "int32" }, "payload": 12 }') == \
        SchemaAndValue(Schema.INT32_SCHEMA, 12)


def test_long_to_connect(converter):
    assert to_connect(converter, '{ "schema": { "type": "int64" }, "payload": 12 }') == \
        SchemaAndValue(Schema.INT64_SCHEMA, 12)
    assert to_connect(converter, '{ "schema": { "type": "int64" }, "payload": 4398046511104 }') == \
        SchemaAndValue(Schema.INT64_SCHEMA, 4398046511104)


def test_number_with_leading_zeros_to_connect(converter):
    assert to_connect(converter, '{ "schema": { "type": "int8" }, "payload": 0012 }') == \
        SchemaAndValue(Schema.INT8_SCHEMA, 12)
    assert to_connect(converter, '{ "schema": { "type": "int16" }, "payload": 000123 }') == \
        SchemaAndValue(Schema.INT16_SCHEMA, 123)
    assert to_connect(converter, '{ "schema": { "type": "int32" }, "payload": 000012345 }') == \
        SchemaAndValue(Schema.INT32_SCHEMA, 12345)
    assert to_connect(converter, '{ "schema": { "type": "int64" }, "payload": 00000123456789 }') == \
        SchemaAndValue(Schema.INT64_SCHEMA, 123456789)


def test_float_to_connect(converter):
    assert to_connect(converter, '{ "schema": { "type": "float" }, "payload": 12.34 }') == \
        SchemaAndValue(Schema.FLOAT32_SCHEMA, to_float32(12.34))


def test_double_to_connect(converter):
    assert to_connect(converter, '{ "schema": { "type": "double" }, "payload": 12.34 }') == \
        SchemaAndValue(Schema.FLOAT64_SCHEMA, 12.34)


def test_bytes_to_connect(converter):
    result = to_connect(converter, '{ "schema": { "type": "bytes" }, "payload": "dGVzdC1zdHJpbmc=" }')
    assert result.value == b"test-string"


def test_string_to_connect(converter):
    assert to_connect(converter, '{ "schema": { "type": "string" }, "payload": "foo-bar-baz" }') == \
        SchemaAndValue(Schema.STRING_SCHEMA, "foo-bar-baz")


def test_array_to_connect(converter):
    text = '{ "schema": { "type": "array", "items": { "type" : "int32" } }, "payload": [1, 2, 3] }'
    assert to_connect(converter, text) == \
        SchemaAndValue(SchemaBuilder.array(Schema.INT32_SCHEMA).build(), [1, 2, 3])


def test_map_to_connect_string_keys(converter):
    text = ('{ "schema": { "type": "map", "keys": { "type" : "string" }, "values": { "type" : "int32" } }, '
            '"payload": { "key1": 12, "key2": 15} }')
    assert to_connect(converter, text) == SchemaAndValue(
        SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build(), {"key1": 12, "key2": 15})


def test_map_to_connect_non_string_keys(converter):
    text = ('{ "schema": { "type": "map", "keys": { "type" : "int32" }, "values": { "type" : "int32" } }, '
            '"payload": [ [1, 12], [2, 15] ] }')
    assert to_connect(converter, text) == SchemaAndValue(
        SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.INT32_SCHEMA).build(), {1: 12, 2: 15})


def test_struct_to_connect(converter):
    text = ('{ "schema": { "type": "struct", "fields": [{ "field": "field1", "type": "boolean" }, '
            '{ "field": "field2", "type": "string" }] }, "payload": { "field1": true, "field2": "string" } }')
    expected_schema = (SchemaBuilder.struct().field("field1", Schema.BOOLEAN_SCHEMA)
                       .field("field2", Schema.STRING_SCHEMA).build())
    expected = Struct(expected_schema).put("field1", True).put("field2", "string")
    assert to_connect(converter, text) == SchemaAndValue(expected_schema, expected)


def test_struct_with_optional_field_to_connect(converter):
    text = ('{ "schema": { "type": "struct", "fields": [{ "field":"optional", "type": "string", "optional": true }, '
            '{  "field": "required", "type": "string" }] }, "payload": { "required": "required" } }')
    expected_schema = (SchemaBuilder.struct().field("optional", Schema.OPTIONAL_STRING_SCHEMA)
                       .field("required", Schema.STRING_SCHEMA).build())
    expected = Struct(expected_schema).put("required", "required")
    assert to_connect(converter, text) == SchemaAndValue(expected_schema, expected)


def test_null_to_connect(converter):
    # A tombstone reads as SchemaAndValue.NULL whatever schemas.enable says.
    assert converter.to_connect_data(TOPIC, None) == SchemaAndValue(None, None)


def test_empty_bytes_to_connect(converter):
    converter.configure({"schemas.enable": False}, True)
    assert converter.to_connect_data(TOPIC, b"") == SchemaAndValue(None, None)


def test_schemaless_with_empty_field_value_to_connect(converter):
    converter.configure({"schemas.enable": False}, True)
    assert to_connect(converter, '{ "a": "", "b": null}') == SchemaAndValue(None, {"a": "", "b": None})


def test_null_schema_primitive_to_connect(converter):
    assert to_connect(converter, '{ "schema": null, "payload": null }') == SchemaAndValue(None, None)
    assert to_connect(converter, '{ "schema": null, "payload": true }') == SchemaAndValue(None, True)
    # Integral numbers read as INT64, others as FLOAT64.
    converted = to_connect(converter, '{ "schema": null, "payload": 12 }')
    assert converted == SchemaAndValue(None, 12) and type(converted.value) is int
    converted = to_connect(converter, '{ "schema": null, "payload": 12.24 }')
    assert converted == SchemaAndValue(None, 12.24) and type(converted.value) is float
    assert to_connect(converter, '{ "schema": null, "payload": "a string" }') == SchemaAndValue(None, "a string")
    assert to_connect(converter, '{ "schema": null, "payload": [1, "2", 3] }') == SchemaAndValue(None, [1, "2", 3])
    assert to_connect(converter, '{ "schema": null, "payload": { "field1": 1, "field2": 2} }') == \
        SchemaAndValue(None, {"field1": 1, "field2": 2})


DECIMAL_SCHEMA_JSON = '"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1'


def test_decimal_to_connect(converter):
    # "AJw=" is the bytes {0, -100}: the two's complement of 156.
    result = to_connect(converter, f'{{ "schema": {{ {DECIMAL_SCHEMA_JSON}, "parameters": {{ "scale": "2" }} }}, '
                                   '"payload": "AJw=" }')
    assert result.schema == Decimal.schema(2)
    assert result.value == decimal.Decimal("1.56") and result.value.as_tuple().exponent == -2


def test_decimal_to_connect_optional(converter):
    result = to_connect(converter, f'{{ "schema": {{ {DECIMAL_SCHEMA_JSON}, "optional": true, '
                                   '"parameters": { "scale": "2" } }, "payload": null }')
    assert result.schema == Decimal.builder(2).optional().build()
    assert result.value is None


def test_decimal_to_connect_with_default_value(converter):
    reference = decimal.Decimal("1.56")
    result = to_connect(converter, f'{{ "schema": {{ {DECIMAL_SCHEMA_JSON}, "default": "AJw=", '
                                   '"parameters": { "scale": "2" } }, "payload": null }')
    assert result.schema == Decimal.builder(2).default_value(reference).build()
    assert result.value == reference


def test_decimal_to_connect_optional_with_default_value(converter):
    reference = decimal.Decimal("1.56")
    result = to_connect(converter, f'{{ "schema": {{ {DECIMAL_SCHEMA_JSON}, "optional": true, "default": "AJw=", '
                                   '"parameters": { "scale": "2" } }, "payload": null }')
    assert result.schema == Decimal.builder(2).optional().default_value(reference).build()
    assert result.value == reference


def test_numeric_decimal_to_connect(converter):
    result = to_connect(converter, f'{{ "schema": {{ {DECIMAL_SCHEMA_JSON}, "parameters": {{ "scale": "2" }} }}, '
                                   '"payload": 1.56 }')
    assert result.schema == Decimal.schema(2)
    assert result.value == decimal.Decimal("1.56") and result.value.as_tuple().exponent == -2


def test_numeric_decimal_with_trailing_zeros_to_connect(converter):
    result = to_connect(converter, f'{{ "schema": {{ {DECIMAL_SCHEMA_JSON}, "parameters": {{ "scale": "4" }} }}, '
                                   '"payload": 1.5600 }')
    assert result.schema == Decimal.schema(4)
    assert result.value.as_tuple() == decimal.Decimal("1.5600").as_tuple()


def test_high_precision_numeric_decimal_to_connect(converter):
    # Too precise for a float64.
    result = to_connect(converter, f'{{ "schema": {{ {DECIMAL_SCHEMA_JSON}, "parameters": {{ "scale": "17" }} }}, '
                                   '"payload": 1.23456789123456789 }')
    assert result.schema == Decimal.schema(17)
    assert result.value.as_tuple() == decimal.Decimal("1.23456789123456789").as_tuple()


def _logical(name: str, extra: str = "") -> str:
    base = "int64" if name == "Timestamp" else "int32"
    return f'"type": "{base}", "name": "org.apache.kafka.connect.data.{name}", "version": 1{extra}'


def _logical_message(name: str, payload: str, extra: str = "") -> str:
    return f'{{ "schema": {{ {_logical(name, extra)} }}, "payload": {payload} }}'


OPTIONAL = ', "optional": true'


def test_date_to_connect(converter):
    result = to_connect(converter, _logical_message("Date", "10000"))
    assert result.schema == Date.SCHEMA
    assert result.value == dt.date(1970, 1, 1) + dt.timedelta(days=10000)


def test_date_to_connect_optional(converter):
    result = to_connect(converter, _logical_message("Date", "null", OPTIONAL))
    assert result == SchemaAndValue(Date.builder().optional().build(), None)


def test_date_to_connect_with_default_value(converter):
    result = to_connect(converter, _logical_message("Date", "null", ', "default": 0'))
    reference = dt.date(1970, 1, 1)
    assert result == SchemaAndValue(Date.builder().default_value(reference).build(), reference)


def test_date_to_connect_optional_with_default_value(converter):
    extra = ', "optional": true, "default": 0'
    result = to_connect(converter, _logical_message("Date", "null", extra))
    reference = dt.date(1970, 1, 1)
    assert result == SchemaAndValue(Date.builder().optional().default_value(reference).build(), reference)


def test_time_to_connect(converter):
    result = to_connect(converter, _logical_message("Time", "14400000"))
    assert result == SchemaAndValue(Time.SCHEMA, dt.time(4, 0))


def test_time_to_connect_optional(converter):
    result = to_connect(converter, _logical_message("Time", "null", OPTIONAL))
    assert result == SchemaAndValue(Time.builder().optional().build(), None)


def test_time_to_connect_with_default_value(converter):
    result = to_connect(converter, _logical_message("Time", "null", ', "default": 0'))
    assert result == SchemaAndValue(Time.builder().default_value(dt.time(0)).build(), dt.time(0))


def test_time_to_connect_optional_with_default_value(converter):
    extra = ', "optional": true, "default": 0'
    result = to_connect(converter, _logical_message("Time", "null", extra))
    assert result == SchemaAndValue(Time.builder().optional().default_value(dt.time(0)).build(), dt.time(0))


def test_timestamp_to_connect(converter):
    result = to_connect(converter, _logical_message("Timestamp", "4000000000"))
    expected = dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(milliseconds=4_000_000_000)
    assert result == SchemaAndValue(Timestamp.SCHEMA, expected)


def test_timestamp_to_connect_optional(converter):
    extra = ', "optional": true'
    result = to_connect(converter, _logical_message("Timestamp", "null", extra))
    assert result == SchemaAndValue(Timestamp.builder().optional().build(), None)


def test_timestamp_to_connect_with_default_value(converter):
    result = to_connect(converter, _logical_message("Timestamp", "null", ', "default": 42'))
    reference = dt.datetime(1970, 1, 1, 0, 0, 0, 42_000, tzinfo=UTC)
    assert result == SchemaAndValue(Timestamp.builder().default_value(reference).build(), reference)


def test_timestamp_to_connect_optional_with_default_value(converter):
    extra = ',  "optional": true, "default": 42'
    result = to_connect(converter, _logical_message("Timestamp", "null", extra))
    reference = dt.datetime(1970, 1, 1, 0, 0, 0, 42_000, tzinfo=UTC)
    assert result == SchemaAndValue(Timestamp.builder().optional().default_value(reference).build(), reference)


# ----------------------------------------------------------------- to JSON -----------


def test_json_schema_metadata_translation(converter):
    converted = parse(converter.from_connect_data(TOPIC, Schema.BOOLEAN_SCHEMA, True))
    validate_envelope(converted)
    assert converted["schema"] == parse('{ "type": "boolean", "optional": false }')
    assert converted["payload"] is True

    converted = parse(converter.from_connect_data(TOPIC, Schema.OPTIONAL_BOOLEAN_SCHEMA, None))
    validate_envelope(converted)
    assert converted["schema"] == parse('{ "type": "boolean", "optional": true }')
    assert converted["payload"] is None

    converted = parse(converter.from_connect_data(TOPIC, SchemaBuilder.bool().default_value(True).build(), True))
    validate_envelope(converted)
    assert converted["schema"] == parse('{ "type": "boolean", "optional": false, "default": true }')
    assert converted["payload"] is True

    schema = (SchemaBuilder.bool().required().name("bool").version(3).doc("the documentation")
              .parameter("foo", "bar").build())
    converted = parse(converter.from_connect_data(TOPIC, schema, True))
    validate_envelope(converted)
    assert converted["schema"] == parse('{ "type": "boolean", "optional": false, "name": "bool", "version": 3, '
                                        '"doc": "the documentation", "parameters": { "foo": "bar" }}')
    assert converted["payload"] is True


def test_cache_schema_to_connect_conversion(converter):
    assert converter.to_connect_schema_cache_size == 0
    to_connect(converter, '{ "schema": { "type": "boolean" }, "payload": true }')
    assert converter.to_connect_schema_cache_size == 1
    to_connect(converter, '{ "schema": { "type": "boolean" }, "payload": true }')
    assert converter.to_connect_schema_cache_size == 1
    # A different schema gets its own entry...
    to_connect(converter, '{ "schema": { "type": "boolean", "optional": true }, "payload": true }')
    assert converter.to_connect_schema_cache_size == 2
    # ...and so does a different JSON spelling of an equivalent schema.
    to_connect(converter, '{ "schema": { "type": "boolean", "optional": false }, "payload": true }')
    assert converter.to_connect_schema_cache_size == 3


def test_boolean_to_json(converter):
    converted = parse(converter.from_connect_data(TOPIC, Schema.BOOLEAN_SCHEMA, True))
    validate_envelope(converted)
    assert converted["schema"] == parse('{ "type": "boolean", "optional": false }')
    assert converted["payload"] is True


@pytest.mark.parametrize("schema, type_name", [
    (Schema.INT8_SCHEMA, "int8"), (Schema.INT16_SCHEMA, "int16"), (Schema.INT32_SCHEMA, "int32"),
])
def test_byte_short_int_to_json(converter, schema, type_name):
    # Kafka's byteToJson, shortToJson and intToJson.
    converted = parse(converter.from_connect_data(TOPIC, schema, 12))
    validate_envelope(converted)
    assert converted["schema"] == parse(f'{{ "type": "{type_name}", "optional": false }}')
    assert converted["payload"] == 12


def test_long_to_json(converter):
    converted = parse(converter.from_connect_data(TOPIC, Schema.INT64_SCHEMA, 4398046511104))
    validate_envelope(converted)
    assert converted["schema"] == parse('{ "type": "int64", "optional": false }')
    assert converted["payload"] == 4398046511104


def test_float_to_json(converter):
    converted = parse(converter.from_connect_data(TOPIC, Schema.FLOAT32_SCHEMA, to_float32(12.34)))
    validate_envelope(converted)
    assert converted["schema"] == parse('{ "type": "float", "optional": false }')
    assert float(converted["payload"]) == pytest.approx(12.34, abs=0.001)


def test_double_to_json(converter):
    converted = parse(converter.from_connect_data(TOPIC, Schema.FLOAT64_SCHEMA, 12.34))
    validate_envelope(converted)
    assert converted["schema"] == parse('{ "type": "double", "optional": false }')
    assert float(converted["payload"]) == pytest.approx(12.34, abs=0.001)


def test_bytes_to_json(converter):
    converted = parse(converter.from_connect_data(TOPIC, Schema.BYTES_SCHEMA, b"test-string"))
    validate_envelope(converted)
    assert converted["schema"] == parse('{ "type": "bytes", "optional": false }')
    assert base64.b64decode(converted["payload"]) == b"test-string"


def test_string_to_json(converter):
    converted = parse(converter.from_connect_data(TOPIC, Schema.STRING_SCHEMA, "test-string"))
    validate_envelope(converted)
    assert converted["schema"] == parse('{ "type": "string", "optional": false }')
    assert converted["payload"] == "test-string"


def test_array_to_json(converter):
    schema = SchemaBuilder.array(Schema.INT32_SCHEMA).build()
    converted = parse(converter.from_connect_data(TOPIC, schema, [1, 2, 3]))
    validate_envelope(converted)
    assert converted["schema"] == parse(
        '{ "type": "array", "items": { "type": "int32", "optional": false }, "optional": false }')
    assert converted["payload"] == [1, 2, 3]


def test_map_to_json_string_keys(converter):
    schema = SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build()
    converted = parse(converter.from_connect_data(TOPIC, schema, {"key1": 12, "key2": 15}))
    validate_envelope(converted)
    assert converted["schema"] == parse(
        '{ "type": "map", "keys": { "type" : "string", "optional": false }, '
        '"values": { "type" : "int32", "optional": false }, "optional": false }')
    assert converted["payload"] == {"key1": 12, "key2": 15}


def test_map_to_json_non_string_keys(converter):
    schema = SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.INT32_SCHEMA).build()
    converted = parse(converter.from_connect_data(TOPIC, schema, {1: 12, 2: 15}))
    validate_envelope(converted)
    assert converted["schema"] == parse(
        '{ "type": "map", "keys": { "type" : "int32", "optional": false }, '
        '"values": { "type" : "int32", "optional": false }, "optional": false }')
    payload = converted["payload"]
    assert isinstance(payload, list) and len(payload) == 2
    assert {tuple(entry) for entry in payload} == {(1, 12), (2, 15)}


def test_struct_to_json(converter):
    schema = (SchemaBuilder.struct().field("field1", Schema.BOOLEAN_SCHEMA).field("field2", Schema.STRING_SCHEMA)
              .field("field3", Schema.STRING_SCHEMA).field("field4", Schema.BOOLEAN_SCHEMA).build())
    value = (Struct(schema).put("field1", True).put("field2", "string2").put("field3", "string3")
             .put("field4", False))
    converted = parse(converter.from_connect_data(TOPIC, schema, value))
    validate_envelope(converted)
    assert converted["schema"] == parse(
        '{ "type": "struct", "optional": false, "fields": ['
        '{ "field": "field1", "type": "boolean", "optional": false }, '
        '{ "field": "field2", "type": "string", "optional": false }, '
        '{ "field": "field3", "type": "string", "optional": false }, '
        '{ "field": "field4", "type": "boolean", "optional": false }] }')
    assert converted["payload"] == {"field1": True, "field2": "string2", "field3": "string3", "field4": False}


def test_struct_schema_identical(converter):
    def build() -> Schema:
        return (SchemaBuilder.struct().field("field1", Schema.BOOLEAN_SCHEMA)
                .field("field2", Schema.STRING_SCHEMA).field("field3", Schema.STRING_SCHEMA)
                .field("field4", Schema.BOOLEAN_SCHEMA).build())
    schema, input_schema = build(), build()
    value = (Struct(input_schema).put("field1", True).put("field2", "string2").put("field3", "string3")
             .put("field4", False))
    converter.from_connect_data(TOPIC, schema, value)  # an equal (not the same) schema is accepted
    assert schema == value.schema


DECIMAL_ENVELOPE_SCHEMA = ('{ "type": "bytes", "optional": false, "name": "org.apache.kafka.connect.data.Decimal", '
                           '"version": 1, "parameters": { "scale": "%d" } }')


def test_decimal_to_json(converter):
    converted = parse(converter.from_connect_data(TOPIC, Decimal.schema(2), decimal.Decimal("1.56")))
    validate_envelope(converted)
    assert converted["schema"] == parse(DECIMAL_ENVELOPE_SCHEMA % 2)
    assert isinstance(converted["payload"], str), "expected node to be base64 text"
    assert base64.b64decode(converted["payload"]) == bytes([0, 156])


def test_decimal_to_numeric_json(converter):
    converter.configure({"decimal.format": DecimalFormat.NUMERIC.value}, False)
    converted = parse(converter.from_connect_data(TOPIC, Decimal.schema(2), decimal.Decimal("1.56")))
    validate_envelope(converted)
    assert converted["schema"] == parse(DECIMAL_ENVELOPE_SCHEMA % 2)
    assert isinstance(converted["payload"], decimal.Decimal), "expected node to be numeric"
    assert converted["payload"].as_tuple() == decimal.Decimal("1.56").as_tuple()


def test_decimal_with_trailing_zeros_to_numeric_json(converter):
    converter.configure({"decimal.format": DecimalFormat.NUMERIC.value}, False)
    converted = parse(converter.from_connect_data(TOPIC, Decimal.schema(4), decimal.Decimal("1.5600")))
    validate_envelope(converted)
    assert converted["schema"] == parse(DECIMAL_ENVELOPE_SCHEMA % 4)
    assert converted["payload"].as_tuple() == decimal.Decimal("1.5600").as_tuple()


def test_decimal_to_json_without_schema(converter):
    with pytest.raises(DataException):
        converter.from_connect_data(TOPIC, None, decimal.Decimal("1.56"))


def test_date_to_json(converter):
    value = dt.date(1970, 1, 1) + dt.timedelta(days=10000)
    converted = parse(converter.from_connect_data(TOPIC, Date.SCHEMA, value))
    validate_envelope(converted)
    assert converted["schema"] == parse('{ "type": "int32", "optional": false, '
                                        '"name": "org.apache.kafka.connect.data.Date", "version": 1 }')
    assert converted["payload"] == 10000


def test_time_to_json(converter):
    converted = parse(converter.from_connect_data(TOPIC, Time.SCHEMA, dt.time(4, 0)))
    validate_envelope(converted)
    assert converted["schema"] == parse('{ "type": "int32", "optional": false, '
                                        '"name": "org.apache.kafka.connect.data.Time", "version": 1 }')
    assert converted["payload"] == 14400000


def test_timestamp_to_json(converter):
    value = dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(milliseconds=4_000_000_000)
    converted = parse(converter.from_connect_data(TOPIC, Timestamp.SCHEMA, value))
    validate_envelope(converted)
    assert converted["schema"] == parse('{ "type": "int64", "optional": false, '
                                        '"name": "org.apache.kafka.connect.data.Timestamp", "version": 1 }')
    assert converted["payload"] == 4_000_000_000


def test_null_schema_and_primitive_to_json(converter):
    converted = parse(converter.from_connect_data(TOPIC, None, True))
    validate_envelope_null_schema(converted)
    assert converted["payload"] is True


def test_null_schema_and_array_to_json(converter):
    converted = parse(converter.from_connect_data(TOPIC, None, [1, "string", True]))
    validate_envelope_null_schema(converted)
    assert converted["payload"] == [1, "string", True]


def test_null_schema_and_map_to_json(converter):
    value = {"key1": 12, "key2": "string", "key3": True}
    converted = parse(converter.from_connect_data(TOPIC, None, value))
    validate_envelope_null_schema(converted)
    assert converted["payload"] == value


def test_null_schema_and_map_non_string_keys_to_json(converter):
    converted = parse(converter.from_connect_data(TOPIC, None, {"string": 12, 52: "string", False: True}))
    validate_envelope_null_schema(converted)
    payload = converted["payload"]
    assert isinstance(payload, list) and len(payload) == 3
    assert {tuple(entry) for entry in payload} == {("string", 12), (52, "string"), (False, True)}


def test_null_schema_and_null_value_to_json(converter):
    # A tombstone with schemas enabled.
    converter.configure({"schemas.enable": True}, True)
    assert converter.from_connect_data(TOPIC, None, None) is None


def test_null_value_to_json(converter):
    # A tombstone with schemas disabled.
    converter.configure({"schemas.enable": False}, True)
    assert converter.from_connect_data(TOPIC, None, None) is None


def test_mismatch_schema_json(converter):
    with pytest.raises(DataException):
        converter.from_connect_data(TOPIC, Schema.FLOAT64_SCHEMA, True)


def test_no_schema_to_connect(converter):
    converter.configure({"schemas.enable": False}, True)
    assert converter.to_connect_data(TOPIC, b"true") == SchemaAndValue(None, True)


def test_no_schema_to_json(converter):
    converter.configure({"schemas.enable": False}, True)
    assert parse(converter.from_connect_data(TOPIC, None, True)) is True


def test_cache_schema_to_json_conversion(converter):
    assert converter.from_connect_schema_cache_size == 0
    # Equal schemas share an entry, even as different objects.
    converter.from_connect_data(TOPIC, SchemaBuilder.bool().build(), True)
    assert converter.from_connect_schema_cache_size == 1
    converter.from_connect_data(TOPIC, SchemaBuilder.bool().build(), True)
    assert converter.from_connect_schema_cache_size == 1
    converter.from_connect_data(TOPIC, SchemaBuilder.bool().optional().build(), True)
    assert converter.from_connect_schema_cache_size == 2


def test_json_schema_cache_size_from_config_file(converter):
    # Kafka reads connect-test.properties (schemas.cache.size=1); the string passes through.
    converter.configure({"schemas.cache.size": "1"}, False)
    converter.from_connect_data(TOPIC, Schema.BOOLEAN_SCHEMA, True)
    converter.from_connect_data(TOPIC, Schema.INT32_SCHEMA, 1)
    assert converter.from_connect_schema_cache_size == 1


def test_string_header_to_json(converter):
    converted = parse(converter.from_connect_header(TOPIC, "headerName", Schema.STRING_SCHEMA, "test-string"))
    validate_envelope(converted)
    assert converted["schema"] == parse('{ "type": "string", "optional": false }')
    assert converted["payload"] == "test-string"


def test_string_header_to_connect(converter):
    data = b'{ "schema": { "type": "string" }, "payload": "foo-bar-baz" }'
    assert converter.to_connect_header(TOPIC, "headerName", data) == SchemaAndValue(Schema.STRING_SCHEMA, "foo-bar-baz")


STRING_WITH_DEFAULT = SchemaBuilder.string().optional().default_value("default").build()


def test_serialize_null_to_default(converter):
    converter.configure({"replace.null.with.default": True}, False)
    converted = parse(converter.from_connect_data(TOPIC, STRING_WITH_DEFAULT, None))
    assert converted == parse('{"schema":{"type":"string","optional":true,"default":"default"},"payload":"default"}')


def test_serialize_null_to_null(converter):
    converter.configure({"replace.null.with.default": False}, False)
    converted = parse(converter.from_connect_data(TOPIC, STRING_WITH_DEFAULT, None))
    assert converted == parse('{"schema":{"type":"string","optional":true,"default":"default"},"payload":null}')


def test_deserialize_null_to_default(converter):
    converter.configure({"replace.null.with.default": True}, False)
    value = b'{"schema":{"type":"string","optional":true,"default":"default"},"payload":null}'
    assert converter.to_connect_data(TOPIC, value).value == "default"


def test_deserialize_null_to_null(converter):
    converter.configure({"replace.null.with.default": False}, False)
    value = b'{"schema":{"type":"string","optional":true,"default":"default"},"payload":null}'
    assert converter.to_connect_data(TOPIC, value).value is None


STRUCT_WITH_DEFAULT_FIELD = SchemaBuilder.struct().field("field1", STRING_WITH_DEFAULT).build()
STRUCT_WITH_DEFAULT_FIELD_JSON = ('{"type":"struct","fields":[{"field":"field1","type":"string","optional":true,'
                                  '"default":"default"}],"optional":false}')


def test_serialize_field_null_to_default(converter):
    converter.configure({"replace.null.with.default": True}, False)
    converted = parse(converter.from_connect_data(TOPIC, STRUCT_WITH_DEFAULT_FIELD, Struct(STRUCT_WITH_DEFAULT_FIELD)))
    assert converted == parse(f'{{"schema":{STRUCT_WITH_DEFAULT_FIELD_JSON},"payload":{{"field1":"default"}}}}')


def test_serialize_field_null_to_null(converter):
    converter.configure({"replace.null.with.default": False}, False)
    converted = parse(converter.from_connect_data(TOPIC, STRUCT_WITH_DEFAULT_FIELD, Struct(STRUCT_WITH_DEFAULT_FIELD)))
    assert converted == parse(f'{{"schema":{STRUCT_WITH_DEFAULT_FIELD_JSON},"payload":{{"field1":null}}}}')


def test_deserialize_field_null_to_default(converter):
    converter.configure({"replace.null.with.default": True}, False)
    value = f'{{"schema":{STRUCT_WITH_DEFAULT_FIELD_JSON},"payload":{{"field1":null}}}}'.encode()
    assert converter.to_connect_data(TOPIC, value).value == Struct(STRUCT_WITH_DEFAULT_FIELD).put("field1", "default")


def test_deserialize_field_null_to_null(converter):
    converter.configure({"replace.null.with.default": False}, False)
    value = f'{{"schema":{STRUCT_WITH_DEFAULT_FIELD_JSON},"payload":{{"field1":null}}}}'.encode()
    assert converter.to_connect_data(TOPIC, value).value == Struct(STRUCT_WITH_DEFAULT_FIELD)


def test_should_be_case_insensitive_for_decimal_format_config():
    # JsonConverterConfigTest.
    config = JsonConverterConfig.parse({"converter.type": "key", "decimal.format": "NuMeRiC"})
    assert config.decimal_format is DecimalFormat.NUMERIC


# ======================================================================================
# Beyond Kafka's tests: exact bytes, error texts, Jackson's reading rules
# ======================================================================================


@pytest.mark.parametrize("schema, value, expected", [
    (Schema.INT32_SCHEMA, 42, b'{"schema":{"type":"int32","optional":false},"payload":42}'),
    (Schema.OPTIONAL_STRING_SCHEMA, None, b'{"schema":{"type":"string","optional":true},"payload":null}'),
    (Schema.FLOAT64_SCHEMA, 1e10, b'{"schema":{"type":"double","optional":false},"payload":1.0E10}'),
    (Schema.FLOAT64_SCHEMA, 100.0, b'{"schema":{"type":"double","optional":false},"payload":100.0}'),
    (Schema.FLOAT64_SCHEMA, 1e-4, b'{"schema":{"type":"double","optional":false},"payload":1.0E-4}'),
    (Schema.FLOAT32_SCHEMA, to_float32(12.34), b'{"schema":{"type":"float","optional":false},"payload":12.34}'),
    (Schema.FLOAT64_SCHEMA, float("nan"), b'{"schema":{"type":"double","optional":false},"payload":"NaN"}'),
    (Schema.FLOAT64_SCHEMA, float("-inf"), b'{"schema":{"type":"double","optional":false},"payload":"-Infinity"}'),
    (Schema.STRING_SCHEMA, "é\u001f\"\\/\n",
     '{"schema":{"type":"string","optional":false},"payload":"é\\u001F\\"\\\\/\\n"}'.encode()),
    (None, {"a": [1, 2.5, None]}, b'{"schema":null,"payload":{"a":[1,2.5,null]}}'),
])
def test_exact_envelope_bytes(converter, schema, value, expected):
    assert converter.from_connect_data(TOPIC, schema, value) == expected


def test_exact_struct_schema_bytes(converter):
    schema = (SchemaBuilder.struct().name("com.example.Row").version(2).doc("a row")
              .field("id", Schema.INT64_SCHEMA)
              .field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build())
              .field("attrs", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA).build())
              .field("amount", Decimal.builder(2).parameter("connect.decimal.precision", "10").build())
              .build())
    value = (Struct(schema).put("id", 7).put("tags", ["a"]).put("attrs", {1: None})
             .put("amount", decimal.Decimal("-1.50")))
    assert converter.from_connect_data(TOPIC, schema, value) == (
        b'{"schema":{"type":"struct","fields":['
        b'{"type":"int64","optional":false,"field":"id"},'
        b'{"type":"array","items":{"type":"string","optional":false},"optional":true,"field":"tags"},'
        b'{"type":"map","keys":{"type":"int32","optional":false},"values":{"type":"string","optional":true},'
        b'"optional":false,"field":"attrs"},'
        b'{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,'
        b'"parameters":{"scale":"2","connect.decimal.precision":"10"},"field":"amount"}],'
        b'"optional":false,"name":"com.example.Row","version":2,"doc":"a row"},'
        b'"payload":{"id":7,"tags":["a"],"attrs":[[1,null]],"amount":"/2o="}}'
    )
    assert converter.to_connect_data(TOPIC, converter.from_connect_data(TOPIC, schema, value)) == \
        SchemaAndValue(schema, value)


def test_numeric_decimal_keeps_scale_in_text(converter):
    converter.configure({"decimal.format": "numeric"}, False)
    assert converter.from_connect_data(TOPIC, Decimal.schema(4), decimal.Decimal("1.5600")).endswith(
        b'"payload":1.5600}'
    )
    # BigDecimal.toString switches to scientific notation for small or negative-scale values.
    assert converter.from_connect_data(TOPIC, Decimal.schema(10), decimal.Decimal("1.23E-8")).endswith(
        b'"payload":1.23E-8}')


def test_decimal_base64_requires_matching_scale(converter):
    with pytest.raises(DataException, match="mismatching scale"):
        converter.from_connect_data(TOPIC, Decimal.schema(2), decimal.Decimal("1.5"))


def test_envelope_required_message(converter):
    message = ('JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain '
               'additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false '
               'in your converter configuration.')
    for text in (b'{"a": 1}', b'{"schema": null, "payload": 1, "x": 2}', b'[1]', b'', b'null', b'{"schema": null}'):
        with pytest.raises(DataException) as info:
            converter.to_connect_data(TOPIC, text)
        assert str(info.value) == message


@pytest.mark.parametrize("type_name, type_label", [("int32", "INT32"), ("string", "STRING"), ("struct", "STRUCT")])
def test_invalid_null_for_required(converter, type_name, type_label):
    fields = ',"fields":[]' if type_name == "struct" else ""
    with pytest.raises(DataException, match=f"^Invalid null value for required {type_label} field$"):
        to_connect(converter, f'{{"schema":{{"type":"{type_name}"{fields}}},"payload":null}}')


def test_required_null_to_json_message(converter):
    with pytest.raises(DataException, match="^Conversion error: null value for field that is required and has no "
                                            "default value$"):
        converter.from_connect_data(TOPIC, Schema.INT32_SCHEMA, None)


def test_required_field_missing_in_struct_payload(converter):
    text = '{"schema":{"type":"struct","fields":[{"field":"a","type":"string"}]},"payload":{}}'
    with pytest.raises(DataException, match='^Invalid null value for required STRING field$'):
        to_connect(converter, text)


@pytest.mark.parametrize("schema_json, message", [
    ('{"optional": true}', "Schema must contain 'type' field"),
    ('{"type": "uuid"}', "Unknown schema type: uuid"),
    ('{"type": "array"}', "Array schema did not specify the element type"),
    ('{"type": "map", "values": {"type": "int8"}}', "Map schema did not specify the key type"),
    ('{"type": "map", "keys": {"type": "int8"}}', "Map schema did not specify the value type"),
    ('{"type": "struct"}', 'Struct schema\'s "fields" argument is not an array.'),
    ('{"type": "struct", "fields": [{"type": "int8"}]}', "Struct schema's field name not specified properly"),
    ('{"type": "int8", "parameters": {"a": 1}}', "Schema parameters must have string values."),
])
def test_bad_schema_messages(converter, schema_json, message):
    with pytest.raises(DataException) as info:
        to_connect(converter, f'{{"schema": {schema_json}, "payload": null}}')
    assert str(info.value) == message


@pytest.mark.parametrize("payload, message", [
    ('[1]', "Maps with string fields should be encoded as JSON objects, but found ARRAY"),
])
def test_string_key_map_requires_object(converter, payload, message):
    text = f'{{"schema":{{"type":"map","keys":{{"type":"string"}},"values":{{"type":"int8"}}}},"payload":{payload}}}'
    with pytest.raises(DataException, match=f"^{message}$"):
        to_connect(converter, text)


@pytest.mark.parametrize("payload, message", [
    ('{"a": 1}', "Maps with non-string fields should be encoded as JSON array of tuples, but found OBJECT"),
    ('[1]', "Found invalid map entry instead of array tuple: NUMBER"),
    ('[[1, 2, 3]]', "Found invalid map entry, expected length 2 but found :3"),
])
def test_pair_map_errors(converter, payload, message):
    text = f'{{"schema":{{"type":"map","keys":{{"type":"int8"}},"values":{{"type":"int8"}}}},"payload":{payload}}}'
    with pytest.raises(DataException, match=f"^{message}$"):
        to_connect(converter, text)


def test_struct_requires_object(converter):
    with pytest.raises(DataException, match="^Structs should be encoded as JSON objects, but found ARRAY$"):
        to_connect(converter, '{"schema":{"type":"struct","fields":[]},"payload":[]}')


@pytest.mark.parametrize("name, payload, kind", [
    ("Date", '"x"', "integer but was STRING"), ("Time", "1.5", "integer but was NUMBER"),
    ("Timestamp", "true", "integral but was BOOLEAN"),
])
def test_temporal_requires_integer(converter, name, payload, kind):
    with pytest.raises(DataException, match=f"^Invalid type for {name}, underlying representation should be {kind}$"):
        to_connect(converter, f'{{ "schema": {{ {_logical(name)} }}, "payload": {payload} }}')


def test_invalid_base64(converter):
    with pytest.raises(DataException, match="^Invalid bytes field"):
        to_connect(converter, '{"schema":{"type":"bytes"},"payload":"not base64!"}')
    with pytest.raises(DataException, match="^Invalid bytes for Decimal field"):
        to_connect(converter, f'{{ "schema": {{ {DECIMAL_SCHEMA_JSON}, "parameters": {{ "scale": "2" }} }}, '
                              '"payload": "AJw" }')


def test_decimal_payload_of_wrong_type(converter):
    with pytest.raises(DataException, match="numeric or bytes but was BOOLEAN$"):
        to_connect(converter, f'{{ "schema": {{ {DECIMAL_SCHEMA_JSON}, "parameters": {{ "scale": "2" }} }}, '
                              '"payload": true }')


def test_jackson_leniency_against_schema(converter):
    # Jackson's accessors never fail: a string read as INT32 is 0, a number read as STRING is null.
    assert to_connect(converter, '{"schema":{"type":"int32"},"payload":"12"}').value == 0
    assert to_connect(converter, '{"schema":{"type":"string","optional":true},"payload":12}').value is None
    assert to_connect(converter, '{"schema":{"type":"boolean"},"payload":1}').value is False
    # Narrowing like Java casts.
    assert to_connect(converter, '{"schema":{"type":"int8"},"payload":200}').value == -56
    assert to_connect(converter, '{"schema":{"type":"int32"},"payload":12.9}').value == 12
    # A non-finite double written as "NaN" reads back as 0.0.
    nan_bytes = converter.from_connect_data(TOPIC, Schema.FLOAT64_SCHEMA, float("nan"))
    assert converter.to_connect_data(TOPIC, nan_bytes).value == 0.0


def test_schema_null_default_of_required_schema_is_an_error(converter):
    with pytest.raises(DataException, match="^Invalid null value for required INT32 field$"):
        to_connect(converter, '{"schema":{"type":"int32","default":null},"payload":1}')


def test_schemaless_numbers(converter):
    converter.configure({"schemas.enable": "false"}, False)
    assert converter.to_connect_data(TOPIC, b"12345678901234567890").value == 12345678901234567890 - 2**64
    assert converter.to_connect_data(TOPIC, b"1e2").value == 100.0
    assert converter.to_connect_data(TOPIC, b"-0.0").value == 0.0
    assert converter.to_connect_data(TOPIC, b'{"a": 0012.50}').value == {"a": 12.5}


@pytest.mark.parametrize("data", [b"12x", b"truex", b"NaN", b"[1,]", b"{'a': 1}", b"\xff\xfe\xfd", b"01x"])
def test_invalid_json(converter, data):
    converter.configure({"schemas.enable": "false"}, False)
    with pytest.raises(DataException, match="^Converting byte\\[\\] to Kafka Connect data failed due to "
                                            "serialization error: "):
        converter.to_connect_data(TOPIC, data)


def test_trailing_content_is_ignored(converter):
    # Jackson reads the first value and stops (FAIL_ON_TRAILING_TOKENS is off).
    converter.configure({"schemas.enable": "false"}, False)
    assert converter.to_connect_data(TOPIC, b'{"a":1} garbage').value == {"a": 1}
    assert converter.to_connect_data(TOPIC, b"12 34").value == 12
    assert converter.to_connect_data(TOPIC, b"   ").value is None


def test_struct_schema_with_default_round_trips(converter):
    # A struct default is a Struct of the schema as built before the default was set.
    inner = SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA).optional()
    default = Struct(inner.build()).put("x", 1)
    schema = inner.default_value(default).build()
    outer = SchemaBuilder.struct().field("s", schema).build()
    data = converter.from_connect_data(TOPIC, outer, Struct(outer))
    assert b'"default":{"x":1}' in data and b'"payload":{"s":{"x":1}}' in data
    result = converter.to_connect_data(TOPIC, data)
    assert result.schema == outer
    assert result.value.get("s") == Struct(schema).put("x", 1)


def test_wrong_python_types_are_data_exceptions(converter):
    for schema, value in [(Schema.INT32_SCHEMA, "1"), (Schema.INT32_SCHEMA, True), (Schema.INT8_SCHEMA, 300),
                          (Schema.FLOAT32_SCHEMA, 1), (Schema.STRING_SCHEMA, b"x"), (Date.SCHEMA, 1),
                          (Decimal.schema(0), 1.0), (Schema.BYTES_SCHEMA, "x"), (None, object()),
                          (None, Struct(SchemaBuilder.struct().build()))]:
        with pytest.raises(DataException):
            converter.from_connect_data(TOPIC, schema, value)


def test_bad_config_values():
    with pytest.raises(ConfigException, match="^Invalid value maybe for configuration schemas.enable: Expected value "
                                              "to be either true or false$"):
        JsonConverter().configure({"schemas.enable": "maybe"}, False)
    with pytest.raises(ConfigException, match="^Invalid value lots for configuration schemas.cache.size: Not a "
                                              "number of type INT$"):
        JsonConverter().configure({"schemas.cache.size": "lots"}, False)
    with pytest.raises(ConfigException, match="decimal.format: String must be one of \\(case insensitive\\): "
                                              "BASE64, NUMERIC$"):
        JsonConverter().configure({"decimal.format": "hex"}, False)
    with pytest.raises(ConfigException, match='^Missing required configuration "converter.type"'):
        JsonConverter().configure({})


def test_header_role_configuration():
    converter = JsonConverter()
    converter.configure({"converter.type": "header", "schemas.enable": "false"})
    assert converter.from_connect_header(TOPIC, "h", Schema.INT32_SCHEMA, 5) == b"5"
