"""Kafka Connect's ``Values`` utilities (``org.apache.kafka.connect.data.Values``).

Converts between Connect values of different types, renders any value as
text (``convert_to_string``) and parses such text back into a typed value
(``parse_string``). ``SimpleHeaderConverter`` is built on these two, and SMTs
(``InsertHeader``, ``Cast``) use the typed ``convert_to_*`` functions.

Behaviour follows Kafka's, including its quirks (a header ``"1,2"`` parses as
the INT8 ``1``; ``"[1, null]"`` stays a string), because records converted by
icefloe must look exactly as they would under Kafka Connect. Where Java and
Python values differ:

* Java tells ``Byte``/``Short``/``Integer``/``Long`` apart by class; Python has
  one ``int``, so results are plain ints (narrowed the way Java casts narrow)
  and :func:`infer_schema` types every ``int`` as INT64.
* A FLOAT32 value is a Python ``float`` holding a float32-representable number
  (what a Java ``Float`` holds); pass the schema to :func:`convert_to_string`
  to render it as ``Float.toString`` does.
* Dates, times and timestamps are ``datetime.date``/``time``/``datetime``
  rather than one ``java.util.Date``; they are rendered and parsed in UTC
  (Kafka uses the JVM's default zone) with the proleptic Gregorian calendar.
* ``parse_string("null")`` returns ``SchemaAndValue(None, None)`` where Kafka
  returns a null reference; every caller treats the two alike.

Java's number semantics (casts, parsing, ``toString``) come from
:mod:`connector.api.java.numbers`.
"""

from __future__ import annotations

import base64
import datetime as _dt
import decimal as _decimal
import math
import re
from typing import Any, Callable

from connector.api.errors import DataException
from connector.api.instant import OutOfRangeTimestamp
from connector.api.java.numbers import (
    NumberFormatError,
    decimal_to_string,
    double_to_string,
    exact_to_float32,
    float_to_string,
    java_double_value,
    java_long_value,
    parse_big_decimal,
    to_float32,
    wrap_int,
)
from connector.api.java.strings import java_trim
from connector.api.logical import EPOCH, MILLIS_PER_DAY, java_date_millis
from connector.api.logical import Date as _Date
from connector.api.logical import Decimal as _DecimalType
from connector.api.logical import Time as _Time
from connector.api.logical import Timestamp as _Timestamp
from connector.api.record import SchemaAndValue
from connector.api.schema import Schema, SchemaBuilder, Type
from connector.api.struct import Struct

__all__ = [
    "parse_string", "convert_to_string", "convert_to_boolean", "convert_to_byte",
    "convert_to_short", "convert_to_integer", "convert_to_long", "convert_to_float",
    "convert_to_double", "convert_to_list", "convert_to_map", "convert_to_struct",
    "convert_to_date", "convert_to_time", "convert_to_timestamp", "convert_to_decimal",
    "infer_schema", "escape", "format_date", "encode_temporal", "is_blank",
]

_NULL = SchemaAndValue(None, None)
_TRUE = SchemaAndValue(Schema.BOOLEAN_SCHEMA, True)
_FALSE = SchemaAndValue(Schema.BOOLEAN_SCHEMA, False)
_ARRAY_SELECTOR_SCHEMA = SchemaBuilder.array(Schema.STRING_SCHEMA).build()
_MAP_SELECTOR_SCHEMA = SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).build()
_STRUCT_SELECTOR_SCHEMA = SchemaBuilder.struct().build()
_NULL_VALUE = "null"
_NULL_REQUIRED = "Unable to convert a null value to a schema that requires a value"


_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


def is_blank(text: str | None) -> bool:
    """Kafka's ``Utils.isBlank``."""
    return text is None or java_trim(text) == ""


def _is_number(value: Any) -> bool:
    """``instanceof Number``: Java's Boolean is not a number, Python's bool is an int."""
    return isinstance(value, (int, float, _decimal.Decimal)) and not isinstance(value, bool)


def _parse_big_decimal(text: str) -> _decimal.Decimal | None:
    """``new BigDecimal(text)``, or None where Java throws ``NumberFormatException``."""
    try:
        return parse_big_decimal(text)
    except NumberFormatError:
        return None


# ======================================================================================
# Temporal values as java.util.Date millis
# ======================================================================================

_TEMPORAL_NAMES = (_Date.LOGICAL_NAME, _Time.LOGICAL_NAME, _Timestamp.LOGICAL_NAME)


def _is_temporal(value: Any) -> bool:
    """``instanceof java.util.Date``."""
    return isinstance(value, (_dt.date, _dt.time, OutOfRangeTimestamp))


def _epoch_millis(value: _dt.date | _dt.time | OutOfRangeTimestamp) -> int:
    """The millis a ``java.util.Date`` would hold for a Python date, time or datetime."""
    millis = java_date_millis(value)
    assert millis is not None, value  # callers check _is_temporal first
    return millis


