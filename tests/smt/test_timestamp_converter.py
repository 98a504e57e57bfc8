"""TimestampConverter: ported from Kafka's TimestampConverterTest."""

from __future__ import annotations

import datetime as _dt

import pytest

from connector.api import (
    ConfigException,
    ConnectException,
    DataException,
    Date,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
)
from smt.base import require_struct
from smt.transforms.timestamp_converter import (
    OPTIONAL_DATE_SCHEMA,
    OPTIONAL_TIME_SCHEMA,
    OPTIONAL_TIMESTAMP_SCHEMA,
    Key,
    Value,
)
from tests.smt import millis, record, value_record

EPOCH = millis(0)
TIME = _dt.time(0, 0, 1, 234000)  # 1970-01-01T00:00:01.234 as a Connect Time
TIME_AS_TIMESTAMP = millis(1234)
DATE = _dt.date(1970, 1, 2)  # as a Connect Date
DATE_AS_TIMESTAMP = millis(86_400_000)
DATE_PLUS_TIME = millis(86_401_234)
DATE_PLUS_TIME_UNIX = 86_401_234
DATE_PLUS_TIME_UNIX_MICROS = DATE_PLUS_TIME_UNIX * 1000 + 123
DATE_PLUS_TIME_UNIX_NANOS = DATE_PLUS_TIME_UNIX_MICROS * 1000 + 456
DATE_PLUS_TIME_UNIX_SECONDS = DATE_PLUS_TIME_UNIX // 1000
STRING_DATE_FMT = "yyyy MM dd HH mm ss SSS z"
DATE_PLUS_TIME_STRING = "1970 01 02 00 00 01 234 UTC"


def configured(cls=Value, **config):
    xform = cls()
    xform.configure(config)
    return xform


def schemaless(value):
    return value_record(None, value)


# --- configuration -------------------------------------------------------------------------


def test_config_no_target_type():
    with pytest.raises(ConfigException):
        configured()


def test_config_invalid_target_type():
    with pytest.raises(ConfigException, match=r"^Invalid value invalid for configuration target.type: "
                                              r"String must be one of: string, unix, Date, Time, Timestamp$"):
        configured(**{"target.type": "invalid"})


def test_config_invalid_unix_precision():
    with pytest.raises(ConfigException):
        configured(**{"target.type": "unix", "unix.precision": "invalid"})


def test_config_valid_unix_precision():
    configured(**{"target.type": "unix", "unix.precision": "seconds"})


def test_config_missing_format():
    with pytest.raises(ConfigException, match="^TimestampConverter requires format option to be specified when "
                                              "using string timestamps$"):
        configured(**{"target.type": "string"})


def test_config_invalid_format():
    with pytest.raises(ConfigException, match="^TimestampConverter requires a SimpleDateFormat-compatible pattern "
                                              "for string timestamps: bad-format$"):
        configured(**{"target.type": "string", "format": "bad-format"})


# --- schemaless ----------------------------------------------------------------------------------


def test_schemaless_identity():
    transformed = configured(**{"target.type": "Timestamp"}).apply(schemaless(DATE_PLUS_TIME))
    assert transformed.value_schema is None
    assert transformed.value == DATE_PLUS_TIME


def test_schemaless_timestamp_to_date():
    transformed = configured(**{"target.type": "Date"}).apply(schemaless(DATE_PLUS_TIME))
    assert transformed.value_schema is None
    assert transformed.value == DATE


def test_schemaless_timestamp_to_time():
    transformed = configured(**{"target.type": "Time"}).apply(schemaless(DATE_PLUS_TIME))
    assert transformed.value_schema is None
    assert transformed.value == TIME


def test_schemaless_timestamp_to_unix():
    transformed = configured(**{"target.type": "unix"}).apply(schemaless(DATE_PLUS_TIME))
    assert transformed.value_schema is None
    assert transformed.value == DATE_PLUS_TIME_UNIX


def test_schemaless_timestamp_to_string():
    transformed = configured(**{"target.type": "string", "format": STRING_DATE_FMT}).apply(schemaless(DATE_PLUS_TIME))
    assert transformed.value_schema is None
    assert transformed.value == DATE_PLUS_TIME_STRING


def test_schemaless_date_to_timestamp():
    transformed = configured(**{"target.type": "Timestamp"}).apply(schemaless(DATE))
    assert transformed.value_schema is None
    assert transformed.value == DATE_AS_TIMESTAMP


def test_schemaless_time_to_timestamp():
    transformed = configured(**{"target.type": "Timestamp"}).apply(schemaless(TIME))
    assert transformed.value_schema is None
    assert transformed.value == TIME_AS_TIMESTAMP


