"""Iceberg types for Connect schemas and for schemaless values (the sink's ``SchemaGenerator``).

Connect schema → Iceberg type (reference §3.3):

=================================  =====================
BOOLEAN                            boolean
INT8 / INT16 / INT32               int
INT32 ``Date`` / ``Time``          date / time
INT64                              long
INT64 ``Timestamp``                timestamptz
FLOAT32 / FLOAT64                  float / double
BYTES                              binary
BYTES ``Decimal``                  decimal(38, scale)
STRING                             string
STRING named ``uuid``              uuid
ARRAY / MAP / STRUCT               list / map / struct
=================================  =====================

A field, list element or map value is optional when its schema is optional or
``force_optional`` is set. Schemaless values are typed by :func:`infer_iceberg_type`
(reference §3.4): every inferred field and element is optional.

Nested field ids only need to be unique within the result; tables and schema
updates assign their own ids.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import itertools
import numbers
from typing import Any, Iterator

from pyiceberg import types as ice
from pyiceberg.schema import Schema as IcebergSchema

from connector.api.errors import DataException
from connector.api.logical import Date, Decimal, Time, Timestamp, logical_type_of
from connector.api.schema import Schema, Type
from connector.api.struct import Struct

MAX_DECIMAL_PRECISION = 38

_PLAIN_TYPES: dict[Type, ice.IcebergType] = {
    Type.BOOLEAN: ice.BooleanType(),
    Type.INT8: ice.IntegerType(),
    Type.INT16: ice.IntegerType(),
    Type.INT32: ice.IntegerType(),
    Type.INT64: ice.LongType(),
    Type.FLOAT32: ice.FloatType(),
    Type.FLOAT64: ice.DoubleType(),
    Type.BYTES: ice.BinaryType(),
    Type.STRING: ice.StringType(),
}


class _Ids:
    """Sequential field ids from 1."""

    def __init__(self) -> None:
        self._counter: Iterator[int] = itertools.count(1)

    def next(self) -> int:
        return next(self._counter)


# --- Connect schema → Iceberg -------------------------------------------------------


def iceberg_type_for(schema: Schema, *, force_optional: bool = False) -> ice.IcebergType:
    """The Iceberg type of a Connect schema (see the module doc)."""
    return _type_for(schema, force_optional, _Ids())


def iceberg_schema_for(schema: Schema, force_optional: bool = False) -> IcebergSchema:
    """An Iceberg schema whose columns are the fields of a Connect STRUCT schema."""
    if schema.type is not Type.STRUCT:
        raise DataException(f"Cannot create a table schema from a {schema.type.name} schema")
    struct = iceberg_type_for(schema, force_optional=force_optional)
    assert isinstance(struct, ice.StructType)
    return IcebergSchema(*struct.fields)


def _type_for(schema: Schema, force_optional: bool, ids: _Ids) -> ice.IcebergType:
    logical = logical_type_of(schema)
    if logical is not None:
        return _logical_type(schema, logical)
    if schema.type is Type.STRING and schema.name == "uuid":
        return ice.UUIDType()
    if schema.type is Type.ARRAY:
        return _list_type(schema, force_optional, ids)
    if schema.type is Type.MAP:
        return _map_type(schema, force_optional, ids)
    if schema.type is Type.STRUCT:
        return _struct_type(schema, force_optional, ids)
    return _PLAIN_TYPES.get(schema.type, ice.StringType())


def _logical_type(schema: Schema, logical: type) -> ice.IcebergType:
    if logical is Decimal:
        return ice.DecimalType(MAX_DECIMAL_PRECISION, Decimal.scale_of(schema))
    if logical is Date:
        return ice.DateType()
    if logical is Time:
        return ice.TimeType()
    assert logical is Timestamp
    return ice.TimestamptzType()


def _list_type(schema: Schema, force_optional: bool, ids: _Ids) -> ice.ListType:
    element = schema.value_schema
    assert element is not None
    element_type = _type_for(element, force_optional, ids)
    optional = force_optional or element.optional
    return ice.ListType(ids.next(), element_type, element_required=not optional)


def _map_type(schema: Schema, force_optional: bool, ids: _Ids) -> ice.MapType:
    key, value = schema.key_schema, schema.value_schema
    assert key is not None and value is not None
    key_type = _type_for(key, force_optional, ids)
    value_type = _type_for(value, force_optional, ids)
    optional = force_optional or value.optional
    return ice.MapType(ids.next(), key_type, ids.next(), value_type, value_required=not optional)


def _struct_type(schema: Schema, force_optional: bool, ids: _Ids) -> ice.StructType:
    fields = []
    for field in schema.fields():
        field_type = _type_for(field.schema, force_optional, ids)
        optional = force_optional or field.schema.optional
        fields.append(ice.NestedField(ids.next(), field.name, field_type, required=not optional))
    return ice.StructType(*fields)


def widened_type_for(current: ice.IcebergType, schema: Schema) -> ice.PrimitiveType | None:
    """The wider type a column needs for a record field (``needsDataTypeUpdate``).

    Only int → long (an INT64 field) and float → double (a FLOAT64 field).
    """
    if isinstance(current, ice.FloatType) and schema.type is Type.FLOAT64:
        return ice.DoubleType()
    if isinstance(current, ice.IntegerType) and schema.type is Type.INT64:
        return ice.LongType()
    return None


# --- schemaless values → Iceberg ------------------------------------------------------


def decimal_type_for(value: decimal.Decimal) -> ice.DecimalType | None:
    """``decimal(p, s)`` of a value, normalized; None if no Iceberg decimal can hold it.

    Negative scales become scale 0 with the precision grown to match, the
    precision is raised to at least the scale, and more than 38 digits fails.
    """
    if not value.is_finite():
        return None
    _, digits, exponent = value.as_tuple()
    precision, scale = len(digits), -int(exponent)
    if scale < 0:
        precision, scale = precision - scale, 0
    precision = max(precision, scale)
    if precision > MAX_DECIMAL_PRECISION:
        return None
    return ice.DecimalType(precision, scale)


def infer_iceberg_type(value: Any, *, force_optional: bool = False) -> ice.IcebergType | None:
    """The Iceberg type of a schemaless value (``inferIcebergType``), or None to skip it.

    None, empty lists and maps, lists whose first element cannot be typed and
    maps whose values are all null or untypable give None. Inferred fields and
    list elements are always optional, so ``force_optional`` changes nothing;
    it is accepted so callers can pass the sink setting uniformly.
    """
    return _infer(value, _Ids())


def infer_iceberg_schema(value: dict | Struct, *, force_optional: bool = False) -> IcebergSchema | None:
    """An Iceberg schema for a schemaless record, or None when nothing can be typed."""
    inferred = infer_iceberg_type(value, force_optional=force_optional)
    if not isinstance(inferred, ice.StructType):
        return None
    return IcebergSchema(*inferred.fields)


def _infer(value: Any, ids: _Ids) -> ice.IcebergType | None:
    if value is None:
        return None
    if isinstance(value, str):
        return ice.StringType()
    if isinstance(value, bool):
        return ice.BooleanType()
    if isinstance(value, decimal.Decimal):
        return decimal_type_for(value)
    if isinstance(value, numbers.Integral):
        return ice.LongType()
    if isinstance(value, numbers.Real):
        return ice.DoubleType()
    return _infer_temporal(value) or _infer_nested(value, ids)


def _infer_temporal(value: Any) -> ice.IcebergType | None:
    if isinstance(value, _dt.datetime):
        return ice.TimestamptzType() if value.tzinfo is not None else ice.TimestampType()
    if isinstance(value, _dt.date):
        return ice.DateType()
    if isinstance(value, _dt.time):
        return ice.TimeType()
    return None


def _infer_nested(value: Any, ids: _Ids) -> ice.IcebergType | None:
    if isinstance(value, (list, tuple)):
        if not value:
            return None
        element = _infer(value[0], ids)
        return None if element is None else ice.ListType(ids.next(), element, element_required=False)
    if isinstance(value, dict):
        fields = []
        for key, item in value.items():
            if key is None or item is None:
                continue
            item_type = _infer(item, ids)
            if item_type is not None:
                fields.append(ice.NestedField(ids.next(), str(key), item_type, required=False))
        return ice.StructType(*fields) if fields else None
    if isinstance(value, Struct):
        # Java cannot type a Struct here and skips it; its own schema says what it is.
        return _type_for(value.schema, False, ids)
    return None
