"""SimpleHeaderConverter: Kafka's SimpleHeaderConverterTest, ported (version test aside), plus the fallbacks."""

from __future__ import annotations

import datetime as dt
from unittest import mock

import pytest

from connector.api import Date, Schema, SchemaAndValue, SchemaBuilder, Time, Timestamp, Type
from connector.api.java.numbers import to_float32
from converters.simple_header import SimpleHeaderConverter

TOPIC = "topic"
HEADER = "header"

STRING_MAP = {"foo": "123", "bar": "baz"}
STRING_MAP_SCHEMA = SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build()
STRING_SHORT_MAP = {"foo": 12345, "bar": 0, "baz": -4321}
STRING_SHORT_MAP_SCHEMA = SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT16_SCHEMA).build()
STRING_INT_MAP = {"foo": 1234567890, "bar": 0, "baz": -987654321}
STRING_INT_MAP_SCHEMA = SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build()
INT_LIST = [1234567890, -987654321]
INT_LIST_SCHEMA = SchemaBuilder.array(Schema.INT32_SCHEMA).build()
STRING_LIST = ["foo", "bar"]
STRING_LIST_SCHEMA = SchemaBuilder.array(Schema.STRING_SCHEMA).build()


@pytest.fixture
def converter() -> SimpleHeaderConverter:
    return SimpleHeaderConverter()


def round_trip(converter: SimpleHeaderConverter, schema, value) -> SchemaAndValue:
    return converter.to_connect_header(TOPIC, HEADER, converter.from_connect_header(TOPIC, HEADER, schema, value))


def assert_round_trip(converter: SimpleHeaderConverter, schema, value) -> None:
    serialized = converter.from_connect_header(TOPIC, HEADER, schema, value)
    result = converter.to_connect_header(TOPIC, HEADER, serialized)
    if value is None:
        assert serialized is None
        assert result == SchemaAndValue(None, None)
        return
    assert serialized is not None
    assert result == SchemaAndValue(schema, value)
    serialized2 = converter.from_connect_header(TOPIC, HEADER, result.schema, result.value)
    result2 = converter.to_connect_header(TOPIC, HEADER, serialized2)
    assert serialized2 == serialized
    assert result2 == result


def test_should_convert_null_value(converter):
    assert_round_trip(converter, Schema.STRING_SCHEMA, None)
    assert_round_trip(converter, Schema.OPTIONAL_STRING_SCHEMA, None)


def test_should_convert_simple_string(converter):
    assert_round_trip(converter, Schema.STRING_SCHEMA, "simple")


def test_should_convert_empty_string(converter):
    assert_round_trip(converter, Schema.STRING_SCHEMA, "")


def test_should_convert_string_with_quotes_and_other_delimiter_characters(converter):
    assert_round_trip(converter, Schema.STRING_SCHEMA, 'three"blind\\"mice')
    assert_round_trip(converter, Schema.STRING_SCHEMA, "string with delimiters: <>?,./\\=+-!@#$%^&*(){}[]|;':")


@pytest.mark.parametrize("schema, value", [
    (STRING_MAP_SCHEMA, STRING_MAP),  # shouldConvertMapWithStringKeys
    (STRING_SHORT_MAP_SCHEMA, STRING_SHORT_MAP),  # shouldConvertMapWithStringKeysAndShortValues
    (STRING_INT_MAP_SCHEMA, STRING_INT_MAP),  # shouldConvertMapWithStringKeysAndIntegerValues
    (STRING_LIST_SCHEMA, STRING_LIST),  # shouldConvertListWithStringValues
    (INT_LIST_SCHEMA, INT_LIST),  # shouldConvertListWithIntegerValues
])
def test_should_convert_collections(converter, schema, value):
    assert_round_trip(converter, schema, value)


