"""The task pipeline: one raw Kafka batch → rows buffered for each destination table.

::

    raw batch (Arrow: topic, partition, offset, timestamp, key, value, headers)
      → decode + transform   one strategy per batch (below)
      → route                RecordRouter: per table, the rows it gets
      → drop committed       rows below the table's committed offset of their source partition
      → convert              to the table's Arrow schema, or report SchemaNeeds
      → buffer               TableWriters: Parquet files, flushed in large chunks

Decode strategies, chosen once per task from the config and tried per batch:

* ``columnar``: schemaless JSON values, no SMTs, every record to every table.
  The raw JSON goes straight to each table's schema (``JsonBatchConverter``).
* ``columnar with batch SMTs``: schemaless JSON values and an SMT chain with
  batch forms (``smt.batch``), or routing by a field. The values are parsed to
  Arrow maps once, transformed and routed column-wise; a stage without a batch
  form runs record by record for that stage only (``smt.batch.records``).
* ``columnar Avro``: Confluent Avro values (``AvroConverter``), no SMTs, every
  record to every table. The values of a batch are decoded at once by a
  native Avro reader into Arrow columns (``connector/data/avro_batch.py``).
* ``columnar JSON with schemas``: JsonConverter envelopes
  (``schemas.enable=true``), no SMTs, every record to every table. The
  payloads of a batch whose envelopes share one schema are read at once by
  Arrow's JSON reader, typed by that schema (``connector/data/json_envelope.py``).
* ``columnar JSON Schema``: Confluent JSON Schema values
  (``JsonSchemaConverter``), no SMTs, every record to every table. The
  payloads of a batch framed with one schema id are read the same way, typed
  by the Connect schema of the registered JSON schema
  (``connector/data/json_schema_batch.py``; the JSON rules shared with the
  envelopes: ``connector/data/json_payloads.py``).

  All three go into each table's schema through ``connector/data/typed_batch.py``.
* ``per-record``: Connect's own contract: converters → ``SinkRecord`` → SMT
  chain → route → ``RecordConverter``. Every other configuration, and every
  batch a columnar strategy declines.

A columnar strategy declines a batch (:class:`Declined`) whenever it cannot
promise the per-record result — including every error, table creation and
(for batch SMTs) schema change, so those always come from the per-record
strategy — and :attr:`TaskPipeline.batches` counts each batch by the strategy
that took it and each decline by its reason.

A batch that needs a table created or evolved buffers nothing: the caller
applies :class:`SchemaNeeds`, calls :meth:`TaskPipeline.forget_tables` and
processes the batch again.
"""

from __future__ import annotations

import json
import logging
import os
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from connector.api.declined import Declined
from connector.api.errors import DataException
from connector.api.record import SinkRecord
from connector.config.sink_config import SinkConfig
from connector.data.avro_batch import AvroBatchReader
from connector.data.catalog import load_catalog
from connector.data.decoder import RecordDecoder
from connector.data.json_batch import parse_json_objects
from connector.data.json_envelope import EnvelopeReader
from connector.data.json_schema_batch import JsonSchemaBatchReader
from connector.data.record_converter import NAME_MAPPING_PROPERTY, RecordConversionError
from connector.data.router import RecordRouter
from connector.data.schema_ids import RegistrySchemaIds
from connector.data.schema_update import IncompatibleSchemaChange
from connector.data.table_writer import CommittedOffsets, SchemaNeeds, TableState, TableWriters
from connector.data.typed_batch import DecodedBatch, to_table
from connector.kafka.offsets import TopicPartition
from converters.confluent.avro import AvroConverter
from converters.confluent.json_schema import JsonSchemaConverter
from converters.json import JsonConverter
from smt.batch import BatchTransformationChain, RecordBatchView, Values
from smt.chain import TransformationChain

log = logging.getLogger(__name__)