def _truncating_div(a: int, b: int) -> int:
    """Java's integer division, which truncates toward zero."""
    quotient = abs(a) // abs(b)
    return quotient if (a >= 0) == (b > 0) else -quotient


def _date_from_days(days: int) -> _dt.date:
    try:
        return _Date.to_logical(_Date.SCHEMA, wrap_int(days, 32))
    except OverflowError as exc:
        raise DataException(f"Date {days} days from the epoch is outside the supported range") from exc


def _timestamp_from_millis(millis: int) -> _dt.datetime | OutOfRangeTimestamp:
    try:
        return _Timestamp.to_logical(_Timestamp.SCHEMA, millis)
    except OverflowError as exc:
        raise DataException(f"Timestamp {millis} ms from the epoch is outside the supported range") from exc


def encode_temporal(schema_name: str | None, value: _dt.date | _dt.time | OutOfRangeTimestamp) -> int | None:
    """``Date``/``Time``/``Timestamp.fromLogical`` of a date, time or datetime, by logical name.

    Days for a Date (the value must be a UTC midnight), millis of the day for a
    Time (the value must lie on 1970-01-01), epoch millis for a Timestamp;
    None if ``schema_name`` is not one of the three.
    """
    if schema_name not in _TEMPORAL_NAMES:
        return None
    millis = _epoch_millis(value)
    if schema_name == _Date.LOGICAL_NAME:
        if millis % MILLIS_PER_DAY != 0:
            raise DataException(
                "Kafka Connect Date type should not have any time fields set to non-zero values."
            )
        return millis // MILLIS_PER_DAY
    if schema_name == _Time.LOGICAL_NAME:
        if millis < 0 or millis > MILLIS_PER_DAY:
            raise DataException(
                "Kafka Connect Time type should not have any date fields set to non-zero values."
            )
    return millis


def format_date(value: _dt.date | _dt.time) -> str:
    """A temporal value as ``Values.dateFormatFor`` formats it (in UTC).

    Like Kafka, the format follows the instant, not the type: less than one day
    after the epoch gives ``HH:mm:ss.SSS'Z'``, a UTC midnight gives
    ``yyyy-MM-dd``, anything else ``yyyy-MM-dd'T'HH:mm:ss.SSS'Z'``.
    """
    millis = _epoch_millis(value)
    instant = EPOCH + _dt.timedelta(milliseconds=millis)
    time_text = f"{instant:%H:%M:%S}.{instant.microsecond // 1000:03d}Z"
    if millis < MILLIS_PER_DAY:
        return time_text
    date_text = f"{instant.year:04d}-{instant.month:02d}-{instant.day:02d}"
    if millis % MILLIS_PER_DAY == 0:
        return date_text
    return f"{date_text}T{time_text}"


# ======================================================================================
# Scalar conversions
# ======================================================================================


def _type_name(value: Any) -> str:
    return type(value).__name__


def _cannot_convert(value: Any, target: object) -> DataException:
    return DataException(f"Unable to convert {value} ({_type_name(value)}) to {target}")


def _as_long(value: Any, from_schema: Schema | None) -> int:
    """``Values.asLong``: numbers, numeric text, or temporal values of a logical schema."""
    if _is_number(value):
        if isinstance(value, _decimal.Decimal) and not value.is_finite():
            raise _cannot_convert(value, "a number")  # no BigDecimal is NaN or infinite
        return java_long_value(value)
    if isinstance(value, str):
        parsed = _parse_big_decimal(value)
        if parsed is not None:
            return java_long_value(parsed)
    if from_schema is not None:
        if _is_temporal(value):
            encoded = encode_temporal(from_schema.name, value)
            if encoded is not None:
                return encoded
        raise _cannot_convert(value, repr(from_schema))
    raise _cannot_convert(value, "a number")


def _as_double(value: Any, from_schema: Schema | None) -> float:
    """``Values.asDouble``: like :func:`_as_long`, keeping fractions."""
    if _is_number(value):
        return java_double_value(value)
    if isinstance(value, str):
        parsed = _parse_big_decimal(value)
        if parsed is not None:
            return float(parsed)
    return float(_as_long(value, from_schema))


def convert_to_boolean(schema: Schema | None, value: Any) -> bool | None:
    """A BOOLEAN: booleans as they are, ``"true"``/``"false"`` text, numbers as ``!= 0``."""
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        parsed = parse_string(value)
        if isinstance(parsed.value, bool):
            return parsed.value
    return _as_long(value, schema) != 0


def convert_to_byte(schema: Schema | None, value: Any) -> int | None:
    """An INT8, narrowed like Java's ``(byte)`` cast."""
    return None if value is None else wrap_int(_as_long(value, schema), 8)


def convert_to_short(schema: Schema | None, value: Any) -> int | None:
    """An INT16, narrowed like Java's ``(short)`` cast."""
    return None if value is None else wrap_int(_as_long(value, schema), 16)


