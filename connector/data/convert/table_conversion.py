"""The rows routed to each table → rows in the table's schema, or the schema changes they need first.

For each table: open it (or, for the per-record strategy, ask for it to be
created), drop the rows below the table's committed offset of their source
partition (:func:`~connector.data.table_rows.not_committed`), convert the
rest to the table's Arrow schema, and for an upsert/CDC table add each row's
position and delete flag (:mod:`connector.data.convert.cdc_ops`).

A batch that needs a table created or evolved buffers nothing: the caller
applies :class:`~connector.data.write.table_writer.SchemaNeeds`, calls
``TaskPipeline.forget_tables`` and processes the batch again. Only the
per-record strategy may ask (``may_ask``); a columnar one declines instead,
so tables and schema changes always come from the per-record result.

With error tolerance a record that fails its conversion (or has an invalid
upsert operation or key) is reported as a ``TASK_PUT`` failure and taken out
of every table it was routed to: a record reaches the tables or the
dead-letter queue, never both.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import pyarrow as pa

from connector.api.declined import Declined
from connector.api.errors import ConnectException, DataException
from connector.config.sink_config import SinkConfig
from connector.data.convert.cdc_ops import row_changes
from connector.data.convert.collapse import positions_table
from connector.data.convert.record_converter import RecordConversionError, name_mapping_of
from connector.data.convert.schema_update import IncompatibleSchemaChange
from connector.data.schema_ids import RegistrySchemaIds
from connector.data.table_rows import MAPS, RECORDS, TYPED, TableRows, not_committed
from connector.data.write.table_writer import SchemaNeeds, TableState, TableWriters
from connector.tolerance.errant import SINK_TASK_CLASS, TASK_PUT, ErrorHandler, mark
from converters.batch.json_screen import json_converter_value
from converters.batch.typed import to_table

#: With error tolerance, what fails is split in halves down to this many rows: a declined columnar batch
#: (whose pieces of this size go per record), and the records after a failing one in a per-record conversion.
SPLIT_ROWS = 256

#: One table's converted rows of a batch: (table, rows in its schema, their positions and delete flags for
#: an upsert/CDC table (``connector.data.convert.collapse.POSITIONS_SCHEMA``) or None).
Converted = tuple[str, pa.Table, Optional[pa.Table]]


class TableConversion:
    """Converts the rows a batch routed to each table, for one task."""

    def __init__(self, config: SinkConfig, tables: TableWriters, errors: ErrorHandler,
                 schema_ids: RegistrySchemaIds):
        self.config = config
        self.tables = tables
        self.errors = errors
        self.schema_ids = schema_ids

    def convert(self, routed: dict[str, TableRows], *, may_ask: bool) -> tuple[SchemaNeeds, list[Converted]]:
        """Convert each table's rows: (the schema changes they need, or the tables to buffer).

        ``may_ask``: whether this strategy may ask for tables and schema changes
        (otherwise it declines, and the per-record strategy asks). With error
        tolerance, a record that fails for one table is taken out of every table.
        """
        while True:
            failed_before = len(self.errors.failed)
            needs = SchemaNeeds()
            converted: list[Converted] = []
            for table_name, rows in routed.items():
                rows = rows.without(self.errors.failed)
                if len(rows) == 0:
                    continue
                state = self._open(table_name, rows, needs, may_ask)
                if state is None:
                    continue
                mask = not_committed(rows, state.offsets)
                fresh = rows if mask is None else rows.filter(mask)
                if len(fresh) == 0:
                    continue
                data, updates = self._convert(state, fresh)
                if updates:
                    needs.updates[table_name] = updates
                elif data is not None and state.upsert:
                    # The converted rows are fresh's minus the ones their conversion just failed (and only
                    # those: rows that failed earlier, for any table, were taken out of ``rows`` above).
                    keyed = self._keyed(state, fresh.without(self.errors.failed), data)
                    if keyed is not None:
                        converted.append((table_name, *keyed))
                elif data is not None:
                    converted.append((table_name, data, None))
            # A record that failed for a later table must leave the earlier ones too: convert again.
            if len(self.errors.failed) == failed_before or len(routed) == 1:
                return (needs, []) if needs else (needs, converted)

    def _open(self, table_name: str, rows: TableRows, needs: SchemaNeeds, may_ask: bool) -> TableState | None:
        if not may_ask:
            state = self.tables.existing(table_name)
            if state is None and table_name in self.tables.missing:  # skipped (dynamic, no auto-create)
                self.tables.missing.skip(table_name, len(rows))
                return None
            if state is None:
                raise Declined("table to create")
            return state
        return self.tables.open(table_name, lambda: _sample(rows, skip_bad=self.errors.tolerant), needs,
                                len(rows))

    # --- upsert keys ---------------------------------------------------------------------------

    def _keyed(self, state: TableState, rows: TableRows, data: pa.Table) -> tuple[pa.Table, pa.Table] | None:
        """An upsert table's converted rows with their positions and delete flags, minus the rows whose
        operation or key is invalid (each reported as its record's failure, so tolerated ones go to the
        DLQ and leave every table); None when no row is left."""
        if len(rows) != data.num_rows:
            raise ConnectException(f"Converted {data.num_rows} rows for table {state.name} from {len(rows)} "
                                   f"records")
        changes = row_changes(data, state.op_column, state.id_columns)
        deleted = changes.deleted
        if changes.bad:
            for index, why in changes.bad:
                error = DataException(f"An error occurred converting record, {rows.where(index)}, "
                                      f"table: {state.name}: {why}")
                self.errors.fail(mark(error, TASK_PUT, SINK_TASK_CLASS), rows.coordinates(index))
            keep = np.ones(data.num_rows, dtype=bool)
            keep[[index for index, _ in changes.bad]] = False
            mask = pa.array(keep)
            rows, data, deleted = rows.filter(mask), data.filter(mask), deleted.filter(mask)
            if data.num_rows == 0:
                return None
        return data, positions_table(rows.topics, rows.partitions, rows.offsets, deleted)

    # --- conversion, by the rows' form ---------------------------------------------------------

    def _convert(self, state: TableState, rows: TableRows) -> tuple[pa.Table | None, Any]:
        """(the rows in the table's schema, None) or (None, the schema updates they need)."""
        if rows.form != RECORDS:  # column-wise: anything but the exact per-record result declines
            try:
                if rows.form == MAPS:
                    return state.json_converter.convert_struct(rows.values), None
                if rows.form == TYPED:
                    return self._convert_typed(state, rows), None
                return state.json_converter.convert_fast(rows.values), None
            except Declined as declined:
                raise Declined(f"conversion ({declined.reason})") from declined
        if self.errors.tolerant:
            return self._convert_tolerantly(state, rows)
        try:
            result = state.record_converter.convert([r.value for r in rows.values],
                                                    [r.value_schema for r in rows.values])
        except RecordConversionError as exc:
            raise self._conversion_error(state, rows, exc) from exc
        return (None, result.updates) if result.updates else (result.table, None)

    def _convert_tolerantly(self, state: TableState, rows: TableRows) -> tuple[pa.Table | None, Any]:
        """Per-record conversion that skips (reports) the records that fail: split around each failure."""
        values = [r.value for r in rows.values]
        tables: list[pa.Table] = []
        updates = None

        def solve(indices: list[int]) -> None:
            nonlocal updates
            if not indices:
                return
            try:
                result = state.record_converter.convert([values[i] for i in indices])
            except RecordConversionError as exc:
                bad = indices[exc.index]
                error = self._conversion_error(state, rows, RecordConversionError(bad, exc.cause))
                cause = exc.cause if isinstance(exc.cause, ConnectException) else DataException(
                    f"{type(exc.cause).__name__}: {exc.cause}")
                self.errors.fail(mark(error, TASK_PUT, SINK_TASK_CLASS, cause), rows.coordinates(bad))
                before, after = indices[:exc.index], indices[exc.index + 1:]
                solve(before)
                if len(after) > SPLIT_ROWS:
                    half = len(after) // 2
                    solve(after[:half])
                    solve(after[half:])
                else:
                    solve(after)
                return
            if result.updates:
                updates = result.updates if updates is None else updates.merge(result.updates)
            elif result.table is not None:
                tables.append(result.table)

        solve(list(range(len(values))))
        if updates:
            return None, updates
        if not tables:
            return None, None
        return (tables[0] if len(tables) == 1 else pa.concat_tables(tables)), None

    def _convert_typed(self, state: TableState, rows: TableRows) -> pa.Table:
        """Connect-typed rows in the table's schema; Declined where the per-record result could differ."""
        if self.config.iceberg.case_insensitive or name_mapping_of(state.table):
            raise Declined("columns looked up case-insensitively or through a name mapping")
        try:
            updates = state.record_converter.schema_updates_for(rows.schema)
        except IncompatibleSchemaChange as exc:
            raise Declined("the schema does not fit the table") from exc
        if updates:
            raise Declined("schema changes")
        return to_table(rows.values, rows.schema, state.table.schema())

    def _conversion_error(self, state: TableState, rows: TableRows, exc: RecordConversionError) -> Exception:
        cause = getattr(exc, "cause", None)
        if isinstance(cause, IncompatibleSchemaChange) and rows.form == RECORDS:
            record = rows.values[exc.index]
            return cause.for_table(state.name, state.table, self.schema_ids.of_record(record), record.describe())
        return DataException(
            f"An error occurred converting record, {rows.where(exc.index)}, table: {state.name}: {cause or exc}"
        )


def _sample(rows: TableRows, skip_bad: bool = False) -> tuple[Any, Any, str]:
    """(value, Connect schema, where) of the first row, from which a new table's schema is derived.

    ``skip_bad`` (error tolerance): the first raw JSON row that is an object as JsonConverter reads
    it (the bad ones are reported when the rows are converted). Declined when there is none.
    """
    if rows.form == RECORDS:
        record = rows.values[0]
        return record.value, record.value_schema, record.describe()
    for index in range(len(rows) if skip_bad else 1):
        try:
            value = json_converter_value(rows.values[index].as_py())
        except DataException:
            continue
        if isinstance(value, dict):
            return value, None, rows.where(index)
    # The per-record path fails for the row (or sends it to the DLQ) and samples the next good one.
    raise Declined("no JSON object JsonConverter reads to sample a new table from")
