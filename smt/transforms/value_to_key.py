"""ValueToKey: replace the key with fields taken from the value."""

from __future__ import annotations

from typing import Any

from connector.api.config_def import ConfigDef, ConfigType, non_empty_list
from connector.api.errors import DataException
from connector.api.lru import LRUCache
from connector.api.record import SinkRecord
from connector.api.schema import Schema, SchemaBuilder
from connector.api.struct import Struct
from smt.base import (
    Transformation,
    replace_null_with_default,
    require_map,
    require_struct,
)

FIELDS_CONFIG = "fields"
REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"
PURPOSE = "copying fields from value to key"


class ValueToKey(Transformation):
    """Replace the record key with a new key formed from a subset of fields in the record value."""

    CONFIG_DEF = replace_null_with_default(ConfigDef().define(
        FIELDS_CONFIG, ConfigType.LIST, validator=non_empty_list, importance="high",
        doc="Field names on the record value to extract as the record key.",
    ))

    fields: list[str] = []
    replace_null_with_default: bool = True

    def _configure(self, config: dict[str, Any]) -> None:
        self.fields = list(config[FIELDS_CONFIG])
        self.replace_null_with_default = config[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        self._schema_cache: LRUCache[Schema, Schema] = LRUCache()

    def apply(self, record: SinkRecord) -> SinkRecord:
        if record.value_schema is None:
            return self.apply_schemaless(record)
        return self.apply_with_schema(record)

    def apply_schemaless(self, record: SinkRecord) -> SinkRecord:
        value = require_map(record.value, PURPOSE)
        key = {field: value.get(field) for field in self.fields}
        return record.new_record(record.topic, record.kafka_partition, None, key,
                                 record.value_schema, record.value, record.timestamp)

    def apply_with_schema(self, record: SinkRecord) -> SinkRecord:
        value = require_struct(record.value, PURPOSE)
        key_schema = self.key_schema(value.schema)
        key = Struct(key_schema)
        for field in self.fields:
            key.put(field, value.get(field) if self.replace_null_with_default else value.get_without_default(field))
        return record.new_record(record.topic, record.kafka_partition, key_schema, key,
                                 value.schema, value, record.timestamp)

    def key_schema(self, value_schema: Schema) -> Schema:
        return self._schema_cache.get_or_compute(value_schema, self._build_key_schema)

    def _build_key_schema(self, value_schema: Schema) -> Schema:
        builder = SchemaBuilder.struct()
        for field in self.fields:
            value_field = value_schema.field(field)
            if value_field is None:
                raise DataException(f"Field does not exist: {field}")
            builder.field(field, value_field.schema)
        return builder.build()
