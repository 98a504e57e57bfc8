"""Arrow rows typed by a Connect schema → the table's Arrow schema, exactly as the per-record path writes them.

The columnar strategies (``columnar Avro``, ``columnar JSON with schemas``)
decode a batch into one Arrow struct array whose children are typed as the
Connect schema says (:data:`_PLAIN`: BOOLEAN → bool, INT8/16/32 → int32,
INT64 → int64, FLOAT32 → float32, FLOAT64 → float64, STRING → string, BYTES
→ binary; Date as int32 days, Timestamp as int64 milliseconds; STRUCT →
struct; ARRAY → list). :func:`to_table` casts it column by column into the
table's Arrow schema.

Invariants (else :class:`Declined`, and the batch runs per record):

* each table column takes its Connect field unchanged or widened (int →
  long, float → double, timestamp millis → micros); lists of records take
  their records field by field alike; anything else declines (maps, unions,
  decimals, times, uuids, narrowing, lists of lists, of dates or of timestamps);
* a required column has no null where its parent row is present, and no
  null where the Connect field has a default the per-record path would put;
* a table column the Connect schema lacks is all nulls (as per record).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyiceberg import types as ice
from pyiceberg.io.pyarrow import schema_to_pyarrow
from pyiceberg.schema import Schema as IcebergSchema

from connector.api.declined import Declined
from connector.api.logical import Date, Timestamp, logical_type_of
from connector.api.schema import Schema, Type


@dataclass(frozen=True)
class DecodedBatch:
    """A batch's values as one Arrow struct array, with the Connect schema record-by-record decoding gives."""

    values: pa.StructArray
    connect_schema: Schema


def spread_rows(struct: pa.StructArray, valid: pa.Array) -> pa.StructArray:
    """Rows of ``struct`` spread over the valid positions, null elsewhere (tombstones); null rows stay null."""
    positions = np.cumsum(valid.to_numpy(zero_copy_only=False)) - 1
    taken = struct.take(pa.array(np.where(valid.to_numpy(zero_copy_only=False), positions, 0)))
    nulls = pc.or_(pc.invert(valid), taken.is_null()) if taken.null_count else pc.invert(valid)
    return pa.StructArray.from_arrays(taken.flatten(), fields=list(taken.type), mask=nulls)


def to_table(values: pa.StructArray, connect_schema: Schema, table_schema: IcebergSchema) -> pa.Table:
    """The rows (struct array, no nulls) as a table of ``table_schema``; Declined where not exact."""
    arrow_schema = schema_to_pyarrow(table_schema)
    columns = _struct_children(values, connect_schema, table_schema.fields, arrow_schema)
    return pa.Table.from_arrays(columns, schema=arrow_schema)


