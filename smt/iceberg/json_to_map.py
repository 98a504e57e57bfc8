"""``JsonToMapTransform``: type a JSON-object string value into a Struct of maps.

``org.apache.iceberg.connect.transforms.JsonToMapTransform``. The record value
must be a ``str`` (use ``org.apache.kafka.connect.storage.StringConverter``)
holding a JSON object. Each top-level key becomes an optional field typed from
its JSON value; nested objects become ``map<string,string>`` (values as JSON
text), so irregular JSON does not explode into columns. With
``json.root=true`` the whole object becomes one ``payload`` map field.

The module-level functions mirror the Java ``JsonToMapUtils`` helpers and
work on the node model of :mod:`connector.api.java.jackson`.
"""

from __future__ import annotations

import decimal
from typing import Any

from connector.api.config_def import ConfigDef, ConfigType
from connector.api.errors import DataException
from connector.api.java.jackson import (
    MISSING,
    Float32,
    JsonReadError,
    node_kind,
    read_text,
    write_text,
)
from connector.api.logical import Decimal
from connector.api.record import SinkRecord
from connector.api.schema import Schema, SchemaBuilder, Type
from connector.api.struct import Struct
from smt.base import Transformation

__all__ = [
    "JsonToMapTransform", "JsonToMapException", "JSON_LEVEL", "Float32", "MISSING",
    "ARRAY_OPTIONAL_STRING", "ARRAY_MAP_OPTIONAL_STRING", "ARRAY_ARRAY_OPTIONAL_STRING",
    "decimal_schema", "add_field", "schema_from_node", "array_node_type", "add_to_struct",
    "extract_value", "populate_map", "parse_json",
]

JSON_LEVEL = "json.root"
PAYLOAD_FIELD = "payload"


class JsonToMapException(DataException):
    """The value is not a string holding a JSON object, or a value cannot be extracted."""


def decimal_schema(scale: int) -> Schema:
    """An optional Connect Decimal schema with ``scale``."""
    return Decimal.builder(scale).optional().build()


OPTIONAL_MAP_STRING_STRING = SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.STRING_SCHEMA).optional().build()
ARRAY_OPTIONAL_STRING = SchemaBuilder.array(Schema.OPTIONAL_STRING_SCHEMA).optional().build()
ARRAY_MAP_OPTIONAL_STRING = (
    SchemaBuilder.array(
        SchemaBuilder.map(Schema.OPTIONAL_STRING_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA).optional().build()
    ).optional().build()
)
ARRAY_ARRAY_OPTIONAL_STRING = SchemaBuilder.array(ARRAY_OPTIONAL_STRING).optional().build()

# Schema for each scalar node kind (an array as a scalar is its JSON text).
_KIND_TO_SCHEMA: dict[str, Schema] = {
    "binary": Schema.OPTIONAL_BYTES_SCHEMA,
    "boolean": Schema.OPTIONAL_BOOLEAN_SCHEMA,
    "text": Schema.OPTIONAL_STRING_SCHEMA,
    "int": Schema.OPTIONAL_INT32_SCHEMA,
    "long": Schema.OPTIONAL_INT64_SCHEMA,
    "float": Schema.OPTIONAL_FLOAT32_SCHEMA,
    "double": Schema.OPTIONAL_FLOAT64_SCHEMA,
    "array": Schema.OPTIONAL_STRING_SCHEMA,
    "object": OPTIONAL_MAP_STRING_STRING,
    "bigint": decimal_schema(0),
    "decimal": Schema.OPTIONAL_STRING_SCHEMA,
}


def parse_json(text: str) -> Any:
    """Parse ``text`` as a default ``ObjectMapper`` reads a tree (floats as doubles)."""
    return read_text(text)


def add_field(key: str, node: Any, builder: SchemaBuilder) -> None:
    """Add ``key`` to ``builder`` with the schema of ``node``, unless it has none."""
    schema = schema_from_node(node)
    if schema is not None:
        builder.field(key, schema)


def schema_from_node(node: Any) -> Schema | None:
    """The Connect schema for a JSON node; None for null, missing, ``{}`` and empty arrays."""
    kind = node_kind(node)
    if kind in ("null", "missing"):
        return None
    if kind == "array":
        return _array_schema(node)
    if kind == "object" and not node:
        return None
    return _KIND_TO_SCHEMA[kind]


def _array_schema(array: list) -> Schema | None:
    if not array:
        return None
    element_kind = array_node_type(array)
    if element_kind is None or element_kind in ("null", "missing"):
        # mixed element types, or only nulls: strings
        return ARRAY_OPTIONAL_STRING
    if element_kind == "object":
        return ARRAY_MAP_OPTIONAL_STRING
    if element_kind == "array":
        nested = {schema_from_node(element) for element in array}
        if len(nested) > 1:
            return ARRAY_ARRAY_OPTIONAL_STRING
        (only,) = nested
        return None if only is None else SchemaBuilder.array(only).optional().build()
    return SchemaBuilder.array(_KIND_TO_SCHEMA[element_kind]).optional().build()


def array_node_type(array: list) -> str | None:
    """The node kind shared by every element, or None when empty or mixed."""
    kinds = {node_kind(element) for element in array}
    return kinds.pop() if len(kinds) == 1 else None


