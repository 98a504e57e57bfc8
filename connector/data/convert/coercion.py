"""Coercion of one value to an Iceberg primitive type, as the Java sink's RecordConverter does.

Each coercer takes a non-null Python value and returns what Arrow needs to
build the column (integers for dates, times and timestamps, see
:mod:`connector.data.convert.temporal`), or raises :class:`DataException`.

Accepted inputs follow the sink's rules (reference §3.2): numbers and numeric
strings for int/long/float/double (fractions truncated), ``HALF_UP`` rounding
to the decimal scale, ``Boolean.parseBoolean`` for strings, Java's
``toString``/Jackson/JsonConverter text for string columns, Base64 for binary,
epoch days/millis for date/time/timestamp numbers.

Deliberate differences from Java: a number outside the target integer range,
and a NaN or infinite double where an integer or decimal is expected, are
errors here; Java silently wraps or saturates them (``intValue()``).
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import decimal
import math
import numbers
import uuid
from typing import Any, Callable

from pyiceberg import types as ice

from connector.api.errors import DataException
from connector.api.java.numbers import (
    NumberFormatError,
    double_to_string,
    parse_big_decimal,
    parse_double,
    parse_integer,
)
from connector.api.java.value_of import java_str
from connector.api.struct import Struct
from connector.data.convert import temporal
from connector.data.convert.java_text import connect_json, jackson_json

Coercer = Callable[[Any], Any]

_INT_RANGE = (-(2**31), 2**31 - 1)
_LONG_RANGE = (-(2**63), 2**63 - 1)
_DECIMAL_CONTEXT = decimal.Context(prec=200, Emax=999_999, Emin=-999_999)


def _type_name(value: Any) -> str:
    return type(value).__name__


def _is_number(value: Any) -> bool:
    """A Java ``Number``: ints, floats and decimals, but not booleans."""
    return isinstance(value, (numbers.Number, decimal.Decimal)) and not isinstance(value, bool)


def _truncated(value: Any, target: str) -> int:
    """``Number.longValue()``: the integral part of a number."""
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, (numbers.Real, decimal.Decimal)):
        if not math.isfinite(value):
            raise DataException(f"Cannot convert {value} to {target}")
        return int(math.trunc(value))
    raise DataException(f"Cannot convert to {target}: {_type_name(value)}")


def _in_range(value: int, bounds: tuple[int, int], target: str) -> int:
    if not bounds[0] <= value <= bounds[1]:
        raise DataException(f"Value {value} is out of range for {target}")
    return value


def _integer(value: Any, bounds: tuple[int, int], target: str) -> int:
    if isinstance(value, str):
        try:
            parsed = parse_integer(value)  # Long.parseLong, as the sink parses before narrowing
        except NumberFormatError:
            raise DataException(f'For input string: "{value}" (cannot convert to {target})') from None
        return _in_range(parsed, bounds, target)
    if not _is_number(value):
        raise DataException(f"Cannot convert to {target}: {_type_name(value)}")
    return _in_range(_truncated(value, target), bounds, target)


def to_int(value: Any) -> int:
    """``convertInt``: a number (truncated) or an integer string, within int32."""
    return _integer(value, _INT_RANGE, "int")


def to_long(value: Any) -> int:
    """``convertLong``: a number (truncated) or an integer string, within int64."""
    return _integer(value, _LONG_RANGE, "long")


def parse_java_double(text: str) -> float:
    """``Double.parseDouble``, failing as a conversion error."""
    try:
        return parse_double(text)
    except NumberFormatError:
        raise DataException(f'For input string: "{text}" (cannot convert to double)') from None


def _floating(value: Any, target: str) -> float:
    if isinstance(value, str):
        return parse_java_double(value)
    if not _is_number(value):
        raise DataException(f"Cannot convert to {target}: {_type_name(value)}")
    try:
        return float(value)
    except OverflowError:
        return math.copysign(math.inf, value)


def to_float(value: Any) -> float:
    """``convertFloat``: a number or numeric string (Arrow rounds it to float32)."""
    return _floating(value, "float")


def to_double(value: Any) -> float:
    """``convertDouble``: a number or numeric string."""
    return _floating(value, "double")


def _as_big_decimal(value: Any) -> decimal.Decimal:
    """The ``BigDecimal`` the sink builds before rescaling."""
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise DataException(f"Cannot convert {value} to decimal")
        return value
    if isinstance(value, str):
        try:
            return parse_big_decimal(value)
        except NumberFormatError:
            raise DataException(f"Character array is not a valid decimal: {value}") from None
    if not _is_number(value):
        raise DataException(f"Cannot convert to BigDecimal: {_type_name(value)}")
    if isinstance(value, numbers.Integral):
        return decimal.Decimal(int(value))
    number = float(value)
    if not math.isfinite(number):
        raise DataException(f"Cannot convert {number} to decimal")
    if number == math.floor(number):
        return decimal.Decimal(int(number))  # BigDecimal.valueOf(longValue())
    return decimal.Decimal(double_to_string(number))  # BigDecimal.valueOf(double)


def to_decimal(value: Any, precision: int, scale: int) -> decimal.Decimal:
    """``convertDecimal``: the value set to ``scale`` with ``HALF_UP`` rounding."""
    big = _as_big_decimal(value)
    try:
        scaled = big.quantize(decimal.Decimal(1).scaleb(-scale), decimal.ROUND_HALF_UP, _DECIMAL_CONTEXT)
    except decimal.InvalidOperation:
        raise DataException(f"Cannot write value {value} as decimal({precision}, {scale})") from None
    if len(scaled.as_tuple().digits) > precision:
        raise DataException(f"Cannot write value {scaled} as decimal({precision}, {scale}): too many digits")
    return scaled


def to_bool(value: Any) -> bool:
    """``convertBoolean``: a boolean, or ``Boolean.parseBoolean`` of a string."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.lower() == "true"
    raise DataException(f"Cannot convert to boolean: {_type_name(value)}")


