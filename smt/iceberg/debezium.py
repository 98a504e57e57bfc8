"""``DebeziumTransform``: flatten a Debezium change event for the Iceberg sink.

``org.apache.iceberg.connect.transforms.DebeziumTransform``. The row image
(``after``, or ``before`` for a delete) becomes the record value, and a
``_cdc`` field describes the change: ``op`` (I/U/D), ``ts``, ``offset``,
``source``, ``target`` and, when there is one, the record ``key``.
"""

from __future__ import annotations

import logging
from typing import Any

from connector.api.config_def import ConfigDef, ConfigType
from connector.api.errors import DataException
from connector.api.java.value_of import java_str
from connector.api.logical import Timestamp
from connector.api.lru import LRUCache
from connector.api.record import SinkRecord
from connector.api.schema import Schema, SchemaBuilder
from connector.api.struct import Struct
from smt.base import Transformation, copy_schema_basics, require_map, require_struct
from smt.iceberg._util import (
    COL_CDC,
    COL_KEY,
    COL_OFFSET,
    COL_OP,
    COL_SOURCE,
    COL_TARGET,
    COL_TS,
    OP_DELETE,
    OP_INSERT,
    OP_UPDATE,
    struct_get,
)

LOG = logging.getLogger(__name__)

CDC_TARGET_PATTERN = "cdc.target.pattern"
DB_PLACEHOLDER = "{db}"
TABLE_PLACEHOLDER = "{table}"


def map_operation(op: str) -> str:
    """Debezium ``u`` -> ``U``, ``d`` -> ``D``; ``c``, ``r`` and anything else -> ``I``."""
    if op == "u":
        return OP_UPDATE
    if op == "d":
        return OP_DELETE
    return OP_INSERT


class DebeziumTransform(Transformation):
    """Promote the Debezium row image to the top level and add ``_cdc`` metadata."""

    CONFIG_DEF = ConfigDef().define(
        CDC_TARGET_PATTERN, ConfigType.STRING, None, importance="medium",
        doc="Pattern to use for setting the CDC target field value ({db} and {table} are replaced).",
    )

    def __init__(self) -> None:
        self.cdc_target_pattern: str | None = None
        self._schema_cache: LRUCache[Any, Any] = LRUCache()

    def _configure(self, config: dict) -> None:
        self.cdc_target_pattern = config[CDC_TARGET_PATTERN]

    def apply(self, record: SinkRecord) -> SinkRecord | None:
        if record.value is None:
            return record
        if record.value_schema is None:
            return self._apply_schemaless(record)
        return self._apply_with_schema(record)

    # --- with a schema -------------------------------------------------------------

    def _apply_with_schema(self, record: SinkRecord) -> SinkRecord:
        value = require_struct(record.value, "Debezium transform")
        op = map_operation(java_str(_required(struct_get(value, "op"), "op", record)))

        image = "before" if op == OP_DELETE else "after"
        image_field = value.schema.field(image)
        if image_field is None:
            raise DataException(f"Debezium record has no '{image}' field ({record.describe()})")
        payload_schema = image_field.schema
        payload = require_struct(value.get(image_field), "Debezium transform")

        ts_ms = _required(struct_get(value, "ts_ms"), "ts_ms", record)
        cdc_schema, new_schema = self._schemas(payload_schema, record.key_schema)
        cdc = Struct(cdc_schema)
        cdc.put(COL_OP, op)
        cdc.put(COL_TS, Timestamp.to_logical(Timestamp.SCHEMA, ts_ms))
        cdc.put(COL_OFFSET, record.kafka_offset)
        db, table = self._db_and_table_from_struct(require_struct(struct_get(value, "source"), "Debezium transform"))
        cdc.put(COL_SOURCE, f"{db}.{table}")
        cdc.put(COL_TARGET, self._target(db, table))
        if record.key_schema is not None:
            cdc.put(COL_KEY, record.key)

        new_value = Struct(new_schema)
        for field in payload_schema.fields():
            new_value.put(field.name, payload.get(field))
        new_value.put(COL_CDC, cdc)
        return record.new_record(
            record.topic, record.kafka_partition, record.key_schema, record.key,
            new_schema, new_value, record.timestamp,
        )

    def _schemas(self, payload_schema: Schema, key_schema: Schema | None) -> tuple[Schema, Schema]:
        cache_key = (payload_schema, key_schema)
        cached = self._schema_cache.get(cache_key)
        if cached is None:
            builder = (
                SchemaBuilder.struct()
                .field(COL_OP, Schema.STRING_SCHEMA)
                .field(COL_TS, Timestamp.SCHEMA)
                .field(COL_OFFSET, Schema.OPTIONAL_INT64_SCHEMA)
                .field(COL_SOURCE, Schema.STRING_SCHEMA)
                .field(COL_TARGET, Schema.STRING_SCHEMA)
            )
            if key_schema is not None:
                builder.field(COL_KEY, key_schema)
            cdc_schema = builder.build()
            value_builder = copy_schema_basics(payload_schema, SchemaBuilder.struct())
            for field in payload_schema.fields():
                value_builder.field(field.name, field.schema)
            value_builder.field(COL_CDC, cdc_schema)
            cached = (cdc_schema, value_builder.build())
            self._schema_cache.put(cache_key, cached)
        return cached

    @staticmethod
    def _db_and_table_from_struct(source: Struct) -> tuple[str, str]:
        # Postgres (and others) carry a schema: it wins over the database name.
        if source.schema.field("schema") is not None:
            db = source.get("schema")
        else:
            db = struct_get(source, "db")
        if source.schema.field("table") is not None:
            table = source.get("table")
        else:
            # Debezium MongoDB names the collection (after MongoDebeziumTransform).
            table = struct_get(source, "collection")
        return java_str(db), java_str(table)

    # --- schemaless ----------------------------------------------------------------

    def _apply_schemaless(self, record: SinkRecord) -> SinkRecord | None:
        value = require_map(record.value, "Debezium transform")
        op = map_operation(java_str(_required(value.get("op"), "op", record)))
        payload = value.get("before" if op == OP_DELETE else "after")
        if not isinstance(payload, dict):
            LOG.debug("Unable to transform Debezium record, payload is not a map, skipping")
            return None

        cdc: dict = {COL_OP: op, COL_TS: value.get("ts_ms"), COL_OFFSET: record.kafka_offset}
        source = require_map(value.get("source"), "Debezium transform")
        if source.get("schema") is not None:
            db = source["schema"]
        else:
            db = source.get("db")
        table = source["table"] if source.get("table") is not None else source.get("collection")
        db, table = java_str(db), java_str(table)
        cdc[COL_SOURCE] = f"{db}.{table}"
        cdc[COL_TARGET] = self._target(db, table)
        if isinstance(record.key, dict):
            cdc[COL_KEY] = record.key

        new_value = dict(payload)
        new_value[COL_CDC] = cdc
        return record.new_record(
            record.topic, record.kafka_partition, record.key_schema, record.key,
            None, new_value, record.timestamp,
        )

    def _target(self, db: str, table: str) -> str:
        if not self.cdc_target_pattern:
            return f"{db}.{table}"
        return self.cdc_target_pattern.replace(DB_PLACEHOLDER, db).replace(TABLE_PLACEHOLDER, table)


def _required(value: Any, name: str, record: SinkRecord) -> Any:
    if value is None:
        raise DataException(f"Debezium record has no '{name}' ({record.describe()})")
    return value
