"""Confluent Schema Registry converters: Avro, JSON Schema and Protobuf.

=================================================== ===============================================
``io.confluent.connect.avro.AvroConverter``         :class:`converters.confluent.avro.AvroConverter`
``io.confluent.connect.json.JsonSchemaConverter``   :class:`converters.confluent.json_schema.JsonSchemaConverter`
``io.confluent.connect.protobuf.ProtobufConverter`` :class:`converters.confluent.protobuf.ProtobufConverter`
=================================================== ===============================================

All three read Confluent's wire format (:mod:`converters.confluent.wire_format`),
fetch schemas through :class:`converters.confluent.registry_client.SchemaRegistryClient`
and return, for a given registry schema id, always the same (cached) Connect
schema object; ``converter.last_schema_id`` and ``converter.schema_id_of(data)``
tell which registry schema a value used. See docs/converters-confluent.md.

Submodules are imported lazily, so importing this package stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "AvroConverter": "converters.confluent.avro",
    "JsonSchemaConverter": "converters.confluent.json_schema",
    "ProtobufConverter": "converters.confluent.protobuf",
    "SchemaRegistryClient": "converters.confluent.registry_client",
    "RegisteredSchema": "converters.confluent.registry_client",
    "SchemaReference": "converters.confluent.registry_client",
    "SchemaRegistryException": "converters.confluent.registry_client",
    "SchemaNotFoundException": "converters.confluent.registry_client",
    "SchemaRegistryUnavailableException": "converters.confluent.registry_client",
    "TopicNameStrategy": "converters.confluent.subject_naming",
    "RecordNameStrategy": "converters.confluent.subject_naming",
    "TopicRecordNameStrategy": "converters.confluent.subject_naming",
}

#: Java class names of the converters -> ``module:Class`` of their Python implementation.
CONVERTERS = {
    "io.confluent.connect.avro.AvroConverter": "converters.confluent.avro:AvroConverter",
    "io.confluent.connect.json.JsonSchemaConverter":
        "converters.confluent.json_schema:JsonSchemaConverter",
    "io.confluent.connect.protobuf.ProtobufConverter":
        "converters.confluent.protobuf:ProtobufConverter",
}

__all__ = sorted(_EXPORTS) + ["CONVERTERS"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'converters.confluent' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
