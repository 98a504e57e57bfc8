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
from smt.base import StructOrMapTransformation, ValueSide, require_map, require_struct, struct_builder_with_fields
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


#: Debezium's ``op`` codes that are not inserts (``c``, ``r`` and anything else are).
_OPERATIONS = {"u": OP_UPDATE, "d": OP_DELETE}


def map_operation(op: str) -> str:
    """Debezium ``u`` -> ``U``, ``d`` -> ``D``; ``c``, ``r`` and anything else -> ``I``."""
    return _OPERATIONS.get(op, OP_INSERT)


class DebeziumTransform(ValueSide, StructOrMapTransformation):
    """Promote the Debezium row image to the top level and add ``_cdc`` metadata."""

    CONFIG_DEF = ConfigDef().define(
        CDC_TARGET_PATTERN, ConfigType.STRING, None, importance="medium",
        doc="Pattern to use for setting the CDC target field value ({db} and {table} are replaced).",
    )

    def __init__(self) -> None:
        self.cdc_target_pattern: str | None = None
        self._schema_cache: LRUCache[tuple[Schema, Schema | None], tuple[Schema, Schema]] = LRUCache()

    def _configure(self, config: dict) -> None:
        self.cdc_target_pattern = config[CDC_TARGET_PATTERN]

    # --- with a schema -------------------------------------------------------------

    def apply_with_schema(self, record: SinkRecord) -> SinkRecord:
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
        return self.new_record(record, new_schema, new_value)

    def _schemas(self, payload_schema: Schema, key_schema: Schema | None) -> tuple[Schema, Schema]:
        """(the ``_cdc`` schema, the new value schema), built once per payload and key schema."""
        return self._schema_cache.get_or_compute((payload_schema, key_schema), _build_schemas)

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

    def apply_schemaless(self, record: SinkRecord) -> SinkRecord | None:
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
        return self.new_record(record, None, new_value)

    def _target(self, db: str, table: str) -> str:
        if not self.cdc_target_pattern:
            return f"{db}.{table}"
        return self.cdc_target_pattern.replace(DB_PLACEHOLDER, db).replace(TABLE_PLACEHOLDER, table)


def _build_schemas(schemas: tuple[Schema, Schema | None]) -> tuple[Schema, Schema]:
    payload_schema, key_schema = schemas
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
    return cdc_schema, struct_builder_with_fields(payload_schema).field(COL_CDC, cdc_schema).build()


def _required(value: Any, name: str, record: SinkRecord) -> Any:
    if value is None:
        raise DataException(f"Debezium record has no '{name}' ({record.describe()})")
    return value
