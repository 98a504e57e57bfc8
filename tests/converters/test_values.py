"""connector.api.values: Kafka's ValuesTest, ported, plus the Java number renderings.

Java tells Byte/Short/Integer/Long (and Float/Double) apart by class, so Kafka's
round-trip helper reads a value's type with ``Values.inferSchema``. Python ints
and floats carry no width, so the ported helper takes the primitive type from
the schema asked for, and the schema of a parsed array or map from
``parse_string``; the inputs and expected values are Kafka's. ``java.util.Date``
values become ``date``/``time``/``datetime`` in UTC.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math

import pytest

from connector.api import (
    DataException,
    Date,
    Decimal,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Type,
    values,
)
from connector.api.java import numbers as java_numbers
from connector.api.java.strings import java_trim

UTC = dt.timezone.utc
MILLIS_PER_DAY = 86_400_000
WHITESPACE = "\n \t \t\n"

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

_CONVERTERS = {
    Type.STRING: values.convert_to_string, Type.INT8: values.convert_to_byte, Type.INT16: values.convert_to_short,
    Type.INT32: values.convert_to_integer, Type.INT64: values.convert_to_long, Type.FLOAT32: values.convert_to_float,
    Type.FLOAT64: values.convert_to_double, Type.BOOLEAN: values.convert_to_boolean, Type.ARRAY: values.convert_to_list,
    Type.MAP: values.convert_to_map,
}


def convert_to(desired: Schema, value) -> SchemaAndValue:
    """Kafka's ``convertTo`` test helper: convert with the desired type, then read the result's schema."""
    new_value = _CONVERTERS[desired.type](Schema.STRING_SCHEMA, value)
    if new_value is None:
        return SchemaAndValue(None, None)
    if desired.type in (Type.ARRAY, Type.MAP):
        schema = values.parse_string(value).schema if isinstance(value, str) else values.infer_schema(new_value)
    else:
        schema = SchemaBuilder.type_of(desired.type).build()
    return SchemaAndValue(schema, new_value)


def round_trip(desired: Schema, value, current_schema: Schema = Schema.STRING_SCHEMA) -> SchemaAndValue:
    serialized = values.convert_to_string(current_schema, value)
    if value is not None:
        assert serialized is not None
    return convert_to(desired, serialized)


def assert_round_trip(schema: Schema, current_schema: Schema, value) -> None:
    result = round_trip(schema, value, current_schema)
    if value is None:
        assert result == SchemaAndValue(None, None)
        return
    assert result.value == value
    assert result.schema == schema
    result2 = round_trip(result.schema, result.value, result.schema)
    assert result2.schema == schema
    assert result2.value == value
    assert result == result2


def assert_short_circuit(schema: Schema, value) -> None:
    result = convert_to(schema, value)
    assert result.value == value
    assert result.schema == schema


def test_should_parse_null_string():
    assert values.parse_string(None) == SchemaAndValue(None, None)


def test_should_parse_empty_string():
    assert values.parse_string("") == SchemaAndValue(Schema.STRING_SCHEMA, "")


def test_should_not_encounter_infinite_loop():
    # The bytes EF BF BF decode to U+FFFF, Java's CharacterIterator.DONE (KAFKA-10574).
    text = bytes([0xEF, 0xBF, 0xBF]).decode("utf-8")
    assert values.parse_string(text) == SchemaAndValue(Schema.STRING_SCHEMA, text)


@pytest.mark.parametrize("text", [
    "{foo: 3}",  # shouldNotParseUnquotedEmbeddedMapKeysAsStrings
    "{3: foo}",  # shouldNotParseUnquotedEmbeddedMapValuesAsStrings
    "[foo]",  # shouldNotParseUnquotedArrayElementsAsStrings
    "null=",  # shouldNotParseStringsBeginningWithNullAsStrings
    "true}",  # shouldParseStringsBeginningWithTrueAsStrings
    "false]",  # shouldParseStringsBeginningWithFalseAsStrings
    "{6:9 4:20}",  # shouldNotParseAsMapWithoutCommas
    "[0 1 2]",  # shouldNotParseAsArrayWithoutCommas
    "{null: 3}",  # shouldNotParseAsMapWithNullKeys
    "[1, 2, 3,,,]",  # shouldParseStringListWithExtraDelimitersAndReturnString
    "[1, null]",  # shouldParseStringListWithNullLastAsString
    "[null, 1]",  # shouldParseStringListWithNullFirstAsString
])
def test_text_that_stays_a_string(text):
    assert values.parse_string(text) == SchemaAndValue(Schema.STRING_SCHEMA, text)


def test_should_parse_true_as_boolean_if_surrounded_by_whitespace():
    assert values.parse_string(WHITESPACE + "true" + WHITESPACE) == SchemaAndValue(Schema.BOOLEAN_SCHEMA, True)


def test_should_parse_false_as_boolean_if_surrounded_by_whitespace():
    assert values.parse_string(WHITESPACE + "false" + WHITESPACE) == SchemaAndValue(Schema.BOOLEAN_SCHEMA, False)


def test_should_parse_null_as_null_if_surrounded_by_whitespace():
    assert values.parse_string(WHITESPACE + "null" + WHITESPACE) == SchemaAndValue(None, None)


def test_should_parse_boolean_literals_embedded_in_array():
    result = values.parse_string("[true, false]")
    assert result.schema.type is Type.ARRAY and result.schema.value_schema.type is Type.BOOLEAN
    assert result.value == [True, False]


def test_should_parse_boolean_literals_embedded_in_map():
    result = values.parse_string("{true: false, false: true}")
    assert result.schema.type is Type.MAP
    assert result.schema.key_schema.type is Type.BOOLEAN and result.schema.value_schema.type is Type.BOOLEAN
    assert result.value == {True: False, False: True}


def test_should_parse_empty_map():
    result = values.parse_string("{}")
    assert result.schema.type is Type.MAP and result.value == {}


def test_should_parse_empty_array():
    result = values.parse_string("[]")
    assert result.schema.type is Type.ARRAY and result.value == []


def test_should_parse_null():
    assert values.parse_string("null") == SchemaAndValue(None, None)


def test_should_convert_string_of_null():
    assert_round_trip(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA, "null")


def test_should_parse_null_map_values():
    result = values.parse_string("{3: null}")
    assert result.schema.type is Type.MAP and result.schema.key_schema.type is Type.INT8
    assert result.value == {3: None}


def test_should_parse_null_array_elements():
    result = values.parse_string("[null]")
    assert result.schema.type is Type.ARRAY and result.value == [None]


def test_should_escape_strings_with_embedded_quotes_and_backslashes():
    assert values.escape('three"blind\\"mice') == 'three\\"blind\\\\\\"mice'


@pytest.mark.parametrize("schema", [
    Schema.INT8_SCHEMA, Schema.OPTIONAL_INT8_SCHEMA, Schema.INT16_SCHEMA, Schema.OPTIONAL_INT16_SCHEMA,
    Schema.INT32_SCHEMA, Schema.OPTIONAL_INT32_SCHEMA, Schema.INT64_SCHEMA, Schema.OPTIONAL_INT64_SCHEMA,
    Schema.FLOAT32_SCHEMA, Schema.OPTIONAL_FLOAT32_SCHEMA, Schema.FLOAT64_SCHEMA, Schema.OPTIONAL_FLOAT64_SCHEMA,
    Schema.BOOLEAN_SCHEMA, Schema.OPTIONAL_BOOLEAN_SCHEMA, Schema.STRING_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA,
])
def test_should_convert_null_value(schema):
    assert_round_trip(schema, Schema.STRING_SCHEMA, None)


def test_should_convert_boolean_values():
    assert_round_trip(Schema.BOOLEAN_SCHEMA, Schema.BOOLEAN_SCHEMA, False)
    assert_short_circuit(Schema.BOOLEAN_SCHEMA, False)
    assert round_trip(Schema.BOOLEAN_SCHEMA, "false") == SchemaAndValue(Schema.BOOLEAN_SCHEMA, False)
    assert round_trip(Schema.BOOLEAN_SCHEMA, "0") == SchemaAndValue(Schema.BOOLEAN_SCHEMA, False)
    assert_round_trip(Schema.BOOLEAN_SCHEMA, Schema.BOOLEAN_SCHEMA, True)
    assert_short_circuit(Schema.BOOLEAN_SCHEMA, True)
    assert round_trip(Schema.BOOLEAN_SCHEMA, "true") == SchemaAndValue(Schema.BOOLEAN_SCHEMA, True)
    assert round_trip(Schema.BOOLEAN_SCHEMA, "1") == SchemaAndValue(Schema.BOOLEAN_SCHEMA, True)


def test_should_fail_to_parse_invalid_boolean_value_string():
    with pytest.raises(DataException):
        values.convert_to_boolean(Schema.STRING_SCHEMA, '"green"')


def test_should_convert_int8():
    assert_round_trip(Schema.INT8_SCHEMA, Schema.INT8_SCHEMA, 0)
    assert_round_trip(Schema.INT8_SCHEMA, Schema.INT8_SCHEMA, 1)


def test_should_convert_int64():
    assert_round_trip(Schema.INT64_SCHEMA, Schema.INT64_SCHEMA, 1)
    assert_short_circuit(Schema.INT64_SCHEMA, 1)


def test_should_convert_float32():
    assert_round_trip(Schema.FLOAT32_SCHEMA, Schema.FLOAT32_SCHEMA, 1.0)
    assert_short_circuit(Schema.FLOAT32_SCHEMA, 1.0)


def test_should_convert_float64():
    assert_round_trip(Schema.FLOAT64_SCHEMA, Schema.FLOAT64_SCHEMA, 1.0)
    assert_short_circuit(Schema.FLOAT64_SCHEMA, 1.0)


def test_should_convert_empty_struct():
    value = Struct(SchemaBuilder.struct().build())
    with pytest.raises(DataException):
        values.convert_to_struct(value.schema, None)
    with pytest.raises(DataException):
        values.convert_to_struct(value.schema, "")
    assert values.convert_to_struct(value.schema, value) is value


def test_should_convert_simple_string():
    assert_round_trip(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA, "simple")


def test_should_convert_empty_string():
    assert_round_trip(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA, "")


def test_should_convert_string_with_quotes_and_other_delimiter_characters():
    assert_round_trip(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA, 'three"blind\\"mice')
    assert_round_trip(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA,
                      "string with delimiters: <>?,./\\=+-!@#$%^&*(){}[]|;':")


@pytest.mark.parametrize("schema, value", [
    (STRING_MAP_SCHEMA, STRING_MAP),  # shouldConvertMapWithStringKeys
    (STRING_SHORT_MAP_SCHEMA, STRING_SHORT_MAP),  # shouldConvertMapWithStringKeysAndShortValues
    (STRING_INT_MAP_SCHEMA, STRING_INT_MAP),  # shouldConvertMapWithStringKeysAndIntegerValues
    (STRING_LIST_SCHEMA, STRING_LIST),  # shouldConvertListWithStringValues
    (INT_LIST_SCHEMA, INT_LIST),  # shouldConvertListWithIntegerValues
])
def test_should_convert_collections(schema, value):
    assert_round_trip(schema, schema, value)


@pytest.mark.parametrize("schema, expected, text", [
    (STRING_MAP_SCHEMA, STRING_MAP, '{"foo":"123","bar":"baz"}'),
    (STRING_MAP_SCHEMA, STRING_MAP, '{ "foo" : "123", \n"bar" : "baz" } '),
    (STRING_SHORT_MAP_SCHEMA, STRING_SHORT_MAP, '{"foo":12345,"bar":0,"baz":-4321}'),
    (STRING_SHORT_MAP_SCHEMA, STRING_SHORT_MAP, ' { "foo" :  12345 , "bar" : 0,  "baz" : -4321 }  '),
    (STRING_INT_MAP_SCHEMA, STRING_INT_MAP, '{"foo":1234567890,"bar":0,"baz":-987654321}'),
    (STRING_INT_MAP_SCHEMA, STRING_INT_MAP, ' { "foo" :  1234567890 , "bar" : 0,  "baz" : -987654321 }  '),
])
def test_should_parse_string_of_map_as_map(schema, expected, text):
    # The six shouldParseStringOfMapWith*Values*WhitespaceAsMap tests.
    result = round_trip(schema, text)
    assert result == SchemaAndValue(schema, expected)


def test_should_convert_string_of_list_with_only_numeric_element_types_into_list_of_largest_numeric_type():
    third = 2**15
    assert values.convert_to_list(Schema.STRING_SCHEMA, f"[1, 2, {third}]") == [1, 2, third]
    assert values.parse_string(f"[1, 2, {third}]").schema.value_schema == Schema.INT32_SCHEMA


def test_should_convert_integral_types_to_float():
    result = values.parse_string("[1, 2, 3.4028235E38]")  # Float.MAX_VALUE as Java prints it
    assert result.schema.value_schema == Schema.FLOAT32_SCHEMA
    assert result.value == [1.0, 2.0, 3.4028234663852886e38]
    assert values.convert_to_list(Schema.STRING_SCHEMA, "[1, 2, 3.4028235E38]") == result.value


def test_should_convert_integral_types_to_double():
    result = values.parse_string("[1, 2, 1.7976931348623157E308]")  # Double.MAX_VALUE
    assert result.schema.value_schema == Schema.FLOAT64_SCHEMA
    assert values.convert_to_list(Schema.STRING_SCHEMA, "[1, 2, 1.7976931348623157E308]") == [
        1.0,
        2.0,
        1.7976931348623157e308,
    ]


@pytest.mark.parametrize("expected, text", [
    ([1, 2, 300, "four"], '[1, 2, 300, "four"]'),
    ([2, 300, "four", 1], '[2, 300, "four", 1]'),
    ([300, "four", 1, 2], '[300, "four", 1, 2]'),
    (["four", 1, 2, 300], '["four", 1, 2, 300]'),
])
def test_should_parse_string_list_with_multiple_element_types(expected, text):
    result = values.parse_string(text)
    assert result.schema.type is Type.ARRAY and result.schema.value_schema is None
    assert result.value == expected


@pytest.mark.parametrize("text", [
    '{1:1, 2:1, 300:300, "four":1}', '{2:1, 300:300, "four":1, 1:1}',
    '{300:300, "four":1, 1:1, 2:1}', '{"four":1, 1:1, 2:1, 300:300}',
])
def test_should_parse_string_map_with_multiple_key_types(text):
    result = values.parse_string(text)
    assert result.schema.type is Type.MAP and result.schema.value_schema is None
    assert result.value == {1: 1, 2: 1, 300: 300, "four": 1}


@pytest.mark.parametrize("text", [
    '{1:1, 2:1, 300:300, 4:"four"}', '{2:1, 300:300, 4:"four", 1:1}',
    '{300:300, 4:"four", 1:1, 2:1}', '{4:"four", 1:1, 2:1, 300:300}',
])
def test_should_parse_string_map_with_multiple_value_types(text):
    result = values.parse_string(text)
    assert result.schema.type is Type.MAP and result.schema.value_schema is None
    assert result.schema.key_schema == Schema.INT16_SCHEMA
    assert result.value == {1: 1, 2: 1, 300: 300, 4: "four"}


@pytest.mark.parametrize("text, outer, inner", [
    ("[[]]", Type.ARRAY, Type.ARRAY),  # shouldParseNestedArray
    ("[{}]", Type.ARRAY, Type.MAP),  # shouldParseArrayContainingMap
    ('{"a":{}}', Type.MAP, Type.MAP),  # shouldParseNestedMap
    ('{"a":[]}', Type.MAP, Type.ARRAY),  # shouldParseMapContainingArray
])
def test_should_parse_nested_structures(text, outer, inner):
    schema = values.parse_string(text).schema
    assert schema.type is outer and schema.value_schema.type is inner


TIMESTAMP = dt.datetime(2019, 8, 23, 14, 34, 54, 346_000, tzinfo=UTC)


def test_should_parse_timestamp_string_as_timestamp():
    assert values.parse_string("2019-08-23T14:34:54.346Z") == SchemaAndValue(Timestamp.SCHEMA, TIMESTAMP)


def test_should_parse_date_string_as_date():
    assert values.parse_string("2019-08-23") == SchemaAndValue(Date.SCHEMA, dt.date(2019, 8, 23))


def test_should_parse_time_string_as_date():
    assert values.parse_string("14:34:54.346Z") == SchemaAndValue(Time.SCHEMA, dt.time(14, 34, 54, 346_000))


def test_should_parse_timestamp_string_with_escaped_colons_as_timestamp():
    assert values.parse_string("2019-08-23T14\\:34\\:54.346Z") == SchemaAndValue(Timestamp.SCHEMA, TIMESTAMP)


def test_should_parse_time_string_with_escaped_colons_as_date():
    assert values.parse_string("14\\:34\\:54.346Z") == SchemaAndValue(Time.SCHEMA, dt.time(14, 34, 54, 346_000))


@pytest.mark.parametrize("text, schema, value", [
    ("2019-08-23", Date.SCHEMA, dt.date(2019, 8, 23)),  # shouldParseDateStringAsDateInArray
    ("14:34:54.346Z", Time.SCHEMA, dt.time(14, 34, 54, 346_000)),  # shouldParseTimeStringAsTimeInArray
    ("2019-08-23T14:34:54.346Z", Timestamp.SCHEMA, TIMESTAMP),  # shouldParseTimestampStringAsTimestampInArray
])
def test_should_parse_temporal_in_array(text, schema, value):
    result = values.parse_string(f"[{text}]")
    assert result.schema.type is Type.ARRAY and result.schema.value_schema == schema
    assert result.value == [value]


def test_should_parse_multiple_timestamp_string_as_timestamp_in_array():
    result = values.parse_string("[2019-08-23T14:34:54.346Z,2019-01-23T15:12:34.567Z,   2019-04-23T19:12:34.567Z]")
    assert result.schema.value_schema == Timestamp.SCHEMA
    assert result.value == [
        TIMESTAMP,
        dt.datetime(2019, 1, 23, 15, 12, 34, 567_000, tzinfo=UTC),
        dt.datetime(2019, 4, 23, 19, 12, 34, 567_000, tzinfo=UTC),
    ]


@pytest.mark.parametrize("text", ['{"k1":"14:34:54.346Z"}', '{"k1":14:34:54.346Z}'])
def test_should_parse_time_string_as_time_in_map(text):
    # shouldParseQuotedTimeStringAsTimeInMap and shouldParseTimeStringAsTimeInMap.
    result = values.parse_string(text)
    assert result.schema.key_schema.type is Type.STRING and result.schema.value_schema == Time.SCHEMA
    assert result.value == {"k1": dt.time(14, 34, 54, 346_000)}


def test_should_fail_to_convert_null_time():
    for convert in (values.convert_to_time, values.convert_to_date, values.convert_to_timestamp):
        with pytest.raises(DataException):
            convert(None, None)


@pytest.mark.parametrize("convert, text", [
    (values.convert_to_list, "[1, 2, 3,,,]"),  # shouldFailToConvertToListFromStringWithExtraDelimiters
    (values.convert_to_list, '[1, 2, 3, "four",,,]'),  # ...WithNonCommonElementTypeAndBlankElement
    (values.convert_to_map, ' { "foo" :  1234567890 ,, "bar" : 0,  "baz" : -987654321 }  '),  # ...WithBlankEntry
    (values.convert_to_map, ' { "foo" :  1234567890 , "a", "bar" : 0,  "baz" : -987654321 }  '),  # ...OfMalformedMap
    (values.convert_to_map, " { ,,  , , }  "),  # ...WithOnlyBlankEntries
    (values.convert_to_map, ' { "foo" :  "1234567890" ,, "bar" : "0",  "baz" : "boz" }  '),  # ...WithBlankEntries
])
def test_should_fail_to_convert_malformed_collections(convert, text):
    with pytest.raises(DataException):
        convert(Schema.STRING_SCHEMA, text)


# --- the tokenizer (Values.Parser) ---------------------------------------------------


def test_should_consume_multiple_tokens():
    tokens = values._Tokenizer("a:b:c:d:e:f:g:h")
    assert tokens.next_n(5) == "a:b:c"
    assert tokens.next() == ":"
    assert tokens.next() == "d"
    assert tokens.next() == ":"
    assert tokens.next_n(8) is None  # only 7 remain
    assert tokens.next() == "e"


def assert_parsed(text: str, *expected: str) -> None:
    expected = expected or (text,)
    tokens = values._Tokenizer(text)
    for token in expected:
        assert tokens.has_next()
        position = tokens.mark()
        assert tokens.next() == token
        assert tokens.position() == position + len(token)
        assert tokens.previous == token
        tokens.rewind_to(position)
        assert tokens.position() == position
        assert tokens.next() == token
        assert tokens.mark() == position + len(token)
    assert not tokens.has_next()
    tokens.rewind_to(0)
    assert_consumable(tokens, expected)
    assert_consumable(values._Tokenizer(text), expected)


def assert_consumable(tokens, expected) -> None:
    for token in expected:
        if not values.is_blank(token):
            position = tokens.mark()
            assert tokens.can_consume(java_trim(token))
            tokens.rewind_to(position)
            assert tokens.can_consume(java_trim(token), True)
            tokens.rewind_to(position)
            assert tokens.can_consume(token, False)


@pytest.mark.parametrize("text", [
    "  ", "simple", "simple string", "simple \n\t\bstring", "'simple' string", "si\\mple", "si\\\\mple",
])
def test_should_parse_strings_without_delimiters(text):
    assert_parsed(text)


@pytest.mark.parametrize("text", ['si\\"mple', "si\\{mple", "si\\}mple", "si\\]mple", "si\\[mple", "si\\:mple",
                                  "si\\,mple"])
def test_should_parse_strings_with_escaped_delimiters(text):
    assert_parsed(text)


@pytest.mark.parametrize("text, tokens", [
    ("a{b", ("a", "{", "b")), ("a}b", ("a", "}", "b")), ("a[b", ("a", "[", "b")), ("a]b", ("a", "]", "b")),
    ("a:b", ("a", ":", "b")), ("a,b", ("a", ",", "b")), ('a"b', ("a", '"', "b")), ("{b", ("{", "b")),
    ("}b", ("}", "b")), ("[b", ("[", "b")), ("]b", ("]", "b")), (":b", (":", "b")), (",b", (",", "b")),
    ('"b', ('"', "b")), ("{", ("{",)), ("}", ("}",)), ("[", ("[",)), ("]", ("]",)), (":", (":",)),
    (",", (",",)), ('"', ('"',)),
])
def test_should_parse_strings_with_single_delimiter(text, tokens):
    assert_parsed(text, *tokens)


@pytest.mark.parametrize("text, tokens", [
    ('"simple" string', ('"', "simple", '"', " string")),
    ("a{bc}d", ("a", "{", "bc", "}", "d")),
    ("a { b c } d", ("a ", "{", " b c ", "}", " d")),
])
def test_should_parse_strings_with_multiple_delimiters(text, tokens):
    assert_parsed(text, *tokens)


def test_can_consume():
    # Kafka's canConsume test is empty; check the whitespace rule instead.
    tokens = values._Tokenizer("  ,  x")
    assert tokens.can_consume(",")
    assert not tokens.can_consume("y")
    assert tokens.next() == "  x"


# --- temporal and decimal conversions ------------------------------------------------

NOW = dt.datetime.now(UTC).replace(microsecond=dt.datetime.now(UTC).microsecond // 1000 * 1000)
NOW_MILLIS = Timestamp.from_logical(Timestamp.SCHEMA, NOW)
NOW_DAY_MILLIS = NOW_MILLIS % MILLIS_PER_DAY
NOW_DAYS = NOW_MILLIS // MILLIS_PER_DAY


def test_should_convert_time_values():
    assert values.convert_to_time(Time.SCHEMA, NOW.time()) == NOW.time()  # a Time value: as it is
    assert values.convert_to_time(Timestamp.SCHEMA, NOW) == NOW.time()  # a Timestamp: its time of day
    millis_time = Time.to_logical(Time.SCHEMA, NOW_DAY_MILLIS)
    assert values.convert_to_time(Time.SCHEMA, str(NOW_DAY_MILLIS)) == millis_time
    assert values.convert_to_time(Time.SCHEMA, NOW_DAY_MILLIS) == millis_time


def test_should_convert_date_values():
    today = NOW.date()
    assert values.convert_to_date(Date.SCHEMA, today) == today
    midnight = dt.datetime.combine(today, dt.time(), UTC)
    assert values.convert_to_date(Timestamp.SCHEMA, midnight) == today
    assert values.convert_to_date(Date.SCHEMA, str(NOW_DAYS)) == today
    assert values.convert_to_date(Date.SCHEMA, NOW_DAYS) == today


def test_should_convert_timestamp_values():
    assert values.convert_to_timestamp(Timestamp.SCHEMA, NOW) == NOW
    midnight = dt.datetime.combine(NOW.date(), dt.time(), UTC)
    assert values.convert_to_timestamp(Date.SCHEMA, NOW.date()) == midnight
    assert values.convert_to_timestamp(Time.SCHEMA, NOW_DAY_MILLIS) == \
        Timestamp.to_logical(Timestamp.SCHEMA, NOW_DAY_MILLIS)
    assert values.convert_to_timestamp(Timestamp.SCHEMA, str(NOW_MILLIS)) == NOW
    assert values.convert_to_timestamp(Timestamp.SCHEMA, NOW_MILLIS) == NOW


def test_should_convert_decimal_values():
    # 1.0f, "1.0", BigDecimal("1.0") and its unscaled bytes all give 1.0 (scale 1).
    value = decimal.Decimal("1.0")
    data = Decimal.from_logical(Decimal.schema(1), value)
    for source in (1.0, "1.0", value, data, bytearray(data), memoryview(data)):
        result = values.convert_to_decimal(None, source, 1)
        assert result == value and result.as_tuple().exponent == -1


def test_should_fail_to_convert_null_to_decimal():
    with pytest.raises(DataException):
        values.convert_to_decimal(None, None, 1)


def test_should_infer_byte_schema():
    assert values.infer_schema(b"\x00") == Schema.BYTES_SCHEMA
    assert values.infer_schema(bytearray(1)) == Schema.BYTES_SCHEMA
    assert values.infer_schema(memoryview(b"\x00")) == Schema.BYTES_SCHEMA


def test_should_infer_struct_schema():
    value = Struct(SchemaBuilder.struct().build())
    assert values.infer_schema(value) == value.schema


@pytest.mark.parametrize("value", [[], [object()], {}, {object(): object()}])
def test_should_infer_no_schema(value):
    # shouldInferNoSchemaForEmptyList / ...ListContainingObject / ...EmptyMap / ...MapContainingObject
    assert values.infer_schema(value) is None


LONG_MAX_PLUS_ONE = decimal.Decimal(2**63)
LONG_MIN_MINUS_ONE = decimal.Decimal(-(2**63) - 1)


def test_should_not_convert_array_values_to_decimal():
    # Java's List.toString of ["\"1.0\"", 2**63, -2**63-1, (byte) 1, (byte) 1].
    result = values.parse_string(f'["1.0", {LONG_MAX_PLUS_ONE}, {LONG_MIN_MINUS_ONE}, 1, 1]')
    assert result.schema.type is Type.ARRAY and result.schema.value_schema is None
    assert result.value == ["1.0", LONG_MAX_PLUS_ONE, LONG_MIN_MINUS_ONE, 1, 1]


def test_should_parse_array_of_only_decimals():
    result = values.parse_string(f"[{LONG_MAX_PLUS_ONE}, {LONG_MIN_MINUS_ONE}]")
    assert result.schema.type is Type.ARRAY and result.schema.value_schema == Decimal.schema(0)
    assert result.value == [LONG_MAX_PLUS_ONE, LONG_MIN_MINUS_ONE]


def test_should_parse_big_integer_as_decimal_with_zero_scale():
    for number in (2**63, -(2**63) - 1):
        result = values.parse_string(str(number))
        assert result.schema == Decimal.schema(0)
        assert isinstance(result.value, decimal.Decimal) and result.value == number
        assert result.value.as_tuple().exponent == 0


@pytest.mark.parametrize("schema, bits", [
    (Schema.INT8_SCHEMA, 8), (Schema.INT16_SCHEMA, 16), (Schema.INT32_SCHEMA, 32), (Schema.INT64_SCHEMA, 64),
])
def test_should_parse_integers_as_smallest_type(schema, bits):
    # shouldParseByteAsInt8, ...ShortAsInt16, ...IntegerAsInt32, ...LongAsInt64
    for number in (2 ** (bits - 1) - 1, -(2 ** (bits - 1))):
        assert values.parse_string(str(number)) == SchemaAndValue(schema, number)


def test_should_parse_float_as_float32():
    assert values.parse_string("3.4028235E38") == SchemaAndValue(Schema.FLOAT32_SCHEMA, 3.4028234663852886e38)
    assert values.parse_string("-3.4028235E38") == SchemaAndValue(Schema.FLOAT32_SCHEMA, -3.4028234663852886e38)


def test_should_parse_double_as_float64():
    assert values.parse_string("1.7976931348623157E308") == SchemaAndValue(
        Schema.FLOAT64_SCHEMA, 1.7976931348623157e308
    )
    assert values.parse_string("-1.7976931348623157E308") == SchemaAndValue(
        Schema.FLOAT64_SCHEMA, -1.7976931348623157e308
    )


def test_should_parse_fractional_parts_as_integer_when_no_fractional_part():
    assert values.parse_string("1.0") == SchemaAndValue(Schema.INT8_SCHEMA, 1)
    assert values.parse_string("1.1") == SchemaAndValue(Schema.FLOAT32_SCHEMA, java_numbers.to_float32(1.1))
    assert values.parse_string("300.0") == SchemaAndValue(Schema.INT16_SCHEMA, 300)
    assert values.parse_string("300.01") == SchemaAndValue(Schema.FLOAT32_SCHEMA, java_numbers.to_float32(300.01))
    assert values.parse_string("66000.0") == SchemaAndValue(Schema.INT32_SCHEMA, 66000)
    assert values.parse_string("66000.0008") == SchemaAndValue(Schema.FLOAT32_SCHEMA,
                                                               java_numbers.to_float32(66000.0008))


# ======================================================================================
# Beyond Kafka's tests
# ======================================================================================


@pytest.mark.parametrize("value, text", [
    (12.34, "12.34"), (1e10, "1.0E10"), (1e7, "1.0E7"), (9999999.0, "9999999.0"), (1e-3, "0.001"),
    (9.999e-4, "9.999E-4"), (100.0, "100.0"), (5e-324, "4.9E-324"), (1.7976931348623157e308, "1.7976931348623157E308"),
    (-0.0, "-0.0"), (0.0, "0.0"), (float("nan"), "NaN"), (float("inf"), "Infinity"), (-1.5e-7, "-1.5E-7"),
    (123456789.0, "1.23456789E8"), (1e23, "1.0E23"), (2e-3, "0.002"),
])
def test_java_double_to_string(value, text):
    assert java_numbers.double_to_string(value) == text


@pytest.mark.parametrize("value, text", [
    (12.34, "12.34"), (1.4e-45, "1.4E-45"), (3.4028234663852886e38, "3.4028235E38"), (1234.31, "1234.31"),
    (0.1, "0.1"), (1e10, "1.0E10"), (16777217.0, "1.6777216E7"), (float("-inf"), "-Infinity"), (1e39, "Infinity"),
])
def test_java_float_to_string(value, text):
    assert java_numbers.float_to_string(value) == text


@pytest.mark.parametrize("text, expected", [
    ("1.5600", "1.5600"), ("123E2", "1.23E+4"), ("0.0000001", "1E-7"), ("0.000001", "0.000001"), ("-0.00", "0.00"),
])
def test_java_decimal_to_string(text, expected):
    assert java_numbers.decimal_to_string(decimal.Decimal(text)) == expected


def test_to_float32_rounding():
    assert java_numbers.to_float32(3.4028235677973366e38) == math.inf  # exactly halfway to infinity: rounds up
    assert java_numbers.to_float32(3.4028235677973362e38) == 3.4028234663852886e38
    assert java_numbers.exact_to_float32(decimal.Decimal("16777217")) == 16777216.0  # tie: to even
    # 16777217.000000000000000001 rounds to the double 16777217.0, a float32 tie; the exact value is above it.
    assert java_numbers.exact_to_float32(decimal.Decimal("16777217.000000000000000001")) == 16777218.0


@pytest.mark.parametrize("value, text", [
    (dt.date(2019, 8, 23), "2019-08-23"),
    (dt.time(14, 34, 54, 346_000), "14:34:54.346Z"),
    (TIMESTAMP, "2019-08-23T14:34:54.346Z"),
    # Kafka picks the format from the instant: a midnight timestamp prints as a date,
    # anything within the first day after the epoch as a time.
    (dt.datetime(2019, 8, 23, tzinfo=UTC), "2019-08-23"),
    (dt.date(1970, 1, 1), "00:00:00.000Z"),
])
def test_convert_temporal_to_string(value, text):
    assert values.convert_to_string(None, value) == text
    assert values.format_date(value) == text


def test_convert_structured_values_to_string():
    schema = SchemaBuilder.struct().field("a", Schema.STRING_SCHEMA).field("b", Schema.OPTIONAL_FLOAT32_SCHEMA).build()
    value = Struct(schema).put("a", 'x"y').put("b", java_numbers.to_float32(1.1))
    assert values.convert_to_string(schema, value) == '{"a":"x\\"y","b":1.1}'
    assert values.convert_to_string(None, [1, "a", None, True, b"\x00\x01"]) == '[1,"a",null,true,"AAE="]'
    assert values.convert_to_string(None, {1: [2.5], "k": {}}) == '{1:[2.5],"k":{}}'
    assert values.convert_to_string(None, decimal.Decimal("1.50")) == "1.50"
    assert values.convert_to_string(None, b"\xff") == "/w=="
    with pytest.raises(DataException, match="^Failed to serialize unexpected value type object"):
        values.convert_to_string(None, object())


def test_kafka_parsing_quirks():
    # Kafka stops after the first complete value and ignores what follows it.
    assert values.parse_string("1,2") == SchemaAndValue(Schema.INT8_SCHEMA, 1)
    assert values.parse_string("[1] tail").value == [1]
    # Numbers that need more than a long or a float32.
    assert values.parse_string("1e30") == SchemaAndValue(Schema.FLOAT32_SCHEMA, java_numbers.to_float32(1e30))
    assert values.parse_string("1.5e300") == SchemaAndValue(Schema.FLOAT64_SCHEMA, 1.5e300)
    assert values.parse_string("1e400") == SchemaAndValue(Decimal.schema(-400), decimal.Decimal("1e400"))
    assert values.parse_string("1e5") == SchemaAndValue(Schema.INT32_SCHEMA, 100000)
    # A lenient calendar rolls over out-of-range fields.
    assert values.parse_string("2019-02-30") == SchemaAndValue(Date.SCHEMA, dt.date(2019, 3, 2))
    # Not a number in Java's BigDecimal grammar: a string.
    for text in ("1_000", "+", "-x", "1.2.3", " NaN"):
        assert values.parse_string(text) == SchemaAndValue(Schema.STRING_SCHEMA, text)


def test_numeric_conversions_narrow_like_java():
    assert values.convert_to_byte(None, 200) == -56
    assert values.convert_to_short(None, "70000") == 4464
    assert values.convert_to_integer(None, 2**31) == -(2**31)
    assert values.convert_to_long(None, 1e30) == 2**63 - 1
    assert values.convert_to_long(None, float("nan")) == 0
    assert values.convert_to_long(None, "12.9") == 12
    assert values.convert_to_long(None, decimal.Decimal("-12.9")) == -12
    assert values.convert_to_boolean(None, 0.5) is False  # longValue() != 0
    assert values.convert_to_float(None, "0.1") == java_numbers.to_float32(0.1)
    assert values.convert_to_double(None, 10**400) == math.inf
    assert values.convert_to_long(Date.SCHEMA, dt.date(1970, 1, 11)) == 10
    assert values.convert_to_long(Timestamp.SCHEMA, TIMESTAMP) == 1566570894346
    with pytest.raises(DataException, match="^Unable to convert True \\(bool\\) to a number$"):
        values.convert_to_long(None, True)
    with pytest.raises(DataException, match="^Unable to convert x \\(str\\) to Schema\\{STRING\\}$"):
        values.convert_to_integer(Schema.STRING_SCHEMA, "x")


def test_convert_to_decimal_from_numbers_goes_through_double_text():
    # BigDecimal.valueOf(double): 12 becomes 12.0, 0.1f becomes 0.10000000149011612.
    assert values.convert_to_decimal(None, 12, 2).as_tuple().exponent == -1
    assert values.convert_to_decimal(None, java_numbers.to_float32(0.1), 2) == decimal.Decimal("0.10000000149011612")
    with pytest.raises(DataException):
        values.convert_to_decimal(None, "abc", 2)
