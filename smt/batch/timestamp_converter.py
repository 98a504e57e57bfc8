"""TimestampConverter$Value column-wise: epoch numbers, Java-formatted strings and Connect logical types
converted a column at a time, within the Java date range the per-record SMT accepts.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from connector.api.declined import Declined
from connector.api.errors import ConnectException, DataException
from connector.api.java.dateformat import JavaDateFormat
from connector.api.logical import MILLIS_PER_DAY
from connector.api.schema import Field, Schema
from smt.batch.base import NullPassingForm, register
from smt.batch.kernels import (
    DATE,
    INT,
    LONG_MAX,
    STRING,
    TIME,
    TIMESTAMP,
    floor_div,
    floor_mod,
    has_values,
    int64_values,
    kind,
    map_distinct,
    max_abs,
)
from smt.batch.typed_rules import SchemaReadingForm, fields_converted, plain, register_typed, schema_of
from smt.batch.view import RecordBatchView, Values
from smt.transforms import timestamp_converter as tc

_MILLIS_MIN = -62135596800000  # 0001-01-01T00:00:00Z


_MILLIS_MAX = 253402300799999  # 9999-12-31T23:59:59.999Z


_OUT_OF_RANGE = "timestamp out of the supported range (years 1-9999)"


_TARGET_TYPES = {
    tc.TYPE_UNIX: pa.int64(),
    tc.TYPE_STRING: pa.string(),
    tc.TYPE_DATE: pa.date32(),
    tc.TYPE_TIME: pa.time32("ms"),
    tc.TYPE_TIMESTAMP: pa.timestamp("ms", tz="UTC"),
}


@register(tc.Value)
class TimestampConverterBatch(NullPassingForm):
    def apply_to_values(self, view: RecordBatchView) -> RecordBatchView:
        smt = self.transformation
        if not smt.settings.field:
            if view.value.is_map:
                raise Declined("TimestampConverter of a whole map fails")
            return view.with_value(Values(self.convert(view.value.array)))
        fields = view.value.maps(tc.PURPOSE)
        array = fields.get(smt.settings.field)
        if array is None:
            return view.with_value(fields.values())  # the key gets a null value: the same as absent
        fields.put(smt.settings.field, self.convert(array))
        return view.with_value(fields.values())

    def convert(self, array: pa.Array) -> pa.Array:
        settings = self.transformation.settings
        out_type = _TARGET_TYPES[settings.type]
        if not has_values(array):
            return pa.nulls(len(array), type=out_type)
        # The typed representation of the target, cast to Arrow's own Date, Time and Timestamp types.
        return _from_millis(self._to_millis(array), settings).cast(out_type)

    def _to_millis(self, array: pa.Array) -> pa.Array:
        settings = self.transformation.settings
        k = kind(array)
        if k == INT:
            return unix_to_millis(int64_values(array), settings.unix_precision)
        if k == STRING:
            return parse_millis(array, settings.format)
        if k == DATE:
            return pc.multiply(array.cast(pa.int32()).cast(pa.int64()), MILLIS_PER_DAY)
        if k == TIME:
            return array.cast(pa.int32()).cast(pa.int64())
        if k == TIMESTAMP and array.type.unit == "ms":
            return array.cast(pa.int64())
        raise Declined(f"TimestampConverter of {k} values fails")


def unix_to_millis(values: pa.Array, precision: str) -> pa.Array:
    """Epoch millis of int64 unix timestamps of ``precision`` (``_unix_to_raw``)."""
    if precision == tc.UNIX_PRECISION_SECONDS:
        if max_abs(values) > LONG_MAX // 1000:
            raise Declined("seconds out of range")
        return pc.multiply(values, 1000)
    if precision == tc.UNIX_PRECISION_MICROS:
        return pc.divide(values, 1000)  # truncating division, as Java's
    if precision == tc.UNIX_PRECISION_NANOS:
        return pc.divide(values, 1_000_000)
    return values


def parse_millis(array: pa.Array, date_format: JavaDateFormat | None) -> pa.Array:
    """Epoch millis of string timestamps, parsed once per distinct string; one that fails declines."""
    if date_format is None:
        raise Declined("string timestamps need a format")
    return map_distinct(array, date_format.parse_millis, pa.int64(),
                        fails=ValueError, reason="string timestamp does not match the format")


def millis_to_unix(millis: pa.Array, precision: str) -> pa.Array:
    """Unix timestamps of ``precision`` (``_unix_to_type``); one that would saturate declines."""
    if precision == tc.UNIX_PRECISION_SECONDS:
        return pc.divide(millis, 1000)
    factor = {tc.UNIX_PRECISION_MICROS: 1000,
              tc.UNIX_PRECISION_NANOS: 1_000_000}.get(precision)
    if factor is None:
        return millis
    if max_abs(millis) > LONG_MAX // factor:
        raise Declined("unix timestamp saturates")
    return pc.multiply(millis, factor)


def millis_of_day(millis: pa.Array) -> pa.Array:
    """Milliseconds since midnight (UTC) as int32, for times before 1970 too (Python's ``%``)."""
    return floor_mod(millis, MILLIS_PER_DAY).cast(pa.int32())


def check_date_range(millis: pa.Array) -> None:
    """Decline where a Date or Timestamp would be out of years 1-9999 (per record: an error)."""
    bounds = pc.min_max(millis).as_py()
    if bounds["min"] is not None and (bounds["min"] < _MILLIS_MIN or bounds["max"] > _MILLIS_MAX):
        raise Declined(_OUT_OF_RANGE)


_GRANULARITY = {"S": 1, "s": 1000, "m": 60_000, "H": 3_600_000, "k": 3_600_000, "K": 3_600_000,
                "h": 3_600_000, "a": 43_200_000}


def _granularity(pattern: str) -> int:
    """The coarsest number of millis that formatting with ``pattern`` cannot tell apart (UTC)."""
    unit = MILLIS_PER_DAY
    quoted = False
    for char in pattern:
        if char == "'":
            quoted = not quoted
        elif not quoted and char in _GRANULARITY:
            unit = min(unit, _GRANULARITY[char])
    return unit


def format_millis(date_format: JavaDateFormat, millis: pa.Array) -> pa.Array:
    """``date_format.format_millis`` of every value, computed once per distinct formatted unit."""
    unit = _granularity(date_format.pattern)
    buckets = millis if unit == 1 else pc.multiply(floor_div(millis, unit), unit)
    return map_distinct(buckets, date_format.format_millis, pa.string(), fails=DataException, reason=_OUT_OF_RANGE)


#: Arrow types of the typed representation of each target type.
TYPED_OUT = {tc.TYPE_UNIX: pa.int64(), tc.TYPE_STRING: pa.string(), tc.TYPE_DATE: pa.int32(),
             tc.TYPE_TIME: pa.int32(), tc.TYPE_TIMESTAMP: pa.int64()}


@register_typed(tc.Value)
class TimestampConverterTyped(SchemaReadingForm):
    smt_name = "TimestampConverter"

    def apply_with_schema(self, view: RecordBatchView, schema: Schema) -> RecordBatchView:
        # A null with a schema is converted with it (the schema must be a timestamp type, or a Struct).
        smt = self.transformation
        values = view.value
        if not smt.settings.field:
            converted = self.convert(values.array, schema)
            updated = tc.TRANSLATORS[smt.settings.type].type_schema(schema.optional)
            return view.with_value(Values(converted, schema=updated))
        updated = schema_of(smt.updated_schema, schema, "converting the schema")
        return fields_converted(view, updated, tc.PURPOSE, smt.replace_null_with_default, self._convert_field)

    def _convert_field(self, field: Field, column: pa.Array) -> pa.Array:
        return self.convert(column, field.schema) if field.name == self.transformation.settings.field else column

    def convert(self, array: pa.Array, schema: Schema) -> pa.Array:
        """``convert_timestamp(v, timestamp_type_from_schema(schema))`` of every value, typed."""
        settings = self.transformation.settings
        source = _source_type(schema)  # asked even for a null value, as per record
        if not has_values(array):
            return pa.nulls(len(array), type=TYPED_OUT[settings.type])
        return _from_millis(_to_millis(plain(array), source, settings), settings)


def _source_type(schema: Schema) -> str:
    try:
        return tc.timestamp_type_from_schema(schema)
    except ConnectException as exc:
        raise Declined(f"TimestampConverter of a {schema.type.name} fails") from exc


def _to_millis(array: pa.Array, source: str, settings: Any) -> pa.Array:
    if source == tc.TYPE_STRING:
        return parse_millis(array, settings.format)
    if not pa.types.is_integer(array.type):
        raise Declined(f"TimestampConverter of {source} values held as {array.type}")
    values = array.cast(pa.int64())
    if source == tc.TYPE_UNIX:
        return unix_to_millis(values, settings.unix_precision)
    if source == tc.TYPE_DATE:
        return pc.multiply(values, MILLIS_PER_DAY)
    return values  # Time: ms of day, Timestamp: epoch ms


def _from_millis(millis: pa.Array, settings: Any) -> pa.Array:
    target = settings.type
    if target == tc.TYPE_UNIX:
        return millis_to_unix(millis, settings.unix_precision)
    if target == tc.TYPE_STRING:
        return format_millis(settings.format, millis)
    if target == tc.TYPE_TIME:
        return millis_of_day(millis)
    check_date_range(millis)
    if target == tc.TYPE_DATE:
        return floor_div(millis, MILLIS_PER_DAY).cast(pa.int32())  # days before 1970 round down, as per record
    return millis