def convert_to_integer(schema: Schema | None, value: Any) -> int | None:
    """An INT32, narrowed like Java's ``(int)`` cast."""
    return None if value is None else wrap_int(_as_long(value, schema), 32)


def convert_to_long(schema: Schema | None, value: Any) -> int | None:
    """An INT64."""
    return None if value is None else _as_long(value, schema)


def convert_to_float(schema: Schema | None, value: Any) -> float | None:
    """A FLOAT32 (a float rounded to float32 precision)."""
    return None if value is None else to_float32(_as_double(value, schema))


def convert_to_double(schema: Schema | None, value: Any) -> float | None:
    """A FLOAT64."""
    return None if value is None else _as_double(value, schema)


# ======================================================================================
# Rendering as text
# ======================================================================================


def escape(value: str) -> str:
    """Backslash-escape backslashes and double quotes, for strings embedded in arrays and maps."""
    return value.replace("\\", "\\\\").replace('"', '\\"')


def convert_to_string(schema: Schema | None, value: Any) -> str | None:
    """The text form of any Connect value, which :func:`parse_string` reads back.

    Strings are written as they are at the top level and quoted inside
    arrays, maps and structs; bytes as base64; temporal values per
    :func:`format_date`. ``schema`` only refines how FLOAT32 values print.
    """
    if value is None:
        return None
    parts: list[str] = []
    _append(parts, value, False, schema)
    return "".join(parts)


def _child(schema: Schema | None, attribute: str) -> Schema | None:
    return getattr(schema, attribute, None) if schema is not None else None


def _append(parts: list[str], value: Any, embedded: bool, schema: Schema | None) -> None:
    if value is None:
        parts.append(_NULL_VALUE)
    elif isinstance(value, bool):
        parts.append("true" if value else "false")
    elif isinstance(value, int):
        parts.append(str(value))
    elif isinstance(value, float):
        is_float32 = schema is not None and schema.type is Type.FLOAT32
        parts.append(float_to_string(value) if is_float32 else double_to_string(value))
    elif isinstance(value, _decimal.Decimal):
        parts.append(decimal_to_string(value))
    elif isinstance(value, str):
        parts.append(f'"{escape(value)}"' if embedded else value)
    elif isinstance(value, (bytes, bytearray, memoryview)):
        encoded = base64.b64encode(bytes(value)).decode("ascii")
        parts.append(f'"{encoded}"' if embedded else encoded)
    elif isinstance(value, (list, tuple)):
        _append_sequence(parts, value, _child(schema, "value_schema"))
    elif isinstance(value, dict):
        _append_mapping(parts, value, _child(schema, "key_schema"), _child(schema, "value_schema"))
    elif isinstance(value, Struct):
        _append_struct(parts, value)
    elif _is_temporal(value):
        parts.append(format_date(value))
    else:
        raise DataException(f"Failed to serialize unexpected value type {_type_name(value)}: {value}")


def _append_sequence(parts: list[str], values: list | tuple, element_schema: Schema | None) -> None:
    parts.append("[")
    for index, element in enumerate(values):
        if index:
            parts.append(",")
        _append(parts, element, True, element_schema)
    parts.append("]")


def _append_mapping(parts: list[str], mapping: dict, key_schema: Schema | None,
                    value_schema: Schema | None) -> None:
    parts.append("{")
    for index, (key, val) in enumerate(mapping.items()):
        if index:
            parts.append(",")
        _append(parts, key, True, key_schema)
        parts.append(":")
        _append(parts, val, True, value_schema)
    parts.append("}")


def _append_struct(parts: list[str], struct_value: Struct) -> None:
    parts.append("{")
    for index, field in enumerate(struct_value.schema.fields()):
        if index:
            parts.append(",")
        _append(parts, field.name, True, None)
        parts.append(":")
        _append(parts, struct_value.get(field), True, field.schema)
    parts.append("}")


# ======================================================================================
# Structured and logical conversions
# ======================================================================================


def convert_to_list(schema: Schema | None, value: Any) -> list | None:
    """An ARRAY: a list as it is, or text parsed as ``[...]``."""
    return _convert_to_array(_ARRAY_SELECTOR_SCHEMA, value)


def convert_to_map(schema: Schema | None, value: Any) -> dict | None:
    """A MAP: a dict as it is, or text parsed as ``{...}``."""
    return _convert_to_map(_MAP_SELECTOR_SCHEMA, value)


def convert_to_struct(schema: Schema | None, value: Any) -> Struct:
    """A STRUCT: only a Struct converts to one."""
    return _convert_to_struct(_STRUCT_SELECTOR_SCHEMA, value)


def convert_to_date(schema: Schema | None, value: Any) -> _dt.date:
    """A Date from a date, a Timestamp (its UTC day), days since the epoch, or ISO text."""
    if value is None:
        raise DataException(_NULL_REQUIRED)
    return _convert_to_date(_Date.SCHEMA, schema, value)


