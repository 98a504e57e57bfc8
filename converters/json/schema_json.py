"""Connect schemas ⇄ the JSON schema objects of JsonConverter's envelope.

The envelope's ``"schema"`` is an object such as
``{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"}],"optional":false}``.
Writing follows ``JsonConverter.asJsonSchema`` key for key (``type``, then
``items``/``keys``/``values``/``fields``, then ``optional``, ``name``,
``version``, ``doc``, ``parameters``, ``default``; ``field`` last in a struct
field), so the bytes match Kafka's. Reading follows ``asConnectSchema``.

Both directions are cached per schema in LRU caches of ``schemas.cache.size``
entries, as Kafka caches them: Connect schemas by equality, JSON schemas by
their JSON value (two spellings of one schema are two entries).
"""

from __future__ import annotations

import decimal
import json
from typing import Any, NamedTuple, cast

from connector.api.errors import DataException
from connector.api.java import jackson
from connector.api.java.numbers import wrap_int
from connector.api.lru import LRUCache
from connector.api.schema import Schema, SchemaBuilder, Type
from converters.json.config import JsonConverterConfig
from converters.json.data_json import to_connect, to_json

__all__ = ["SchemaTranslator", "TYPE_NAMES"]

TYPE_NAMES = {
    Type.BOOLEAN: "boolean", Type.INT8: "int8", Type.INT16: "int16", Type.INT32: "int32",
    Type.INT64: "int64", Type.FLOAT32: "float", Type.FLOAT64: "double", Type.BYTES: "bytes",
    Type.STRING: "string", Type.ARRAY: "array", Type.MAP: "map", Type.STRUCT: "struct",
}
_TYPES_BY_NAME = {name: schema_type for schema_type, name in TYPE_NAMES.items()}


class _JsonSchema(NamedTuple):
    node: dict[str, Any]
    text: str  # the node serialized once, reused by every envelope


