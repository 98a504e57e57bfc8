"""Cast: ported from Kafka's CastTest, plus Java-number checks and property tests."""

from __future__ import annotations

import base64
import datetime as _dt
import decimal
import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    Type,
)
from connector.api.java.numbers import double_to_string, float_to_string
from smt.transforms.cast import (
    Key,
    Value,
    cast_value_to_type,
    date_format_for,
)
from tests.smt import millis, record, value_record

MILLIS_PER_HOUR = 3_600_000
MILLIS_PER_DAY = 86_400_000


def xform_key(spec, **extra):
    xform = Key()
    xform.configure({"spec": spec, **extra})
    return xform


def xform_value(spec, **extra):
    xform = Value()
    xform.configure({"spec": spec, **extra})
    return xform


def formatted(ms: int) -> str:
    """``Values.dateFormatFor(date).format(date)`` in UTC."""
    return date_format_for(ms).format_millis(ms)


# --- configuration -------------------------------------------------------------------------


def test_config_empty():
    with pytest.raises(ConfigException):
        Key().configure({"spec": ""})


def test_config_invalid_schema_type():
    with pytest.raises(ConfigException):
        Key().configure({"spec": "foo:faketype"})


def test_config_invalid_target_type():
    with pytest.raises(ConfigException):
        Key().configure({"spec": "foo:array"})
    with pytest.raises(ConfigException):
        Key().configure({"spec": "array"})


def test_unsupported_target_type():
    with pytest.raises(ConfigException):
        Key().configure({"spec": "foo:bytes"})


def test_config_invalid_map():
    with pytest.raises(ConfigException):
        Key().configure({"spec": "foo:int8:extra"})


def test_config_mix_whole_and_field_transformation():
    with pytest.raises(ConfigException):
        Key().configure({"spec": "foo:int8,int32"})


def test_config_error_texts():
    with pytest.raises(ConfigException, match=r"^Must specify at least one field to cast\.$"):
        Key().configure({"spec": ""})
    with pytest.raises(ConfigException, match=r"^Invalid type found in casting spec: faketype$"):
        Key().configure({"spec": "foo:faketype"})
    with pytest.raises(ConfigException, match=r"^Cast transformation does not support casting to ARRAY; "
                                              r"supported types are \[INT8, INT16, INT32, INT64, FLOAT32, "
                                              r"FLOAT64, BOOLEAN, STRING\]$"):
        Key().configure({"spec": "array"})
    with pytest.raises(ConfigException, match=r"^Invalid value \[foo:int8:extra\] for configuration renames: "
                                              r"Invalid rename mapping: foo:int8:extra$"):
        Key().configure({"spec": "foo:int8:extra"})
    with pytest.raises(ConfigException, match=r"may only specify a single cast in their spec$"):
        Key().configure({"spec": "foo:int8,int32"})
    with pytest.raises(ConfigException, match='^Missing required configuration "spec" which has no default value.$'):
        Key().configure({})


# --- null values ------------------------------------------------------------------------


def test_cast_null_value_record_with_schema():
    original = record(Schema.STRING_SCHEMA, "key", Schema.STRING_SCHEMA, None)
    assert xform_value("foo:int64").apply(original) == original


@pytest.mark.parametrize("replace_null_with_default, expected", [(False, None), (True, "10")])
def test_cast_field_with_default_value_record_with_schema(replace_null_with_default, expected):
    xform = xform_value("magic:string", **{"replace.null.with.default": replace_null_with_default})
    schema = SchemaBuilder.struct().field("magic", SchemaBuilder.int32().optional().default_value(10).build()).build()
    original = record(Schema.STRING_SCHEMA, "key", schema, Struct(schema).put("magic", None))
    transformed = xform.apply(original)
    assert transformed.value_schema.field("magic").schema.type is Type.STRING
    assert transformed.value.get_without_default("magic") == expected


def test_cast_null_value_record_schemaless():
    original = record(Schema.STRING_SCHEMA, "key", None, None)
    assert xform_value("foo:int64").apply(original) == original


def test_cast_null_key_record_with_schema():
    original = record(Schema.STRING_SCHEMA, None, Schema.STRING_SCHEMA, "value")
    assert xform_key("foo:int64").apply(original) == original


