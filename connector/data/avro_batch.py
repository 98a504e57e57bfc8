"""Confluent-framed Avro values → Arrow, a batch at a time, and into a table's schema.

The per-record strategy (``AvroConverter.to_connect_data`` → ``Struct`` →
``RecordConverter``) is the specification; this module gives the same rows
faster. A batch of values written with one registry schema is, once each
5-byte header (magic byte, schema id) is cut off, the body of one Avro
object-container-file block: with a file header for the writer schema and a
block header in front, a native reader (polars, Rust) decodes it straight
into Arrow columns.

Invariants (else the batch declines, :class:`Declined`, and runs per record):

* every value is framed with the same magic byte 0 and schema id, and no
  record carries the schema id in a header instead;
* every value is exactly one record: the encoded size of each decoded row
  equals its value's length (``connector/data/avro_sizes.py``), since one value
  with trailing bytes would shift the rest of a block;
* the converter reads those values as the writer schema (no
  ``use.latest.version`` resolution) — :meth:`AvroConverter.columnar_plan`;
* each Connect field maps to an Arrow type the native reader gives for it,
  and each table column takes it unchanged or widened (int → long, float →
  double, timestamp millis → micros): :func:`to_table` checks field by field
  and declines on anything else (maps, unions, decimals, times, uuids,
  narrowing, a null in a required column, a null where the schema has a
  default that the per-record path would put instead);
* the table needs no schema change for the Connect schema
  (``RecordConverter.schema_updates_for``).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

import fastavro
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.schema import Schema as IcebergSchema
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DoubleType,
    FloatType,
    IcebergType,
    IntegerType,
    ListType,
    LongType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
)

from connector.api.declined import Declined
from connector.api.errors import DataException
from connector.api.logical import Date, Timestamp, logical_type_of
from connector.api.lru import LRUCache
from connector.api.schema import Schema, Type
from connector.data.avro_sizes import check_aligned

FRAME = 5  # magic byte 0 + 4-byte schema id
VALUE_SCHEMA_ID_HEADER = "__value_schema_id"
_SYNC = bytes(range(16))  # the file's sync marker: any 16 bytes, the same in header and block


@dataclass(frozen=True)
class DecodedBatch:
    """A batch's values as one Arrow struct array, with the Connect schema record-by-record decoding gives."""

    values: pa.StructArray
    connect_schema: Schema


class AvroBatchReader:
    """Decodes batches of one Avro converter's values column-wise."""

    def __init__(self, converter: Any):
        self.converter = converter
        self._headers: LRUCache[Any, bytes] = LRUCache(64)  # writer schema id → container-file header

    def decode(self, topic: str, values: pa.Array, headers: pa.Array) -> DecodedBatch:
        """Decode the non-null ``values`` of one batch (nulls stay null rows)."""
        if _has_schema_id_headers(headers):
            raise Declined("schema ids in record headers")
        present = values.drop_null()
        if len(present) == 0:
            raise Declined("only tombstones")
        prefix = _common_prefix(present)
        try:
            plan = self.converter.columnar_plan(topic, prefix)
        except DataException as exc:
            raise Declined(f"values need the converter ({type(exc).__name__})") from exc
        unreadable = _unreadable(plan.connect_schema)
        if unreadable is not None:
            raise Declined(f"schema {plan.schema_id} has {unreadable}")
        body = _bodies(present)
        table = self._read(plan.schema_id.key, plan.writer, len(present), body)
        # each value must have been exactly one record, as fastavro reads it on its own
        check_aligned(plan.writer, table, pc.subtract(pc.binary_length(present), FRAME).to_numpy())
        struct = pa.StructArray.from_arrays([c.combine_chunks() for c in table.columns], fields=list(table.schema))
        if len(present) != len(values):
            struct = _with_nulls(struct, values.is_valid())
        return DecodedBatch(struct, plan.connect_schema)

    def _read(self, key: Any, writer: Any, count: int, body: bytes) -> pa.Table:
        import polars as pl

        header = self._headers.get(key)
        if header is None:
            header = _file_header(writer)
            self._headers.put(key, header)
        block = _long(count) + _long(len(body)) + body + _SYNC
        try:
            return pl.read_avro(io.BytesIO(header + block)).to_arrow()
        except (pl.exceptions.PolarsError, OSError) as exc:
            raise Declined(f"the native Avro reader cannot read schema {key} ({type(exc).__name__})") from exc
        except pl.exceptions.PanicException as exc:  # bytes that are not one record per value can end here
            raise Declined("values whose bytes are not exactly one record each") from exc


