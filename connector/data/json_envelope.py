"""JsonConverter envelopes (``schemas.enable=true``) → Arrow rows typed by their Connect schema, a batch at a time.

The per-record strategy (``JsonConverter.to_connect_data`` → ``Struct`` →
``RecordConverter``) is the specification; this module gives the same rows
faster. When every value of a batch starts with the same bytes
``{"schema":<S>,"payload":`` and ends with ``}``, the payloads are those
values with that prefix and the last byte cut off: one newline-delimited
JSON document, read by Arrow's JSON reader with an explicit schema derived
from the Connect schema of ``S``.

Invariants (else the batch declines, :class:`Declined`, and runs per record):

* the envelope prefix, schema spelling and white space included, is the same
  byte for byte across the batch, each payload is one JSON object and nothing
  follows it but white space and the envelope's closing ``}``;
* ``S`` is a STRUCT whose fields (recursively) are BOOLEAN, INT8/16/32/64,
  FLOAT32/64, STRING, STRUCT or an ARRAY of the primitive ones, with no
  default values and no named (logical) types (:func:`unsupported`);
* every payload token the reader reads is of the JSON kind the schema asks
  for (the reader refuses a string for a number, a number for a string, ...:
  Java's JsonConverter would coerce them, which is left to the per-record
  path), integers fit their Connect type (Java wraps silently), a FLOAT32 is
  not a double exactly halfway between two floats (rounding twice could
  differ), and nulls are only where the schema is optional;
* the payloads hold nothing the reader is laxer about than Jackson: no byte
  below 0x20 (line breaks would split documents; raw control characters in
  strings), no ``NaN``/``Infinity``, no number longer than 1,000 characters
  or with a three-digit negative exponent (a negative underflow is a negative
  zero per record, and the reader's zero is made positive), valid UTF-8.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from connector.api.declined import Declined
from connector.api.errors import DataException
from connector.api.java import jackson
from connector.api.lru import LRUCache
from connector.api.schema import Schema, Type
from connector.data.typed_batch import DecodedBatch

_SPACE = rb"[ \t\n\r]*"
_HEAD = re.compile(_SPACE + rb'\{' + _SPACE + rb'"schema"' + _SPACE + rb":" + _SPACE)
_MIDDLE = re.compile(_SPACE + rb"," + _SPACE + rb'"payload"' + _SPACE + rb":" + _SPACE)
_NON_FINITE = re.compile(rb"[:,\[] *-?(?:NaN|Inf)")
_MAX_NUMBER_LENGTH = 1000  # Jackson's StreamReadConstraints: longer (floating-point) numbers are errors
_LONG_NUMBER = re.compile(rb"[0-9.eE+-]{%d}" % (_MAX_NUMBER_LENGTH + 1))
_TINY_NUMBER = re.compile(rb"[0-9][eE]-[0-9]{3}")  # may underflow to a signed zero, which Jackson keeps
_INT_RANGES = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32}
_PRIMITIVES = {
    Type.BOOLEAN: pa.bool_(), Type.INT8: pa.int64(), Type.INT16: pa.int64(), Type.INT32: pa.int64(),
    Type.INT64: pa.int64(), Type.FLOAT32: pa.float64(), Type.FLOAT64: pa.float64(), Type.STRING: pa.string(),
}


class EnvelopeReader:
    """Decodes batches of one JsonConverter's envelopes column-wise."""

    def __init__(self, converter: Any):
        self.converter = converter
        self._schemas: LRUCache[bytes, Schema] = LRUCache(64)  # envelope prefix → its Connect schema

    def decode(self, values: pa.Array) -> DecodedBatch:
        """The non-null ``values`` of one batch as a struct array (one row each); Declined when not exact."""
        if len(values) == 0:
            raise Declined("only tombstones")
        if not pa.types.is_binary(values.type):
            values = values.cast(pa.binary())
        prefix = envelope_prefix(values[0].as_py())
        _check_envelopes(values, prefix)
        schema = self._schema(prefix)
        lines = payload_lines(values, len(prefix))
        longest = pc.max(pc.binary_length(values)).as_py()
        parsed = _read(lines, arrow_type(schema), len(values), longest)
        return DecodedBatch(typed(parsed, schema, ""), schema)

    def _schema(self, prefix: bytes) -> Schema:
        schema = self._schemas.get(prefix)
        if schema is None:
            schema = self._connect_schema(prefix)
            self._schemas.put(prefix, schema)
        return schema

    def _connect_schema(self, prefix: bytes) -> Schema:
        text = _HEAD.sub(b"", prefix, count=1)
        text = text[:_MIDDLE.search(text).start()]  # type: ignore[union-attr]  # found by envelope_prefix
        try:
            schema = self.converter.as_connect_schema(jackson.read_tree(text))
        except (jackson.JsonReadError, DataException) as exc:
            raise Declined(f"an envelope schema the converter refuses ({type(exc).__name__})") from exc
        if schema is None:
            raise Declined("an envelope without a schema")
        reason = unsupported(schema)
        if reason is not None:
            raise Declined(f"an envelope schema with {reason}")
        return schema