def test_cast_null_key_record_schemaless():
    original = record(None, None, Schema.STRING_SCHEMA, "value")
    assert xform_key("foo:int64").apply(original) == original


# --- whole-value casts -----------------------------------------------------------------------


def test_cast_whole_record_key_with_schema():
    transformed = xform_key("int8").apply(record(Schema.INT32_SCHEMA, 42, Schema.STRING_SCHEMA, "bogus"))
    assert transformed.key_schema.type is Type.INT8
    assert transformed.key == 42


@pytest.mark.parametrize("spec, type_, expected", [
    ("int8", Type.INT8, 42),
    ("int16", Type.INT16, 42),
    ("int32", Type.INT32, 42),
    ("int64", Type.INT64, 42),
    ("float32", Type.FLOAT32, 42.0),
    ("float64", Type.FLOAT64, 42.0),
    ("string", Type.STRING, "42"),
])
def test_cast_whole_record_value_with_schema(spec, type_, expected):
    transformed = xform_value(spec).apply(value_record(Schema.INT32_SCHEMA, 42))
    assert transformed.value_schema.type is type_
    assert transformed.value == expected
    assert type(transformed.value) is type(expected)


def test_cast_whole_record_value_with_schema_boolean_true():
    transformed = xform_value("boolean").apply(value_record(Schema.INT32_SCHEMA, 42))
    assert transformed.value_schema.type is Type.BOOLEAN
    assert transformed.value is True


def test_cast_whole_record_value_with_schema_boolean_false():
    transformed = xform_value("boolean").apply(value_record(Schema.INT32_SCHEMA, 0))
    assert transformed.value_schema.type is Type.BOOLEAN
    assert transformed.value is False


def test_cast_whole_big_decimal_record_value_with_schema_string():
    big_decimal = decimal.Decimal(42)
    transformed = xform_value("string").apply(value_record(Decimal.schema(0), big_decimal))
    assert transformed.value_schema.type is Type.STRING
    assert transformed.value == "42"
    # the string is no Decimal any more: a plain STRING schema (tests/smt/test_cast_logical_whole_value.py)
    assert transformed.value_schema.name is None
    assert transformed.value_schema.parameters is None


def test_cast_whole_date_record_value_with_schema_string():
    timestamp = millis(MILLIS_PER_DAY + 1)  # day + 1 ms to get a timestamp formatting
    transformed = xform_value("string").apply(value_record(Timestamp.SCHEMA, timestamp))
    assert transformed.value_schema.type is Type.STRING
    assert transformed.value == formatted(MILLIS_PER_DAY + 1) == "1970-01-02T00:00:00.001Z"


def test_cast_whole_record_default_value():
    schema = SchemaBuilder.float32().default_value(-42.125).build()
    transformed = xform_value("int32").apply(value_record(schema, 42.125))
    assert transformed.value_schema.type is Type.INT32
    assert transformed.value == 42
    assert transformed.value_schema.default == -42


def test_cast_whole_record_key_schemaless():
    transformed = xform_key("int8").apply(record(None, 42, Schema.STRING_SCHEMA, "bogus"))
    assert transformed.key_schema is None
    assert transformed.key == 42


@pytest.mark.parametrize("spec, input_, expected", [
    ("int8", 42, 42),
    ("int16", 42, 42),
    ("int32", 42, 42),
    ("int64", 42, 42),
    ("float32", 42, 42.0),
    ("float64", 42, 42.0),
    ("boolean", 42, True),
    ("boolean", 0, False),
    ("string", 42, "42"),
])
def test_cast_whole_record_value_schemaless(spec, input_, expected):
    transformed = xform_value(spec).apply(value_record(None, input_))
    assert transformed.value_schema is None
    assert transformed.value == expected
    assert type(transformed.value) is type(expected)


def test_cast_whole_record_value_schemaless_unsupported_type():
    with pytest.raises(DataException):
        xform_value("int8").apply(value_record(None, ["foo"]))


# --- logical types --------------------------------------------------------------------------


