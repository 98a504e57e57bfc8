"""Cast$Value column-wise: whole columns cast as Connect's Values.convertTo* casts one value, Maps and Structs."""

from __future__ import annotations

import functools
from typing import Any, Callable

import pyarrow as pa
import pyarrow.compute as pc

from connector.api.declined import Declined
from connector.api.errors import DataException
from connector.api.logical import MILLIS_PER_DAY, Date, Time, Timestamp, logical_type_of
from connector.api.schema import Field, Schema, Type
from smt.batch.base import NullPassingForm, register
from smt.batch.kernels import (
    BOOL,
    EXACT_DOUBLE,
    FLOAT,
    INT,
    LONG_MAX,
    LONG_MIN,
    STRING,
    has_values,
    kind,
    map_distinct,
    max_abs,
)
from smt.batch.typed_rules import check_nulls_keep_schema, fields_converted, plain, register_typed, schema_of
from smt.batch.view import ALL, RecordBatchView, Values
from smt.transforms import cast

_BITS = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}


_INT_TYPES = {8: pa.int8(), 16: pa.int16(), 32: pa.int32(), 64: pa.int64()}


_OUT_TYPES = {Type.FLOAT32: pa.float32(), Type.FLOAT64: pa.float64(), Type.BOOLEAN: pa.bool_(),
              Type.STRING: pa.string(), **{t: _INT_TYPES[b] for t, b in _BITS.items()}}


@register(cast.Value)
class CastBatch(NullPassingForm):
    def apply_to_values(self, view: RecordBatchView) -> RecordBatchView:
        smt = self.transformation
        if smt.whole_value_cast_type is not None:
            if view.value.is_map:
                raise Declined("Cast of a whole map fails")
            loose = ALL in view.value.loose
            array = cast_array(view.value.array, smt.whole_value_cast_type, lambda: loose)
            return view.with_value(Values(array))
        fields = view.value.maps(cast.PURPOSE)
        for name, target in smt.casts.items():
            array = fields.get(name)
            if array is None:
                # Cast puts the key with a null value (Kafka: updatedValue.put(field, null)); keep it as a
                # column so that a later rename onto it collides, as per record.
                fields.put(name, pa.nulls(fields.length))
                continue
            fields.put(name, cast_array(array, target, functools.partial(view.is_loose, name)))
        return view.with_value(fields.values())


def cast_array(array: pa.Array, target: Type, loose: Callable[[], bool]) -> pa.Array:
    """``cast_value_to_type(None, v, target)`` for every value (schemaless: kinds from the values).

    ``loose()``: whether the (floating-point) values may stand for JSON integers; asked only if it matters.
    """
    out_type = _OUT_TYPES[target]
    k = kind(array)
    if not has_values(array):
        return pa.nulls(len(array), type=out_type)
    if k not in (BOOL, INT, FLOAT, STRING):
        raise Declined(f"Cast of {k} values fails")
    if target in _BITS:
        return _cast_integer(array, k, target, loose)
    if target in (Type.FLOAT32, Type.FLOAT64):
        if k == STRING:
            return _cast_strings(array, target, out_type)
        if k == BOOL:
            return pc.if_else(array, 1.0, 0.0).cast(out_type)
        return array.cast(out_type, safe=False)
    if target is Type.BOOLEAN:
        if k == BOOL:
            return array
        if k == INT:
            return pc.not_equal(array, 0)
        if k == FLOAT:
            return pc.not_equal(pc.if_else(pc.is_nan(array), 0.0, pc.trunc(array)), 0.0)
        return pc.equal(pc.utf8_lower(array), "true")
    # STRING
    if k == STRING:
        return array.cast(pa.string())
    if k == BOOL:
        return pc.if_else(array, "true", "false")
    if k == INT:
        return array.cast(pa.string())
    if loose():
        raise Declined("Cast of loose numbers to string")
    return map_distinct(array, lambda v: cast.cast_value_to_type(None, float(v), target), out_type)


def _cast_strings(array: pa.Array, target: Type, out_type: pa.DataType) -> pa.Array:
    """Strings parsed as numbers; one that does not parse (or overflows) fails per record."""
    return map_distinct(array, lambda v: cast.cast_value_to_type(None, v, target), out_type,
                        fails=DataException, reason="Cast of a string that does not parse as the target type")