def convert_to_time(schema: Schema | None, value: Any) -> _dt.time:
    """A Time from a time, a Timestamp (its UTC time of day), millis of the day, or ISO text."""
    if value is None:
        raise DataException(_NULL_REQUIRED)
    return _convert_to_time(_Time.SCHEMA, schema, value)


def convert_to_timestamp(schema: Schema | None, value: Any) -> _dt.datetime | OutOfRangeTimestamp:
    """A Timestamp from a datetime, a Date or Time value, epoch millis, or ISO text."""
    if value is None:
        raise DataException(_NULL_REQUIRED)
    return _convert_to_timestamp(_Timestamp.SCHEMA, schema, value)


def convert_to_decimal(schema: Schema | None, value: Any, scale: int) -> _decimal.Decimal:
    """A Decimal from a Decimal, numeric text, a number (through its double) or unscaled bytes."""
    if value is None:
        raise DataException(_NULL_REQUIRED)
    return _convert_to_decimal(_DecimalType.schema(scale), value)


def _convert_to(to_schema: Schema, from_schema: Schema | None, value: Any) -> Any:
    """``Values.convertTo``: the value as ``to_schema`` requires it."""
    if value is None:
        if to_schema.optional:
            return None
        raise DataException(_NULL_REQUIRED)
    converter = _CONVERSIONS.get(to_schema.type)
    if converter is None:
        raise _cannot_convert(value, repr(to_schema))
    return converter(to_schema, from_schema, value)


def _convert_maybe_logical_bytes(to_schema: Schema, from_schema: Schema | None, value: Any) -> Any:
    if to_schema.name == _DecimalType.LOGICAL_NAME:
        return _convert_to_decimal(to_schema, value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, _decimal.Decimal):
        return _DecimalType.from_logical(to_schema, value)
    raise _cannot_convert(value, repr(to_schema))


def _convert_maybe_logical_int(to_schema: Schema, from_schema: Schema | None, value: Any) -> Any:
    if to_schema.name == _Date.LOGICAL_NAME:
        return _convert_to_date(to_schema, from_schema, value)
    if to_schema.name == _Time.LOGICAL_NAME:
        return _convert_to_time(to_schema, from_schema, value)
    return convert_to_integer(from_schema, value)


def _convert_maybe_logical_long(to_schema: Schema, from_schema: Schema | None, value: Any) -> Any:
    if to_schema.name == _Timestamp.LOGICAL_NAME:
        return _convert_to_timestamp(to_schema, from_schema, value)
    return convert_to_long(from_schema, value)


def _convert_to_decimal(to_schema: Schema, value: Any) -> _decimal.Decimal:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _DecimalType.to_logical(to_schema, bytes(value))
    if isinstance(value, _decimal.Decimal):
        return value
    if _is_number(value):
        # BigDecimal.valueOf(double) goes through Double.toString, so 1 becomes 1.0.
        return _decimal.Decimal(double_to_string(java_double_value(value)))
    if isinstance(value, str):
        parsed = _parse_big_decimal(value)
        if parsed is None:
            raise _cannot_convert(value, repr(to_schema))
        return parsed
    raise _cannot_convert(value, repr(to_schema))


def _parsed_if_text(value: Any) -> Any:
    return parse_string(value).value if isinstance(value, str) else value


def _convert_to_date(to_schema: Schema, from_schema: Schema | None, value: Any) -> _dt.date:
    value = _parsed_if_text(value)
    if _is_temporal(value):
        name = from_schema.name if from_schema is not None else None
        if from_schema is None or name in (_Date.LOGICAL_NAME, _Timestamp.LOGICAL_NAME):
            # Kafka hands a Date back as it is and truncates a Timestamp to its day.
            return _date_from_days(_truncating_div(_epoch_millis(value), MILLIS_PER_DAY))
    return _date_from_days(wrap_int(_as_long(value, from_schema), 32))


def _convert_to_time(to_schema: Schema, from_schema: Schema | None, value: Any) -> _dt.time:
    value = _parsed_if_text(value)
    if _is_temporal(value):
        name = from_schema.name if from_schema is not None else None
        if from_schema is None or name in (_Time.LOGICAL_NAME, _Timestamp.LOGICAL_NAME):
            return _Time.to_logical(_Time.SCHEMA, _epoch_millis(value) % MILLIS_PER_DAY)
    return _Time.to_logical(_Time.SCHEMA, wrap_int(_as_long(value, from_schema), 32))