def test_cast_logical_to_primitive():
    spec = ",".join([
        "date_to_int32:int32",  # cast to underlying representation
        "timestamp_to_int64:int64",  # cast to underlying representation
        "time_to_int64:int64",  # cast to wider datatype than underlying representation
        "decimal_to_int32:int32",  # cast to narrower datatype with data loss
        "timestamp_to_float64:float64",  # loss of precision casting to double
        "null_timestamp_to_int32:int32",
    ])
    xform = xform_value(spec)
    big = decimal.Decimal(2**31)  # Integer.MAX_VALUE + 1
    schema = (SchemaBuilder.struct()
              .field("date_to_int32", Date.SCHEMA)
              .field("timestamp_to_int64", Timestamp.SCHEMA)
              .field("time_to_int64", Time.SCHEMA)
              .field("decimal_to_int32", Decimal.schema(0))
              .field("timestamp_to_float64", Timestamp.SCHEMA)
              .field("null_timestamp_to_int32", Timestamp.builder().optional().build())
              .build())
    # Kafka uses new Date(Long.MAX_VALUE); Python datetimes stop at year 9999, so the largest one is used.
    latest = _dt.datetime(9999, 12, 31, 23, 59, 59, 999000, tzinfo=_dt.timezone.utc)
    value = (Struct(schema)
             .put("date_to_int32", _dt.date(1970, 1, 2))
             .put("timestamp_to_int64", millis(0))
             .put("time_to_int64", _dt.time(0, 0, 0, 1000))
             .put("decimal_to_int32", big)
             .put("timestamp_to_float64", latest)
             .put("null_timestamp_to_int32", None))
    transformed = xform.apply(value_record(schema, value)).value
    assert transformed.get("date_to_int32") == 1
    assert transformed.get("timestamp_to_int64") == 0
    assert transformed.get("time_to_int64") == 1
    assert transformed.get("decimal_to_int32") == -(2**31)  # Integer.MIN_VALUE
    assert transformed.get("timestamp_to_float64") == 2.53402300799999e14
    assert transformed.get("null_timestamp_to_int32") is None
    out = transformed.schema
    assert out.field("date_to_int32").schema.type is Type.INT32
    assert out.field("timestamp_to_int64").schema.type is Type.INT64
    assert out.field("time_to_int64").schema.type is Type.INT64
    assert out.field("decimal_to_int32").schema.type is Type.INT32
    assert out.field("timestamp_to_float64").schema.type is Type.FLOAT64
    assert out.field("null_timestamp_to_int32").schema.type is Type.INT32


def test_cast_long_max_to_float64_loses_precision():
    # The precision part of Kafka's timestamp_to_float64 case (new Date(Long.MAX_VALUE)).
    schema = SchemaBuilder.struct().field("f", Schema.INT64_SCHEMA).build()
    out = xform_value("f:float64").apply(value_record(schema, Struct(schema).put("f", 2**63 - 1))).value
    assert out.get("f") == 9.223372036854776e18


def test_cast_logical_to_string():
    now_ms = 1_700_000_123_456
    xform = xform_value("date:string,decimal:string,time:string,timestamp:string")
    schema = (SchemaBuilder.struct()
              .field("date", Date.SCHEMA)
              .field("decimal", Decimal.schema(0))
              .field("time", Time.SCHEMA)
              .field("timestamp", Timestamp.SCHEMA)
              .build())
    value = (Struct(schema)
             .put("date", _dt.date(1970, 1, 2))
             .put("decimal", decimal.Decimal(1982))
             .put("time", _dt.time(1, 0))
             .put("timestamp", millis(now_ms)))
    transformed = xform.apply(value_record(schema, value)).value
    assert transformed.get("date") == formatted(MILLIS_PER_DAY) == "1970-01-02"
    assert transformed.get("decimal") == "1982"
    assert transformed.get("time") == formatted(MILLIS_PER_HOUR) == "01:00:00.000Z"
    assert transformed.get("timestamp") == formatted(now_ms) == "2023-11-14T22:15:23.456Z"
    for name in ("date", "decimal", "time", "timestamp"):
        assert transformed.schema.field(name).schema.type is Type.STRING


# --- field casts -----------------------------------------------------------------------------


