"""``KafkaMetadataTransform``: add the record's topic, partition, offset and timestamp.

``org.apache.iceberg.connect.transforms.KafkaMetadataTransform``. Flat by
default (``<field_name>_topic``, ``<field_name>_partition``, ...), or nested in
one struct/map field named ``field_name`` when ``nested=true``.
``external_field=key,value`` adds a constant string field (a cluster name, say).
"""

from __future__ import annotations

from typing import Callable

from connector.api.config_def import ConfigDef, ConfigType
from connector.api.errors import ConfigException
from connector.api.lru import LRUCache
from connector.api.record import SinkRecord
from connector.api.schema import Schema, SchemaBuilder
from connector.api.struct import Struct
from smt.base import (
    StructOrMapTransformation,
    ValueSide,
    require_map,
    require_schema,
    require_struct,
    struct_builder_with_fields,
)

FIELD_NAME = "field_name"
NESTED = "nested"
EXTERNAL_FIELD = "external_field"
DEFAULT_FIELD_NAME = "_kafka_metadata"

TOPIC = "topic"
PARTITION = "partition"
OFFSET = "offset"
TIMESTAMP = "timestamp"


def _metadata_schema_fields(namer: Callable[[str], str], external: tuple[str, str] | None) -> list[tuple[str, Schema]]:
    fields = [
        (namer(TOPIC), Schema.STRING_SCHEMA),
        (namer(PARTITION), Schema.INT32_SCHEMA),
        (namer(OFFSET), Schema.INT64_SCHEMA),
        (namer(TIMESTAMP), Schema.OPTIONAL_INT64_SCHEMA),
    ]
    if external is not None:
        fields.append((external[0], Schema.STRING_SCHEMA))
    return fields


def _metadata_values(record: SinkRecord, namer: Callable[[str], str], external: tuple[str, str] | None) -> dict:
    values = {
        namer(TOPIC): record.topic,
        namer(PARTITION): record.kafka_partition,
        namer(OFFSET): record.kafka_offset,
    }
    if record.timestamp is not None:
        values[namer(TIMESTAMP)] = record.timestamp
    if external is not None:
        values[external[0]] = external[1]
    return values


class KafkaMetadataTransform(ValueSide, StructOrMapTransformation):
    """Append Kafka coordinates to a Struct (with schema) or a Map (schemaless) value."""

    CONFIG_DEF = (
        ConfigDef()
        .define(FIELD_NAME, ConfigType.STRING, DEFAULT_FIELD_NAME, importance="low",
                doc="the field to append Kafka metadata under (or prefix fields with)")
        .define(NESTED, ConfigType.BOOLEAN, False, importance="low",
                doc="(true/false) to make a nested record under name or prefix names on the top level")
        .define(EXTERNAL_FIELD, ConfigType.STRING, None, importance="low",
                doc="key,value representing a String to be injected on Kafka metadata (e.g. Cluster)")
    )

    def __init__(self) -> None:
        self.field_name = DEFAULT_FIELD_NAME
        self.nested = False
        self._external: tuple[str, str] | None = None
        self._namer: Callable[[str], str] = lambda name: f"{DEFAULT_FIELD_NAME}_{name}"
        self._nested_schema: Schema | None = None
        self._schema_cache: LRUCache[Schema, Schema] = LRUCache()

    def _configure(self, config: dict) -> None:
        self.field_name = config[FIELD_NAME]
        self.nested = config[NESTED]
        external = config[EXTERNAL_FIELD]
        if self.nested:
            self._namer = lambda name: name
        else:
            prefix = self.field_name
            self._namer = lambda name: f"{prefix}_{name}"
        self._external = None
        if external is not None:
            parts = external.split(",")
            if len(parts) != 2:
                raise ConfigException(f"Could not parse {external} for {EXTERNAL_FIELD}")
            self._external = (self._namer(parts[0]), parts[1])
        self._nested_schema = None
        if self.nested:
            builder = SchemaBuilder.struct()
            for name, schema in _metadata_schema_fields(self._namer, self._external):
                builder.field(name, schema)
            self._nested_schema = builder.build()
        self._schema_cache = LRUCache()

    def apply_with_schema(self, record: SinkRecord) -> SinkRecord:
        value = require_struct(record.value, "KafkaMetadataTransform")
        schema = require_schema(record.value_schema, "KafkaMetadataTransform")
        new_schema = self._schema_cache.get_or_compute(schema, self._updated_schema)
        new_value = Struct(new_schema)
        for field in schema.fields():
            new_value.put(field.name, value.get(field))
        metadata = _metadata_values(record, self._namer, self._external)
        if self._nested_schema is not None:
            nested = Struct(self._nested_schema)
            for name, item in metadata.items():
                nested.put(name, item)
            new_value.put(self.field_name, nested)
        else:
            for name, item in metadata.items():
                new_value.put(name, item)
        return self.new_record(record, new_schema, new_value)

    def _updated_schema(self, schema: Schema) -> Schema:
        builder = struct_builder_with_fields(schema)
        if self._nested_schema is not None:
            builder.field(self.field_name, self._nested_schema)
        else:
            for name, field_schema in _metadata_schema_fields(self._namer, self._external):
                builder.field(name, field_schema)
        return builder.build()

    def apply_schemaless(self, record: SinkRecord) -> SinkRecord:
        value = require_map(record.value, "KafkaMetadata transform")
        new_value = dict(value)
        metadata = _metadata_values(record, self._namer, self._external)
        if self.nested:
            new_value[self.field_name] = metadata
        else:
            new_value.update(metadata)
        return self.new_record(record, None, new_value)