def envelope_prefix(first: bytes) -> bytes:
    """The bytes ``{"schema":<S>,"payload":`` (white space included) that ``first`` starts with."""
    head = _HEAD.match(first)
    if head is None:
        raise Declined('values not shaped {"schema": ..., "payload": ...}')
    text = first.decode("utf-8", "surrogateescape")  # bytes that are not UTF-8 are checked later
    try:
        _, end = json.JSONDecoder().raw_decode(text, head.end())  # the head is ASCII: same offset
    except json.JSONDecodeError as exc:
        raise Declined("an envelope schema that does not parse") from exc
    schema_end = len(text[:end].encode("utf-8", "surrogateescape"))
    middle = _MIDDLE.match(first, schema_end)
    if middle is None:
        raise Declined('values not shaped {"schema": ..., "payload": ...}')
    return first[:middle.end()]


def _check_envelopes(values: pa.Array, prefix: bytes) -> None:
    """Every value starts with ``prefix`` then ``{``, and ends with ``}``."""
    if pc.min(pc.binary_length(values)).as_py() < len(prefix) + 2:
        raise Declined("a value shorter than its envelope")
    heads = pc.binary_slice(values, 0, len(prefix))
    if not pc.all(pc.equal(heads, pa.scalar(prefix, heads.type))).as_py():
        raise Declined("several envelope schemas (or spellings) in one batch")
    offsets, data = _buffers(values)
    if np.any(data[offsets[:-1] + len(prefix)] != ord("{")):
        raise Declined("a payload that is not a JSON object")
    if np.any(data[offsets[1:] - 1] != ord("}")):
        raise Declined("a value that does not end with the envelope's }")


