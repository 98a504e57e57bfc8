"""``Cast$Value`` for values with a Connect schema, column-wise (``Cast.apply_with_schema``).

The source of each cast is known from the schema, not guessed from the values
as on the schemaless path: a FLOAT32 field renders as Java's
``Float.toString``, Date/Time/Timestamp go through their integer encodings
(days, ms of day, epoch ms) except to string, where ``Values.dateFormatFor``
picks the ISO format per value. Values come out in the typed representation
(:mod:`smt.batch.typed`): INT8/16 as int32, like every decoder gives them.

What Kafka refuses (a Struct, array or bytes to a number, a string that does
not parse) declines the batch with a named reason, so that the per-record path
raises the SMT's own error for the failing record.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from connector.api.declined import Declined
from connector.api.errors import DataException
from connector.api.logical import MILLIS_PER_DAY, Date, Time, Timestamp, logical_type_of
from connector.api.schema import Schema, Type
from smt.batch.kernels import has_values, map_distinct
from smt.batch.transforms import BatchTransform, cast_array
from smt.batch.typed_rules import (
    check_nulls_keep_schema,
    null_mask,
    plain,
    register_typed,
    schema_of,
    struct_fields,
    typed_view,
)
from smt.batch.view import RecordBatchView, Values
from smt.transforms import cast

#: Arrow types of the typed representation of each Cast target.
TYPED_OUT = {
    Type.INT8: pa.int32(), Type.INT16: pa.int32(), Type.INT32: pa.int32(), Type.INT64: pa.int64(),
    Type.FLOAT32: pa.float32(), Type.FLOAT64: pa.float64(), Type.BOOLEAN: pa.bool_(), Type.STRING: pa.string(),
}


@register_typed(cast.Value)
class CastTyped(BatchTransform):
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        smt = self.transformation
        values = view.value
        if not has_values(values.array):
            return view  # Cast returns a record with a null value unchanged, schema and all
        if values.schema is None:
            raise Declined("Cast: values without a schema")
        updated = schema_of(smt.updated_schema, values.schema, "casting the schema")
        check_nulls_keep_schema(view, updated)
        if smt.whole_value_cast_type is not None:
            array = cast_typed(values.array, values.schema, smt.whole_value_cast_type)
            return view.with_value(Values(array, schema=updated))
        schema, columns = struct_fields(values, cast.PURPOSE, with_defaults=smt.replace_null_with_default)
        arrays = [columns[f.name] if f.name not in smt.casts else cast_typed(columns[f.name], f.schema,
                                                                             smt.casts[f.name])
                  for f in schema.fields()]
        return typed_view(view, updated, list(columns), arrays, null_mask(values.array))


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