def _unreadable(schema: Schema, name: str = "") -> str | None:
    """What in ``schema`` the native reader cannot give column-wise (maps, unions, decimals, times), or None."""
    logical = logical_type_of(schema)
    if logical is not None:
        return None if logical in (Date, Timestamp) else f"a {logical.__name__} field {name}".rstrip()
    if schema.type is Type.MAP:
        return f"a map field {name}".rstrip()
    if schema.type is Type.STRUCT:
        if _is_union(schema):
            return f"a union field {name}".rstrip()
        for field in schema.fields():
            found = _unreadable(field.schema, field.name)
            if found is not None:
                return found
    if schema.type is Type.ARRAY and schema.value_schema is not None:
        element = schema.value_schema
        if element.type in (Type.ARRAY, Type.MAP, Type.STRUCT):
            return f"a list of lists, maps or records {name}".rstrip()
        return _unreadable(element, name)
    return None


def _has_schema_id_headers(headers: pa.Array) -> bool:
    keys = pc.list_flatten(headers).field("key") if len(headers) else pa.array([], pa.string())
    return bool(pc.any(pc.equal(keys, VALUE_SCHEMA_ID_HEADER)).as_py())


def _common_prefix(values: pa.Array) -> bytes:
    """The 5-byte frame every value starts with; Declined when they differ or are not framed so."""
    lengths = pc.binary_length(values)
    if pc.min(lengths).as_py() < FRAME:
        raise Declined("a value shorter than its frame")
    frames = pc.binary_slice(values, 0, FRAME)
    first = frames[0].as_py()
    if first[0] != 0:
        raise Declined("values framed without a numeric schema id")
    if not pc.all(pc.equal(frames, pa.scalar(first, frames.type))).as_py():
        raise Declined("several schema ids in one batch")
    return first


def _bodies(values: pa.Array) -> bytes:
    """The values without their frames, back to back (the body of one container-file block)."""
    if not pa.types.is_binary(values.type):
        values = values.cast(pa.binary())
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int32)[values.offset:values.offset + len(values) + 1]
    data = np.frombuffer(values.buffers()[2], dtype=np.uint8)
    keep = np.ones(offsets[-1] - offsets[0], dtype=bool)
    starts = offsets[:-1] - offsets[0]
    keep[(starts[:, None] + np.arange(FRAME)).ravel()] = False
    return data[offsets[0]:offsets[-1]][keep].tobytes()


def _file_header(writer: Any) -> bytes:
    """An Avro object-container-file header for ``writer`` with the sync marker :data:`_SYNC`."""
    out = io.BytesIO()
    fastavro.writer(out, writer, [], codec="null", sync_marker=_SYNC)
    return out.getvalue()


def _long(value: int) -> bytes:
    """Avro's zig-zag varint encoding of a long."""
    encoded = (value << 1) ^ (value >> 63)
    out = bytearray()
    while encoded & ~0x7F:
        out.append((encoded & 0x7F) | 0x80)
        encoded >>= 7
    out.append(encoded)
    return bytes(out)


def _with_nulls(struct: pa.StructArray, valid: pa.Array) -> pa.StructArray:
    """Rows of ``struct`` spread over the valid positions, null elsewhere (tombstones)."""
    positions = np.cumsum(valid.to_numpy(zero_copy_only=False)) - 1
    taken = struct.take(pa.array(np.where(valid.to_numpy(zero_copy_only=False), positions, 0)))
    return pa.StructArray.from_arrays(taken.flatten(), fields=list(struct.type), mask=pc.invert(valid))


# --- into the table's schema --------------------------------------------------------------------


def to_table(values: pa.StructArray, connect_schema: Schema, table_schema: IcebergSchema) -> pa.Table:
    """The rows (struct array, no nulls) as a table of ``table_schema``; Declined where not exact."""
    arrow_schema = schema_to_pyarrow(table_schema)
    columns = _struct_children(values, connect_schema, table_schema.fields, arrow_schema)
    return pa.Table.from_arrays(columns, schema=arrow_schema)


def _struct_children(values: pa.StructArray, schema: Schema, fields: tuple[NestedField, ...] | list,
                     arrow_fields: Any) -> list[pa.Array]:
    """The columns of ``fields`` from the struct ``values`` (nulls of a null struct row stay null)."""
    by_name = {f.name: f for f in schema.fields()}
    names = [values.type.field(i).name for i in range(values.type.num_fields)]
    children = dict(zip(names, values.flatten()))  # null where the struct row is null
    present = values.is_valid()
    columns = []
    for index, column in enumerate(fields):
        target = arrow_fields.field(index) if hasattr(arrow_fields, "field") else arrow_fields[index]
        field = by_name.get(column.name)
        if field is None:
            array = pa.nulls(len(values), target.type)
        else:
            if field.schema.default is not None and _nulls_in(children[column.name], present):
                raise Declined(f"a null where field {column.name} has a default")
            array = _cast(children[column.name], field.schema, column.field_type, target.type, column.name)
        if column.required and array.null_count:
            if _nulls_in(array, present):
                raise Declined(f"a null in required column {column.name}")
            array = _filled_under_null_parents(array, column.name)
        columns.append(array)
    return columns


