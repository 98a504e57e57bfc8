"""``org.apache.kafka.connect.converters.ByteArrayConverter``: bytes pass through unchanged."""

from __future__ import annotations

from typing import Any

from connector.api.errors import DataException
from connector.api.record import SchemaAndValue
from connector.api.schema import Schema, Type
from converters.base import DataAndHeaderConverter, Headers

__all__ = ["ByteArrayConverter"]


class ByteArrayConverter(DataAndHeaderConverter):
    """Reading yields ``(OPTIONAL_BYTES_SCHEMA, data)``; writing needs a BYTES (or no) schema; nothing to configure."""

    def to_connect_data(self, topic: str, data: bytes | None, headers: Headers = None) -> SchemaAndValue:
        return SchemaAndValue(Schema.OPTIONAL_BYTES_SCHEMA, None if data is None else bytes(data))

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any,
                          headers: Headers = None) -> bytes | None:
        if schema is not None and schema.type is not Type.BYTES:
            raise DataException(f"Invalid schema type for ByteArrayConverter: {schema.type.name}")
        if value is not None and not isinstance(value, (bytes, bytearray, memoryview)):
            raise DataException(
                f"ByteArrayConverter is not compatible with objects of type {type(value).__name__}"
            )
        return None if value is None else bytes(value)
