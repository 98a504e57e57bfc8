"""HoistField: wrap the key/value in a struct (or map) with one field (``HoistField$Key`` / ``$Value``)."""

from __future__ import annotations

from typing import Any

from connector.api.config_def import ConfigDef, ConfigType
from connector.api.lru import LRUCache
from connector.api.record import SinkRecord
from connector.api.schema import Schema, SchemaBuilder
from connector.api.struct import Struct
from smt.base import KeySide, SidedTransformation, ValueSide

FIELD_CONFIG = "field"


class HoistField(SidedTransformation):
    """Wrap data using the specified field name in a Struct when schema present, or a Map in the case of
    schemaless data."""

    CONFIG_DEF = ConfigDef().define(
        FIELD_CONFIG, ConfigType.STRING, importance="medium",
        doc="Field name for the single field that will be created in the resulting Struct or Map.",
    )

    field_name: str

    def _configure(self, config: dict[str, Any]) -> None:
        self.field_name = config[FIELD_CONFIG]
        self._schema_cache: LRUCache[Schema, Schema] = LRUCache()

    def apply(self, record: SinkRecord) -> SinkRecord:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            return self.new_record(record, None, {self.field_name: value})
        updated_schema = self.updated_schema(schema)
        return self.new_record(record, updated_schema, Struct(updated_schema).put(self.field_name, value))

    def updated_schema(self, schema: Schema) -> Schema:
        return self._schema_cache.get_or_compute(schema, self._build_schema)

    def _build_schema(self, schema: Schema) -> Schema:
        return SchemaBuilder.struct().field(self.field_name, schema).build()


class Key(KeySide, HoistField):
    """``org.apache.kafka.connect.transforms.HoistField$Key``."""


class Value(ValueSide, HoistField):
    """``org.apache.kafka.connect.transforms.HoistField$Value``."""
