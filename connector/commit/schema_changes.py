"""Applying tasks' schema needs to the catalog: create missing tables, evolve existing ones.

The coordinator calls this once per round for the merged needs of all tasks,
so concurrent requests from several tasks end in one table creation or one
schema update per table. The Schema Registry ids noted on the updates (the
schemas that asked for them, or that a new table was created from) are
recorded in the table's properties: with the schema update in one commit, or
right after a table's creation (docs/schema-evolution.md).
"""

from __future__ import annotations

import logging
from typing import Any, Mapping

from connector.config.sink_config import SinkConfig
from connector.data.convert.changes import no_id_columns
from connector.data.convert.schema_update import SchemaUpdates, apply_schema_updates
from connector.data.write.table_factory import ensure_table

log = logging.getLogger(__name__)


def apply_schema_needs(catalog, config: SinkConfig, creates: Mapping[str, Any],
                       updates: Mapping[str, SchemaUpdates]) -> None:
    """Create the tables in ``creates`` (table → Iceberg schema), then apply ``updates``.

    An upsert or CDC table's id columns become its identifier fields (it must have some); an
    append-only table gets none, as the Java sink creates it.
    """
    for table, schema in creates.items():
        table_config = config.iceberg.table_config(table)
        upsert = config.iceberg.upsert_table(table)
        if upsert and not table_config.id_columns:
            raise no_id_columns(table)
        ensure_table(catalog, table, sample_schema=schema, partition_by=list(table_config.partition_by),
                     properties=config.iceberg.auto_create_props, auto_create=True,
                     id_columns=table_config.id_columns if upsert else (),
                     case_sensitive=not config.iceberg.case_insensitive)
        log.info("Created table %s", table)
    for table, update in updates.items():
        if apply_schema_updates(catalog.load_table(table), update):
            ids = update.registry_schema_ids
            log.info("Evolved the schema of %s%s", table, f" (registry schema ids {ids})" if ids else "")