def test_cast_fields_with_schema():
    byte_array = bytes([0xFE, 0xDC, 0xBA, 0x98, 0x76, 0x54, 0x32, 0x10])
    xform = xform_value(
        "int8:int16,int16:int32,int32:int64,int64:boolean,float32:float64,float64:boolean,boolean:int8,"
        "string:int32,bigdecimal:string,date:string,optional:int32,bytes:string,byteArray:string")
    # Include optional fields and fields with defaults to validate their values are passed through properly
    schema = (SchemaBuilder.struct()
              .field("int8", Schema.INT8_SCHEMA)
              .field("int16", Schema.OPTIONAL_INT16_SCHEMA)
              .field("int32", SchemaBuilder.int32().default_value(2).build())
              .field("int64", Schema.INT64_SCHEMA)
              .field("float32", Schema.FLOAT32_SCHEMA)
              # Default value here ensures we correctly convert default values
              .field("float64", SchemaBuilder.float64().default_value(-1.125).build())
              .field("boolean", Schema.BOOLEAN_SCHEMA)
              .field("string", Schema.STRING_SCHEMA)
              .field("bigdecimal", Decimal.schema(0))
              .field("date", Date.SCHEMA)
              .field("optional", Schema.OPTIONAL_FLOAT32_SCHEMA)
              .field("timestamp", Timestamp.SCHEMA)
              .field("bytes", Schema.BYTES_SCHEMA)
              .field("byteArray", Schema.BYTES_SCHEMA)
              .build())
    value = (Struct(schema)
             .put("int8", 8).put("int16", 16).put("int32", 32).put("int64", 64)
             .put("float32", 32.0).put("float64", -64.0).put("boolean", True)
             .put("bigdecimal", decimal.Decimal(42)).put("date", _dt.date(1970, 1, 2)).put("string", "42")
             .put("timestamp", millis(0)).put("bytes", bytearray(byte_array)).put("byteArray", byte_array))
    # optional field intentionally omitted
    transformed = xform.apply(value_record(schema, value)).value
    out = transformed.schema
    assert transformed.get("int8") == 8
    assert out.field("int16").schema.optional
    assert transformed.get("int16") == 16
    assert transformed.get("int32") == 32
    assert out.field("int32").schema.default == 2
    assert transformed.get("int64") is True
    assert transformed.get("float32") == 32.0
    assert transformed.get("float64") is True
    assert out.field("float64").schema.default is True
    assert transformed.get("boolean") == 1
    assert transformed.get("string") == 42
    assert transformed.get("bigdecimal") == "42"
    assert transformed.get("date") == formatted(MILLIS_PER_DAY)
    assert transformed.get("timestamp") == millis(0)
    assert transformed.get("bytes") == "/ty6mHZUMhA="
    assert transformed.get("byteArray") == "/ty6mHZUMhA="
    assert transformed.get("optional") is None
    expected_types = {
        "int8": Type.INT16, "int16": Type.INT32, "int32": Type.INT64, "int64": Type.BOOLEAN,
        "float32": Type.FLOAT64, "float64": Type.BOOLEAN, "boolean": Type.INT8, "string": Type.INT32,
        "bigdecimal": Type.STRING, "date": Type.STRING, "optional": Type.INT32, "bytes": Type.STRING,
        "byteArray": Type.STRING,
        # the following field is not changed
        "timestamp": Timestamp.SCHEMA.type,
    }
    for name, type_ in expected_types.items():
        assert out.field(name).schema.type is type_, name
    assert out.field("timestamp").schema == Timestamp.SCHEMA


def test_cast_fields_schemaless():
    xform = xform_value("int8:int16,int16:int32,int32:int64,int64:boolean,float32:float64,float64:boolean,"
                        "boolean:int8,string:int32")
    value = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "float32": 32.0, "float64": -64.0,
             "boolean": True, "string": "42"}
    transformed = xform.apply(value_record(None, value))
    assert transformed.value_schema is None
    assert transformed.value == {"int8": 8, "int16": 16, "int32": 32, "int64": True, "float32": 32.0,
                                 "float64": True, "boolean": 1, "string": 42}


# --- beyond Kafka's tests: behaviour read from Cast.java ---------------------------------


def test_schemaless_missing_field_gets_null_entry():
    assert xform_value("missing:int32").apply(value_record(None, {"a": 1})).value == {"a": 1, "missing": None}


def test_schemaless_logical_values_are_not_supported():
    with pytest.raises(DataException, match="not supported by Connect's data API"):
        xform_value("int64").apply(value_record(None, millis(0)))
    with pytest.raises(DataException, match="not supported by Connect's data API"):
        xform_value("a:string").apply(value_record(None, {"a": decimal.Decimal(1)}))