def test_schemaless_unix_to_timestamp():
    transformed = configured(**{"target.type": "Timestamp"}).apply(schemaless(DATE_PLUS_TIME_UNIX))
    assert transformed.value_schema is None
    assert transformed.value == DATE_PLUS_TIME


def test_schemaless_string_to_timestamp():
    xform = configured(**{"target.type": "Timestamp", "format": STRING_DATE_FMT})
    transformed = xform.apply(schemaless(DATE_PLUS_TIME_STRING))
    assert transformed.value_schema is None
    assert transformed.value == DATE_PLUS_TIME


# --- with schema ---------------------------------------------------------------------------------


def test_with_schema_identity():
    transformed = configured(**{"target.type": "Timestamp"}).apply(value_record(Timestamp.SCHEMA, DATE_PLUS_TIME))
    assert transformed.value_schema == Timestamp.SCHEMA
    assert transformed.value == DATE_PLUS_TIME


def test_with_schema_timestamp_to_date():
    transformed = configured(**{"target.type": "Date"}).apply(value_record(Timestamp.SCHEMA, DATE_PLUS_TIME))
    assert transformed.value_schema == Date.SCHEMA
    assert transformed.value == DATE


def test_with_schema_timestamp_to_time():
    transformed = configured(**{"target.type": "Time"}).apply(value_record(Timestamp.SCHEMA, DATE_PLUS_TIME))
    assert transformed.value_schema == Time.SCHEMA
    assert transformed.value == TIME


def test_with_schema_timestamp_to_unix():
    transformed = configured(**{"target.type": "unix"}).apply(value_record(Timestamp.SCHEMA, DATE_PLUS_TIME))
    assert transformed.value_schema == Schema.INT64_SCHEMA
    assert transformed.value == DATE_PLUS_TIME_UNIX


def test_with_schema_timestamp_to_string():
    xform = configured(**{"target.type": "string", "format": STRING_DATE_FMT})
    transformed = xform.apply(value_record(Timestamp.SCHEMA, DATE_PLUS_TIME))
    assert transformed.value_schema == Schema.STRING_SCHEMA
    assert transformed.value == DATE_PLUS_TIME_STRING


# --- null values -----------------------------------------------------------------------------


def schemaless_null_value_conversion(target_type):
    xform = configured(**{"target.type": target_type, "format": STRING_DATE_FMT})
    transformed = xform.apply(schemaless(None))
    assert transformed.value_schema is None
    assert transformed.value is None


def schemaless_null_field_conversion(target_type):
    xform = configured(**{"target.type": target_type, "format": STRING_DATE_FMT, "field": "ts"})
    transformed = xform.apply(schemaless(None))
    assert transformed.value_schema is None
    assert transformed.value is None


@pytest.mark.parametrize("target_type", ["string", "Date", "Timestamp", "unix", "Time"])
def test_schemaless_null_value_to(target_type):
    schemaless_null_value_conversion(target_type)
    schemaless_null_field_conversion(target_type)


def with_schema_null_value_conversion(target_type, original_schema, expected_schema):
    xform = configured(**{"target.type": target_type, "format": STRING_DATE_FMT})
    transformed = xform.apply(value_record(original_schema, None))
    assert transformed.value_schema == expected_schema
    assert transformed.value is None


def with_schema_null_field_conversion(target_type, original_schema, expected_schema):
    xform = configured(**{"target.type": target_type, "format": STRING_DATE_FMT, "field": "ts"})
    struct_schema = SchemaBuilder.struct().field("ts", original_schema).field("other", Schema.STRING_SCHEMA)
    expected_struct_schema = SchemaBuilder.struct().field("ts", expected_schema).field("other", Schema.STRING_SCHEMA)
    original = Struct(struct_schema.build()).put("ts", None).put("other", "test")
    transformed = xform.apply(value_record(struct_schema.build(), original))
    assert transformed.value_schema == expected_struct_schema.build()
    assert require_struct(transformed.value, "").get("ts") is None
    transformed = xform.apply(value_record(struct_schema.optional().build(), None))
    assert transformed.value_schema == expected_struct_schema.optional().build()
    assert transformed.value is None


INPUT_SCHEMAS = [Schema.OPTIONAL_INT64_SCHEMA, OPTIONAL_TIME_SCHEMA, OPTIONAL_DATE_SCHEMA,
                 Schema.OPTIONAL_STRING_SCHEMA, OPTIONAL_TIMESTAMP_SCHEMA]