def _convert_to_timestamp(to_schema: Schema, from_schema: Schema | None,
                          value: Any) -> _dt.datetime | OutOfRangeTimestamp:
    value = _parsed_if_text(value)
    if _is_temporal(value):
        if from_schema is None:
            return _timestamp_from_millis(_epoch_millis(value))
        # Raises, as Date/Time.fromLogical do, for a Date that is not a midnight or a Time past a day.
        encoded = encode_temporal(from_schema.name, value)
        if encoded is not None:
            days = from_schema.name == _Date.LOGICAL_NAME
            return _timestamp_from_millis(encoded * MILLIS_PER_DAY if days else encoded)
    return _timestamp_from_millis(_as_long(value, from_schema))


def _convert_to_array(to_schema: Schema, value: Any) -> list:
    if value is None:
        raise DataException(_NULL_REQUIRED)
    value = _parsed_if_text(value)
    if isinstance(value, (list, tuple)):
        return list(value)
    raise _cannot_convert(value, repr(to_schema))


def _convert_to_map(to_schema: Schema, value: Any) -> dict:
    if value is None:
        raise DataException(_NULL_REQUIRED)
    value = _parsed_if_text(value)
    if isinstance(value, dict):
        return value
    raise _cannot_convert(value, repr(to_schema))


def _convert_to_struct(to_schema: Schema, value: Any) -> Struct:
    if value is None:
        raise DataException(_NULL_REQUIRED)
    if isinstance(value, Struct):
        return value
    raise _cannot_convert(value, repr(to_schema))


_CONVERSIONS: dict[Type, Callable[[Schema, Schema | None, Any], Any]] = {
    Type.BYTES: _convert_maybe_logical_bytes,
    Type.STRING: lambda to, frm, v: convert_to_string(frm, v),
    Type.BOOLEAN: lambda to, frm, v: convert_to_boolean(frm, v),
    Type.INT8: lambda to, frm, v: convert_to_byte(frm, v),
    Type.INT16: lambda to, frm, v: convert_to_short(frm, v),
    Type.INT32: _convert_maybe_logical_int,
    Type.INT64: _convert_maybe_logical_long,
    Type.FLOAT32: lambda to, frm, v: convert_to_float(frm, v),
    Type.FLOAT64: lambda to, frm, v: convert_to_double(frm, v),
    Type.ARRAY: lambda to, frm, v: _convert_to_array(to, v),
    Type.MAP: lambda to, frm, v: _convert_to_map(to, v),
    Type.STRUCT: lambda to, frm, v: _convert_to_struct(to, v),
}


# ======================================================================================
# Schema inference
# ======================================================================================


def infer_schema(value: Any) -> Schema | None:
    """The schema a value evidently has, or None (for None, Decimals, temporals, mixed lists).

    Every ``int`` is INT64 and every ``float`` FLOAT64: Python cannot tell the
    narrower Java types apart.
    """
    if isinstance(value, str):
        return Schema.STRING_SCHEMA
    if isinstance(value, bool):
        return Schema.BOOLEAN_SCHEMA
    if isinstance(value, int):
        return Schema.INT64_SCHEMA
    if isinstance(value, float):
        return Schema.FLOAT64_SCHEMA
    if isinstance(value, (bytes, bytearray, memoryview)):
        return Schema.BYTES_SCHEMA
    if isinstance(value, (list, tuple)):
        return _infer_list_schema(value)
    if isinstance(value, dict):
        return _infer_map_schema(value)
    if isinstance(value, Struct):
        return value.schema
    return None


class _SchemaDetector:
    """The common type of a collection's elements (``Values.SchemaDetector``)."""

    def __init__(self) -> None:
        self.known_type: Type | None = None
        self.optional = False

    def can_detect(self, value: Any) -> bool:
        if value is None:
            self.optional = True
            return True
        schema = infer_schema(value)
        if schema is None:
            return False
        if self.known_type is None:
            self.known_type = schema.type
        return self.known_type is schema.type

    def schema(self) -> Schema | None:
        if self.known_type is None:
            return None
        builder = SchemaBuilder.type_of(self.known_type)
        return (builder.optional() if self.optional else builder).build()


def _infer_list_schema(values: list | tuple) -> Schema | None:
    if not values:
        return None
    detector = _SchemaDetector()
    if not all(detector.can_detect(v) for v in values):
        return None
    element = detector.schema()
    return SchemaBuilder.array(element).build() if element is not None else None


def _infer_map_schema(mapping: dict) -> Schema | None:
    if not mapping:
        return None
    keys, values = _SchemaDetector(), _SchemaDetector()
    if not all(keys.can_detect(k) and values.can_detect(v) for k, v in mapping.items()):
        return None
    key_schema, value_schema = keys.schema(), values.schema()
    if key_schema is None or value_schema is None:
        return None
    return SchemaBuilder.map(key_schema, value_schema).build()


# ======================================================================================
# Parsing text
# ======================================================================================