def _struct_children(values: pa.StructArray, schema: Schema, fields: tuple[ice.NestedField, ...] | list,
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


def _cast(array: pa.Array, schema: Schema, column: ice.IcebergType, target: pa.DataType, name: str) -> pa.Array:
    """``array`` (as the native reader gave it for ``schema``) as ``target``; Declined unless exact."""
    source = _expected_source(array.type, schema, column, name)
    if source == "struct":
        assert isinstance(column, ice.StructType)
        children = _struct_children(array, schema, column.fields, list(target))
        return pa.StructArray.from_arrays(children, fields=list(target), mask=array.is_null())
    if source == "days":
        return array.cast(pa.date32()).cast(target)
    if source == "millis":
        return array.cast(pa.timestamp("ms", tz="UTC")).cast(target)
    if source == "list":
        assert isinstance(column, ice.ListType) and schema.value_schema is not None
        element = schema.value_schema
        elements = _expected_source(array.type.value_type, element, column.element_type, name)
        if elements not in ("plain", "struct"):
            raise Declined(f"column {name}: a list of lists or of {elements} values")
        if column.element_required and array.flatten().null_count:
            raise Declined(f"a null element in column {name}")
        if elements == "struct":
            return _list_of_records(array, element, column, target, name)
    return array.cast(target)


def _list_of_records(array: pa.Array, element: Schema, column: ice.ListType, target: pa.DataType,
                     name: str) -> pa.Array:
    """A list column of records: its elements (all lists' back to back) cast as a struct column, then re-listed."""
    records = array.flatten()
    assert isinstance(column.element_type, ice.StructType)
    children = _struct_children(records, element, column.element_type.fields, list(target.value_type))
    cast = pa.StructArray.from_arrays(children, fields=list(target.value_type), mask=records.is_null())
    large = pa.types.is_large_list(target)
    offsets = pc.subtract(array.offsets, array.offsets[0]).cast(pa.int64() if large else pa.int32())
    lists = pa.LargeListArray if large else pa.ListArray
    return lists.from_arrays(offsets, cast, type=target, mask=array.is_null() if array.null_count else None)


_PLAIN: dict[Type, tuple[tuple[type, ...], tuple[Any, ...]]] = {
    # Connect type → (Iceberg column types it lands in unchanged or widened, Arrow types the reader gives)
    Type.BOOLEAN: ((ice.BooleanType,), (pa.bool_(),)),
    Type.INT8: ((ice.IntegerType, ice.LongType), (pa.int32(),)),
    Type.INT16: ((ice.IntegerType, ice.LongType), (pa.int32(),)),
    Type.INT32: ((ice.IntegerType, ice.LongType), (pa.int32(),)),
    Type.INT64: ((ice.LongType,), (pa.int64(),)),
    Type.FLOAT32: ((ice.FloatType, ice.DoubleType), (pa.float32(),)),
    Type.FLOAT64: ((ice.DoubleType,), (pa.float64(),)),
    Type.STRING: ((ice.StringType,), (pa.string(), pa.large_string(), pa.string_view())),
    Type.BYTES: ((ice.BinaryType,), (pa.binary(), pa.large_binary(), pa.binary_view())),
}


def _expected_source(arrow: pa.DataType, schema: Schema, column: ice.IcebergType, name: str) -> str:
    """How ``arrow`` holding ``schema`` values goes exactly into ``column``.

    "plain" (a cast), "days", "millis", "list" or "struct"; Declined when it does not.
    """
    logical = logical_type_of(schema)
    if logical is Date:  # days since the epoch: the writer schema is read without its logical types
        if isinstance(column, ice.DateType) and arrow == pa.int32():
            return "days"
    elif logical is Timestamp:  # milliseconds since the epoch
        if isinstance(column, (ice.TimestamptzType, ice.TimestampType)) and arrow == pa.int64():
            return "millis"
    elif logical is None and schema.type is Type.STRUCT and not is_union(schema):
        if isinstance(column, ice.StructType) and pa.types.is_struct(arrow):
            return "struct"
    elif logical is None and schema.type is Type.ARRAY:
        if isinstance(column, ice.ListType) and (pa.types.is_list(arrow) or pa.types.is_large_list(arrow)):
            return "list"
    elif logical is None and schema.type in _PLAIN and schema.name != "uuid":
        columns, arrows = _PLAIN[schema.type]
        if isinstance(column, columns) and (arrow in arrows or _enum_of_strings(arrow, schema)):
            return "plain"
    raise Declined(f"column {name}: {schema.type.name}{f' ({schema.name})' if schema.name else ''} "
                   f"read as {arrow} into {column}")


def is_union(schema: Schema) -> bool:
    """A Connect STRUCT standing for an Avro union of several types (``AvroData``'s union encodings)."""
    name = schema.name or ""
    return name == "io.confluent.connect.avro.Union" or name.startswith("connect_union")


def _enum_of_strings(arrow: pa.DataType, schema: Schema) -> bool:
    """An Avro enum (Connect STRING) that the reader gives as dictionary-encoded strings."""
    return schema.type is Type.STRING and pa.types.is_dictionary(arrow) and (
        pa.types.is_string(arrow.value_type) or pa.types.is_large_string(arrow.value_type))