TARGETS = {"Timestamp": OPTIONAL_TIMESTAMP_SCHEMA, "unix": Schema.OPTIONAL_INT64_SCHEMA,
           "Time": OPTIONAL_TIME_SCHEMA, "Date": OPTIONAL_DATE_SCHEMA, "string": Schema.OPTIONAL_STRING_SCHEMA}


@pytest.mark.parametrize("target_type", list(TARGETS))
def test_with_schema_null_value_to(target_type):
    for original in INPUT_SCHEMAS:
        with_schema_null_value_conversion(target_type, original, TARGETS[target_type])


@pytest.mark.parametrize("target_type", list(TARGETS))
def test_with_schema_null_field_to(target_type):
    for original in INPUT_SCHEMAS:
        with_schema_null_field_conversion(target_type, original, TARGETS[target_type])


def test_with_schema_date_to_timestamp():
    transformed = configured(**{"target.type": "Timestamp"}).apply(value_record(Date.SCHEMA, DATE))
    assert transformed.value_schema == Timestamp.SCHEMA
    assert transformed.value == DATE_AS_TIMESTAMP


def test_with_schema_time_to_timestamp():
    transformed = configured(**{"target.type": "Timestamp"}).apply(value_record(Time.SCHEMA, TIME))
    assert transformed.value_schema == Timestamp.SCHEMA
    assert transformed.value == TIME_AS_TIMESTAMP


def test_with_schema_unix_to_timestamp():
    transformed = configured(**{"target.type": "Timestamp"}).apply(value_record(Schema.INT64_SCHEMA,
                                                                                DATE_PLUS_TIME_UNIX))
    assert transformed.value_schema == Timestamp.SCHEMA
    assert transformed.value == DATE_PLUS_TIME


def test_with_schema_string_to_timestamp():
    xform = configured(**{"target.type": "Timestamp", "format": STRING_DATE_FMT})
    transformed = xform.apply(value_record(Schema.STRING_SCHEMA, DATE_PLUS_TIME_STRING))
    assert transformed.value_schema == Timestamp.SCHEMA
    assert transformed.value == DATE_PLUS_TIME


# --- field conversions ---------------------------------------------------------------------------


def test_schemaless_field_conversion():
    xform = configured(**{"target.type": "Date", "field": "ts"})
    transformed = xform.apply(schemaless({"ts": DATE_PLUS_TIME}))
    assert transformed.value_schema is None
    assert transformed.value == {"ts": DATE}


def test_with_schema_field_conversion():
    xform = configured(**{"target.type": "Timestamp", "field": "ts"})
    schema = SchemaBuilder.struct().field("ts", Schema.INT64_SCHEMA).field("other", Schema.STRING_SCHEMA).build()
    original = Struct(schema).put("ts", DATE_PLUS_TIME_UNIX).put("other", "test")
    transformed = xform.apply(value_record(schema, original))
    expected_schema = SchemaBuilder.struct().field("ts", Timestamp.SCHEMA).field("other", Schema.STRING_SCHEMA).build()
    assert transformed.value_schema == expected_schema
    assert transformed.value.get("ts") == DATE_PLUS_TIME
    assert transformed.value.get("other") == "test"


@pytest.mark.parametrize("replace_null_with_default, expected", [(False, None), (True, EPOCH)])
def test_with_schema_null_field_with_default_conversion(replace_null_with_default, expected):
    # As in Kafka, the parameters are unused: the config always sets replace.null.with.default=false.
    xform = configured(**{"target.type": "Timestamp", "field": "ts", "replace.null.with.default": False})
    schema = (SchemaBuilder.struct().field("ts", SchemaBuilder.int64().optional().default_value(0).build())
              .field("other", Schema.STRING_SCHEMA).build())
    original = Struct(schema).put("ts", None).put("other", "test")
    transformed = xform.apply(value_record(schema, original))
    expected_schema = (SchemaBuilder.struct().field("ts", Timestamp.builder().optional().build())
                       .field("other", Schema.STRING_SCHEMA).build())
    assert transformed.value_schema == expected_schema
    assert transformed.value.get("ts") is None
    assert transformed.value.get("other") == "test"


@pytest.mark.parametrize("precision, value, expected", [
    ("microseconds", DATE_PLUS_TIME_UNIX_MICROS, DATE_PLUS_TIME),
    ("nanoseconds", DATE_PLUS_TIME_UNIX_NANOS, DATE_PLUS_TIME),
    ("seconds", DATE_PLUS_TIME_UNIX_SECONDS, millis(86_401_000)),
])
def test_with_schema_field_conversion_precision(precision, value, expected):
    xform = configured(**{"target.type": "Timestamp", "field": "ts", "unix.precision": precision})
    schema = SchemaBuilder.struct().field("ts", Schema.INT64_SCHEMA).build()
    transformed = xform.apply(value_record(schema, Struct(schema).put("ts", value)))
    assert transformed.value_schema == SchemaBuilder.struct().field("ts", Timestamp.SCHEMA).build()
    assert transformed.value.get("ts") == expected