def parse_string(value: str | None) -> SchemaAndValue:
    """Parse text written by :func:`convert_to_string` (or by hand) into a schema and value.

    Recognises ``true``/``false``, ``null``, integers (INT8..INT64, the
    smallest that fits), other numbers (FLOAT32 when finite as a float, else
    FLOAT64, else a Decimal), ISO dates, times and timestamps, ``[...]``
    arrays and ``{...}`` maps of such values with ``"quoted"`` strings;
    anything else is the STRING it was.
    """
    if value is None:
        return _NULL
    if value == "":
        return SchemaAndValue(Schema.STRING_SCHEMA, value)
    parsed = _ValueParser(_Tokenizer(value)).parse(embedded=False)
    return parsed if parsed is not None else _NULL


_DELIMITERS = frozenset(':,{}[]"')


class _Tokenizer:
    """``Values.Parser``: splits text on unescaped delimiters, keeping everything else verbatim.

    A token is either one delimiter character or the run of text up to the
    next delimiter (backslash-escaped delimiters stay inside the run).
    Consumers peek with :meth:`can_consume`, which skips blank tokens.
    """

    def __init__(self, text: str):
        self.original = text
        self._pos = 0
        self._next_token: str | None = None
        self.previous: str | None = None

    def position(self) -> int:
        return self._pos

    def mark(self) -> int:
        return self._pos - (len(self._next_token) if self._next_token is not None else 0)

    def rewind_to(self, position: int) -> None:
        self._pos = position
        self._next_token = None
        self.previous = None

    def _has_more_text(self) -> bool:
        return self._pos < len(self.original)

    def has_next(self) -> bool:
        return self._next_token is not None or self._has_more_text()

    def next(self) -> str:
        if self._next_token is not None:
            self.previous, self._next_token = self._next_token, None
        else:
            self.previous = self._consume_token()
        return self.previous

    def next_n(self, count: int) -> str | None:
        """The text of the next ``count`` tokens, or None (and nothing consumed) if there are fewer."""
        start = self.mark()
        for _ in range(count):
            if not self.has_next():
                self.rewind_to(start)
                return None
            self.next()
        return self.original[start:self._pos]

    def _consume_token(self) -> str:
        text, start, escaped = self.original, self._pos, False
        index = start
        while index < len(text):
            char = text[index]
            if char == "\\":
                escaped = not escaped
            elif char in _DELIMITERS and not escaped:
                end = index if start < index else index + 1
                self._pos = end
                return text[start:end]
            else:
                escaped = False
            index += 1
        self._pos = index
        return text[start:index]

    def can_consume(self, expected: str, ignore_whitespace: bool = True) -> bool:
        if self._is_next(expected, ignore_whitespace):
            self._next_token = None
            return True
        return False

    def _is_next(self, expected: str, ignore_whitespace: bool) -> bool:
        if self._next_token is None:
            if not self.has_next():
                return False
            self._next_token = self._consume_token()
        if ignore_whitespace:
            while is_blank(self._next_token) and self._has_more_text():
                self._next_token = self._consume_token()
            return java_trim(self._next_token) == expected
        return self._next_token == expected


# ISO patterns as SimpleDateFormat parses them: numeric fields of any width
# (optionally preceded by spaces), literals exact, trailing text ignored.
_NUM = r"[ \t]*(\d+)"
_DATE_PATTERN = re.compile(rf"{_NUM}-{_NUM}-{_NUM}")
_TIME_PATTERN = re.compile(rf"{_NUM}:{_NUM}:{_NUM}\.{_NUM}Z")
_TIMESTAMP_PATTERN = re.compile(rf"{_NUM}-{_NUM}-{_NUM}T{_NUM}:{_NUM}:{_NUM}\.{_NUM}Z")
_DATE_LENGTH = len("yyyy-MM-dd")
_TIME_LENGTH = len("HH:mm:ss.SSSZ")
_TIMESTAMP_LENGTH = len("yyyy-MM-ddTHH:mm:ss.SSSZ")


def _lenient_datetime(year: int, month: int, day: int, millis: int = 0) -> _dt.datetime | None:
    """A lenient ``Calendar``: out-of-range months, days and times roll over."""
    whole_years, month_index = divmod(year * 12 + month - 1, 12)
    try:
        start = _dt.datetime(whole_years, month_index + 1, 1, tzinfo=_dt.timezone.utc)
        return start + _dt.timedelta(days=day - 1, milliseconds=millis)
    except (ValueError, OverflowError):
        return None  # outside Python's years 1..9999


def _time_millis(hours: str, minutes: str, seconds: str, millis: str) -> int:
    return ((int(hours) * 60 + int(minutes)) * 60 + int(seconds)) * 1000 + int(millis)


