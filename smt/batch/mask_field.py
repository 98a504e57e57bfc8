"""MaskField$Value column-wise: masked fields replaced by their type's zero or the configured replacement."""

from __future__ import annotations

import datetime as _dt
import functools
import math
from typing import Any, Callable

import pyarrow as pa

from connector.api.declined import Declined
from connector.api.errors import ConnectException, DataException
from connector.api.logical import EPOCH, EPOCH_DATE, Date, Timestamp, logical_type_of
from connector.api.schema import Schema, Type, validate_value
from smt.batch.base import BatchTransform, register
from smt.batch.kernels import (
    BOOL,
    DATE,
    FLOAT,
    INT,
    LIST,
    MAP,
    NULL,
    STRING,
    TIME,
    TIMESTAMP,
    empty_lists_like,
    has_values,
    kind,
    like,
)
from smt.batch.typed_rules import register_typed, struct_fields, typed_view
from smt.batch.view import RecordBatchView, make_struct
from smt.transforms import mask_field


@register(mask_field.Value)
class MaskFieldBatch(BatchTransform):
    def __init__(self, transformation: Any):
        super().__init__(transformation)
        replacement = transformation.replacement
        self._as_long = self._as_double = None
        if replacement is not None:
            self._as_long = _replacement_for(0, replacement)
            self._as_double = _replacement_for(0.0, replacement)

    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        smt = self.transformation
        if view.value.array.null_count:
            raise Declined("MaskField on a null value fails")
        fields = view.value.maps(mask_field.PURPOSE)
        for name in smt.masked_field_order:
            array = fields.get(name)
            if array is None:
                # The key is added with a null value: the same as absent downstream, but a later
                # rename onto it collides (per record, the later key wins), so keep it as a column.
                fields.put(name, pa.nulls(fields.length))
                continue
            loose = fields.field_loose(name)
            origin = fields.origins.get(name)
            fields.put(name, self._masked(array, functools.partial(view.is_loose, name)), loose)
            if origin is not None:
                fields.origins[name] = origin  # masking keeps each value's kind
        return view.with_value(fields.values())

    def _masked(self, array: pa.Array, loose: Callable[[], bool]) -> pa.Array:
        k = kind(array)
        if k == NULL or not has_values(array):
            return array
        if self.transformation.replacement is None:
            return _zero_like(array, k)
        return self._replaced(array, k, loose)

    def _replaced(self, array: pa.Array, k: str, loose: Callable[[], bool]) -> pa.Array:
        text = self.transformation.replacement
        if k == STRING:
            return like(array, text, pa.string())
        if k == INT:
            return like(array, _ok(self._as_long), pa.int64())
        if k == FLOAT:
            value = _ok(self._as_double)
            if loose():
                as_long = _ok(self._as_long)
                if as_long != value or value == 0.0 and math.copysign(1.0, value) < 0:
                    raise Declined("replacement parses differently as long and double")
            return like(array, value, pa.float64())
        raise Declined("MaskField cannot replace values of this kind")


def _replacement_for(sample: Any, replacement: str) -> tuple[bool, Any]:
    """(True, the replacement for values like ``sample``), or (False, the per-record SMT's error)."""
    try:
        return True, mask_field.masked_with_replacement(sample, replacement)
    except DataException as exc:
        return False, exc


def _ok(result: tuple[bool, Any] | None) -> Any:
    assert result is not None  # computed in __init__ whenever there is a replacement
    ok, value = result
    if not ok:
        raise Declined("MaskField replacement does not parse as a number") from value
    return value


def _zero_like(array: pa.Array, k: str) -> pa.Array:
    if k == BOOL:
        return like(array, False, pa.bool_())
    if k in (INT, FLOAT):
        return like(array, 0, array.type)
    if k in (DATE, TIME):
        return like(array, 0, pa.int32()).cast(array.type)
    if k == TIMESTAMP:
        return like(array, 0, pa.int64()).cast(array.type)
    if k == STRING:
        return like(array, "", pa.string())
    if k == LIST:
        return empty_lists_like(array)
    if k == MAP:
        return make_struct([], [], len(array), array.is_null() if array.null_count else None)
    raise Declined(f"MaskField cannot mask values of type {array.type}")


#: A value of each Connect type as a Struct holds it: MaskField picks its mask by the value's class.
_SAMPLES: dict[Type, Any] = {
    Type.BOOLEAN: True, Type.INT8: 1, Type.INT16: 1, Type.INT32: 1, Type.INT64: 1, Type.FLOAT32: 1.0,
    Type.FLOAT64: 1.0, Type.STRING: "x", Type.BYTES: b"x", Type.ARRAY: [None],
}


@register_typed(mask_field.Value)
class MaskFieldTyped(BatchTransform):
    def apply_batch(self, view: RecordBatchView) -> RecordBatchView:
        smt = self.transformation
        if view.value.array.null_count:
            raise Declined("MaskField on a null value fails")
        schema, columns = struct_fields(view.value, mask_field.PURPOSE)
        arrays = []
        for field in schema.fields():
            column = columns[field.name]
            arrays.append(self._masked(column, field.schema, field.name)
                          if field.name in smt.masked_fields and has_values(column) else column)
        return typed_view(view, schema, list(columns), arrays, None)

    def _masked(self, column: pa.Array, schema: Schema, name: str) -> pa.Array:
        smt = self.transformation
        sample = _sample(schema, name)
        try:
            mask = smt.masked(sample, schema)
            validate_value(schema, mask, name)
        except ConnectException as exc:
            raise Declined(f"MaskField fails for field {name} ({type(exc).__name__})") from exc
        if schema.type is Type.ARRAY:
            return empty_lists_like(column).cast(column.type)
        if schema.type is Type.STRING:
            return like(column, mask, pa.string())
        return like(column, _stored(mask), column.type)


def _sample(schema: Schema, name: str) -> Any:
    logical = logical_type_of(schema)
    if logical is Date:
        return _dt.date(1970, 1, 2)
    if logical is Timestamp:
        return EPOCH
    if logical is not None or schema.type not in _SAMPLES:
        raise Declined(f"MaskField of field {name} ({schema.name or schema.type.name})")
    return _SAMPLES[schema.type]


def _stored(value: Any) -> Any:
    """A mask as the typed representation holds it (dates as days, timestamps as millis)."""
    if isinstance(value, _dt.datetime):
        return (value - EPOCH) // _dt.timedelta(milliseconds=1)
    if isinstance(value, _dt.date):
        return (value - EPOCH_DATE).days
    return value
