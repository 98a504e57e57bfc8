"""Column-wise building blocks shared by the batch SMTs: kinds, per-distinct-value functions, casts.

A value's *kind* is what the per-record SMTs branch on (``isinstance`` checks
on the Python value); here it is read off the Arrow type.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from connector.api.declined import Declined
from smt.batch.view import constant

BOOL, INT, FLOAT, STRING, LIST, MAP, DATE, TIME, TIMESTAMP, NULL = (
    "bool", "int", "float", "string", "list", "map", "date", "time", "timestamp", "null")

EXACT_DOUBLE = 2.0**53
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1


#: Each kind and the Arrow types that hold it (in a schemaless view, Maps are structs).
_KINDS: tuple[tuple[str, Callable[[pa.DataType], bool]], ...] = (
    (NULL, pa.types.is_null),
    (BOOL, pa.types.is_boolean),
    (INT, pa.types.is_integer),
    (FLOAT, pa.types.is_floating),
    (STRING, lambda t: pa.types.is_string(t) or pa.types.is_large_string(t)),
    (LIST, lambda t: pa.types.is_list(t) or pa.types.is_large_list(t)),
    (MAP, pa.types.is_struct),
    (DATE, pa.types.is_date32),
    (TIME, pa.types.is_time32),
    (TIMESTAMP, pa.types.is_timestamp),
)


def kind(array: pa.Array) -> str:
    """The Python kind of the array's values (per-record: their ``type``)."""
    for name, holds in _KINDS:
        if holds(array.type):
            return name
    raise Declined(f"values of Arrow type {array.type}")


def has_values(array: pa.Array) -> bool:
    return array.null_count != len(array)


def like(array: pa.Array, value: Any, type: pa.DataType) -> pa.Array:
    """``value`` wherever ``array`` is valid, null elsewhere."""
    filled = constant(value, len(array), type)
    if array.null_count == 0:
        return filled
    return pc.if_else(array.is_valid(), filled, pa.scalar(None, type=type))


def empty_lists_like(array: pa.Array) -> pa.Array:
    offsets = pa.array(np.zeros(len(array) + 1, dtype=np.int32))
    mask = array.is_null() if array.null_count else None
    return pa.ListArray.from_arrays(offsets, pa.array([], type=pa.null()), mask=mask)


def max_abs(array: pa.Array) -> float:
    bounds = pc.min_max(array).as_py()
    if bounds["min"] is None:
        return 0.0
    return max(abs(bounds["min"]), abs(bounds["max"]))


def map_distinct(array: pa.Array, function: Callable[[Any], Any], out_type: pa.DataType, *,
                 fails: type[Exception] | tuple[type[Exception], ...] = (), reason: str = "") -> pa.Array:
    """``function`` of each non-null value, computed once per distinct value.

    ``fails``: what ``function`` raises for a value the per-record SMT rejects.
    Such a value declines the batch with ``reason``: the per-record path then
    raises the SMT's own error with the record's coordinates. Any other
    exception is a bug and propagates.
    """
    if not has_values(array):
        return pa.nulls(len(array), type=out_type)
    encoded = pc.dictionary_encode(array)
    try:
        results = [function(v) for v in encoded.dictionary.to_pylist()]
    except fails as exc:
        raise Declined(reason) from exc
    return pa.array(results, type=out_type).take(encoded.indices)


def floor_div(array: pa.Array, divisor: int) -> pa.Array:
    """Floor division of an int64 array (Python's ``//``), nulls kept."""
    values = array.to_numpy(zero_copy_only=False)
    valid = array.is_valid().to_numpy(zero_copy_only=False)
    filled = np.where(valid, values, 0).astype(np.int64)
    return pa.array(np.floor_divide(filled, divisor), mask=~valid)


def floor_mod(array: pa.Array, divisor: int) -> pa.Array:
    values = array.to_numpy(zero_copy_only=False)
    valid = array.is_valid().to_numpy(zero_copy_only=False)
    filled = np.where(valid, values, 0).astype(np.int64)
    return pa.array(np.mod(filled, divisor), mask=~valid)


def int64_values(array: pa.Array) -> pa.Array:
    return array if array.type == pa.int64() else array.cast(pa.int64())