@pytest.mark.parametrize("precision, expected", [
    ("microseconds", 86_401_234_000),
    ("nanoseconds", 86_401_234_000_000),
    ("seconds", DATE_PLUS_TIME_UNIX_SECONDS),
])
def test_schemaless_string_to_unix(precision, expected):
    xform = configured(**{"target.type": "unix", "unix.precision": precision, "format": STRING_DATE_FMT})
    transformed = xform.apply(schemaless(DATE_PLUS_TIME_STRING))
    assert transformed.value_schema is None
    assert transformed.value == expected


def test_key():
    transformed = configured(Key, **{"target.type": "Timestamp"}).apply(record(None, DATE_PLUS_TIME, None, None))
    assert transformed.key_schema is None
    assert transformed.key == DATE_PLUS_TIME


# --- beyond Kafka's tests: behaviour read from TimestampConverter.java -------------------------


def test_unparseable_string():
    xform = configured(**{"target.type": "unix", "format": "yyyy-MM-dd"})
    with pytest.raises(DataException, match=r"^Could not parse timestamp: value \(nope\) does not match pattern "
                                            r"\(yyyy-MM-dd\)$"):
        xform.apply(schemaless("nope"))


def test_string_input_without_format():
    with pytest.raises(DataException):
        configured(**{"target.type": "unix"}).apply(schemaless("2020-01-01"))


def test_unsupported_schema_type():
    with pytest.raises(ConnectException, match=r"^Schema Schema\{INT32\} does not correspond to a known timestamp "
                                               r"type format$"):
        configured(**{"target.type": "unix"}).apply(value_record(Schema.INT32_SCHEMA, 5))


def test_unsupported_schemaless_type():
    with pytest.raises(DataException, match=r"^TimestampConverter does not support float objects as timestamps$"):
        configured(**{"target.type": "unix"}).apply(schemaless(1.5))


def test_wrong_value_for_schema():
    with pytest.raises(DataException, match=r"^Expected Unix timestamp to be a Long, but found str$"):
        configured(**{"target.type": "Timestamp"}).apply(value_record(Schema.INT64_SCHEMA, "x"))


def test_output_schema_drops_defaults_and_struct_default_is_converted():
    field_schema = SchemaBuilder.int64().default_value(1000).build()
    builder = SchemaBuilder.struct().optional().field("ts", field_schema).field("o", Schema.STRING_SCHEMA)
    default = Struct(builder.build()).put("ts", 5000).put("o", "x")
    schema = builder.default_value(default).build()
    xform = configured(**{"target.type": "Timestamp", "field": "ts"})
    out = xform.apply(value_record(schema, Struct(schema).put("o", "y")))
    assert out.value_schema.field("ts").schema == Timestamp.SCHEMA  # the field default is gone
    assert out.value_schema.default.get("ts") == millis(5000)
    assert out.value.get("ts") == millis(1000)  # read with Struct.get: the field default
    assert xform.apply(value_record(schema, None)).value_schema is out.value_schema


def test_negative_and_pre_epoch_values():
    to_date = configured(**{"target.type": "Date"})
    assert to_date.apply(schemaless(-1)).value == _dt.date(1969, 12, 31)
    to_time = configured(**{"target.type": "Time"})
    assert to_time.apply(schemaless(-1)).value == _dt.time(23, 59, 59, 999000)
    to_seconds = configured(**{"target.type": "unix", "unix.precision": "seconds"})
    assert to_seconds.apply(schemaless(millis(-1500))).value == -1  # TimeUnit truncates toward zero
    from_micros = configured(**{"target.type": "unix", "unix.precision": "microseconds"})
    assert from_micros.apply(schemaless(-1999)).value == -1000


def test_iso_formats():
    xform = configured(**{"target.type": "string", "format": "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"})
    assert xform.apply(schemaless(DATE_PLUS_TIME)).value == "1970-01-02T00:00:01.234Z"
    back = configured(**{"target.type": "Timestamp", "format": "yyyy-MM-dd'T'HH:mm:ss.SSSXXX"})
    assert back.apply(schemaless("1970-01-02T02:00:01.234+02:00")).value == DATE_PLUS_TIME