def _parse_as_temporal(token: str | None) -> SchemaAndValue | None:
    """An ISO date, time or timestamp, recognised by its exact length, or None."""
    if token is None:
        return None
    token = token.replace("\\:", ":")  # colons may arrive escaped
    length = len(token)
    if length == _TIME_LENGTH:
        match = _TIME_PATTERN.match(token)
        if match:
            millis = _time_millis(*match.groups())
            if millis < MILLIS_PER_DAY:  # Python's time cannot carry a longer "time of day"
                return SchemaAndValue(_Time.SCHEMA, _Time.to_logical(_Time.SCHEMA, millis))
    elif length == _TIMESTAMP_LENGTH:
        match = _TIMESTAMP_PATTERN.match(token)
        if match:
            year, month, day, *clock = match.groups()
            instant = _lenient_datetime(int(year), int(month), int(day), _time_millis(*clock))
            if instant is not None:
                return SchemaAndValue(_Timestamp.SCHEMA, instant)
    elif length == _DATE_LENGTH:
        match = _DATE_PATTERN.match(token)
        if match:
            instant = _lenient_datetime(*map(int, match.groups()))
            if instant is not None:
                return SchemaAndValue(_Date.SCHEMA, instant.date())
    return None


def _parse_as_exact_integer(number: _decimal.Decimal) -> SchemaAndValue | None:
    """The smallest integer schema holding ``number``, if it is integral and fits a long."""
    if number != number.to_integral_value() or not _LONG_MIN <= number <= _LONG_MAX:
        return None
    integral = int(number)
    for schema, bits in ((Schema.INT8_SCHEMA, 8), (Schema.INT16_SCHEMA, 16), (Schema.INT32_SCHEMA, 32)):
        if wrap_int(integral, bits) == integral:
            return SchemaAndValue(schema, integral)
    return SchemaAndValue(Schema.INT64_SCHEMA, integral)


def _parse_as_number(token: str) -> SchemaAndValue | None:
    number = _parse_big_decimal(token)
    if number is None:
        return None
    exact = _parse_as_exact_integer(number)
    if exact is not None:
        return exact
    scale = -number.as_tuple().exponent  # type: ignore[operator]
    as_float = exact_to_float32(number)
    if not math.isinf(as_float) and scale != 0:
        return SchemaAndValue(Schema.FLOAT32_SCHEMA, as_float)
    as_double = float(number)
    if not math.isinf(as_double) and scale != 0:
        return SchemaAndValue(Schema.FLOAT64_SCHEMA, as_double)
    return SchemaAndValue(_DecimalType.schema(scale), number)


class _ValueParser:
    """``Values.ValueParser``: a recursive-descent reader over :class:`_Tokenizer` tokens.

    An embedded value (inside an array or map) must parse completely or raise
    DataException; a failed array or map at any level falls back to reading
    its text as a plain token, so unparseable top-level text stays a STRING.
    """

    def __init__(self, tokens: _Tokenizer):
        self.tokens = tokens

    def parse(self, embedded: bool) -> SchemaAndValue | None:
        tokens = self.tokens
        if not tokens.has_next():
            return None
        if embedded and tokens.can_consume('"'):
            return self._parse_quoted_string()
        if self._can_parse_single_token_literal(embedded, _NULL_VALUE):
            return None
        if self._can_parse_single_token_literal(embedded, "true"):
            return _TRUE
        if self._can_parse_single_token_literal(embedded, "false"):
            return _FALSE
        start = tokens.mark()
        try:
            if tokens.can_consume("["):
                return self._parse_array()
            if tokens.can_consume("{"):
                return self._parse_map()
        except DataException:
            tokens.rewind_to(start)  # not a valid array or map: read it as text
        token = tokens.next()
        if is_blank(token):
            return SchemaAndValue(Schema.STRING_SCHEMA, token)
        return self._parse_next_token(embedded, java_trim(token))

    def _can_parse_single_token_literal(self, embedded: bool, literal: str) -> bool:
        # At the top level a literal must be the whole text: "true}" is a string.
        start = self.tokens.mark()
        if self.tokens.can_consume(literal) and (embedded or not self.tokens.has_next()):
            return True
        self.tokens.rewind_to(start)
        return False

    def _parse_next_token(self, embedded: bool, token: str) -> SchemaAndValue:
        first = token[0]
        if first.isdecimal():
            temporal = self._parse_multiple_tokens_as_temporal(token)
            if temporal is not None:
                return temporal
        if first.isdecimal() or first in "+-":
            number = _parse_as_number(token)
            if number is not None:
                return number
        if embedded:
            raise DataException("Failed to parse embedded value")
        return SchemaAndValue(Schema.STRING_SCHEMA, self.tokens.original)

    def _parse_multiple_tokens_as_temporal(self, token: str) -> SchemaAndValue | None:
        # Unescaped colons split a time into 5 tokens: try the joined text first.
        position = self.tokens.mark()
        remainder = self.tokens.next_n(4)
        if remainder is not None:
            temporal = _parse_as_temporal(token + remainder)
            if temporal is not None:
                return temporal
        self.tokens.rewind_to(position)
        return _parse_as_temporal(token)

    def _parse_quoted_string(self) -> SchemaAndValue:
        pieces = []
        while self.tokens.has_next():
            if self.tokens.can_consume('"'):
                break
            pieces.append(self.tokens.next())
        content = "".join(pieces)
        temporal = _parse_as_temporal(content)
        return temporal if temporal is not None else SchemaAndValue(Schema.STRING_SCHEMA, content)

    def _parse_array(self) -> SchemaAndValue:
        tokens, merger = self.tokens, _SchemaMerger()
        result: list[Any] = []
        while tokens.has_next():
            if tokens.can_consume("]"):
                if merger.common is None:
                    return SchemaAndValue(Schema(Type.ARRAY), result)  # every element is null
                element_schema = merger.common
                schema = SchemaBuilder.array(element_schema).build()
                return SchemaAndValue(schema, [_convert_to(element_schema, None, v) for v in result])
            if tokens.can_consume(","):
                raise DataException(f"Unable to parse an empty array element: {tokens.original}")
            element = self.parse(True)
            merger.merge(element)
            result.append(element.value if element is not None else None)
            position = tokens.mark()
            if tokens.can_consume("]"):
                tokens.rewind_to(position)
            elif not tokens.can_consume(","):
                raise DataException("Array elements missing ',' delimiter")
        if tokens.previous == ",":
            raise DataException(f"Array is missing element after ',': {tokens.original}")
        raise DataException(f"Array is missing terminating ']': {tokens.original}")

    def _parse_map(self) -> SchemaAndValue:
        tokens = self.tokens
        result: dict[Any, Any] = {}
        keys, values = _SchemaMerger(), _SchemaMerger()
        while tokens.has_next():
            if tokens.can_consume("}"):
                return _aligned_map(result, keys.common, values.common)
            if tokens.can_consume(","):
                raise DataException(f"Unable to parse a map entry with no key or value: {tokens.original}")
            key = self.parse(True)
            if key is None or key.value is None:
                raise DataException(f"Map entry may not have a null key: {tokens.original}")
            if not tokens.can_consume(":"):
                raise DataException(
                    f"Map entry is missing ':' at {tokens.position()} in {tokens.original}"
                )
            value = self.parse(True)
            _put(result, key.value, value.value if value is not None else None)
            tokens.can_consume(",")
            keys.merge(key)
            values.merge(value)
        if tokens.previous == ",":
            raise DataException(f"Map is missing element after ',': {tokens.original}")
        raise DataException(f"Map is missing terminating '}}': {tokens.original}")


