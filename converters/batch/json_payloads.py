"""JSON payloads (one JSON object per value) → Arrow rows typed by a Connect STRUCT schema, a batch at a time.

Shared by the two columnar JSON strategies: ``columnar JSON with schemas``
(JsonConverter envelopes, ``converters/batch/json_envelope.py``) and ``columnar
JSON Schema`` (Confluent JSON Schema values, ``converters/batch/json_schema.py``).
The payloads of a batch become one newline-delimited document read by
Arrow's JSON reader with an explicit schema (:func:`arrow_type`), then typed
as the per-record converter gives them (:func:`typed`).

The JSON rules, where Arrow's reader is laxer than Jackson or Python's
``json`` (else the batch declines, :class:`Declined`):

* no byte below 0x20 in a payload (line breaks would split documents; raw
  control characters in strings), none of the tokens Arrow reads and Jackson
  refuses or reads differently (:mod:`converters.batch.json_screen`: ``NaN``,
  ``Infinity``, over-long numbers, ...), exactly one JSON value per payload;
* every token the reader reads is of the JSON kind the schema asks for (the
  reader refuses a string for a number, a number for a string, ``1.0`` for an
  integer, a key given twice, ...), integers fit their Connect type, a
  FLOAT32 is not a double exactly halfway between two floats, and nulls are
  only where the schema is optional;
* the schema is a STRUCT whose fields (recursively) are BOOLEAN,
  INT8/16/32/64, FLOAT32/64, STRING, STRUCT or an ARRAY of the primitive
  ones, with no default values and no named (logical) types (:func:`unsupported`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from connector.api.declined import Declined
from connector.api.schema import Schema, Type
from converters.batch.json_screen import check_lax_tokens

_INT_RANGES = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32}
POSITIVE_ZEROS, DECLINE_NEGATIVE_ZEROS = "positive", "decline"
_PRIMITIVES = {
    Type.BOOLEAN: pa.bool_(), Type.INT8: pa.int64(), Type.INT16: pa.int64(), Type.INT32: pa.int64(),
    Type.INT64: pa.int64(), Type.FLOAT32: pa.float64(), Type.FLOAT64: pa.float64(), Type.STRING: pa.string(),
}


def buffers(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(offsets of each value, the data buffer) of a binary array, as numpy views."""
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int32)[values.offset:values.offset + len(values) + 1]
    return offsets, np.frombuffer(values.buffers()[2], dtype=np.uint8)


def newline_joined(values: pa.Array) -> tuple[pa.Buffer, np.ndarray]:
    """The ``values`` (binary, no nulls), each followed by a newline, as one buffer in Arrow's memory,
    and where each line starts in it (one more offset than values: the last is the end)."""
    joined = pc.binary_join_element_wise(values, pa.scalar(b"", pa.binary()), pa.scalar(b"\n", pa.binary()))
    offsets, _ = buffers(joined)
    lines = joined.buffers()[2].slice(int(offsets[0]), int(offsets[-1] - offsets[0]))
    return lines, offsets - offsets[0]


def payload_lines(values: pa.Array, start: int, *, closing: bool) -> pa.Buffer:
    """The payloads ``value[start:]``, each followed by a newline, as one document.

    ``closing``: each value ends with a byte that is not the payload's (the
    envelope's closing ``}``), left out. Declined when a payload holds a byte
    below 0x20 (a line break would split it), ``NaN``/``Infinity``, an
    over-long number or invalid UTF-8. The document is built and checked in
    Arrow's memory pool and numpy views of it: a batch's copies of its text
    fresh from the system cost a page fault every 4 KB (~0.1 µs a record).
    """
    payloads = pc.binary_slice(values, start, -1 if closing else np.iinfo(np.int32).max)
    offsets, data = buffers(payloads)
    text = data[offsets[0]:offsets[-1]]
    if len(text) and text.min() < 0x20:
        raise Declined("a control character or line break in a payload")
    lines, _ = newline_joined(payloads)
    check_lax_tokens(lines, int(np.max(np.diff(offsets))), "in a payload")
    return lines


def read_rows(lines: pa.Buffer, row_type: pa.StructType, count: int) -> pa.StructArray:
    """The payload lines read as rows of ``row_type`` (fields the schema lacks ignored).

    One block, read on this thread: a row never straddles blocks, and the
    columns come out in one chunk each (a task has its core to itself).
    """
    try:
        table = pa_json.read_json(
            pa.BufferReader(lines), read_options=pa_json.ReadOptions(use_threads=False, block_size=lines.size + 1),
            parse_options=pa_json.ParseOptions(explicit_schema=pa.schema(list(row_type)),
                                               unexpected_field_behavior="ignore"))
    except pa.ArrowInvalid as exc:
        raise Declined("payloads the JSON reader refuses (a JSON kind the schema does not ask for, "
                       "or JSON it does not read)") from exc
    if table.num_rows != count:
        raise Declined("a payload holding more than one JSON value")
    columns = [column.combine_chunks() for column in table.columns]
    return pa.StructArray.from_arrays(columns, fields=list(table.schema))


# --- the Connect schema → what the reader reads, and back to what the JsonConverter gives ------------