def test_struct_input_is_rejected_at_apply_time():
    schema = SchemaBuilder.struct().field("s", SchemaBuilder.struct().field("x", Schema.INT32_SCHEMA)).build()
    inner = schema.field("s").schema
    value = Struct(schema).put("s", Struct(inner).put("x", 1))
    with pytest.raises(DataException, match=r"^Cast transformation does not support casting from STRUCT; "
                                            r"supported types are \[INT8, INT16, INT32, INT64, FLOAT32, "
                                            r"FLOAT64, BOOLEAN, STRING, BYTES\]$"):
        xform_value("s:string").apply(value_record(schema, value))


def test_bytes_to_number_is_rejected():
    schema = SchemaBuilder.struct().field("b", Schema.BYTES_SCHEMA).build()
    with pytest.raises(DataException, match="^Unexpected type in Cast transformation"):
        xform_value("b:int32").apply(value_record(schema, Struct(schema).put("b", b"\x01")))


def test_unparseable_string_text():
    with pytest.raises(DataException, match=r"^Value \(abc\) was out of range for requested data type$"):
        xform_value("int32").apply(value_record(Schema.STRING_SCHEMA, "abc"))
    with pytest.raises(DataException, match=r"^Value \(128\) was out of range for requested data type$"):
        xform_value("int8").apply(value_record(Schema.STRING_SCHEMA, "128"))
    with pytest.raises(DataException, match="out of range"):
        xform_value("int32").apply(value_record(Schema.STRING_SCHEMA, " 1"))  # Integer.parseInt does not trim


def test_java_string_parsing():
    assert cast_value_to_type(None, "+7", Type.INT16) == 7
    assert cast_value_to_type(None, "-128", Type.INT8) == -128
    assert cast_value_to_type(None, " 1.5f ", Type.FLOAT64) == 1.5  # Double.parseDouble trims, takes a suffix
    assert cast_value_to_type(None, "0x1.8p1", Type.FLOAT64) == 3.0
    assert cast_value_to_type(None, "-Infinity", Type.FLOAT32) == -math.inf
    assert math.isnan(cast_value_to_type(None, "NaN", Type.FLOAT64))
    assert cast_value_to_type(None, "TRUE", Type.BOOLEAN) is True
    assert cast_value_to_type(None, "yes", Type.BOOLEAN) is False  # Boolean.parseBoolean
    for text in ("inf", "1_000", "nan", "1e"):
        with pytest.raises(DataException):
            cast_value_to_type(None, text, Type.FLOAT64)


def test_numbers_to_boolean_use_long_value():
    assert cast_value_to_type(None, 0.5, Type.BOOLEAN) is False
    assert cast_value_to_type(None, -1.5, Type.BOOLEAN) is True
    assert cast_value_to_type(Decimal.schema(1), decimal.Decimal("0.9"), Type.BOOLEAN) is False
    assert cast_value_to_type(None, 2**64, Type.BOOLEAN) is False  # longValue() keeps the low 64 bits


# Results of a JDK 25 run: (double) -> (byte)(short)(int)(long) casts and booleans.
JAVA_DOUBLE_NARROWING = [
    (1e10, -1, -1, 2147483647, 10000000000, True),
    (-1e10, 0, 0, -2147483648, -10000000000, True),
    (300.7, 44, 300, 300, 300, True),
    (-129.5, 127, -129, -129, -129, True),
    (math.nan, 0, 0, 0, 0, False),
    (1e19, -1, -1, 2147483647, 9223372036854775807, True),
    (-1e19, 0, 0, -2147483648, -9223372036854775808, True),
    (127.9, 127, 127, 127, 127, True),
    (128.0, -128, 128, 128, 128, True),
    (65535.5, -1, -1, 65535, 65535, True),
]