def _filled_under_null_parents(array: pa.Array, name: str) -> pa.Array:
    """A required child's nulls, all under null struct rows, as zero values (hidden by the parent's nulls;
    Parquet refuses nulls in a required column whatever the parent)."""
    kind = array.type
    if pa.types.is_struct(kind) or pa.types.is_list(kind) or pa.types.is_large_list(kind):
        raise Declined(f"column {name}: a required nested record or list under a null record")
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        zero: Any = ""
    elif pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        zero = b""
    elif pa.types.is_boolean(kind):
        zero = False
    elif pa.types.is_floating(kind):
        zero = 0.0
    else:  # integers, dates and timestamps: zero since the epoch
        zero = pa.scalar(0, pa.int32() if pa.types.is_date32(kind) or pa.types.is_int32(kind) else pa.int64())
        return pc.fill_null(array, zero.cast(kind))
    return pc.fill_null(array, pa.scalar(zero, kind))


def _nulls_in(array: pa.Array, present: pa.Array) -> bool:
    """Whether ``array`` has a null in a row where its parent is present."""
    return bool(array.null_count) and bool(pc.any(pc.and_(array.is_null(), present)).as_py())


def _cast(array: pa.Array, schema: Schema, column: IcebergType, target: pa.DataType, name: str) -> pa.Array:
    """``array`` (as the native reader gave it for ``schema``) as ``target``; Declined unless exact."""
    source = _expected_source(array.type, schema, column, name)
    if source == "struct":
        assert isinstance(column, StructType)
        children = _struct_children(array, schema, column.fields, list(target))
        return pa.StructArray.from_arrays(children, fields=list(target), mask=array.is_null())
    if source == "days":
        return array.cast(pa.date32()).cast(target)
    if source == "millis":
        return array.cast(pa.timestamp("ms", tz="UTC")).cast(target)
    if source == "list":
        assert isinstance(column, ListType) and schema.value_schema is not None
        element = schema.value_schema
        if _expected_source(array.type.value_type, element, column.element_type, name) != "plain":
            raise Declined(f"column {name}: a list of lists or records")
        if column.element_required and array.flatten().null_count:
            raise Declined(f"a null element in column {name}")
    return array.cast(target)


_PLAIN: dict[Type, tuple[tuple[type, ...], tuple[Any, ...]]] = {
    # Connect type → (Iceberg column types it lands in unchanged or widened, Arrow types the reader gives)
    Type.BOOLEAN: ((BooleanType,), (pa.bool_(),)),
    Type.INT8: ((IntegerType, LongType), (pa.int32(),)),
    Type.INT16: ((IntegerType, LongType), (pa.int32(),)),
    Type.INT32: ((IntegerType, LongType), (pa.int32(),)),
    Type.INT64: ((LongType,), (pa.int64(),)),
    Type.FLOAT32: ((FloatType, DoubleType), (pa.float32(),)),
    Type.FLOAT64: ((DoubleType,), (pa.float64(),)),
    Type.STRING: ((StringType,), (pa.string(), pa.large_string(), pa.string_view())),
    Type.BYTES: ((BinaryType,), (pa.binary(), pa.large_binary(), pa.binary_view())),
}


def _expected_source(arrow: pa.DataType, schema: Schema, column: IcebergType, name: str) -> str:
    """How ``arrow`` holding ``schema`` values goes exactly into ``column``.

    "plain" (a cast), "days", "millis", "list" or "struct"; Declined when it does not.
    """
    logical = logical_type_of(schema)
    if logical is Date:  # days since the epoch: the writer schema is read without its logical types
        if isinstance(column, DateType) and arrow == pa.int32():
            return "days"
    elif logical is Timestamp:  # milliseconds since the epoch
        if isinstance(column, (TimestamptzType, TimestampType)) and arrow == pa.int64():
            return "millis"
    elif logical is None and schema.type is Type.STRUCT and not _is_union(schema):
        if isinstance(column, StructType) and pa.types.is_struct(arrow):
            return "struct"
    elif logical is None and schema.type is Type.ARRAY:
        if isinstance(column, ListType) and (pa.types.is_list(arrow) or pa.types.is_large_list(arrow)):
            return "list"
    elif logical is None and schema.type in _PLAIN and schema.name != "uuid":
        columns, arrows = _PLAIN[schema.type]
        if isinstance(column, columns) and (arrow in arrows or _enum_of_strings(arrow, schema)):
            return "plain"
    raise Declined(f"column {name}: {schema.type.name}{f' ({schema.name})' if schema.name else ''} "
                   f"read as {arrow} into {column}")


def _is_union(schema: Schema) -> bool:
    """A Connect STRUCT standing for an Avro union of several types (``AvroData``'s union encodings)."""
    name = schema.name or ""
    return name == "io.confluent.connect.avro.Union" or name.startswith("connect_union")


def _enum_of_strings(arrow: pa.DataType, schema: Schema) -> bool:
    """An Avro enum (Connect STRING) that the reader gives as dictionary-encoded strings."""
    return schema.type is Type.STRING and pa.types.is_dictionary(arrow) and (
        pa.types.is_string(arrow.value_type) or pa.types.is_large_string(arrow.value_type))
