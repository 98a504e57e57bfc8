"""Connect's logical types: Decimal, Date, Time and Timestamp.

Each is a named schema over a primitive (``org.apache.kafka.connect.data.*``)
with version 1, and helpers that convert between the logical Python value and
its primitive encoding (what travels in JSON, Avro or Arrow).
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal

from connector.api.errors import DataException
from connector.api.instant import OutOfRangeTimestamp
from connector.api.schema import (
    DATE_LOGICAL_NAME,
    DECIMAL_LOGICAL_NAME,
    TIME_LOGICAL_NAME,
    TIMESTAMP_LOGICAL_NAME,
    Schema,
    SchemaBuilder,
    Type,
)

EPOCH_DATE = _dt.date(1970, 1, 1)
EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
MILLIS_PER_DAY = 86_400_000

# Decimal arithmetic in the default context rounds to 28 digits; BigDecimal never rounds.
_EXACT = _decimal.Context(prec=_decimal.MAX_PREC, Emax=_decimal.MAX_EMAX, Emin=_decimal.MIN_EMIN)


class _LogicalType:
    """What every logical type declares: its schema name and the type its values are encoded in."""

    LOGICAL_NAME: str
    BASE_TYPE: Type


class _ParameterlessType(_LogicalType):
    """A logical type with a single schema, ``SCHEMA`` (Date, Time, Timestamp; Decimal has a scale)."""

    SCHEMA: Schema

    @classmethod
    def builder(cls) -> SchemaBuilder:
        return SchemaBuilder.type_of(cls.BASE_TYPE).name(cls.LOGICAL_NAME).version(1)


class Decimal(_LogicalType):
    """Arbitrary-precision decimal as BYTES: the big-endian two's-complement unscaled value."""

    LOGICAL_NAME = DECIMAL_LOGICAL_NAME
    BASE_TYPE = Type.BYTES
    SCALE_FIELD = "scale"

    @staticmethod
    def builder(scale: int) -> SchemaBuilder:
        return (
            SchemaBuilder.bytes().name(DECIMAL_LOGICAL_NAME).parameter("scale", str(scale)).version(1)
        )

    @staticmethod
    def schema(scale: int) -> Schema:
        return Decimal.builder(scale).build()

    @staticmethod
    def scale_of(schema: Schema) -> int:
        params = schema.parameters or {}
        if "scale" not in params:
            raise DataException("Invalid Decimal schema: scale parameter not found.")
        return int(params["scale"])

    @staticmethod
    def from_logical(schema: Schema, value: _decimal.Decimal) -> bytes:
        scale = Decimal.scale_of(schema)
        exponent = value.as_tuple().exponent
        if isinstance(exponent, int) and -exponent != scale:
            raise DataException(
                f"Decimal value has mismatching scale for given Decimal schema. "
                f"Schema has scale {scale}, value has scale {-exponent}"
            )
        if not value.is_finite():
            raise DataException(f"Decimal value {value} is not a finite number")
        unscaled = int(value.scaleb(scale, context=_EXACT))
        return unscaled_to_bytes(unscaled)

    @staticmethod
    def to_logical(schema: Schema, value: bytes) -> _decimal.Decimal:
        scale = Decimal.scale_of(schema)
        return _decimal.Decimal(int.from_bytes(bytes(value), "big", signed=True)).scaleb(-scale, context=_EXACT)


def unscaled_to_bytes(unscaled: int) -> bytes:
    """Minimal two's-complement big-endian encoding, like Java's ``BigInteger.toByteArray``."""
    length = max(1, (unscaled.bit_length() + 8) // 8)
    return unscaled.to_bytes(length, "big", signed=True)


class Date(_ParameterlessType):
    """A calendar date as INT32 days since the Unix epoch."""

    LOGICAL_NAME = DATE_LOGICAL_NAME
    BASE_TYPE = Type.INT32

    @staticmethod
    def from_logical(schema: Schema, value: _dt.date) -> int:
        if isinstance(value, _dt.datetime):
            if value.time() != _dt.time(0) or (value.tzinfo and value.utcoffset()):
                raise DataException(
                    "Kafka Connect Date type should not have any time fields set to non-zero values."
                )
            value = value.date()
        return (value - EPOCH_DATE).days

    @staticmethod
    def to_logical(schema: Schema, value: int) -> _dt.date:
        return EPOCH_DATE + _dt.timedelta(days=value)


class Time(_ParameterlessType):
    """A time of day as INT32 milliseconds since midnight."""

    LOGICAL_NAME = TIME_LOGICAL_NAME
    BASE_TYPE = Type.INT32

    @staticmethod
    def from_logical(schema: Schema, value: _dt.time) -> int:
        return (
            (value.hour * 3600 + value.minute * 60 + value.second) * 1000 + value.microsecond // 1000
        )

    @staticmethod
    def to_logical(schema: Schema, value: int) -> _dt.time:
        if value < 0 or value > MILLIS_PER_DAY:
            raise DataException(
                "Time values must use number of milliseconds greater than 0 and less than 86400000"
            )
        value %= MILLIS_PER_DAY
        seconds, millis = divmod(value, 1000)
        minutes, second = divmod(seconds, 60)
        hour, minute = divmod(minutes, 60)
        return _dt.time(hour, minute, second, millis * 1000)


class Timestamp(_ParameterlessType):
    """An instant as INT64 milliseconds since the Unix epoch (UTC)."""

    LOGICAL_NAME = TIMESTAMP_LOGICAL_NAME
    BASE_TYPE = Type.INT64

    @staticmethod
    def from_logical(schema: Schema, value: _dt.datetime | OutOfRangeTimestamp) -> int:
        if isinstance(value, OutOfRangeTimestamp):
            return value.millis
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        delta = value - EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000

    @staticmethod
    def to_logical(schema: Schema, value: int) -> _dt.datetime | OutOfRangeTimestamp:
        """A UTC datetime, or for millis beyond its years 1-9999 (a Java long), an OutOfRangeTimestamp."""
        try:
            return EPOCH + _dt.timedelta(milliseconds=value)
        except OverflowError:
            return OutOfRangeTimestamp(value)


for _parameterless in (Date, Time, Timestamp):
    _parameterless.SCHEMA = _parameterless.builder().build()

def java_date_millis(value: object) -> int | None:
    """``java.util.Date.getTime()`` of a Connect Date, Time or Timestamp value (None if it is none of them).

    Kafka hands all three logical types around as ``java.util.Date``; Python holds them as a date, a time
    and a datetime, so each needs its own way back to the millis Java would hold.
    """
    if isinstance(value, (_dt.datetime, OutOfRangeTimestamp)):
        return Timestamp.from_logical(Timestamp.SCHEMA, value)
    if isinstance(value, _dt.date):
        return Date.from_logical(Date.SCHEMA, value) * MILLIS_PER_DAY
    if isinstance(value, _dt.time):
        return Time.from_logical(Time.SCHEMA, value)
    return None


LOGICAL_TYPES: dict[str, type[_LogicalType]] = {t.LOGICAL_NAME: t for t in (Decimal, Date, Time, Timestamp)}


def logical_type_of(schema: Schema | None):
    """The logical-type class for ``schema`` (``Decimal``, ...), or None for a plain schema."""
    if schema is None or schema.name is None:
        return None
    logical = LOGICAL_TYPES.get(schema.name)
    if logical is None or logical.BASE_TYPE is not schema.type:
        return None
    return logical
