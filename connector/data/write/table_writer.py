"""A task's destination tables: their committed offsets, converters, buffers and data files.

One :class:`TableWriters` lives for one task. For each destination table it
keeps the table's committed offsets (records below them were committed by an
earlier cycle and are dropped, which keeps multi-table commits idempotent
after a crash between two tables' commits), converters bound to the table's
current schema, and a buffer of converted Arrow data flushed to Parquet files
in large chunks.

A table that does not exist yet is not created here: the task reports what it
needs (:class:`SchemaNeeds`) and whoever drives the task (the coordinator, or
the Spark sink) creates or evolves it, then calls :meth:`TableWriters.forget`
so the table is reloaded with its new schema.

Which offsets a table has committed is the commit protocol's business
(``connector.channel``): it is handed in as ``committed_offsets``.

Upsert and CDC tables (``IcebergConfig.upsert_table``) buffer each row's
source position and delete flag along with it; every flush collapses the
buffer to one row per key (:mod:`connector.data.convert.collapse`), writes the
surviving rows and records a :class:`~connector.data.convert.changes.ChangeSegment`
for the commit. Append-only tables buffer rows only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import pyarrow as pa
from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.table import Table

from connector.api.errors import ConfigException, ConnectException, DataException
from connector.api.record import TopicPartition
from connector.api.struct import Struct
from connector.config.sink_config import SinkConfig
from connector.data.convert.cdc_ops import op_column
from connector.data.convert.changes import ChangeSegment, id_column_paths
from connector.data.convert.collapse import collapse
from connector.data.convert.json_rows import JsonBatchConverter
from connector.data.convert.record_converter import RecordConverter, registry_schema_note
from connector.data.convert.schema_update import SchemaUpdates
from connector.data.convert.type_mapping import iceberg_schema_for, infer_iceberg_schema
from connector.data.missing_tables import MissingTables
from connector.data.schema_ids import RegistrySchemaIds
from connector.data.write.writer import write_data_files

FLUSH_ROWS = 500_000

#: (table name, loaded table) → the next offsets the table has committed, per source partition.
CommittedOffsets = Callable[[str, Table], dict[TopicPartition, int]]


@dataclass
class SchemaNeeds:
    """What a batch needs before it can be written: tables to create, schema updates to apply."""

    create: dict[str, Any] = field(default_factory=dict)  # table → pyiceberg Schema
    updates: dict[str, SchemaUpdates] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.create or self.updates)

    def merge(self, other: "SchemaNeeds") -> None:
        """Add ``other``'s needs (the first creation request of a table wins; updates merge)."""
        for table, schema in other.create.items():
            self.create.setdefault(table, schema)
        for table, update in other.updates.items():
            self.updates[table] = update if table not in self.updates else self.updates[table].merge(update)

    @property
    def tables(self) -> list[str]:
        return list(dict.fromkeys([*self.create, *self.updates]))


class TableState:
    """A destination table as this task sees it."""

    def __init__(self, table_name: str, table: Table, config: SinkConfig, offsets: dict[TopicPartition, int],
                 schema_ids: RegistrySchemaIds):
        iceberg = config.iceberg
        self.name = table_name
        self.table = table
        self.offsets = offsets
        options = dict(evolve=iceberg.evolve_schema, case_insensitive=iceberg.case_insensitive,
                       force_optional=iceberg.force_optional)
        self.record_converter = RecordConverter.for_table(table, schema_ids=schema_ids, **options)
        self.json_converter = JsonBatchConverter.for_table(table, **options)
        self.buffer: list[pa.Table] = []
        self.buffered_rows = 0
        self.files: list[Any] = []
        self.rows_written = 0
        # Upsert/CDC tables only: the key and op columns, each buffered row's position, the flushes' segments.
        self.upsert = iceberg.upsert_table(table_name)
        self.id_columns = id_column_paths(iceberg, table_name, table) if self.upsert else ()
        self.op_column = op_column(iceberg, table_name, table) if self.upsert else None
        self.positions: list[pa.Table] = []
        self.changes: list[ChangeSegment] = []


@dataclass
class Written:
    """What a task's tables wrote, per table: data files, rows, and (upsert/CDC tables only) change segments.

    Unpacks as ``(data_files, records_written)`` for callers that need no more.
    """

    data_files: dict[str, list[Any]] = field(default_factory=dict)
    records_written: dict[str, int] = field(default_factory=dict)
    changes: dict[str, list[ChangeSegment]] = field(default_factory=dict)

    def __iter__(self):
        return iter((self.data_files, self.records_written))