def _buffers(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(offsets of each value, the data buffer) of a binary array, as numpy views."""
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int32)[values.offset:values.offset + len(values) + 1]
    return offsets, np.frombuffer(values.buffers()[2], dtype=np.uint8)


def payload_lines(values: pa.Array, prefix_length: int) -> bytes:
    """The payloads, each followed by a newline: each value without its prefix, its last ``}`` a newline.

    Declined when a payload holds a byte below 0x20 (a line break would split
    it), ``NaN``/``Infinity``, an over-long number or invalid UTF-8.
    """
    tails = pc.binary_slice(values, prefix_length, np.iinfo(np.int32).max)  # each payload with the envelope's closing }
    offsets, data = _buffers(tails)
    block = data[offsets[0]:offsets[-1]].copy()
    block[offsets[1:] - offsets[0] - 1] = ord("\n")
    if np.count_nonzero(block < 0x20) != len(values):
        raise Declined("a control character or line break in a payload")
    lines = block.tobytes()
    _check_lax_tokens(lines, int(np.max(np.diff(offsets))))
    return lines


def _check_lax_tokens(lines: bytes, longest: int) -> None:
    """Declined on what Arrow's reader accepts and Jackson refuses (in any field, read or not)."""
    if (b"NaN" in lines or b"Inf" in lines) and _NON_FINITE.search(lines):
        raise Declined("NaN or Infinity in a payload")
    if longest > _MAX_NUMBER_LENGTH and _LONG_NUMBER.search(lines):
        raise Declined(f"a number longer than {_MAX_NUMBER_LENGTH} characters in a payload")
    if (b"e-" in lines or b"E-" in lines) and _TINY_NUMBER.search(lines):
        raise Declined("a number with a three-digit negative exponent in a payload")
    whole = pa.Array.from_buffers(pa.binary(), 1, [None, pa.array([0, len(lines)], pa.int32()).buffers()[1],
                                                   pa.py_buffer(lines)])
    try:
        whole.cast(pa.string())
    except pa.ArrowInvalid as exc:
        raise Declined("invalid UTF-8 in a payload") from exc


def _read(lines: bytes, row_type: pa.StructType, count: int, longest: int) -> pa.StructArray:
    """The payload lines read as rows of ``row_type`` (fields the schema lacks ignored).

    The reader's blocks hold whole lines: each is at least twice the longest.
    """
    block_size = max(1 << 20, 2 * longest + 2)
    try:
        table = pa_json.read_json(
            pa.BufferReader(lines), read_options=pa_json.ReadOptions(block_size=block_size),
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


def typed(array: pa.Array, schema: Schema, name: str) -> pa.Array:
    """The read ``array`` as the JsonConverter gives ``schema``'s values, typed as ``to_table`` expects.

    Nulls of ``array`` include those of its parents (struct children are
    flattened). Declined where per record the value would differ or fail: a
    null in a required field of a present struct, or a null element of a
    present list whose elements are required.
    """
    if schema.type is Type.STRUCT:
        return _struct(array, schema, name)
    if schema.type is Type.ARRAY:
        element = schema.value_schema
        assert element is not None  # unsupported() checked
        values = array.flatten()  # the elements of the present lists
        if not element.optional and values.null_count:
            raise Declined(f"a null element in field {name}")
        return pa.ListArray.from_arrays(_list_offsets(array), _primitive(values, element.type, f"{name}[]"),
                                        mask=array.is_null() if array.null_count else None)
    return _primitive(array, schema.type, name)


def _struct(array: pa.StructArray, schema: Schema, name: str) -> pa.StructArray:
    present = array.is_valid()
    children = []
    for child, field in zip(array.flatten(), schema.fields()):
        path = f"{name}.{field.name}" if name else field.name
        if not field.schema.optional and child.null_count and pc.any(pc.and_(child.is_null(), present)).as_py():
            raise Declined(f"a null in required field {path}")
        children.append(typed(child, field.schema, path))
    fields = [pa.field(f.name, c.type) for f, c in zip(schema.fields(), children)]
    return pa.StructArray.from_arrays(children, fields=fields, mask=array.is_null() if array.null_count else None)


def _list_offsets(array: pa.ListArray) -> pa.Array:
    """Offsets into ``array.flatten()`` (which leaves out the elements of null lists)."""
    lengths = pc.fill_null(pc.list_value_length(array), 0).to_numpy()
    return pa.array(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32))


def _primitive(array: pa.Array, schema_type: Type, name: str) -> pa.Array:
    bits = _INT_RANGES.get(schema_type)
    if bits is not None:
        low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        extremes = pc.min_max(array)
        if extremes["min"].is_valid and (extremes["min"].as_py() < low or extremes["max"].as_py() > high):
            raise Declined(f"field {name}: a value out of the {schema_type.name} range")
        return array.cast(pa.int32())
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
