"""Kafka's number and boolean converters (``org.apache.kafka.connect.converters``).

Each encodes one value the way Kafka's matching serializer does: big-endian
two's complement for ``short``/``integer``/``long``, IEEE 754 bits for
``float``/``double``, one byte ``0x01``/``0x00`` for booleans. Reading
yields the optional schema of the type; a payload of the wrong size is a
DataException, as is writing a value of another type.
"""

from __future__ import annotations

import abc
import struct
from typing import Any, Mapping

from connector.api.errors import DataException
from connector.api.java.numbers import to_float32, wrap_int
from connector.api.record import SchemaAndValue
from connector.api.schema import Schema, Type
from converters.base import CONVERTER_CONFIG, DataAndHeaderConverter, Headers

__all__ = [
    "ShortConverter", "IntegerConverter", "LongConverter", "FloatConverter", "DoubleConverter",
    "BooleanConverter",
]


class _TypedBytesConverter(DataAndHeaderConverter):
    """Shared plumbing: configuration (``converter.type`` required)."""

    CONFIG_DEF = CONVERTER_CONFIG  # Kafka's NumberConverterConfig adds nothing to ConverterConfig

    def _apply(self, config: Mapping[str, Any]) -> None:
        self.CONFIG_DEF.parse(config)  # validated as Kafka's ConverterConfig does; nothing else to set


class _NumberConverter(_TypedBytesConverter, abc.ABC):
    """``NumberConverter<T>``: a fixed-size big-endian number."""

    TYPE_NAME: str  # as in Kafka's messages: "short", "integer", ...
    SCHEMA: Schema
    FORMAT: str  # struct format of the serializer
    DESERIALIZER: str  # the deserializer named in size errors

    def to_connect_data(self, topic: str, data: bytes | None, headers: Headers = None) -> SchemaAndValue:
        if data is None:
            return SchemaAndValue(self.SCHEMA, None)
        size = struct.calcsize(self.FORMAT)
        if len(data) != size:
            raise DataException(
                f"Failed to deserialize {self.TYPE_NAME}: "
                f"Size of data received by {self.DESERIALIZER} is not {size}"
            )
        return SchemaAndValue(self.SCHEMA, struct.unpack(self.FORMAT, bytes(data))[0])

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any,
                          headers: Headers = None) -> bytes | None:
        if value is None:
            return None
        return struct.pack(self.FORMAT, self._checked(value))

    @abc.abstractmethod
    def _checked(self, value: Any) -> Any:
        """``value`` validated for this converter's number type (DataException otherwise)."""

    def _wrong_type(self, value: Any) -> DataException:
        return DataException(f"Failed to serialize to {self.TYPE_NAME} (was {type(value).__name__})")


class _IntegralConverter(_NumberConverter):
    BITS: int

    def _checked(self, value: Any) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise self._wrong_type(value)
        if wrap_int(value, self.BITS) != value:
            raise DataException(f"Failed to serialize to {self.TYPE_NAME}: {value} is out of range")
        return value


class _FloatingConverter(_NumberConverter):
    def _checked(self, value: Any) -> float:
        if not isinstance(value, float):
            raise self._wrong_type(value)
        return value


class ShortConverter(_IntegralConverter):
    TYPE_NAME, SCHEMA, FORMAT, DESERIALIZER, BITS = (
        "short", Schema.OPTIONAL_INT16_SCHEMA, ">h", "ShortDeserializer", 16)


class IntegerConverter(_IntegralConverter):
    TYPE_NAME, SCHEMA, FORMAT, DESERIALIZER, BITS = (
        "integer", Schema.OPTIONAL_INT32_SCHEMA, ">i", "IntegerDeserializer", 32)


class LongConverter(_IntegralConverter):
    TYPE_NAME, SCHEMA, FORMAT, DESERIALIZER, BITS = (
        "long", Schema.OPTIONAL_INT64_SCHEMA, ">q", "LongDeserializer", 64)


class FloatConverter(_FloatingConverter):
    # Kafka's FloatDeserializer names itself just "Deserializer" in its size error.
    TYPE_NAME, SCHEMA, FORMAT, DESERIALIZER = ("float", Schema.OPTIONAL_FLOAT32_SCHEMA, ">f", "Deserializer")

    def _checked(self, value: Any) -> float:
        return to_float32(super()._checked(value))  # a Java Float holds float32 precision


class DoubleConverter(_FloatingConverter):
    TYPE_NAME, SCHEMA, FORMAT, DESERIALIZER = ("double", Schema.OPTIONAL_FLOAT64_SCHEMA, ">d", "Deserializer")


class BooleanConverter(_TypedBytesConverter):
    """``BooleanConverter``: one byte, ``0x01`` for true and ``0x00`` for false."""

    def to_connect_data(self, topic: str, data: bytes | None, headers: Headers = None) -> SchemaAndValue:
        if data is None:
            return SchemaAndValue(Schema.OPTIONAL_BOOLEAN_SCHEMA, None)
        if len(data) != 1:
            raise DataException(
                "Failed to deserialize boolean: Size of data received by BooleanDeserializer is not 1"
            )
        if data[0] not in (0, 1):
            raise DataException(
                "Failed to deserialize boolean: Unexpected byte received by BooleanDeserializer: "
                f"{wrap_int(data[0], 8)}"
            )
        return SchemaAndValue(Schema.OPTIONAL_BOOLEAN_SCHEMA, data[0] == 1)

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any,
                          headers: Headers = None) -> bytes | None:
        if schema is not None and schema.type is not Type.BOOLEAN:
            raise DataException(f"Invalid schema type for BooleanConverter: {schema.type.name}")
        if value is None:
            return None
        if not isinstance(value, bool):
            raise DataException(f"BooleanConverter is not compatible with objects of type {type(value).__name__}")
        return b"\x01" if value else b"\x00"