@pytest.mark.parametrize("schema, expected, text", [
    (STRING_MAP_SCHEMA, STRING_MAP, '{"foo":"123","bar":"baz"}'),
    (STRING_MAP_SCHEMA, STRING_MAP, '{ "foo" : "123", \n"bar" : "baz" } '),
    (STRING_SHORT_MAP_SCHEMA, STRING_SHORT_MAP, '{"foo":12345,"bar":0,"baz":-4321}'),
    (STRING_SHORT_MAP_SCHEMA, STRING_SHORT_MAP, ' { "foo" :  12345 , "bar" : 0,  "baz" : -4321 }  '),
    (STRING_INT_MAP_SCHEMA, STRING_INT_MAP, '{"foo":1234567890,"bar":0,"baz":-987654321}'),
    (STRING_INT_MAP_SCHEMA, STRING_INT_MAP, ' { "foo" :  1234567890 , "bar" : 0,  "baz" : -987654321 }  '),
])
def test_should_parse_string_of_map_as_map(converter, schema, expected, text):
    # The six shouldParseStringOfMapWith*Values*WhitespaceAsMap tests.
    assert round_trip(converter, Schema.STRING_SCHEMA, text) == SchemaAndValue(schema, expected)


def test_should_convert_map_with_string_keys_and_mixed_values_to_map(converter):
    value = {"foo": "bar", "baz": 3456}
    result = round_trip(converter, None, value)
    assert result.schema.type is Type.MAP
    assert result.schema.key_schema.type is Type.STRING
    assert result.schema.value_schema is None
    assert result.value == value


def test_should_convert_list_with_mixed_values_to_list_without_schema(converter):
    value = ["foo", 13344]
    result = round_trip(converter, None, value)
    assert result.schema.type is Type.ARRAY and result.schema.value_schema is None
    assert result.value == value


def test_should_convert_empty_map_to_map(converter):
    result = round_trip(converter, None, {})
    assert result.schema.type is Type.MAP
    assert result.schema.key_schema is None and result.schema.value_schema is None
    assert result.value == {}


def test_should_convert_empty_list_to_list(converter):
    result = round_trip(converter, None, [])
    assert result.schema.type is Type.ARRAY and result.schema.value_schema is None
    assert result.value == []


# ======================================================================================
# Beyond Kafka's tests
# ======================================================================================


@pytest.mark.parametrize("text, expected", [
    ("42", SchemaAndValue(Schema.INT8_SCHEMA, 42)),
    ("true", SchemaAndValue(Schema.BOOLEAN_SCHEMA, True)),
    ("1.5", SchemaAndValue(Schema.FLOAT32_SCHEMA, 1.5)),
    ("0.1", SchemaAndValue(Schema.FLOAT32_SCHEMA, to_float32(0.1))),
    ("2019-08-23", SchemaAndValue(Date.SCHEMA, dt.date(2019, 8, 23))),
    ("not:parsed", SchemaAndValue(Schema.STRING_SCHEMA, "not:parsed")),
    ("null", SchemaAndValue(None, None)),
])
def test_header_text_is_typed(converter, text, expected):
    assert converter.to_connect_header(TOPIC, HEADER, text.encode()) == expected


def test_tombstone_header(converter):
    assert converter.to_connect_header(TOPIC, HEADER, None) == SchemaAndValue(None, None)
    assert converter.from_connect_header(TOPIC, HEADER, Schema.OPTIONAL_STRING_SCHEMA, None) is None


def test_temporal_and_float32_headers_round_trip(converter):
    assert_round_trip(converter, Time.SCHEMA, dt.time(14, 34, 54, 346_000))
    assert_round_trip(
        converter, Timestamp.SCHEMA, dt.datetime(2019, 8, 23, 14, 34, 54, 346_000, tzinfo=dt.timezone.utc)
    )
    assert converter.from_connect_header(TOPIC, HEADER, Schema.FLOAT32_SCHEMA, to_float32(0.1)) == b"0.1"


def test_unexpected_parse_failure_keeps_bytes(converter):
    # Kafka logs and keeps the raw bytes when parsing throws.
    with mock.patch("converters.simple_header.parse_string", side_effect=RuntimeError("boom")):
        assert converter.to_connect_header(TOPIC, HEADER, b"x") == SchemaAndValue(Schema.BYTES_SCHEMA, b"x")


def test_invalid_utf8_is_replaced(converter):
    assert converter.to_connect_header(TOPIC, HEADER, b"a\xffb") == SchemaAndValue(Schema.STRING_SCHEMA, "a\ufffdb")