def unsupported(schema: Schema, name: str = "") -> str | None:
    """What in a STRUCT ``schema`` this reader does not take, or None (see the module's invariants)."""
    where = f" (field {name})" if name else ""
    if schema.default is not None:
        return f"a default value{where}"
    if schema.type is Type.STRUCT:
        for field in schema.fields():
            found = unsupported(field.schema, f"{name}.{field.name}" if name else field.name)
            if found is not None:
                return found
        return None
    if not name:
        return f"a {schema.type.name} value, not a STRUCT"
    if schema.name is not None:
        return f"a named (logical) type {schema.name}{where}"
    if schema.type is Type.ARRAY:
        element = schema.value_schema
        if element is None or element.type not in _PRIMITIVES or element.name or element.default is not None:
            return f"an ARRAY of other than unnamed primitives{where}"
        return None
    return None if schema.type in _PRIMITIVES else f"a {schema.type.name}{where}"


def arrow_type(schema: Schema) -> Any:
    """The type the JSON reader reads ``schema``'s values as (int64 for every integer, float64 for floats)."""
    if schema.type is Type.STRUCT:
        return pa.struct([pa.field(f.name, arrow_type(f.schema)) for f in schema.fields()])
    if schema.type is Type.ARRAY:
        assert schema.value_schema is not None  # unsupported() checked
        return pa.list_(arrow_type(schema.value_schema))
    return _PRIMITIVES[schema.type]


def typed(array: pa.Array, schema: Schema, name: str, *, zeros: str = POSITIVE_ZEROS) -> pa.Array:
    """The read ``array`` as the per-record converter gives ``schema``'s values, typed as ``to_table`` expects.

    ``zeros``: :data:`POSITIVE_ZEROS` (the JsonConverter: Jackson reads a
    negative zero as BigDecimal 0) or :data:`DECLINE_NEGATIVE_ZEROS` (Python's
    ``json`` reads ``-0`` as 0 but ``-0.0`` as -0.0, which the reader does not tell apart).

    Nulls of ``array`` include those of its parents (struct children are
    flattened). Declined where per record the value would differ or fail: a
    null in a required field of a present struct, or a null element of a
    present list whose elements are required.
    """
    if schema.type is Type.STRUCT:
        return _struct(array, schema, name, zeros)
    if schema.type is Type.ARRAY:
        element = schema.value_schema
        assert element is not None  # unsupported() checked
        values = array.flatten()  # the elements of the present lists
        if not element.optional and values.null_count:
            raise Declined(f"a null element in field {name}")
        return pa.ListArray.from_arrays(_list_offsets(array), _primitive(values, element.type, f"{name}[]", zeros),
                                        mask=array.is_null() if array.null_count else None)
    return _primitive(array, schema.type, name, zeros)


def _struct(array: pa.StructArray, schema: Schema, name: str, zeros: str) -> pa.StructArray:
    present = array.is_valid()
    children = []
    for child, field in zip(array.flatten(), schema.fields()):
        path = f"{name}.{field.name}" if name else field.name
        if not field.schema.optional and child.null_count and pc.any(pc.and_(child.is_null(), present)).as_py():
            raise Declined(f"a null in required field {path}")
        children.append(typed(child, field.schema, path, zeros=zeros))
    fields = [pa.field(f.name, c.type) for f, c in zip(schema.fields(), children)]
    return pa.StructArray.from_arrays(children, fields=fields, mask=array.is_null() if array.null_count else None)


def _list_offsets(array: pa.ListArray) -> pa.Array:
    """Offsets into ``array.flatten()`` (which leaves out the elements of null lists)."""
    lengths = pc.fill_null(pc.list_value_length(array), 0).to_numpy()
    return pa.array(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32))


def _primitive(array: pa.Array, schema_type: Type, name: str, zeros: str) -> pa.Array:
    bits = _INT_RANGES.get(schema_type)
    if bits is not None:
        low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        extremes = pc.min_max(array)
        if extremes["min"].is_valid and (extremes["min"].as_py() < low or extremes["max"].as_py() > high):
            raise Declined(f"field {name}: a value out of the {schema_type.name} range")
        return array.cast(pa.int32())
    if schema_type in (Type.FLOAT32, Type.FLOAT64) and zeros == DECLINE_NEGATIVE_ZEROS:
        doubles = pc.fill_null(array, 1.0).to_numpy(zero_copy_only=False)
        if np.any((doubles == 0) & np.signbit(doubles)):
            raise Declined(f"field {name}: a negative zero")
    if schema_type is Type.FLOAT64:
        return pc.add(array, 0.0)  # -0.0 → 0.0: Jackson reads a negative zero as BigDecimal 0
    if schema_type is Type.FLOAT32:
        return _float32(pc.add(array, 0.0), name)
    return array


def _float32(array: pa.Array, name: str) -> pa.Array:
    """Doubles as float32; Declined where a double lies exactly halfway between two floats.

    Jackson rounds the exact decimal to a float once; rounding the reader's double
    again only differs from that when the double is such a midpoint.
    """
    doubles = pc.fill_null(array, 0.0).to_numpy(zero_copy_only=False)
    with np.errstate(over="ignore"):  # beyond the float range: infinity, as Java's (float) gives
        floats = doubles.astype(np.float32)
    inexact = doubles != floats.astype(np.float64)
    if np.any(inexact):
        near, exact = floats[inexact], doubles[inexact]
        other = np.nextafter(near, np.where(exact > near, np.float32(np.inf), np.float32(-np.inf)))
        if np.any((near.astype(np.float64) + other.astype(np.float64)) / 2 == exact):
            raise Declined(f"field {name}: a FLOAT32 value halfway between two floats")
    return pa.array(floats, pa.float32(), mask=array.is_null().to_numpy(zero_copy_only=False)
                    if array.null_count else None)
