"""StringConverter, ByteArrayConverter and the number/boolean converters.

Ports Kafka's StringConverterTest, ByteArrayConverterTest, NumberConverterTest
(run for Short/Integer/Long/Float/Double, as Kafka's subclasses do) and
BooleanConverterTest. The ``version()`` tests (Kafka's AppInfoParser) have no
Python counterpart.
"""

from __future__ import annotations

import datetime as dt
import decimal
import struct

import pytest

from connector.api import ConfigException, DataException, Schema, SchemaAndValue, SchemaBuilder, Struct
from connector.api.java.numbers import to_float32
from converters.bytearray import ByteArrayConverter
from converters.numbers import (
    BooleanConverter,
    DoubleConverter,
    FloatConverter,
    IntegerConverter,
    LongConverter,
    ShortConverter,
)
from converters.string import StringConverter

TOPIC = "topic"
SAMPLE_STRING = "a string"
SAMPLE_BYTES = "sample string".encode()


# ------------------------------------------------------------ StringConverter -------


@pytest.fixture
def string_converter() -> StringConverter:
    return StringConverter()


def test_string_to_bytes(string_converter):
    assert string_converter.from_connect_data(TOPIC, Schema.STRING_SCHEMA, SAMPLE_STRING) == SAMPLE_STRING.encode()


def test_non_string_to_bytes(string_converter):
    assert string_converter.from_connect_data(TOPIC, Schema.BOOLEAN_SCHEMA, True) == b"true"


def test_null_to_bytes(string_converter):
    assert string_converter.from_connect_data(TOPIC, Schema.OPTIONAL_STRING_SCHEMA, None) is None


def test_to_bytes_ignores_schema(string_converter):
    assert string_converter.from_connect_data(TOPIC, None, True) == b"true"


def test_to_bytes_non_utf8_encoding(string_converter):
    string_converter.configure({"converter.encoding": "UTF-16"}, True)
    # Java's UTF-16 writes a big-endian byte-order mark, then big-endian text.
    expected = b"\xfe\xff" + SAMPLE_STRING.encode("utf-16-be")
    assert string_converter.from_connect_data(TOPIC, Schema.STRING_SCHEMA, SAMPLE_STRING) == expected


def test_bytes_to_string(string_converter):
    assert string_converter.to_connect_data(TOPIC, SAMPLE_STRING.encode()) == \
        SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, SAMPLE_STRING)


def test_bytes_null_to_string(string_converter):
    assert string_converter.to_connect_data(TOPIC, None) == SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, None)


def test_bytes_to_string_non_utf8_encoding(string_converter):
    string_converter.configure({"converter.encoding": "UTF-16"}, True)
    data = b"\xfe\xff" + SAMPLE_STRING.encode("utf-16-be")
    assert string_converter.to_connect_data(TOPIC, data) == SchemaAndValue(Schema.OPTIONAL_STRING_SCHEMA, SAMPLE_STRING)


def test_string_header_value_to_bytes(string_converter):
    assert string_converter.from_connect_header(TOPIC, "hdr", Schema.STRING_SCHEMA, SAMPLE_STRING) == \
        SAMPLE_STRING.encode()


def test_non_string_header_value_to_bytes(string_converter):
    assert string_converter.from_connect_header(TOPIC, "hdr", Schema.BOOLEAN_SCHEMA, True) == b"true"


def test_null_header_value_to_bytes(string_converter):
    assert string_converter.from_connect_header(TOPIC, "hdr", Schema.OPTIONAL_STRING_SCHEMA, None) is None


def test_string_converter_renders_values_like_java_to_string(string_converter):
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).field("b", Schema.OPTIONAL_STRING_SCHEMA).build()
    cases = [
        (None, 12, b"12"), (None, 1e10, b"1.0E10"), (Schema.FLOAT32_SCHEMA, to_float32(0.1), b"0.1"),
        (None, decimal.Decimal("1.50"), b"1.50"), (None, [1, "a", None], b"[1, a, null]"),
        (None, {"k": 1, "j": [True]}, b"{k=1, j=[true]}"), (schema, Struct(schema).put("a", 1), b"Struct{a=1}"),
        (None, dt.date(1970, 1, 1), b"Thu Jan 01 00:00:00 UTC 1970"),
        (None, dt.datetime(2019, 8, 23, 14, 34, 54, tzinfo=dt.timezone.utc), b"Fri Aug 23 14:34:54 UTC 2019"),
        (None, "é", "é".encode()), (None, b"raw", b"raw"),
    ]
    for schema_, value, expected in cases:
        assert string_converter.from_connect_data(TOPIC, schema_, value) == expected