def _cache_key(node: Any) -> Any:
    """A hashable key equal for equal JSON values (``JsonNode.equals``: member order aside).

    Canonical JSON text is the fast key; a tree holding decimals (only a
    default value can) falls back to a structural key.
    """
    try:
        return json.dumps(node, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    except TypeError:
        return _freeze(node)


def _freeze(node: Any) -> Any:
    """A hashable key equal for equal JSON values (``JsonNode.equals``), never mixing types."""
    if isinstance(node, dict):
        return ("o", frozenset((key, _freeze(value)) for key, value in node.items()))
    if isinstance(node, list):
        return ("a", tuple(_freeze(element) for element in node))
    if isinstance(node, bool):
        return ("b", node)
    if isinstance(node, decimal.Decimal):
        return ("d", str(node))  # 1.0 and 1.00 differ, as BigDecimals do
    if isinstance(node, int):
        return ("i", node)
    return ("s", node) if isinstance(node, str) else ("n", None)


class SchemaTranslator:
    """Translates schemas in both directions for one converter, with its two caches."""

    def __init__(self, config: JsonConverterConfig):
        self.config = config
        self._json_by_schema: LRUCache[Schema, _JsonSchema] = LRUCache(config.schemas_cache_size)
        self._schema_by_json: LRUCache[Any, Schema] = LRUCache(config.schemas_cache_size)

    @property
    def from_connect_cache_size(self) -> int:
        return len(self._json_by_schema)

    @property
    def to_connect_cache_size(self) -> int:
        return len(self._schema_by_json)

    # --- Connect → JSON ---------------------------------------------------------------

    def as_json_schema(self, schema: Schema | None) -> dict[str, Any] | None:
        """The JSON schema object for ``schema`` (None for no schema)."""
        return self._as_json(schema).node if schema is not None else None

    def as_json_schema_text(self, schema: Schema | None) -> str:
        """The JSON schema object for ``schema`` as compact JSON text (``null`` for none)."""
        return self._as_json(schema).text if schema is not None else "null"

    def _as_json(self, schema: Schema) -> _JsonSchema:
        cached = self._json_by_schema.get(schema)
        if cached is not None:
            return cached
        node: dict[str, Any] = {"type": TYPE_NAMES[schema.type]}
        if schema.type is Type.ARRAY:
            node["items"] = self.as_json_schema(schema.value_schema)
        elif schema.type is Type.MAP:
            node["keys"] = self.as_json_schema(schema.key_schema)
            node["values"] = self.as_json_schema(schema.value_schema)
        elif schema.type is Type.STRUCT:
            node["fields"] = [
                {**self._as_json(field.schema).node, "field": field.name} for field in schema.fields()
            ]
        self._add_attributes(node, schema)
        result = _JsonSchema(node, jackson.write_text(node))
        self._json_by_schema.put(schema, result)
        return result

    def _add_attributes(self, node: dict[str, Any], schema: Schema) -> None:
        node["optional"] = schema.optional
        if schema.name is not None:
            node["name"] = schema.name
        if schema.version is not None:
            node["version"] = schema.version
        if schema.doc is not None:
            node["doc"] = schema.doc
        if schema.parameters is not None:
            node["parameters"] = dict(schema.parameters)
        if schema.default is not None:
            node["default"] = to_json(schema, schema.default, self.config)

    # --- JSON → Connect ---------------------------------------------------------------

    def as_connect_schema(self, node: Any) -> Schema | None:
        """The Connect schema described by a JSON schema object (None for JSON null)."""
        if node is None:
            return None
        key = _cache_key(node)
        cached = self._schema_by_json.get(key)
        if cached is not None:
            return cached
        builder = self._builder_for_type(node)
        self._read_attributes(builder, node)
        result = builder.build()
        self._schema_by_json.put(key, result)
        return result

    def _builder_for_type(self, node: Any) -> SchemaBuilder:
        type_name = node.get("type") if isinstance(node, dict) else None
        if not isinstance(type_name, str):
            raise DataException("Schema must contain 'type' field")
        schema_type = _TYPES_BY_NAME.get(type_name)
        if schema_type is None:
            raise DataException(f"Unknown schema type: {type_name}")
        if schema_type is Type.ARRAY:
            if node.get("items") is None:
                raise DataException("Array schema did not specify the element type")
            return SchemaBuilder.array(self._nested_schema(node["items"]))
        if schema_type is Type.MAP:
            if "keys" not in node:
                raise DataException("Map schema did not specify the key type")
            if "values" not in node:
                raise DataException("Map schema did not specify the value type")
            return SchemaBuilder.map(self._nested_schema(node["keys"]),
                                     self._nested_schema(node["values"]))
        if schema_type is Type.STRUCT:
            return self._struct_builder(node)
        return SchemaBuilder.type_of(schema_type)

    def _nested_schema(self, node: Any) -> Schema:
        # A JSON null here reaches SchemaBuilder, which refuses it with Connect's own message.
        return cast(Schema, self.as_connect_schema(node))

    def _struct_builder(self, node: dict[str, Any]) -> SchemaBuilder:
        fields = node.get("fields")
        if not isinstance(fields, list):
            raise DataException("Struct schema's \"fields\" argument is not an array.")
        builder = SchemaBuilder.struct()
        for field in fields:
            name = field.get("field") if isinstance(field, dict) else None
            if not isinstance(name, str):
                raise DataException("Struct schema's field name not specified properly")
            builder.field(name, self._nested_schema(field))
        return builder

    def _read_attributes(self, builder: SchemaBuilder, node: dict[str, Any]) -> None:
        # Only JSON true makes a schema optional; an absent or odd value means required.
        if node.get("optional") is True:
            builder.optional()
        else:
            builder.required()
        if isinstance(node.get("name"), str):
            builder.name(node["name"])
        if jackson.is_integral(node.get("version")):
            builder.version(wrap_int(node["version"], 32))
        if isinstance(node.get("doc"), str):
            builder.doc(node["doc"])
        parameters = node.get("parameters")
        if isinstance(parameters, dict):
            for key, value in parameters.items():
                if not isinstance(value, str):
                    raise DataException("Schema parameters must have string values.")
                builder.parameter(key, value)
        if "default" in node:
            # The default is read against the schema as built so far, as Kafka reads it
            # against the builder (so a null default of a required schema is an error).
            builder.default_value(to_connect(builder.build(), node["default"], self.config))
