"""TimestampConverter: convert timestamps between unix epoch numbers, strings and Connect Date/Time/Timestamp.

Every conversion goes through epoch milliseconds (Java's ``java.util.Date``),
so sub-millisecond parts are lost. ``format`` is a ``SimpleDateFormat``
pattern, always applied in UTC. ``field`` empty means the whole key/value.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Callable, NamedTuple

from connector.api.config_def import ConfigDef, ConfigType, valid_string
from connector.api.errors import ConfigException, ConnectException, DataException
from connector.api.java.dateformat import JavaDateFormat
from connector.api.java.strings import class_name
from connector.api.logical import (
    EPOCH,
    EPOCH_DATE,
    MILLIS_PER_DAY,
    Date,
    Time,
    Timestamp,
    java_date_millis,
)
from connector.api.lru import LRUCache
from connector.api.record import SinkRecord
from connector.api.schema import (
    DATE_LOGICAL_NAME,
    TIME_LOGICAL_NAME,
    TIMESTAMP_LOGICAL_NAME,
    Schema,
    SchemaBuilder,
    Type,
)
from connector.api.struct import Struct
from smt.base import (
    KeySide,
    StructOrMapTransformation,
    ValueSide,
    copy_schema_basics,
    field_value,
    replace_null_with_default,
    require_map,
    require_schema,
    require_struct_or_null,
    schema_text,
)

FIELD_CONFIG = "field"
TARGET_TYPE_CONFIG = "target.type"
FORMAT_CONFIG = "format"
UNIX_PRECISION_CONFIG = "unix.precision"
REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"
PURPOSE = "converting timestamp formats"

TYPE_STRING = "string"
TYPE_UNIX = "unix"
TYPE_DATE = "Date"
TYPE_TIME = "Time"
TYPE_TIMESTAMP = "Timestamp"
UNIX_PRECISION_MILLIS = "milliseconds"
UNIX_PRECISION_MICROS = "microseconds"
UNIX_PRECISION_NANOS = "nanoseconds"
UNIX_PRECISION_SECONDS = "seconds"

OPTIONAL_DATE_SCHEMA = Date.builder().optional().build()
OPTIONAL_TIMESTAMP_SCHEMA = Timestamp.builder().optional().build()
OPTIONAL_TIME_SCHEMA = Time.builder().optional().build()

_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


def _saturated(value: int) -> int:
    return max(_LONG_MIN, min(_LONG_MAX, value))


def _truncating_div(value: int, divisor: int) -> int:
    quotient = abs(value) // divisor
    return -quotient if value < 0 else quotient


class _Config(NamedTuple):
    field: str
    type: str
    format: JavaDateFormat | None
    unix_precision: str


class _Translator(NamedTuple):
    to_raw: Callable[[_Config, Any], int]
    type_schema: Callable[[bool], Schema]
    to_type: Callable[[_Config, int], Any]


def _string_to_raw(config: _Config, value: Any) -> int:
    if not isinstance(value, str):
        raise DataException(f"Expected string timestamp to be a String, but found {class_name(value)}")
    if config.format is None:
        raise DataException("TimestampConverter requires format option to be specified when using string "
                            "timestamps")
    try:
        return config.format.parse_millis(value)
    except ValueError as exc:
        raise DataException(
            f"Could not parse timestamp: value ({value}) does not match pattern ({config.format.to_pattern()})"
        ) from exc


def _string_to_type(config: _Config, millis: int) -> str:
    assert config.format is not None, "configure() refuses a string target without a format"
    return config.format.format_millis(millis)


def _unix_to_raw(config: _Config, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise DataException(f"Expected Unix timestamp to be a Long, but found {class_name(value)}")
    if config.unix_precision == UNIX_PRECISION_SECONDS:
        return _saturated(value * 1000)
    if config.unix_precision == UNIX_PRECISION_MICROS:
        return _truncating_div(value, 1000)
    if config.unix_precision == UNIX_PRECISION_NANOS:
        return _truncating_div(value, 1_000_000)
    return value


def _unix_to_type(config: _Config, millis: int) -> int:
    if config.unix_precision == UNIX_PRECISION_SECONDS:
        return _truncating_div(millis, 1000)
    if config.unix_precision == UNIX_PRECISION_MICROS:
        return _saturated(millis * 1000)
    if config.unix_precision == UNIX_PRECISION_NANOS:
        return _saturated(millis * 1_000_000)
    return millis


def _date_like_to_raw(label: str) -> Callable[[_Config, Any], int]:
    def to_raw(config: _Config, value: Any) -> int:
        millis = java_date_millis(value)
        if millis is None:
            raise DataException(f"Expected {label} to be a java.util.Date, but found {class_name(value)}")
        return millis

    return to_raw


def _to_date(config: _Config, millis: int) -> _dt.date:
    return EPOCH_DATE + _dt.timedelta(days=millis // MILLIS_PER_DAY)


def _to_time(config: _Config, millis: int) -> _dt.time:
    return Time.to_logical(Time.SCHEMA, millis % MILLIS_PER_DAY)


def _to_timestamp(config: _Config, millis: int) -> _dt.datetime:
    try:
        return EPOCH + _dt.timedelta(milliseconds=millis)
    except OverflowError:
        raise DataException(f"Timestamp {millis} is out of the supported range (years 1-9999)") from None


TRANSLATORS: dict[str, _Translator] = {
    TYPE_STRING: _Translator(
        _string_to_raw, lambda optional: Schema.OPTIONAL_STRING_SCHEMA if optional else Schema.STRING_SCHEMA,
        _string_to_type),
    TYPE_UNIX: _Translator(
        _unix_to_raw, lambda optional: Schema.OPTIONAL_INT64_SCHEMA if optional else Schema.INT64_SCHEMA,
        _unix_to_type),
    TYPE_DATE: _Translator(
        _date_like_to_raw("Date"), lambda optional: OPTIONAL_DATE_SCHEMA if optional else Date.SCHEMA, _to_date),
    TYPE_TIME: _Translator(
        _date_like_to_raw("Time"), lambda optional: OPTIONAL_TIME_SCHEMA if optional else Time.SCHEMA, _to_time),
    TYPE_TIMESTAMP: _Translator(
        _date_like_to_raw("Timestamp"),
        lambda optional: OPTIONAL_TIMESTAMP_SCHEMA if optional else Timestamp.SCHEMA, _to_timestamp),
}


def timestamp_type_from_schema(schema: Schema) -> str:
    if schema.name == TIMESTAMP_LOGICAL_NAME:
        return TYPE_TIMESTAMP
    if schema.name == DATE_LOGICAL_NAME:
        return TYPE_DATE
    if schema.name == TIME_LOGICAL_NAME:
        return TYPE_TIME
    if schema.type is Type.STRING:
        return TYPE_STRING
    if schema.type is Type.INT64:
        return TYPE_UNIX
    raise ConnectException(f"Schema {schema_text(schema)} does not correspond to a known timestamp type format")


def infer_timestamp_type(value: Any) -> str:
    if isinstance(value, (_dt.date, _dt.time)):
        return TYPE_TIMESTAMP
    if isinstance(value, int) and not isinstance(value, bool):
        return TYPE_UNIX
    if isinstance(value, str):
        return TYPE_STRING
    raise DataException(f"TimestampConverter does not support {class_name(value)} objects as timestamps")


class TimestampConverter(StructOrMapTransformation):
    """Convert timestamps between different formats such as Unix epoch, strings, and Connect Date/Timestamp types.

    Applies to individual fields or to the entire value.
    """

    CONFIG_DEF = replace_null_with_default(
        ConfigDef()
        .define(FIELD_CONFIG, ConfigType.STRING, "", importance="high",
                doc="The field containing the timestamp, or empty if the entire value is a timestamp")
        .define(TARGET_TYPE_CONFIG, ConfigType.STRING,
                validator=valid_string(TYPE_STRING, TYPE_UNIX, TYPE_DATE, TYPE_TIME, TYPE_TIMESTAMP),
                importance="high",
                doc="The desired timestamp representation: string, unix, Date, Time, or Timestamp")
        .define(FORMAT_CONFIG, ConfigType.STRING, "", importance="medium",
                doc="A SimpleDateFormat-compatible format for the timestamp. Used to generate the output when "
                    "type=string or used to parse the input if the input is a string.")
        .define(UNIX_PRECISION_CONFIG, ConfigType.STRING, UNIX_PRECISION_MILLIS,
                valid_string(UNIX_PRECISION_NANOS, UNIX_PRECISION_MICROS, UNIX_PRECISION_MILLIS,
                             UNIX_PRECISION_SECONDS), "low",
                "The desired Unix precision for the timestamp: seconds, milliseconds, microseconds, or "
                "nanoseconds. Used to generate the output when type=unix or used to parse the input if the "
                "input is a Long.Note: This SMT will cause precision loss during conversions from, and to, "
                "values with sub-millisecond components.")
    )

    PASSES_NULL = False  # a null key/value goes through the forms too: its schema is checked and converted

    settings: _Config
    replace_null_with_default: bool = True

    def _configure(self, config: dict[str, Any]) -> None:
        target = config[TARGET_TYPE_CONFIG]
        pattern = config[FORMAT_CONFIG]
        self._schema_cache: LRUCache[Schema, Schema] = LRUCache()
        self.replace_null_with_default = config[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        if target == TYPE_STRING and not pattern.strip():
            raise ConfigException(
                "TimestampConverter requires format option to be specified when using string timestamps")
        date_format = None
        if pattern.strip():
            try:
                date_format = JavaDateFormat(pattern)
            except ValueError as exc:
                raise ConfigException(
                    "TimestampConverter requires a SimpleDateFormat-compatible pattern for string timestamps: "
                    f"{pattern}") from exc
        self.settings = _Config(config[FIELD_CONFIG], target, date_format, config[UNIX_PRECISION_CONFIG])

    def convert_timestamp(self, timestamp: Any, timestamp_format: str | None = None) -> Any:
        """Convert one timestamp (of the given format, else inferred from its type) to the target."""
        if timestamp is None:
            return None
        if timestamp_format is None:
            timestamp_format = infer_timestamp_type(timestamp)
        raw = TRANSLATORS[timestamp_format].to_raw(self.settings, timestamp)
        return TRANSLATORS[self.settings.type].to_type(self.settings, raw)

    def apply_with_schema(self, record: SinkRecord) -> SinkRecord:
        schema = require_schema(self.operating_schema(record), PURPOSE)
        target = TRANSLATORS[self.settings.type]
        if not self.settings.field:
            value = self.operating_value(record)
            return self.new_record(record, target.type_schema(schema.optional),
                                   self.convert_timestamp(value, timestamp_type_from_schema(schema)))
        value = require_struct_or_null(self.operating_value(record), PURPOSE)
        updated_schema = self.updated_schema(schema)
        return self.new_record(record, updated_schema, self._convert_struct(value, updated_schema))

    def updated_schema(self, schema: Schema) -> Schema:
        return self._schema_cache.get_or_compute(schema, self._build_schema)

    def _build_schema(self, schema: Schema) -> Schema:
        target = TRANSLATORS[self.settings.type]
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields():
            if field.name == self.settings.field:
                builder.field(field.name, target.type_schema(field.schema.optional))
            else:
                builder.field(field.name, field.schema)
        if schema.optional:
            builder.optional()
        if schema.default is not None:
            builder.default_value(self._convert_struct(schema.default, builder.build()))
        return builder.build()

    def _convert_struct(self, value: Struct | None, updated_schema: Schema) -> Struct | None:
        if value is None:
            return None
        updated = Struct(updated_schema)
        for field in value.schema.fields():
            field_val = field_value(value, field, self.replace_null_with_default)
            if field.name == self.settings.field:
                field_val = self.convert_timestamp(field_val, timestamp_type_from_schema(field.schema))
            updated.put(field.name, field_val)
        return updated

    def apply_schemaless(self, record: SinkRecord) -> SinkRecord:
        raw = self.operating_value(record)
        if raw is None or not self.settings.field:
            return self.new_record(record, None, self.convert_timestamp(raw))
        value = require_map(raw, PURPOSE)
        updated = dict(value)
        updated[self.settings.field] = self.convert_timestamp(value.get(self.settings.field))
        return self.new_record(record, None, updated)


class Key(KeySide, TimestampConverter):
    """``org.apache.kafka.connect.transforms.TimestampConverter$Key``."""


class Value(ValueSide, TimestampConverter):
    """``org.apache.kafka.connect.transforms.TimestampConverter$Value``."""