def test_string_converter_encodings():
    converter = StringConverter()
    converter.configure({"converter.encoding": "ISO-8859-1"}, False)
    assert converter.from_connect_data(TOPIC, None, "é€") == b"\xe9?"  # unmappable → '?', as Java does
    assert converter.to_connect_data(TOPIC, b"\xe9").value == "é"
    converter.configure({"converter.encoding": "UTF-8"}, False)
    assert converter.to_connect_data(TOPIC, b"a\xffb").value == "a\ufffdb"  # malformed → U+FFFD
    converter.configure({"converter.encoding": "UTF-8", "value.deserializer.encoding": "UTF-16LE"}, False)
    assert converter.to_connect_data(TOPIC, "hi".encode("utf-16-le")).value == "hi"
    with pytest.raises(ConfigException, match="Unsupported encoding EBCDIC-XYZ"):
        converter.configure({"converter.encoding": "EBCDIC-XYZ"}, False)


# --------------------------------------------------------- ByteArrayConverter -------


@pytest.fixture
def bytes_converter() -> ByteArrayConverter:
    converter = ByteArrayConverter()
    converter.configure({}, False)
    return converter


def test_from_connect(bytes_converter):
    assert bytes_converter.from_connect_data(TOPIC, Schema.BYTES_SCHEMA, SAMPLE_BYTES) == SAMPLE_BYTES


def test_from_connect_schemaless(bytes_converter):
    assert bytes_converter.from_connect_data(TOPIC, None, SAMPLE_BYTES) == SAMPLE_BYTES


def test_from_connect_bad_schema(bytes_converter):
    with pytest.raises(DataException, match="^Invalid schema type for ByteArrayConverter: INT32$"):
        bytes_converter.from_connect_data(TOPIC, Schema.INT32_SCHEMA, SAMPLE_BYTES)


def test_from_connect_invalid_value(bytes_converter):
    with pytest.raises(DataException, match="^ByteArrayConverter is not compatible with objects of type int$"):
        bytes_converter.from_connect_data(TOPIC, Schema.BYTES_SCHEMA, 12)


def test_from_connect_null(bytes_converter):
    assert bytes_converter.from_connect_data(TOPIC, Schema.BYTES_SCHEMA, None) is None


def test_from_connect_byte_buffer_value(bytes_converter):
    # ByteBuffer's Python counterparts: bytearray and memoryview.
    assert bytes_converter.from_connect_data(TOPIC, Schema.BYTES_SCHEMA, bytearray(SAMPLE_BYTES)) == SAMPLE_BYTES
    assert bytes_converter.from_connect_data(TOPIC, Schema.BYTES_SCHEMA, memoryview(SAMPLE_BYTES)) == SAMPLE_BYTES
    assert bytes_converter.from_connect_data(TOPIC, Schema.BYTES_SCHEMA, bytearray()) == b""


def test_to_connect(bytes_converter):
    assert bytes_converter.to_connect_data(TOPIC, SAMPLE_BYTES) == SchemaAndValue(
        Schema.OPTIONAL_BYTES_SCHEMA, SAMPLE_BYTES
    )


def test_to_connect_null(bytes_converter):
    assert bytes_converter.to_connect_data(TOPIC, None) == SchemaAndValue(Schema.OPTIONAL_BYTES_SCHEMA, None)


def test_byte_array_header_delegation(bytes_converter):
    assert bytes_converter.to_connect_header(TOPIC, "h", b"x") == SchemaAndValue(Schema.OPTIONAL_BYTES_SCHEMA, b"x")
    assert bytes_converter.from_connect_header(TOPIC, "h", None, b"x") == b"x"


# ---------------------------------------------------------- number converters -------

NUMBER_CASES = [
    (ShortConverter, Schema.OPTIONAL_INT16_SCHEMA, ">h", [-(2**15), 123, 2**15 - 1]),
    (IntegerConverter, Schema.OPTIONAL_INT32_SCHEMA, ">i", [-(2**31), 123, 2**31 - 1]),
    (LongConverter, Schema.OPTIONAL_INT64_SCHEMA, ">q", [-(2**63), 123, 2**63 - 1]),
    (FloatConverter, Schema.OPTIONAL_FLOAT32_SCHEMA, ">f", [1.401298464324817e-45, to_float32(1234.31),
                                                            3.4028234663852886e38]),
    (DoubleConverter, Schema.OPTIONAL_FLOAT64_SCHEMA, ">d", [5e-324, 123.456, 1.7976931348623157e308]),
]
NUMBER_IDS = ["short", "integer", "long", "float", "double"]


@pytest.mark.parametrize("cls, schema, fmt, samples", NUMBER_CASES, ids=NUMBER_IDS)
def test_converting_samples_to_and_from_bytes(cls, schema, fmt, samples):
    converter = cls()
    converter.configure({}, False)
    for sample in samples:
        expected = struct.pack(fmt, sample)  # what Kafka's serializer writes
        assert converter.from_connect_data(TOPIC, schema, sample) == expected
        assert converter.to_connect_data(TOPIC, expected) == SchemaAndValue(schema, sample)
        assert converter.from_connect_header(TOPIC, "header", schema, sample) == expected
        assert converter.to_connect_header(TOPIC, "header", expected) == SchemaAndValue(schema, sample)