class TableWriters:
    """The destination tables of one task, loaded on first use."""

    def __init__(self, config: SinkConfig, catalog, task_id: str, *, committed_offsets: CommittedOffsets,
                 schema_ids: RegistrySchemaIds):
        self.config = config
        self.catalog = catalog
        self.task_id = task_id
        self.committed_offsets = committed_offsets
        self.schema_ids = schema_ids
        self.tables: dict[str, TableState] = {}
        self._forgotten: list[TableState] = []  # dropped by forget(), with the files they wrote
        self.missing = MissingTables(task_id)  # dynamic routing to tables that may not be created

    # --- tables ----------------------------------------------------------------------

    def existing(self, table_name: str) -> TableState | None:
        """The state of ``table_name`` if the table exists (loaded on first use), else None."""
        state = self.tables.get(table_name)
        if state is None:
            try:
                table = self.catalog.load_table(table_name)
            except NoSuchTableError:
                return None
            offsets = self.committed_offsets(table_name, table)
            state = self.tables[table_name] = TableState(table_name, table, self.config, offsets, self.schema_ids)
        return state

    def open(
        self, table_name: str, sample: Callable[[], tuple[Any, Any, str]], needs: SchemaNeeds, records: int = 1
    ) -> TableState | None:
        """The table's state; None if it must be created first (then ``needs`` says how), or when the
        ``records`` routed to it are skipped (dynamic routing to a table that may not be created).

        ``sample()`` gives (value, Connect schema or None, where) of the first record for
        the table, from which a new table's schema is derived.
        """
        state = self.existing(table_name)
        if state is not None:
            return state
        if not self.config.iceberg.auto_create and self.config.iceberg.dynamic_enabled:
            self.missing.skip(table_name, records)
            return None
        if not self.config.iceberg.auto_create:
            raise ConfigException(
                f"Table {table_name} does not exist; create it or set iceberg.tables.auto-create-enabled=true"
            )
        value, schema, where = sample()
        needs.create[table_name] = self._schema_for_new_table(table_name, value, schema, where)
        note = registry_schema_note(schema, self.schema_ids)  # which registry schema creates the table
        if note is not None:
            needs.updates[table_name] = note
        return None

    def _schema_for_new_table(self, table_name: str, value, schema, where: str):
        force = self.config.iceberg.force_optional
        if not isinstance(value, (dict, Struct)):
            raise DataException(
                f"An error occurred converting record, {where}: Cannot convert type "
                f"{type(value).__name__}: the record value must be a struct or a map (JSON object)"
            )
        if schema is not None:
            return iceberg_schema_for(schema, force_optional=force)
        inferred = infer_iceberg_schema(value, force_optional=force)
        if inferred is None or len(inferred.fields) == 0:
            raise DataException(f"Unable to create table {table_name} from empty object ({where})")
        return inferred

    def forget(self, names) -> None:
        """Reload these tables on next use (after their schema changed).

        Rows already buffered for such a table are written first, against the
        schema they were converted with, and their files are kept for :meth:`close`.
        """
        for name in names:
            state = self.tables.pop(name, None)
            if state is not None:
                self._flush(state)
                self._forgotten.append(state)

    # --- buffering and files -----------------------------------------------------------

    def buffer(self, table_name: str, data: pa.Table, positions: pa.Table | None = None) -> None:
        """Buffer rows already converted to the table's schema; flush to files when the buffer is large.

        ``positions`` (upsert/CDC tables, required there): each row's source position and delete flag
        (``connector.data.convert.collapse.POSITIONS_SCHEMA``), aligned with ``data``.
        """
        state = self.tables[table_name]
        if data.num_rows == 0:
            return
        if state.upsert:
            if positions is None or positions.num_rows != data.num_rows:
                raise ConnectException(f"Rows for upsert table {table_name} came without their positions")
            state.positions.append(positions)
        state.buffer.append(data)
        state.buffered_rows += data.num_rows
        if state.buffered_rows >= FLUSH_ROWS:
            self._flush(state)

    def _flush(self, state: TableState) -> None:
        """Write the buffer; for an upsert table, its rows collapsed to one per key, and record the segment."""
        if not state.buffer:
            return
        data = pa.concat_tables(state.buffer)
        state.buffer, state.buffered_rows = [], 0
        keys = None
        if state.upsert:
            collapsed = collapse(data, pa.concat_tables(state.positions), state.id_columns)
            state.positions = []
            data, keys = collapsed.rows, collapsed.keys
        files = write_data_files(state.table, data, task_id=self.task_id, write_props=self.config.iceberg.write_props)
        state.files.extend(files)
        state.rows_written += data.num_rows
        if keys is not None:
            state.changes.append(ChangeSegment(files=files, keys=keys))

    def close(self) -> Written:
        """Flush every buffer; what was written per table (tables in first-flush order, segments in flush order)."""
        written = Written()
        self.missing.close()
        for state in [*self._forgotten, *self.tables.values()]:
            self._flush(state)
            name = state.name
            if state.files:
                written.data_files[name] = written.data_files.get(name, []) + state.files
                written.records_written[name] = written.records_written.get(name, 0) + state.rows_written
            if state.changes:
                written.changes[name] = written.changes.get(name, []) + state.changes
        return written