@pytest.mark.parametrize("value, as_byte, as_short, as_int, as_long, as_bool", JAVA_DOUBLE_NARROWING)
def test_double_narrowing_matches_java(value, as_byte, as_short, as_int, as_long, as_bool):
    assert cast_value_to_type(Schema.FLOAT64_SCHEMA, value, Type.INT8) == as_byte
    assert cast_value_to_type(Schema.FLOAT64_SCHEMA, value, Type.INT16) == as_short
    assert cast_value_to_type(Schema.FLOAT64_SCHEMA, value, Type.INT32) == as_int
    assert cast_value_to_type(Schema.FLOAT64_SCHEMA, value, Type.INT64) == as_long
    assert cast_value_to_type(Schema.FLOAT64_SCHEMA, value, Type.BOOLEAN) is as_bool


# (long) -> (byte) (short) (int) Float.toString((float) l) Double.toString((double) l), from a JDK 25 run.
JAVA_LONG_NARROWING = [
    (9223372036854775807, -1, -1, -1, "9.223372E18", "9.223372036854776E18"),
    (-9223372036854775808, 0, 0, 0, "-9.223372E18", "-9.223372036854776E18"),
    (16777217, 1, 1, 16777217, "1.6777216E7", "1.6777217E7"),
    (9007199254740993, 1, 1, 1, "9.007199E15", "9.007199254740992E15"),
    (123456789123456789, 21, 24341, -1395630315, "1.2345679E17", "1.2345678912345678E17"),
    (-1, -1, -1, -1, "-1.0", "-1.0"),
]


@pytest.mark.parametrize("value, as_byte, as_short, as_int, float_text, double_text", JAVA_LONG_NARROWING)
def test_long_narrowing_matches_java(value, as_byte, as_short, as_int, float_text, double_text):
    assert cast_value_to_type(Schema.INT64_SCHEMA, value, Type.INT8) == as_byte
    assert cast_value_to_type(Schema.INT64_SCHEMA, value, Type.INT16) == as_short
    assert cast_value_to_type(Schema.INT64_SCHEMA, value, Type.INT32) == as_int
    as_float = cast_value_to_type(Schema.INT64_SCHEMA, value, Type.FLOAT32)
    assert cast_value_to_type(Schema.FLOAT32_SCHEMA, as_float, Type.STRING) == float_text
    as_double = cast_value_to_type(Schema.INT64_SCHEMA, value, Type.FLOAT64)
    assert cast_value_to_type(Schema.FLOAT64_SCHEMA, as_double, Type.STRING) == double_text


# Double.toString(d) and Float.toString((float) d), from a JDK 25 run (JDK 19+ shortest-digit rules).
JAVA_FLOAT_TEXT = [
    (0, "0.0", "0.0"), (-9223372036854775808, "-0.0", "-0.0"), (4607182418800017408, "1.0", "1.0"),
    (4631107791820423168, "42.0", "42.0"), (4562254508917369340, "0.001", "0.001"),
    (4562254047748767497, "9.999E-4", "9.999E-4"), (4711630319722168320, "1.0E7", "1.0E7"),
    (4711630319721631449, "9999999.999", "1.0E7"), (4532020583610935537, "1.0E-5", "1.0E-5"),
    (4728057454347157504, "1.23456789E8", "1.2345679E8"), (4950912855330343670, "1.0E23", "1.0E23"),
    (4955416454957714166, "2.0E23", "2.0E23"), (1, "4.9E-324", "0.0"),
    (9218868437227405311, "1.7976931348623157E308", "Infinity"), (4591870180066957722, "0.1", "0.1"),
    (4599676419421066581, "0.3333333333333333", "0.33333334"), (-4592246652848308224, "-42.125", "-42.125"),
    (4636737291354636288, "100.0", "100.0"), (4921056587992461136, "1.0E21", "1.0E21"),
    (4564560351926583034, "0.0015", "0.0015"),
    (5183643170566569984, "3.4028234663852886E38", "3.4028235E38"),
    (3936146074321813504, "1.401298464324817E-45", "1.4E-45"),
    (4715268810125344768, "1.6777217E7", "1.6777216E7"),
    (4599075939685498880, "0.30000001192092896", "0.3"),
    (4631234455774691328, "42.900001525878906", "42.9"), (4756540486875873280, "1.0E10", "1.0E10"),
    (4542503522205171712, "4.999999873689376E-5", "5.0E-5"),
    (4786789600116397739, "1.0339838227907084E12", "1.0339838E12"),
    (4865948111027615211, "2.1005161903520086E17", "2.1005161E17"),
]