def _cast_integer(array: pa.Array, k: str, target: Type, loose: Callable[[], bool]) -> pa.Array:
    bits = _BITS[target]
    out_type = _INT_TYPES[bits]
    if k == INT:
        return array.cast(out_type, safe=False)  # two's complement wrap, like Java's narrowing
    if k == BOOL:
        return pc.if_else(array, 1, 0).cast(out_type)
    if k == STRING:
        return _cast_strings(array, target, out_type)
    # FLOAT: truncate, saturate to long (64) or int (then wrap to 8/16 bits), NaN -> 0
    if max_abs(array) >= (2.0**31 if bits < 64 else EXACT_DOUBLE) and loose():
        raise Declined("loose numbers out of int range")
    values = pc.if_else(pc.is_nan(array), 0.0, pc.trunc(array.cast(pa.float64())))
    low, high = (LONG_MIN, LONG_MAX) if bits == 64 else (-(2**31), 2**31 - 1)
    big = pc.greater_equal(values, float(high) + 1)  # 2**63 / 2**31 as doubles
    small = pc.less_equal(values, float(low))
    inside = pc.if_else(pc.or_(big, small), 0.0, values).cast(pa.int64())
    saturated = pc.if_else(big, high, pc.if_else(small, low, inside))
    return saturated.cast(out_type, safe=False)


#: Arrow types of the typed representation of each Cast target.
TYPED_OUT = {
    Type.INT8: pa.int32(), Type.INT16: pa.int32(), Type.INT32: pa.int32(), Type.INT64: pa.int64(),
    Type.FLOAT32: pa.float32(), Type.FLOAT64: pa.float64(), Type.BOOLEAN: pa.bool_(), Type.STRING: pa.string(),
}


@register_typed(cast.Value)
class CastTyped(NullPassingForm):
    """Structs' fields, or whole values, cast; a record with a null value is returned unchanged, schema and all."""

    def apply_to_values(self, view: RecordBatchView) -> RecordBatchView:
        smt = self.transformation
        values = view.value
        if values.schema is None:
            raise Declined("Cast: values without a schema")
        updated = schema_of(smt.updated_schema, values.schema, "casting the schema")
        check_nulls_keep_schema(view, updated)
        if smt.whole_value_cast_type is not None:
            array = cast_typed(values.array, values.schema, smt.whole_value_cast_type)
            return view.with_value(Values(array, schema=updated))
        return fields_converted(view, updated, cast.PURPOSE, smt.replace_null_with_default, self._cast_field)

    def _cast_field(self, field: Field, column: pa.Array) -> pa.Array:
        target = self.transformation.casts.get(field.name)
        return column if target is None else cast_typed(column, field.schema, target)


def cast_typed(array: pa.Array, schema: Schema, target: Type) -> pa.Array:
    """``cast_value_to_type(schema, v, target)`` of every value, in the typed representation."""
    out_type = TYPED_OUT[target]
    if not has_values(array):
        return pa.nulls(len(array), type=out_type)  # a null casts to null whatever the schema
    logical = logical_type_of(schema)
    if logical in (Date, Time, Timestamp):
        return _cast_temporal(array, logical, target, out_type)
    if logical is not None or schema.type not in cast.SUPPORTED_CAST_INPUT_TYPES:
        raise Declined(f"Cast from {schema.name or schema.type.name} fails or is not column-wise")
    array = plain(array)
    if schema.type is Type.BYTES:
        return _cast_bytes(array, target)
    if target is Type.STRING and schema.type in (Type.FLOAT32, Type.FLOAT64):
        # Float.toString and Double.toString differ: render with the field's own schema, once per value.
        return map_distinct(array, lambda v: cast.cast_value_to_type(schema, v, target), out_type)
    # Integers, floats, booleans and strings cast alike with or without a schema (the value's class decides).
    return cast_array(array, target, _never_loose).cast(out_type)


def _never_loose() -> bool:
    return False  # typed numbers are exactly what their schema says: none stands for another kind


def _cast_bytes(array: pa.Array, target: Type) -> pa.Array:
    if target is not Type.STRING:
        raise Declined(f"Cast of bytes to {target.name} fails")
    return map_distinct(array, lambda v: cast.cast_value_to_type(Schema.BYTES_SCHEMA, v, target), pa.string())


def _cast_temporal(array: pa.Array, logical: Any, target: Type, out_type: pa.DataType) -> pa.Array:
    """Date (int32 days), Time (int32 ms of day), Timestamp (int64 ms): to string by ISO formats, else as numbers."""
    if not pa.types.is_integer(array.type):
        raise Declined(f"Cast of {logical.__name__} values held as {array.type}")
    encoded = array.cast(pa.int64())  # what Cast casts to a number: days, ms of day or epoch ms
    if target is not Type.STRING:
        return cast_array(encoded, target, _never_loose).cast(out_type)
    millis = pc.multiply(encoded, MILLIS_PER_DAY) if logical is Date else encoded
    return map_distinct(millis, _iso_text, pa.string(), fails=DataException,
                        reason="Cast of a timestamp out of the supported range (years 1-9999)")


def _iso_text(millis: int) -> str:
    """``Values.dateFormatFor(date).format(date)``: a time of day, a date or a timestamp, by the value."""
    return cast.date_format_for(millis).format_millis(millis)