@pytest.mark.parametrize("cls, schema, fmt, samples", NUMBER_CASES, ids=NUMBER_IDS)
def test_deserializing_data_and_header_with_too_many_bytes(cls, schema, fmt, samples):
    converter = cls()
    with pytest.raises(DataException, match=f"^Failed to deserialize {converter.TYPE_NAME}: Size of data received"):
        converter.to_connect_data(TOPIC, bytes(10))
    with pytest.raises(DataException):
        converter.to_connect_header(TOPIC, "header", bytes(10))


@pytest.mark.parametrize("cls, schema, fmt, samples", NUMBER_CASES, ids=NUMBER_IDS)
def test_serializing_incorrect_type_and_header(cls, schema, fmt, samples):
    converter = cls()
    with pytest.raises(DataException, match=f"^Failed to serialize to {converter.TYPE_NAME} \\(was str\\)$"):
        converter.from_connect_data(TOPIC, schema, "not a valid number")
    with pytest.raises(DataException):
        converter.from_connect_header(TOPIC, "header", schema, "not a valid number")


@pytest.mark.parametrize("cls, schema, fmt, samples", NUMBER_CASES, ids=NUMBER_IDS)
def test_null_to_bytes_and_bytes_null_to_number(cls, schema, fmt, samples):
    converter = cls()
    assert converter.from_connect_data(TOPIC, schema, None) is None
    assert converter.to_connect_data(TOPIC, None) == SchemaAndValue(schema, None)


def test_number_converter_size_messages():
    with pytest.raises(DataException, match="Size of data received by IntegerDeserializer is not 4$"):
        IntegerConverter().to_connect_data(TOPIC, b"\x00")
    with pytest.raises(DataException, match="Size of data received by Deserializer is not 8$"):
        DoubleConverter().to_connect_data(TOPIC, b"\x00")
    with pytest.raises(DataException, match="out of range"):
        ShortConverter().from_connect_data(TOPIC, None, 2**15)
    with pytest.raises(DataException):
        IntegerConverter().from_connect_data(TOPIC, None, True)


# --------------------------------------------------------- BooleanConverter ---------


@pytest.fixture
def boolean_converter() -> BooleanConverter:
    converter = BooleanConverter()
    converter.configure({}, False)
    return converter


def test_boolean_from_connect(boolean_converter):
    assert boolean_converter.from_connect_data(TOPIC, Schema.BOOLEAN_SCHEMA, True) == b"\x01"
    assert boolean_converter.from_connect_data(TOPIC, Schema.BOOLEAN_SCHEMA, False) == b"\x00"


def test_boolean_from_connect_null_schema(boolean_converter):
    assert boolean_converter.from_connect_data(TOPIC, None, True) == b"\x01"
    assert boolean_converter.from_connect_data(TOPIC, None, False) == b"\x00"


def test_boolean_from_connect_wrong_schema(boolean_converter):
    with pytest.raises(DataException, match="^Invalid schema type for BooleanConverter: INT32$"):
        boolean_converter.from_connect_data(TOPIC, Schema.INT32_SCHEMA, False)


def test_boolean_from_connect_invalid_value(boolean_converter):
    with pytest.raises(DataException, match="^BooleanConverter is not compatible with objects of type str$"):
        boolean_converter.from_connect_data(TOPIC, Schema.BOOLEAN_SCHEMA, "true")


def test_boolean_from_connect_null_value(boolean_converter):
    assert boolean_converter.from_connect_data(TOPIC, Schema.BOOLEAN_SCHEMA, None) is None


def test_boolean_to_connect(boolean_converter):
    assert boolean_converter.to_connect_data(TOPIC, b"\x01") == SchemaAndValue(Schema.OPTIONAL_BOOLEAN_SCHEMA, True)
    assert boolean_converter.to_connect_data(TOPIC, b"\x00") == SchemaAndValue(Schema.OPTIONAL_BOOLEAN_SCHEMA, False)


def test_boolean_to_connect_null_value(boolean_converter):
    assert boolean_converter.to_connect_data(TOPIC, None) == SchemaAndValue(Schema.OPTIONAL_BOOLEAN_SCHEMA, None)


def test_boolean_to_connect_invalid_value(boolean_converter):
    with pytest.raises(DataException, match="Size of data received by BooleanDeserializer is not 1$"):
        boolean_converter.to_connect_data(TOPIC, "42".encode())
    with pytest.raises(DataException, match="Unexpected byte received by BooleanDeserializer: -1$"):
        boolean_converter.to_connect_data(TOPIC, b"\xff")
