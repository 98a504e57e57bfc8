"""Checks of Connect values that Confluent's Avro, JSON Schema and Protobuf data classes share.

Each raises Connect's ``DataException`` with the message Confluent's converters
give for a value of the wrong Python type.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
from typing import Any

from connector.api.errors import DataException
from connector.api.instant import OutOfRangeTimestamp
from connector.api.logical import Date, Decimal, Time, Timestamp
from connector.api.schema import Field, Schema, Type
from connector.api.struct import Struct

_INTEGER_TYPES = (Type.INT8, Type.INT16, Type.INT32, Type.INT64)
_FLOAT_TYPES = (Type.FLOAT32, Type.FLOAT64)
SCALAR_TYPES = frozenset((*_INTEGER_TYPES, *_FLOAT_TYPES, Type.BOOLEAN, Type.STRING))

# logical name -> (its class, the Python type of its values, how error messages name that type)
_LOGICAL_VALUE_TYPES: dict[str | None, tuple[Any, type | tuple[type, ...], str]] = {
    Decimal.LOGICAL_NAME: (Decimal, _decimal.Decimal, "Decimal"),
    Date.LOGICAL_NAME: (Date, _dt.date, "date"),
    Time.LOGICAL_NAME: (Time, _dt.time, "time"),
    Timestamp.LOGICAL_NAME: (Timestamp, (_dt.datetime, OutOfRangeTimestamp), "datetime"),
}


def checked_scalar(t: Type, value: Any) -> Any:
    """``value`` as a value of the scalar type ``t`` (one of :data:`SCALAR_TYPES`; floats as ``float``)."""
    if t in _INTEGER_TYPES:
        if not isinstance(value, int) or isinstance(value, bool):
            raise DataException(f"Invalid type for {t.name}: {type(value).__name__}")
        return value
    if t in _FLOAT_TYPES:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise DataException(f"Invalid type for {t.name}: {type(value).__name__}")
        return float(value)
    if t is Type.BOOLEAN:
        if not isinstance(value, bool):
            raise DataException(f"Invalid type for BOOLEAN: {type(value).__name__}")
        return value
    if t is Type.STRING:
        if not isinstance(value, str):
            raise DataException(f"Invalid type for STRING: {type(value).__name__}")
        return value
    raise DataException(f"Unknown schema type: {t}")


def check_logical_value(schema: Schema, value: Any) -> None:
    """Fail unless ``value`` is a value of the logical type ``schema`` is named after."""
    logical, python_type, expected = _LOGICAL_VALUE_TYPES[schema.name]
    if not isinstance(value, python_type):
        raise DataException(f"Invalid type for {logical.__name__}, expected {expected} but was "
                            f"{type(value).__name__}")


def logical_to_raw(schema: Schema, value: Any) -> Any:
    """The underlying bytes or int of the (checked) logical value ``value`` of ``schema``."""
    check_logical_value(schema, value)
    return _LOGICAL_VALUE_TYPES[schema.name][0].from_logical(schema, value)


def field_value(struct: Struct, field: Field, ignore_default: bool) -> Any:
    """The value of ``field`` in ``struct``; without the field's default when ``ignore_default``."""
    return struct.get_without_default(field) if ignore_default else struct.get(field)
