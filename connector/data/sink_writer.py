"""A task's writer: routes converted records to per-table buffers and writes Parquet data files.

One :class:`SinkWriter` lives for one task. For each destination table it keeps
the table's committed offsets (records below them were already committed by an
earlier cycle and are skipped, which keeps multi-table commits idempotent after
a crash between two tables' commits), a converter bound to the table's current
schema, and a buffer of converted Arrow data flushed to files in large chunks.

A batch that needs the table to be created or its schema evolved is not
written at all: the writer reports what it needs and the task stops, so the
coordinator can apply one schema change and re-run from that batch.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute  # noqa: F401 - makes pa.compute available
from pyiceberg.exceptions import NoSuchTableError

from connector.api.errors import ConfigException, DataException
from connector.api.record import SinkRecord
from connector.api.struct import Struct
from connector.channel.offsets import committed_offsets
from connector.config.sink_config import SinkConfig
from connector.data.json_batch import JsonBatchConverter
from connector.data.record_converter import RecordConversionError, RecordConverter, registry_schema_note
from connector.data.router import RecordRouter
from connector.data.schema_update import IncompatibleSchemaChange, SchemaUpdates
from connector.data.type_mapping import iceberg_schema_for, infer_iceberg_schema
from connector.data.writer import write_data_files
from connector.records import value_schema_id

FLUSH_ROWS = 500_000


@dataclass
class SchemaNeeds:
    """What a batch needs before it can be written."""

    create: dict[str, Any] = field(default_factory=dict)  # table → pyiceberg Schema
    updates: dict[str, SchemaUpdates] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.create or self.updates)


class _TableState:
    """A destination table as this task sees it."""

    def __init__(self, table_name: str, table, config: SinkConfig):
        iceberg = config.iceberg
        self.name = table_name
        self.table = table
        self.offsets = committed_offsets(table, config.group_id, iceberg.table_config(table_name).commit_branch)
        options = dict(evolve=iceberg.evolve_schema, case_insensitive=iceberg.case_insensitive,
                       force_optional=iceberg.force_optional)
        self.record_converter = RecordConverter.for_table(table, **options)
        self.json_converter = JsonBatchConverter.for_table(table, **options)
        self.buffer: list[pa.Table] = []
        self.buffered_rows = 0
        self.files: list[Any] = []
        self.rows_written = 0


class SinkWriter:
    """Per-task conversion, routing and file writing for every destination table."""

    def __init__(self, config: SinkConfig, catalog, task_id: str):
        self.config = config
        self.catalog = catalog
        self.task_id = task_id
        self.router = RecordRouter(config.iceberg)
        self.tables: dict[str, _TableState | None] = {}

    # --- per-record path -------------------------------------------------------------

    def write_records(self, records: list[SinkRecord]) -> SchemaNeeds:
        """Route and convert ``records``; buffer them unless some table needs a schema change."""
        routed: dict[str, list[SinkRecord]] = {}
        for record in records:
            if record.value is None:  # tombstones are skipped, as the Iceberg sink does
                continue
            for table in self.router.route(record):
                routed.setdefault(table, []).append(record)
        needs = SchemaNeeds()
        converted: dict[str, pa.Table] = {}
        for table_name, table_records in routed.items():
            state = self._state(table_name, table_records[0], needs)
            if state is None:
                continue
            fresh = [r for r in table_records if r.original_kafka_offset >= state.offsets.get(
                (r.original_topic, r.original_kafka_partition), -1)]
            if fresh:
                result = self._convert_records(state, fresh)
                if result.updates:
                    needs.updates[table_name] = result.updates
                else:
                    converted[table_name] = result.table
        if not needs:
            for table_name, data in converted.items():
                self._buffer(self.tables[table_name], data)
        return needs

    def _convert_records(self, state: _TableState, records: list[SinkRecord]):
        try:
            return state.record_converter.convert([r.value for r in records], [r.value_schema for r in records])
        except RecordConversionError as exc:
            record = records[exc.index]
            if isinstance(exc.cause, IncompatibleSchemaChange):
                raise exc.cause.for_table(state.name, state.table, value_schema_id(record), record.describe()) from exc
            raise DataException(
                f"An error occurred converting record, {record.describe()}, table: {state.name}: "
                f"{exc.cause if getattr(exc, 'cause', None) else exc}"
            ) from exc

    # --- columnar path (schemaless JSON values, no SMTs, every record to every table) ---

    def write_json_values(self, batch: pa.RecordBatch) -> SchemaNeeds:
        """Convert a raw batch's JSON values column-wise into every static table."""
        values = batch.column("value")
        offsets = batch.column("offset")
        topic, partition = batch.column("topic")[0].as_py(), batch.column("partition")[0].as_py()
        needs = SchemaNeeds()
        converted: dict[str, pa.Table] = {}
        for table_name in self.router.static_tables:
            state = self._state_for_json(table_name, batch, needs)
            if state is None:
                continue
            keep = pa.compute.and_(
                pa.compute.is_valid(values),
                pa.compute.greater_equal(offsets, state.offsets.get((topic, partition), -1)),
            )
            chosen_values = values.filter(keep)
            if len(chosen_values) == 0:
                continue
            try:
                result = state.json_converter.convert(chosen_values.to_pylist())
            except RecordConversionError as exc:
                offset = offsets.filter(keep)[exc.index].as_py()
                raise DataException(
                    f"An error occurred converting record, topic: {topic}, partition: {partition}, "
                    f"offset: {offset}, table: {table_name}: {exc.cause if getattr(exc, 'cause', None) else exc}"
                ) from exc
            if result.updates:
                needs.updates[table_name] = result.updates
            else:
                converted[table_name] = result.table
        if not needs:
            for table_name, data in converted.items():
                self._buffer(self.tables[table_name], data)
        return needs

    def _state_for_json(self, table_name: str, batch: pa.RecordBatch, needs: SchemaNeeds) -> _TableState | None:
        if self.tables.get(table_name) is not None:
            return self.tables[table_name]
        values = batch.column("value")
        index = pa.compute.index(pa.compute.is_valid(values), True).as_py()  # first non-tombstone
        if index < 0:
            return None
        where = (f"topic: {batch.column('topic')[index].as_py()}, partition: "
                 f"{batch.column('partition')[index].as_py()}, offset: {batch.column('offset')[index].as_py()}")
        try:
            sample = json.loads(values[index].as_py())
        except ValueError as exc:
            raise DataException(f"An error occurred converting record, {where}: invalid JSON: {exc}") from exc
        return self._open(table_name, sample, None, needs, where)

    # --- columnar path with batch SMTs (connector/task.py converts; tables and buffers here) ---

    def existing_table(self, table_name: str) -> _TableState | None:
        """The state of ``table_name`` if the table exists (loaded on first use), else None."""
        state = self.tables.get(table_name)
        if state is None:
            try:
                table = self.catalog.load_table(table_name)
            except NoSuchTableError:
                return None
            state = self.tables[table_name] = _TableState(table_name, table, self.config)
        return state

    def buffer_converted(self, converted: dict[str, pa.Table]) -> None:
        """Buffer tables already converted to the schemas of their (existing) destination tables."""
        for table_name, data in converted.items():
            self._buffer(self.tables[table_name], data)

    # --- tables ----------------------------------------------------------------------

    def _state(self, table_name: str, sample: SinkRecord, needs: SchemaNeeds) -> _TableState | None:
        if table_name in self.tables and self.tables[table_name] is not None:
            return self.tables[table_name]
        return self._open(table_name, sample.value, sample.value_schema, needs, sample.describe())

    def _open(self, table_name: str, sample_value, sample_schema, needs: SchemaNeeds,
              where: str) -> _TableState | None:
        try:
            table = self.catalog.load_table(table_name)
        except NoSuchTableError:
            if not self.config.iceberg.auto_create:
                raise ConfigException(
                    f"Table {table_name} does not exist; create it or set "
                    f"iceberg.tables.auto-create-enabled=true"
                ) from None
            needs.create[table_name] = self._schema_for_new_table(table_name, sample_value, sample_schema, where)
            note = registry_schema_note(sample_schema)  # which registry schema creates the table
            if note is not None:
                needs.updates[table_name] = note
            return None
        state = _TableState(table_name, table, self.config)
        self.tables[table_name] = state
        return state

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

    # --- buffering and files -----------------------------------------------------------

    def _buffer(self, state: _TableState, data: pa.Table) -> None:
        if data is None or data.num_rows == 0:
            return
        state.buffer.append(data)
        state.buffered_rows += data.num_rows
        if state.buffered_rows >= FLUSH_ROWS:
            self._flush(state)

    def _flush(self, state: _TableState) -> None:
        if not state.buffer:
            return
        data = pa.concat_tables(state.buffer)
        state.buffer, state.buffered_rows = [], 0
        state.files.extend(write_data_files(state.table, data, task_id=self.task_id))
        state.rows_written += data.num_rows

    def close(self) -> tuple[dict[str, list[Any]], dict[str, int]]:
        """Flush every buffer; the data files and row counts written per table."""
        files: dict[str, list[Any]] = {}
        rows: dict[str, int] = {}
        for table_name, state in self.tables.items():
            if state is None:
                continue
            self._flush(state)
            if state.files:
                files[table_name] = state.files
                rows[table_name] = state.rows_written
        return files, rows
