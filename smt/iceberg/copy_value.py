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
from connector.api.schema import Schema
from smt.base import (
    StructOrMapTransformation,
    ValueSide,
    require_map,
    require_struct,
    struct_builder_with_fields,
    struct_with_fields_of,
)

SOURCE_FIELD = "source.field"
TARGET_FIELD = "target.field"


class CopyValue(ValueSide, StructOrMapTransformation):
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

    def apply_schemaless(self, record: SinkRecord) -> SinkRecord:
        value = require_map(record.value, "copy value")
        updated = dict(value)
        updated[self.target_field] = value.get(self.source_field)
        return self.new_record(record, None, updated)

    def apply_with_schema(self, record: SinkRecord) -> SinkRecord:
        value = require_struct(record.value, "copy value")
        cache = self._schema_cache if self._schema_cache is not None else LRUCache()
        updated_schema = cache.get_or_compute(value.schema, self._updated_schema)
        updated = struct_with_fields_of(value, updated_schema)
        updated.put(self.target_field, value.get(self.source_field))
        return self.new_record(record, updated_schema, updated)

    def _updated_schema(self, schema: Schema) -> Schema:
        source = schema.field(self.source_field)
        if source is None:
            raise DataException(f"Unknown field: {self.source_field}")
        return struct_builder_with_fields(schema).field(self.target_field, source.schema).build()

    def close(self) -> None:
        self._schema_cache = None