def add_to_struct(obj: dict, schema: Schema, struct: Struct) -> Struct:
    """Fill ``struct`` (of ``schema``, built by :func:`add_field`) from the object's members."""
    for field in schema.fields():
        node = obj.get(field.name, MISSING)
        target = field.schema.type
        if target is Type.ARRAY:
            struct.put(field.name, _populate_array(node, field.schema.value_schema, field.name))
        elif target is Type.MAP:
            struct.put(field.name, populate_map(node, {}))
        else:
            struct.put(field.name, extract_value(node, target, field.name))
    return struct


def extract_value(node: Any, type: Type, field_name: str) -> Any:
    """The value of ``node`` as a Connect ``type`` (as Jackson's accessors coerce it)."""
    if type is Type.STRING:
        return _node_to_text(node)
    if type is Type.BOOLEAN:
        return node if isinstance(node, bool) else False
    if type in (Type.INT32, Type.INT64):
        return _integral(node, 32 if type is Type.INT32 else 64)
    if type in (Type.FLOAT32, Type.FLOAT64):
        return _floating(node)
    if type is Type.MAP:
        if node_kind(node) != "object":
            raise JsonToMapException(f"Expected an object for field {field_name}")
        return populate_map(node, {})
    if type is Type.BYTES:
        return _extract_bytes(node, field_name)
    raise JsonToMapException(f"Unexpected type {type.name} for field {field_name}")


def _integral(node: Any, bits: int) -> int:
    kind = node_kind(node)
    if kind in ("int", "long", "bigint"):
        value = node
    elif kind in ("double", "float", "decimal"):
        value = int(node) if (kind == "decimal" or node == node and abs(node) != float("inf")) else 0
    else:
        return 0  # Jackson's intValue()/longValue() of a non-number
    # Java narrowing keeps the low-order bits.
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _floating(node: Any) -> float:
    kind = node_kind(node)
    if kind in ("int", "long", "bigint", "double", "float", "decimal"):
        return float(node)
    return 0.0


def _extract_bytes(node: Any, field_name: str) -> Any:
    kind = node_kind(node)
    if kind == "bigint":
        return decimal.Decimal(node)
    if kind == "decimal":
        return node
    if kind == "binary":
        return bytes(node)
    if kind == "text":
        import base64
        import binascii

        try:
            return base64.b64decode(node, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise JsonToMapException(f"parsing binary value threw exception for {field_name}") from exc
    if kind in ("null", "missing"):
        return None
    raise JsonToMapException(f"parsing binary value threw exception for {field_name}")


def _populate_array(node: Any, schema: Schema | None, field_name: str) -> list:
    """The elements of an array node, of ``schema`` (the array schema's element schema)."""
    assert schema is not None, "an ARRAY schema always has an element schema"
    elements = node if isinstance(node, list) else []
    if schema.type is Type.ARRAY:
        return [_populate_array(element, schema.value_schema, field_name) for element in elements]
    return [extract_value(element, schema.type, field_name) for element in elements]


def populate_map(node: Any, acc: dict) -> dict:
    """Put each member of an object node into ``acc`` as text (JSON text for non-strings)."""
    if isinstance(node, dict):
        for key, value in node.items():
            acc[key] = _node_to_text(value)
    return acc


def _node_to_text(node: Any) -> str:
    return node if isinstance(node, str) else write_text(node)


class JsonToMapTransform(Transformation):
    """Parse a JSON-object string value into a typed Struct (or one map with ``json.root``).

    Keys, headers and tombstones pass through unchanged.
    """

    CONFIG_DEF = ConfigDef().define(
        JSON_LEVEL, ConfigType.BOOLEAN, False, importance="medium",
        doc="Boolean value to start at root. False is one level in from the root",
    )

    def __init__(self) -> None:
        self.start_at_root = False

    def _configure(self, config: dict) -> None:
        self.start_at_root = config[JSON_LEVEL]

    def apply(self, record: SinkRecord) -> SinkRecord:
        if record.value is None:
            return record
        if not isinstance(record.value, str):
            raise JsonToMapException("record value is not a string, use StringConverter")
        try:
            obj = read_text(record.value)
        except JsonReadError as exc:
            raise JsonToMapException(
                f"record.value is not valid json for record.value: {_record_details(record)}"
            ) from exc
        if not isinstance(obj, dict):
            raise JsonToMapException(
                f"Expected json object for record.value after parsing: {_record_details(record)}"
            )
        if self.start_at_root:
            schema = JSON_MAP_SCHEMA
            value = Struct(schema).put(PAYLOAD_FIELD, populate_map(obj, {}))
        else:
            builder = SchemaBuilder.struct()
            for key, node in obj.items():
                add_field(key, node, builder)
            schema = builder.build()
            value = add_to_struct(obj, schema, Struct(schema))
        return record.new_record(
            record.topic, record.kafka_partition, record.key_schema, record.key,
            schema, value, record.timestamp, record.headers,
        )


JSON_MAP_SCHEMA = SchemaBuilder.struct().field(PAYLOAD_FIELD, OPTIONAL_MAP_STRING_STRING).build()


def _record_details(record: SinkRecord) -> str:
    return f"topic {record.topic} partition {record.kafka_partition} offset {record.kafka_offset}"