COLUMNAR = "columnar"
COLUMNAR_WITH_SMTS = "columnar with batch SMTs"
COLUMNAR_AVRO = "columnar Avro"
COLUMNAR_JSON_SCHEMAS = "columnar JSON with schemas"
COLUMNAR_JSON_SCHEMA = "columnar JSON Schema"
PER_RECORD = "per-record"
#: Set to "false" to run every batch through the per-record strategy (an escape hatch, and for comparisons).
COLUMNAR_ENV = "ICEFLOE_COLUMNAR"


# --- rows bound for one table ------------------------------------------------------------------

RAW_JSON, MAPS, TYPED, RECORDS = "raw JSON", "maps", "typed", "records"


@dataclass
class TableRows:
    """The rows one table gets from a batch, with their source coordinates (before any SMT).

    ``values`` is one of four forms: ``RAW_JSON`` (a binary array of JSON
    objects), ``MAPS`` (a struct array of parsed, transformed JSON objects),
    ``TYPED`` (a struct array typed by the Connect STRUCT schema ``schema``,
    as :func:`~connector.data.typed_batch.to_table` takes it: decoded Avro
    records, JsonConverter or JSON Schema payloads) or ``RECORDS`` (a list of ``SinkRecord``).
    """

    form: str
    values: Any
    topics: pa.Array
    partitions: pa.Array
    offsets: pa.Array
    schema: Any = None

    def __len__(self) -> int:
        return len(self.offsets)

    def filter(self, mask: pa.Array) -> "TableRows":
        if self.form == RECORDS:
            chosen = [r for r, keep in zip(self.values, mask.to_pylist()) if keep]
        else:
            chosen = self.values.filter(mask)
        return TableRows(self.form, chosen, self.topics.filter(mask), self.partitions.filter(mask),
                         self.offsets.filter(mask), self.schema)

    def where(self, index: int) -> str:
        """The source coordinates of row ``index``, for error messages."""
        if self.form == RECORDS:
            return self.values[index].describe()
        return (f"topic: {self.topics[index].as_py()}, partition: {self.partitions[index].as_py()}, "
                f"offset: {self.offsets[index].as_py()}")

    @staticmethod
    def of_records(records: list[SinkRecord]) -> "TableRows":
        return TableRows(RECORDS, records, pa.array([r.original_topic for r in records], pa.string()),
                         pa.array([r.original_kafka_partition for r in records], pa.int32()),
                         pa.array([r.original_kafka_offset for r in records], pa.int64()))


def not_committed(rows: TableRows, committed: dict[TopicPartition, int]) -> pa.Array | None:
    """Mask of the rows at or after their source partition's committed offset; None when all are."""
    if not committed or len(rows) == 0:
        return None
    keep = pa.array(np.ones(len(rows), dtype=bool))
    pairs = pa.Table.from_arrays([rows.topics, rows.partitions], names=["t", "p"]).group_by(["t", "p"]).aggregate([])
    for topic, partition in zip(pairs.column("t").to_pylist(), pairs.column("p").to_pylist()):
        start = committed.get((topic, partition))
        if start is None:
            continue
        here = pc.and_(pc.equal(rows.topics, topic), pc.equal(rows.partitions, partition))
        keep = pc.and_(keep, pc.invert(pc.and_(here, pc.less(rows.offsets, start))))
    return None if pc.all(keep).as_py() else keep


# --- the pipeline ----------------------------------------------------------------------------


