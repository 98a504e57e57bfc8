"""Small Connect schema helpers shared by Confluent's Avro, JSON Schema and Protobuf data classes."""

from __future__ import annotations

from typing import TypeVar

from connector.api.errors import DataException
from connector.api.schema import Schema, Type

_T = TypeVar("_T")


def present(value: _T | None, what: str) -> _T:
    """``value``, which a well-formed schema always has (``what`` names it otherwise)."""
    if value is None:
        raise DataException(f"Schema has no {what}")
    return value


def non_optional(schema: Schema) -> Schema:
    """``schema`` made required (the same object when it already is)."""
    if not schema.optional:
        return schema
    return Schema(schema.type, optional=False, default=schema.default, name=schema.name,
                  version=schema.version, doc=schema.doc, parameters=schema.parameters,
                  fields=schema.fields() if schema.type is Type.STRUCT else None,
                  key_schema=schema.key_schema, value_schema=schema.value_schema)
