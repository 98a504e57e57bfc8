"""How many bytes each decoded Avro record takes encoded: the proof that a batch was read aligned.

The columnar Avro strategy decodes a batch's values back to back, as one
container-file block. Record by record, fastavro reads each value on its own
and ignores bytes after the record; back to back, one value with trailing
bytes would shift every later value. So after the native reader has decoded
the block, the size each row takes in Avro's binary encoding is computed from
the decoded columns and compared with each value's length: any difference
declines the batch. Encodings that are valid but not the shortest (padded
varints, arrays split into several blocks) also differ and decline, which
only costs speed, never correctness.

Sizes follow the Avro specification: zig-zag varints for int and long (and
for lengths, counts, enum indexes and union branches), 4 and 8 bytes for
float and double, 1 for boolean, length-prefixed strings and bytes, arrays as
one block (count, items, a terminating 0) or a lone 0 when empty.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from connector.api.declined import Declined

_FIXED = {"null": 0, "boolean": 1, "float": 4, "double": 8}
_VARINT_LIMITS = np.array([1 << (7 * i) for i in range(1, 10)], dtype=np.uint64)


def check_aligned(writer: Any, decoded: pa.Table, lengths: np.ndarray) -> None:
    """Declined unless every row of ``decoded`` encodes to exactly ``lengths`` bytes under ``writer``."""
    named: dict[str, Any] = {}
    sizes = _record_sizes(writer, decoded.columns, len(decoded), named)
    if not np.array_equal(sizes, lengths):
        raise Declined("values whose bytes are not exactly one record each")


def varint_sizes(values: np.ndarray) -> np.ndarray:
    """Bytes of the unsigned varints ``values`` (uint64)."""
    return 1 + np.searchsorted(_VARINT_LIMITS, values, side="right").astype(np.int64)


def zigzag_sizes(values: np.ndarray) -> np.ndarray:
    signed = values.astype(np.int64)
    return varint_sizes(((signed << 1) ^ (signed >> 63)).astype(np.uint64))


def _record_sizes(schema: Any, columns: list, rows: int, named: dict[str, Any]) -> np.ndarray:
    record = _resolve(schema, named)
    if not isinstance(record, dict) or record.get("type") != "record":
        raise Declined("a top-level schema that is not a record")
    sizes = np.zeros(rows, dtype=np.int64)
    for field, column in zip(record["fields"], columns):
        sizes += _sizes(field["type"], _array(column), named)
    return sizes


def _sizes(schema: Any, array: pa.Array, named: dict[str, Any]) -> np.ndarray:
    schema = _resolve(schema, named)
    if isinstance(schema, list):
        return _union_sizes(schema, array, named)
    kind = schema if isinstance(schema, str) else schema["type"]
    if kind in _FIXED:
        return np.full(len(array), _FIXED[kind], dtype=np.int64)
    if kind in ("int", "long"):
        return zigzag_sizes(_filled(array.cast(pa.int64()), 0))
    if kind in ("string", "bytes"):
        lengths = _filled(pc.binary_length(array), 0)
        return varint_sizes(lengths.astype(np.uint64)) + lengths
    if kind == "fixed":
        return np.full(len(array), schema["size"], dtype=np.int64)
    if kind == "enum":
        return _enum_sizes(schema["symbols"], array)
    if kind == "array":
        return _array_sizes(schema["items"], array, named)
    if kind == "record":
        children = [array.field(i) for i in range(array.type.num_fields)]
        return _record_sizes(schema, children, len(array), named)
    raise Declined(f"no size rule for Avro {kind}")


def _union_sizes(branches: list, array: pa.Array, named: dict[str, Any]) -> np.ndarray:
    """A nullable union ``[null, T]`` or ``[T, null]``: the branch index, then the value when present."""
    kinds = [b if isinstance(b, str) else None for b in branches]
    if len(branches) != 2 or "null" not in kinds:
        raise Declined("a union other than [null, T]")
    other = branches[1 - kinds.index("null")]
    present = array.is_valid().to_numpy(zero_copy_only=False)
    return 1 + np.where(present, _sizes(other, array, named), 0)


def _array_sizes(items: Any, array: pa.Array, named: dict[str, Any]) -> np.ndarray:
    offsets = array.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
    counts = np.diff(offsets)
    element_sizes = _sizes(items, array.values.slice(offsets[0], offsets[-1] - offsets[0]), named)
    totals = np.concatenate([[0], np.cumsum(element_sizes)])
    item_bytes = totals[offsets[1:] - offsets[0]] - totals[offsets[:-1] - offsets[0]]
    blocks = zigzag_sizes(counts) + item_bytes + 1
    return np.where(counts > 0, blocks, 1)


def _enum_sizes(symbols: list[str], array: pa.Array) -> np.ndarray:
    strings = array.cast(pa.string()) if pa.types.is_dictionary(array.type) else array
    index = pc.index_in(strings, value_set=pa.array(symbols, pa.string()))
    if index.null_count:
        raise Declined("an enum symbol the schema does not list")
    return zigzag_sizes(index.to_numpy(zero_copy_only=False))


def _resolve(schema: Any, named: dict[str, Any]) -> Any:
    """The schema itself, remembering named types; a name reference resolved to its definition."""
    if isinstance(schema, dict):
        if schema.get("type") in ("record", "enum", "fixed") and "name" in schema:
            named.setdefault(_full_name(schema), schema)
            named.setdefault(schema["name"], schema)
        return schema
    if isinstance(schema, str) and schema in named:
        return named[schema]
    return schema


def _full_name(schema: dict) -> str:
    namespace = schema.get("namespace")
    return f"{namespace}.{schema['name']}" if namespace and "." not in schema["name"] else schema["name"]


def _array(column: Any) -> pa.Array:
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def _filled(array: pa.Array, value: int) -> np.ndarray:
    return pc.fill_null(array, value).to_numpy(zero_copy_only=False)