def _put(mapping: dict, key: Any, value: Any) -> None:
    try:
        mapping[key] = value
    except TypeError as exc:  # a list or map as a key: fine in Java, unhashable in Python
        raise DataException(f"Map key {key} ({_type_name(key)}) cannot be used in Python") from exc


def _aligned_map(result: dict, key_schema: Schema | None, value_schema: Schema | None) -> SchemaAndValue:
    """The parsed map with its keys (and values) converted to their common schemas."""
    if key_schema is None:
        return SchemaAndValue(Schema(Type.MAP), result)
    aligned: dict = {}
    for key, value in result.items():
        new_value = _convert_to(value_schema, None, value) if value_schema is not None else value
        _put(aligned, _convert_to(key_schema, None, key), new_value)
    return SchemaAndValue(Schema(Type.MAP, key_schema=key_schema, value_schema=value_schema), aligned)


_WIDENING = {
    # For each type, the types it absorbs (keeping itself) and those that absorb it.
    Type.INT8: ((), (Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64)),
    Type.INT16: ((Type.INT8,), (Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64)),
    Type.INT32: ((Type.INT8, Type.INT16), (Type.INT64, Type.FLOAT32, Type.FLOAT64)),
    Type.INT64: ((Type.INT8, Type.INT16, Type.INT32), (Type.FLOAT32, Type.FLOAT64)),
    Type.FLOAT32: ((Type.INT8, Type.INT16, Type.INT32, Type.INT64), (Type.FLOAT64,)),
    Type.FLOAT64: ((Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32), ()),
}


def _merge_schemas(previous: Schema, new: Schema) -> Schema | None:
    """A schema for values of both schemas (numbers widen), or None."""
    if previous.type is not new.type:
        absorbs, absorbed_by = _WIDENING.get(previous.type, ((), ()))
        if new.type in absorbs:
            return previous
        return new if new.type in absorbed_by else None
    if previous.optional == new.optional:
        return previous if previous.optional else new
    return previous if previous == new else None


class _SchemaMerger:
    """Tracks the common schema of parsed elements (``Values.SchemaMerger``); None values are ignored."""

    def __init__(self) -> None:
        self.common: Schema | None = None
        self._compatible = True

    def merge(self, latest: SchemaAndValue | None) -> None:
        if latest is None or latest.schema is None or not self._compatible:
            return
        if self.common is None:
            self.common = latest.schema
            return
        self.common = _merge_schemas(self.common, latest.schema)
        self._compatible = self.common is not None
