"""``CopyValue``: copy one top-level field of the value into a new field.

``org.apache.iceberg.connect.transforms.CopyValue`` (and the Tabular
``io.tabular.iceberg.connect.transforms.CopyValue``). Typically used to keep a
copy of a column that another transform (or the sink's routing) consumes.
"""

from __future__ import annotations

from connector.api.config_def import ConfigDef, ConfigType
from connector.api.errors import DataException
from connector.api.lru import LRUCache
from connector.api.record import SinkRecord
from connector.api.schema import Schema, SchemaBuilder
from connector.api.struct import Struct
from smt.base import Transformation, copy_schema_basics, require_map, require_struct

SOURCE_FIELD = "source.field"
TARGET_FIELD = "target.field"


class CopyValue(Transformation):
    """Adds ``target.field`` holding the value (and schema) of ``source.field``.

    Works on a Struct (with a value schema) or a Map (schemaless). A null value
    passes through unchanged.
    """

    CONFIG_DEF = (
        ConfigDef()
        .define(SOURCE_FIELD, ConfigType.STRING, importance="high", doc="Source field name.")
        .define(TARGET_FIELD, ConfigType.STRING, importance="high", doc="Target field name.")
    )

    def __init__(self) -> None:
        # Both are required settings: set by configure().
        self.source_field = ""
        self.target_field = ""
        self._schema_cache: LRUCache | None = LRUCache()

    def _configure(self, config: dict) -> None:
        self.source_field = config[SOURCE_FIELD]
        self.target_field = config[TARGET_FIELD]
        self._schema_cache = LRUCache()

    def apply(self, record: SinkRecord) -> SinkRecord:
        if record.value is None:
            return record
        if record.value_schema is None:
            return self._apply_schemaless(record)
        return self._apply_with_schema(record)

    def _apply_schemaless(self, record: SinkRecord) -> SinkRecord:
        value = require_map(record.value, "copy value")
        updated = dict(value)
        updated[self.target_field] = value.get(self.source_field)
        return self._new_record(record, None, updated)

    def _apply_with_schema(self, record: SinkRecord) -> SinkRecord:
        value = require_struct(record.value, "copy value")
        schema = value.schema
        cache = self._schema_cache if self._schema_cache is not None else LRUCache()
        updated_schema = cache.get(schema)
        if updated_schema is None:
            updated_schema = self._updated_schema(schema)
            cache.put(schema, updated_schema)
        updated = Struct(updated_schema)
        for field in schema.fields():
            updated.put(field.name, value.get(field))
        updated.put(self.target_field, value.get(self.source_field))
        return self._new_record(record, updated_schema, updated)

    def _updated_schema(self, schema: Schema) -> Schema:
        source = schema.field(self.source_field)
        if source is None:
            raise DataException(f"Unknown field: {self.source_field}")
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields():
            builder.field(field.name, field.schema)
        builder.field(self.target_field, source.schema)
        return builder.build()

    @staticmethod
    def _new_record(record: SinkRecord, schema: Schema | None, value: object) -> SinkRecord:
        return record.new_record(
            record.topic, record.kafka_partition, record.key_schema, record.key,
            schema, value, record.timestamp,
        )

    def close(self) -> None:
        self._schema_cache = None