@pytest.mark.parametrize("bits, double_text, float_text", JAVA_FLOAT_TEXT)
def test_float_to_string_matches_java(bits, double_text, float_text):
    value = struct.unpack("<d", struct.pack("<q", bits))[0]
    assert double_to_string(value) == double_text
    assert float_to_string(value) == float_text
    assert cast_value_to_type(None, value, Type.STRING) == double_text
    assert cast_value_to_type(Schema.FLOAT32_SCHEMA, value, Type.STRING) == float_text


def test_date_format_choice_depends_on_the_value():
    # Values.dateFormatFor: below one day -> time of day; whole days -> date; else timestamp.
    assert cast_value_to_type(Timestamp.SCHEMA, millis(5), Type.STRING) == "00:00:00.005Z"
    assert cast_value_to_type(Timestamp.SCHEMA, millis(2 * MILLIS_PER_DAY), Type.STRING) == "1970-01-03"
    assert cast_value_to_type(Date.SCHEMA, _dt.date(1970, 1, 1), Type.STRING) == "00:00:00.000Z"
    assert cast_value_to_type(Date.SCHEMA, _dt.date(2024, 2, 29), Type.STRING) == "2024-02-29"


def test_schema_is_cached_per_input_schema():
    xform = xform_value("a:int64")
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    first = xform.apply(value_record(schema, Struct(schema).put("a", 1)))
    second = xform.apply(value_record(schema, Struct(schema).put("a", 2)))
    assert first.value_schema is second.value_schema


def test_key_variant_keeps_value_side():
    transformed = xform_key("string").apply(record(Schema.INT32_SCHEMA, 7, Schema.INT8_SCHEMA, 1, topic="t"))
    assert (transformed.key_schema.type, transformed.key) == (Type.STRING, "7")
    assert (transformed.value_schema, transformed.value, transformed.topic) == (Schema.INT8_SCHEMA, 1, "t")


# --- property tests -----------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_int64_string_round_trip(number):
    as_text = cast_value_to_type(Schema.INT64_SCHEMA, number, Type.STRING)
    assert as_text == str(number)
    assert cast_value_to_type(Schema.STRING_SCHEMA, as_text, Type.INT64) == number


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False))
def test_float64_string_round_trip(number):
    as_text = cast_value_to_type(Schema.FLOAT64_SCHEMA, number, Type.STRING)
    back = cast_value_to_type(Schema.STRING_SCHEMA, as_text, Type.FLOAT64)
    assert back == number and math.copysign(1, back) == math.copysign(1, number)


@settings(max_examples=200, deadline=None)
@given(st.floats(width=32, allow_nan=False))
def test_float32_string_round_trip(number):
    as_text = cast_value_to_type(Schema.FLOAT32_SCHEMA, number, Type.STRING)
    assert cast_value_to_type(Schema.STRING_SCHEMA, as_text, Type.FLOAT32) == number


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=-(2**63), max_value=2**63 - 1),
       st.sampled_from([(Type.INT8, 8), (Type.INT16, 16), (Type.INT32, 32), (Type.INT64, 64)]))
def test_integer_narrowing_wraps_like_java(number, target):
    type_, bits = target
    result = cast_value_to_type(Schema.INT64_SCHEMA, number, type_)
    assert -(2 ** (bits - 1)) <= result < 2 ** (bits - 1)
    assert (result - number) % (2**bits) == 0
    # Widening back is lossless when the value fits.
    if -(2 ** (bits - 1)) <= number < 2 ** (bits - 1):
        assert result == number


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=64))
def test_bytes_to_string_is_base64(data):
    assert base64.b64decode(cast_value_to_type(Schema.BYTES_SCHEMA, data, Type.STRING)) == data


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from(["a", "b", "c", "d"]),
                       st.one_of(st.integers(-1000, 1000), st.booleans(), st.floats(-1e6, 1e6)), max_size=4),
       st.sampled_from(["int32", "int64", "float64", "boolean", "string"]))
def test_schemaless_cast_keeps_other_fields(value, target):
    out = xform_value(f"a:{target}").apply(value_record(None, value)).value
    assert set(out) == set(value) | {"a"}
    assert {k: v for k, v in out.items() if k != "a"} == {k: v for k, v in value.items() if k != "a"}