def to_string(value: Any) -> str:
    """``convertString``: strings, ``toString`` of numbers/booleans, JSON of maps, lists, structs."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or _is_number(value):
        return java_str(value)
    if isinstance(value, (dict, list, tuple)):
        return jackson_json(value)
    if isinstance(value, Struct):
        return connect_json(value.schema, value)
    raise DataException(f"Cannot convert to string: {_type_name(value)}")


def to_uuid(value: Any) -> bytes:
    """``convertUUID``: a UUID or its string form, as the 16 bytes Arrow stores."""
    if isinstance(value, uuid.UUID):
        return value.bytes
    if isinstance(value, str):
        try:
            return uuid.UUID(value).bytes
        except ValueError:
            raise DataException(f"Invalid UUID string: {value}") from None
    raise DataException(f"Cannot convert to UUID: {_type_name(value)}")


def _base64(text: str) -> bytes:
    """Java's basic Base64 decoder: padding optional, nothing outside the alphabet."""
    if len(text) % 4 == 1:
        raise DataException(f"Illegal base64 string: {text!r}")
    padded = text if "=" in text else text + "=" * (-len(text) % 4)
    try:
        return base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        raise DataException(f"Illegal base64 string: {text!r}") from None


def to_binary(value: Any) -> bytes:
    """``convertBase64Binary``: bytes, or a Base64 string."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return _base64(value)
    raise DataException(f"Cannot convert to binary: {_type_name(value)}")


def fixed_coercer(length: int) -> Coercer:
    """Binary coercion checked against a ``fixed[length]`` column."""

    def to_fixed(value: Any) -> bytes:
        data = to_binary(value)
        if len(data) != length:
            raise DataException(f"Cannot write {len(data)} bytes as fixed[{length}]")
        return data

    return to_fixed


def to_date_days(value: Any) -> int:
    """``convertDateValue``: epoch days, ISO text, a date, or a datetime (``java.util.Date``)."""
    if _is_number(value):
        return _in_range(_truncated(value, "date"), _INT_RANGE, "date")
    if isinstance(value, str):
        return temporal.parse_date_days(value)
    if isinstance(value, _dt.date):
        return temporal.date_days(value)
    raise DataException(f"Cannot convert date: {value!r}")


def to_time_micros(value: Any) -> int:
    """``convertTimeValue``: millis of the day, ISO text, a time, or a datetime."""
    if _is_number(value):
        return temporal.checked_time_micros(_truncated(value, "time") * 1000)
    if isinstance(value, str):
        return temporal.parse_time_micros(value)
    if isinstance(value, _dt.time):
        return temporal.time_micros(value)
    if isinstance(value, _dt.datetime):
        return temporal.checked_time_micros(temporal.datetime_millis(value) * 1000)
    raise DataException(f"Cannot convert time: {value!r}")


def timestamp_coercer(adjust_to_utc: bool) -> Coercer:
    """``convertTimestampValue`` for ``timestamptz`` (True) or ``timestamp`` (False)."""
    kind = "timestamptz" if adjust_to_utc else "timestamp"

    def to_timestamp_micros(value: Any) -> int:
        if _is_number(value):
            return temporal.checked_micros(_truncated(value, kind) * 1000)
        if isinstance(value, str):
            return temporal.parse_timestamp_micros(value, adjust_to_utc)
        if isinstance(value, _dt.datetime):
            return temporal.datetime_micros(value, adjust_to_utc)
        raise DataException(f"Cannot convert {kind}: {value!r}, type: {_type_name(value)}")

    return to_timestamp_micros


def primitive_coercer(iceberg_type: ice.IcebergType) -> Coercer:
    """The coercer for a primitive Iceberg type."""
    simple: dict[type, Coercer] = {
        ice.IntegerType: to_int,
        ice.LongType: to_long,
        ice.FloatType: to_float,
        ice.DoubleType: to_double,
        ice.BooleanType: to_bool,
        ice.StringType: to_string,
        ice.UUIDType: to_uuid,
        ice.BinaryType: to_binary,
        ice.DateType: to_date_days,
        ice.TimeType: to_time_micros,
    }
    if type(iceberg_type) in simple:
        return simple[type(iceberg_type)]
    if isinstance(iceberg_type, ice.DecimalType):
        precision, scale = iceberg_type.precision, iceberg_type.scale
        return lambda value: to_decimal(value, precision, scale)
    if isinstance(iceberg_type, ice.FixedType):
        return fixed_coercer(len(iceberg_type))
    if isinstance(iceberg_type, ice.TimestamptzType):
        return timestamp_coercer(True)
    if isinstance(iceberg_type, ice.TimestampType):
        return timestamp_coercer(False)
    raise DataException(f"Unsupported type: {iceberg_type}")