class TaskPipeline:
    """Decode → transform → route → drop committed → convert → buffer, for the raw batches of one task."""

    def __init__(self, config: SinkConfig, task_id: str, *, committed_offsets: CommittedOffsets,
                 catalog=None, columnar: bool | None = None):
        """``columnar=False`` (or ``ICEFLOE_COLUMNAR=false``) forces the per-record strategy."""
        if columnar is None:
            columnar = os.environ.get(COLUMNAR_ENV, "true").strip().lower() != "false"
        self.config = config
        self.task_id = task_id
        self.catalog = catalog if catalog is not None else load_catalog(config.props)
        self.schema_ids = RegistrySchemaIds()
        self.decoder = RecordDecoder.from_config(config, self.schema_ids)
        self.chain = TransformationChain.from_config(config.props)
        self.router = RecordRouter(config.iceberg)
        self.tables = TableWriters(config, self.catalog, task_id, committed_offsets=committed_offsets,
                                   schema_ids=self.schema_ids)
        self.batch_chain: BatchTransformationChain | None = None
        self.avro_reader: AvroBatchReader | None = None
        self.envelope_reader: EnvelopeReader | None = None
        self.json_schema_reader: JsonSchemaBatchReader | None = None
        self.path, reason = self._choose_strategy(columnar)
        log.info("Task %s: %s path (%s)", task_id, self.path, reason)
        self.batches: Counter = Counter()  # batches per strategy taken, and declines per reason

    def _choose_strategy(self, columnar: bool) -> tuple[str, str]:
        if not columnar:
            return PER_RECORD, "columnar strategies switched off"
        if isinstance(self.decoder.value_converter, AvroConverter):
            if len(self.chain) == 0 and self.router.routes_everything_everywhere:
                self.avro_reader = AvroBatchReader(self.decoder.value_converter)
                return COLUMNAR_AVRO, "Confluent Avro, no SMTs"
            return PER_RECORD, "Avro values with SMTs or routing"
        if isinstance(self.decoder.value_converter, JsonSchemaConverter):
            if len(self.chain) == 0 and self.router.routes_everything_everywhere:
                self.json_schema_reader = JsonSchemaBatchReader(self.decoder.value_converter)
                return COLUMNAR_JSON_SCHEMA, "Confluent JSON Schema, no SMTs"
            return PER_RECORD, "JSON Schema values with SMTs or routing"
        converter = self.decoder.value_converter
        if isinstance(converter, JsonConverter) and converter.config.schemas_enable:
            if len(self.chain) == 0 and self.router.routes_everything_everywhere:
                self.envelope_reader = EnvelopeReader(converter)
                return COLUMNAR_JSON_SCHEMAS, "JSON with schemas, no SMTs"
            return PER_RECORD, "JSON with schemas, with SMTs or routing"
        if not self.decoder.schemaless_json_value:
            return PER_RECORD, "values are neither schemaless JSON nor Confluent Avro"
        if len(self.chain) == 0 and self.router.routes_everything_everywhere:
            return COLUMNAR, "schemaless JSON, no SMTs"
        batch_chain = BatchTransformationChain.from_chain(self.chain, self._records_of)
        if batch_chain is None:
            return PER_RECORD, BatchTransformationChain.why_not(self.chain, self._records_of) or "no batch form"
        self.batch_chain = batch_chain
        routing = "" if self.router.routes_everything_everywhere else ", routed column-wise"
        if len(self.chain) == 0:
            return COLUMNAR_WITH_SMTS, "no transforms" + routing
        per_record = batch_chain.per_record_stages
        record_stages = f"; per record: {', '.join(per_record)}" if per_record else ""
        transforms = ", ".join(s.type_name for s in self.chain.stages)
        return COLUMNAR_WITH_SMTS, f"transforms: {transforms}{record_stages}{routing}"

    def process(self, batch: pa.RecordBatch) -> SchemaNeeds:
        """Convert and buffer one raw batch; nothing is buffered if the batch needs a schema change."""
        if self.path != PER_RECORD:
            self.decoder.check_keys_and_headers(batch)
            try:
                needs = self._write(self._columnar_rows(batch), may_ask=self.path == COLUMNAR)
            except Declined as declined:
                self.batches[f"declined: {declined.reason}"] += 1
                log.debug("Task %s: batch declined by the %s path (%s)", self.task_id, self.path, declined.reason)
            else:
                self.batches[COLUMNAR] += 1
                return needs
        self.batches[PER_RECORD] += 1
        return self._write(self._per_record_rows(batch), may_ask=True)

    # --- decode, transform and route -------------------------------------------------------

    def _columnar_rows(self, batch: pa.RecordBatch) -> dict[str, TableRows]:
        """The rows each table gets, by the task's columnar strategy; Declined when not exact."""
        if self.path == COLUMNAR:
            return self._raw_json_rows(batch)
        if self.path == COLUMNAR_AVRO:
            return self._avro_rows(batch)
        if self.path == COLUMNAR_JSON_SCHEMAS:
            return self._envelope_rows(batch)
        if self.path == COLUMNAR_JSON_SCHEMA:
            return self._json_schema_rows(batch)
        return self._transformed_rows(batch)

    def _raw_json_rows(self, batch: pa.RecordBatch) -> dict[str, TableRows]:
        values = batch.column("value")
        rows = TableRows(RAW_JSON, values, batch.column("topic"), batch.column("partition"), batch.column("offset"))
        kept = rows.filter(values.is_valid())  # tombstones are skipped, as the Iceberg sink does
        return {table: kept for table in self.router.static_tables}

    def _avro_rows(self, batch: pa.RecordBatch) -> dict[str, TableRows]:
        assert self.avro_reader is not None  # chosen with the strategy
        topics = batch.column("topic")
        decoded = self.avro_reader.decode(topics[0].as_py(), batch.column("value"), batch.column("headers"))
        return self._typed_rows(batch, decoded)

    def _envelope_rows(self, batch: pa.RecordBatch) -> dict[str, TableRows]:
        assert self.envelope_reader is not None  # chosen with the strategy
        present = batch.filter(batch.column("value").is_valid())  # tombstones are skipped
        return self._typed_rows(present, self.envelope_reader.decode(present.column("value")))

    def _json_schema_rows(self, batch: pa.RecordBatch) -> dict[str, TableRows]:
        assert self.json_schema_reader is not None  # chosen with the strategy
        present = batch.filter(batch.column("value").is_valid())  # tombstones are skipped
        if present.num_rows == 0:
            raise Declined("only tombstones")
        decoded = self.json_schema_reader.decode(present.column("topic")[0].as_py(), present.column("value"),
                                                 batch.column("headers"))
        return self._typed_rows(present, decoded)

    def _typed_rows(self, batch: pa.RecordBatch, decoded: DecodedBatch) -> dict[str, TableRows]:
        """Every table gets the decoded rows of ``batch`` (one per record; null rows, tombstones, left out)."""
        rows = TableRows(TYPED, decoded.values, batch.column("topic"), batch.column("partition"),
                         batch.column("offset"), decoded.connect_schema)
        kept = rows.filter(decoded.values.is_valid()) if decoded.values.null_count else rows
        return {table: kept for table in self.router.static_tables}

    def _transformed_rows(self, batch: pa.RecordBatch) -> dict[str, TableRows]:
        assert self.batch_chain is not None  # chosen with the strategy
        if self.batch_chain.unsuitable:
            raise Declined(f"transforms ({self.batch_chain.unsuitable})")
        parsed = parse_json_objects(batch.column("value"))
        try:
            view = self.batch_chain.apply(RecordBatchView.from_raw(batch, Values.from_json(parsed.array,
                                                                                            parsed.loose)))
        except Declined as declined:
            raise Declined(f"transforms ({declined.reason})") from declined
        values = view.value.array
        if not pa.types.is_struct(values.type) and values.null_count < len(values):
            raise Declined("values are not maps after the transforms")
        rows = TableRows(MAPS, values, view.original_topic, view.original_partition, view.offset)
        return {table: rows.filter(mask) for table, mask in self.router.route_batch(values).items()}

    def _records_of(self, view: RecordBatchView, with_values: bool) -> list[SinkRecord]:
        """The records a per-record stage sees for the view's rows: keys and headers through the converters.

        ``with_values``: decode the values from the raw JSON too (else they are left null, for the
        caller to fill in from the maps).
        """
        columns = [view.original_topic, view.original_partition, view.offset, view.timestamp,
                   view.timestamp_type, view.key, view.raw_value if with_values else None, view.headers]
        rows = zip(*(c.to_pylist() if c is not None else [None] * view.num_rows for c in columns))
        topics, partitions = view.topic.to_pylist(), view.partition.to_pylist()
        return [replace(self.decoder.decode(*row), topic=topic, kafka_partition=partition)
                for row, topic, partition in zip(rows, topics, partitions)]

    def _per_record_rows(self, batch: pa.RecordBatch) -> dict[str, TableRows]:
        routed: dict[str, list[SinkRecord]] = {}
        for record in self.decoder.decode_batch(batch):
            transformed = self.chain.apply(record)
            if transformed is None:
                continue
            for table in self.router.route(transformed):
                routed.setdefault(table, []).append(transformed)
        return {table: TableRows.of_records(records) for table, records in routed.items()}

    # --- drop committed, convert, buffer ----------------------------------------------------

    def _write(self, routed: dict[str, TableRows], *, may_ask: bool) -> SchemaNeeds:
        """Convert each table's rows; buffer them all unless some table needs a schema change.

        ``may_ask``: whether this strategy may ask for tables and schema changes
        (otherwise it declines, and the per-record strategy asks).
        """
        needs = SchemaNeeds()
        converted: dict[str, pa.Table] = {}
        for table_name, rows in routed.items():
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
            else:
                converted[table_name] = data
        if not needs:
            for table_name, data in converted.items():
                self.tables.buffer(table_name, data)
        return needs

    def _open(self, table_name: str, rows: TableRows, needs: SchemaNeeds, may_ask: bool) -> TableState | None:
        if not may_ask:
            state = self.tables.existing(table_name)
            if state is None and table_name in self.tables.missing:  # skipped (dynamic, no auto-create)
                self.tables.missing.skip(table_name, len(rows))
                return None
            if state is None:
                raise Declined("table to create")
            return state
        return self.tables.open(table_name, lambda: _sample(rows), needs, len(rows))

    def _convert(self, state: TableState, rows: TableRows) -> tuple[pa.Table | None, Any]:
        """(the rows in the table's schema, None) or (None, the schema updates they need)."""
        if rows.form != RECORDS:  # column-wise: anything but the exact per-record result declines
            try:
                if rows.form == MAPS:
                    return state.json_converter.convert_struct(rows.values), None
                if rows.form == TYPED:
                    return self._convert_typed(state, rows), None
                return state.json_converter.convert_fast(rows.values.to_pylist()), None
            except Declined as declined:
                raise Declined(f"conversion ({declined.reason})") from declined
        try:
            result = state.record_converter.convert([r.value for r in rows.values],
                                                    [r.value_schema for r in rows.values])
        except RecordConversionError as exc:
            raise self._conversion_error(state, rows, exc) from exc
        return (None, result.updates) if result.updates else (result.table, None)

    def _convert_typed(self, state: TableState, rows: TableRows) -> pa.Table:
        """Connect-typed rows in the table's schema; Declined where the per-record result could differ."""
        if self.config.iceberg.case_insensitive or state.table.properties.get(NAME_MAPPING_PROPERTY):
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

    # --- schema changes and the end of the task ------------------------------------------------

    def forget_tables(self, names) -> None:
        """Reload these tables on next use (after their schema changed); rows buffered so far are kept."""
        self.tables.forget(names)

    def close(self) -> tuple[dict[str, list[Any]], dict[str, int]]:
        """Flush buffers: (data files per table, rows written per table)."""
        if self.batches:
            log.info("Task %s: batches by path: %s", self.task_id,
                     ", ".join(f"{k}: {v}" for k, v in sorted(self.batches.items())))
        return self.tables.close()


def _sample(rows: TableRows) -> tuple[Any, Any, str]:
    """(value, Connect schema, where) of the first row, from which a new table's schema is derived."""
    if rows.form == RECORDS:
        record = rows.values[0]
        return record.value, record.value_schema, record.describe()
    where = rows.where(0)
    try:
        return json.loads(rows.values[0].as_py()), None, where
    except ValueError as exc:
        raise DataException(f"An error occurred converting record, {where}: invalid JSON: {exc}") from exc
