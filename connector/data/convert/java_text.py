"""JSON text the Java sink would produce for values it writes to string columns.

The Iceberg sink turns maps and lists into text with Jackson's ``ObjectMapper``
and structs with Kafka's ``JsonConverter`` (schemas disabled). Both are
written by :mod:`connector.api.java.jackson`; this module only turns the Java
objects Jackson has no tree node for into trees: a Connect ``Struct`` as the
JsonConverter sees it, ``java.util.Date`` (Connect Date/Time/Timestamp) as
epoch milliseconds, and a ``UUID`` as its text.
"""

from __future__ import annotations

import base64
import datetime as _dt
import uuid
from typing import Any

from connector.api.errors import DataException
from connector.api.java.jackson import Float32, write_text
from connector.api.logical import Date, Time, Timestamp, logical_type_of
from connector.api.logical import Decimal as ConnectDecimal
from connector.api.schema import Schema, Type
from connector.api.struct import Struct

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_EPOCH_DATE = _dt.date(1970, 1, 1)


def jackson_json(value: Any) -> str:
    """Compact JSON of a schemaless value as Jackson's ``ObjectMapper`` writes it."""
    return write_text(value, default=_java_object_tree)


def connect_json(schema: Schema | None, value: Any) -> str:
    """JSON of a Connect value as ``JsonConverter`` (schemas disabled) serializes it."""
    return write_text(_connect_tree(schema, value), default=_java_object_tree)


def _java_object_tree(value: Any) -> Any:
    """The tree Jackson (or, for a Struct, the JsonConverter) makes of a Java object."""
    if isinstance(value, Struct):
        return _connect_tree(value.schema, value)
    if isinstance(value, (_dt.date, _dt.time)):
        return _date_millis(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    raise DataException(f"Cannot convert to JSON: {type(value).__name__}")


def _date_millis(value: Any) -> int:
    """Epoch millis of the ``java.util.Date`` a Connect logical value would be."""
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        return (value - _EPOCH) // _dt.timedelta(milliseconds=1)
    if isinstance(value, _dt.date):
        return (value - _EPOCH_DATE).days * 86_400_000
    return Time.from_logical(Time.SCHEMA, value)


def _connect_tree(schema: Schema | None, value: Any) -> Any:
    """``JsonConverter.convertToJson``: the tree of a Connect value under its schema."""
    if schema is None:
        return value
    if value is None:
        if schema.default is not None:
            value = schema.default
        elif schema.optional:
            return None
        else:
            raise DataException(
                "Conversion error: null value for field that is required and has no default value"
            )
    logical = logical_type_of(schema)
    if logical is ConnectDecimal:
        return base64.b64encode(ConnectDecimal.from_logical(schema, value)).decode("ascii")
    if logical in (Date, Time, Timestamp):
        return logical.from_logical(schema, value)
    return _connect_plain_tree(schema, value)


def _connect_plain_tree(schema: Schema, value: Any) -> Any:
    kind = schema.type
    if kind is Type.FLOAT32:
        return Float32(value)
    if kind is Type.STRUCT:
        fields = value.schema.fields() if isinstance(value, Struct) else schema.fields()
        return {f.name: _connect_tree(f.schema, value.get(f)) for f in fields}
    if kind is Type.ARRAY:
        return [_connect_tree(schema.value_schema, item) for item in value]
    if kind is Type.MAP:
        return _connect_map_tree(schema, value)
    return value


def _connect_map_tree(schema: Schema, value: dict) -> Any:
    key_schema, value_schema = schema.key_schema, schema.value_schema
    if key_schema is not None and key_schema.type is Type.STRING:
        return {k: _connect_tree(value_schema, v) for k, v in value.items()}
    # Non-string keys: JsonConverter writes an array of [key, value] pairs.
    return [[_connect_tree(key_schema, k), _connect_tree(value_schema, v)] for k, v in value.items()]
