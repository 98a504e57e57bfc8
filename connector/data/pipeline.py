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
* ``columnar Avro with batch SMTs``: Confluent Avro values, every record to
  every table, and an SMT chain whose every stage has a typed batch form
  (``smt/batch/typed.py``: InsertField, ReplaceField, MaskField, HoistField,
  ExtractField, Cast, TimestampConverter, Flatten, SetSchemaMetadata, Filter,
  RegexRouter, TimestampRouter, with the batch predicates). The decoded struct column (tombstones as null rows) runs
  through the chain with its Connect schema, which each stage changes as its
  ``apply_with_schema`` does; the result goes into the tables like the
  other typed strategies. A chain with any other stage runs per record,
  with the stage named in the task's log line. The two JSON strategies below
  take such a chain the same way (``... with batch SMTs``), their tombstones
  put back as null rows first.
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
* ``columnar Protobuf``: Confluent Protobuf values (``ProtobufConverter``), every
  record to every table. The messages of a batch framed with one schema id and
  message type are parsed by the ``protobuf`` runtime in one call and read
  column by column, typed by the Connect schema the converter derives
  (``connector/data/protobuf_batch.py``, ``connector/data/protobuf_columns.py``);
  with a typed SMT chain, ``columnar Protobuf with batch SMTs``, as for Avro.

  All the typed ones go into each table's schema through ``connector/data/typed_batch.py``.
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

Error tolerance (``errors.tolerance=all``, :mod:`connector.data.errant`): a
record that fails in a converter, an SMT or its conversion to the table is
skipped and kept in :attr:`TaskPipeline.errant` (for the dead-letter queue)
instead of failing the task; every other table a record was routed to loses
it too (a record reaches the tables or the DLQ, never both). A columnar
batch that declines is not handed to the per-record strategy as a whole:
its suspicious values (JSON that does not parse to an object) are screened
out and go per record, the rest is tried column-wise again and, if it still
declines for its contents, split in halves (down to :data:`SPLIT_ROWS` rows,
which go per record). ``batches`` counts these as ``screened: <reason>`` and
``split: <reason>``, and each piece by the strategy that took it. After a
batch whose values failed the column-wise screen, the next batches are
screened before their first column-wise try (``screened ahead``) until one
comes out clean.
"""

from __future__ import annotations

import functools
import json
import logging
import os
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any, Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from connector.api.declined import Declined
from connector.api.errors import ConnectException, DataException
from connector.api.record import SinkRecord
from connector.api.schema import Type
from connector.config.sink_config import SinkConfig
from connector.data.avro_batch import AvroBatchReader
from connector.data.catalog import load_catalog
from connector.data.cdc_ops import row_changes
from connector.data.collapse import positions_table
from connector.data.decoder import RecordConversionFailed, RecordDecoder
from connector.data.errant import SINK_TASK_CLASS, TASK_PUT, ErrantRecord, ErrorHandler, ErrorSettings, mark
from connector.data.json_batch import parse_json_objects
from connector.data.json_envelope import EnvelopeReader
from connector.data.json_schema_batch import JsonSchemaBatchReader
from connector.data.protobuf_batch import ProtobufBatchReader
from connector.data.record_converter import NAME_MAPPING_PROPERTY, RecordConversionError
from connector.data.router import RecordRouter
from connector.data.schema_ids import RegistrySchemaIds
from connector.data.schema_update import IncompatibleSchemaChange
from connector.data.suspicious_rows import not_json_objects, not_registry_framed
from connector.data.table_writer import CommittedOffsets, SchemaNeeds, TableState, TableWriters, Written
from connector.data.typed_batch import DecodedBatch, spread_rows, to_table
from connector.kafka.offsets import TopicPartition
from converters.confluent.avro import AvroConverter
from converters.confluent.json_schema import JsonSchemaConverter
from converters.confluent.protobuf import ProtobufConverter
from converters.json import JsonConverter
from smt.batch import BatchTransformationChain, RecordBatchView, Values
from smt.chain import TransformationChain

log = logging.getLogger(__name__)

COLUMNAR = "columnar"
COLUMNAR_WITH_SMTS = "columnar with batch SMTs"
COLUMNAR_AVRO = "columnar Avro"
COLUMNAR_JSON_SCHEMAS = "columnar JSON with schemas"
COLUMNAR_JSON_SCHEMA = "columnar JSON Schema"
COLUMNAR_PROTOBUF = "columnar Protobuf"
#: Suffix of a typed strategy's name (Avro, JSON with schemas, JSON Schema) with an SMT chain in typed batch form.
WITH_SMTS = " with batch SMTs"
COLUMNAR_AVRO_WITH_SMTS = COLUMNAR_AVRO + WITH_SMTS
COLUMNAR_JSON_SCHEMAS_WITH_SMTS = COLUMNAR_JSON_SCHEMAS + WITH_SMTS
COLUMNAR_JSON_SCHEMA_WITH_SMTS = COLUMNAR_JSON_SCHEMA + WITH_SMTS
COLUMNAR_PROTOBUF_WITH_SMTS = COLUMNAR_PROTOBUF + WITH_SMTS
PER_RECORD = "per-record"
#: Set to "false" to run every batch through the per-record strategy (an escape hatch, and for comparisons).
COLUMNAR_ENV = "ICEFLOE_COLUMNAR"
#: With error tolerance, a declined columnar batch is split in halves down to this many rows (then per record).
SPLIT_ROWS = 256
#: Errant records kept in memory before they are handed to the DLQ producer (the rest go at close;
#: with context headers off, all go at close).
DLQ_SEND_RECORDS = 10_000
#: Decline reasons that are about the table or the configuration, never about the records' contents:
#: splitting such a batch cannot help, so it goes per record as a whole.
_STRUCTURAL_DECLINES = ("table to create", "schema changes", "columns looked up case-insensitively",
                        "transforms (", "only tombstones", "empty batch", "null values",
                        "the schema does not fit the table")  # (one schema for the whole batch)

Coordinates = tuple[str, int, int]
#: One table's converted rows of a batch: (table, rows in its schema, their positions and delete flags for
#: an upsert/CDC table (``connector.data.collapse.POSITIONS_SCHEMA``) or None).
Converted = tuple[str, pa.Table, Optional[pa.Table]]


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

    def coordinates(self, index: int) -> Coordinates:
        """(original topic, partition, offset) of row ``index``."""
        if self.form == RECORDS:
            record = self.values[index]
            return record.original_topic, record.original_kafka_partition, record.original_kafka_offset
        return self.topics[index].as_py(), self.partitions[index].as_py(), self.offsets[index].as_py()

    def without(self, failed: set[Coordinates]) -> "TableRows":
        """These rows minus those whose coordinates are in ``failed``."""
        if not failed or len(self) == 0:
            return self
        coords = zip(self.topics.to_pylist(), self.partitions.to_pylist(), self.offsets.to_pylist())
        keep = [c not in failed for c in coords]
        return self if all(keep) else self.filter(pa.array(keep, pa.bool_()))

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
                 catalog=None, columnar: bool | None = None, dead_letters: Any = True):
        """``columnar=False`` (or ``ICEFLOE_COLUMNAR=false``) forces the per-record strategy.

        ``dead_letters``: where errant records go when the pipeline closes (``True``: the
        connector's DLQ, :class:`~connector.kafka.dlq.DeadLetterQueue`, when one is configured
        with ``errors.tolerance=all``; ``None``: nowhere, they stay in :attr:`errant`).
        """
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
        self.protobuf_reader: ProtobufBatchReader | None = None
        self.path, reason = self._choose_strategy(columnar)
        log.info("Task %s: %s path (%s)", task_id, self.path, reason)
        self.batches: Counter = Counter()  # batches per strategy taken, and declines per reason
        self.errors = ErrorHandler(ErrorSettings.of(config.props), config.name, task_id)
        self.errant: list[ErrantRecord] = []  # records skipped by error tolerance, for the DLQ, in order
        self.errant_counts: Counter = Counter()  # source topic → records skipped by error tolerance
        self._screen_ahead = False  # screen the next batch before trying it column-wise (bad values seen)
        settings = self.errors.settings
        if dead_letters is True:
            dead_letters = None
            if settings.tolerance_all and settings.dlq_topic:
                from connector.kafka.dlq import DeadLetterQueue

                dead_letters = DeadLetterQueue(config, task_id, self.catalog)
        self.dead_letters = dead_letters

    def _choose_strategy(self, columnar: bool) -> tuple[str, str]:
        if not columnar:
            return PER_RECORD, "columnar strategies switched off"
        if isinstance(self.decoder.value_converter, AvroConverter):
            strategy = self._typed_strategy(COLUMNAR_AVRO, "Confluent Avro")
            if strategy[0] != PER_RECORD:
                self.avro_reader = AvroBatchReader(self.decoder.value_converter)
            return strategy
        if isinstance(self.decoder.value_converter, JsonSchemaConverter):
            strategy = self._typed_strategy(COLUMNAR_JSON_SCHEMA, "Confluent JSON Schema")
            if strategy[0] != PER_RECORD:
                self.json_schema_reader = JsonSchemaBatchReader(self.decoder.value_converter)
            return strategy
        if isinstance(self.decoder.value_converter, ProtobufConverter):
            strategy = self._typed_strategy(COLUMNAR_PROTOBUF, "Confluent Protobuf")
            if strategy[0] != PER_RECORD:
                self.protobuf_reader = ProtobufBatchReader(self.decoder.value_converter)
            return strategy
        converter = self.decoder.value_converter
        if isinstance(converter, JsonConverter) and converter.config.schemas_enable:
            strategy = self._typed_strategy(COLUMNAR_JSON_SCHEMAS, "JSON with schemas")
            if strategy[0] != PER_RECORD:
                self.envelope_reader = EnvelopeReader(converter)
            return strategy
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

    def _typed_strategy(self, columnar: str, values: str) -> tuple[str, str]:
        """The strategy for values a typed reader decodes (``columnar``), or per record; sets the typed chain."""
        if not self.router.routes_everything_everywhere:
            return PER_RECORD, f"{values} values with routing"
        if len(self.chain) == 0:
            return columnar, f"{values}, no SMTs"
        batch_chain = BatchTransformationChain.for_typed_values(self.chain)
        if batch_chain is None:
            return PER_RECORD, f"{values} values: {BatchTransformationChain.why_not_typed(self.chain)}"
        self.batch_chain = batch_chain
        transforms = ", ".join(s.type_name for s in self.chain.stages)
        return f"{columnar}{WITH_SMTS}", f"{values}, transforms: {transforms}"

    def process(self, batch: pa.RecordBatch) -> SchemaNeeds:
        """Convert and buffer one raw batch; nothing is buffered if the batch needs a schema change.

        Records skipped by error tolerance are added to :attr:`errant` when the batch is buffered.
        """
        self.errors.begin(batch)
        needs, converted = self._process(batch)
        if needs:
            self.errors.discard()
            return needs
        for table_name, data, positions in converted:
            self.tables.buffer(table_name, data, positions)
        taken = self.errors.take()
        if taken:
            self.errant_counts.update(e.topic for e in taken)
        self.errant.extend(taken)
        if len(self.errant) >= DLQ_SEND_RECORDS:
            if self.dead_letters is None:  # no DLQ: they were logged (errors.log.enable); keep memory bounded
                del self.errant[:-DLQ_SEND_RECORDS]
            elif self.errors.settings.dlq_context_headers:
                # Sent early only when the DLQ records name their source offsets: a commit that does not
                # cover them (this task fails, others commit) then keeps the DLQ position before them.
                self.dead_letters.send(self.take_errant())
        return needs

    def take_errant(self) -> list[ErrantRecord]:
        """The errant records of the batches buffered so far (and forget them)."""
        errant, self.errant = self.errant, []
        return errant

    def _process(self, batch: pa.RecordBatch) -> tuple[SchemaNeeds, list[Converted]]:
        if self.path != PER_RECORD:
            tolerant = self.errors.tolerant
            failed = self.decoder.check_keys_and_headers(batch, self.errors.fail if tolerant else None)
            if failed:
                batch = batch.filter(pa.array(~np.isin(np.arange(batch.num_rows), failed)))
                if batch.num_rows == 0:
                    return SchemaNeeds(), []
            if tolerant and self._screen_ahead:  # the last batch had bad values: look before trying
                suspicious = self._suspicious(batch, thorough=False)
                if suspicious is not None:
                    self.batches["screened ahead"] += 1
                    return self._screened(batch, suspicious, 1)
                self._screen_ahead = False
            return self._columnar_piece(batch, screen=2 if tolerant else 0)
        self.batches[PER_RECORD] += 1
        return self._write(self._per_record_rows(batch), may_ask=True)

    def _columnar_piece(self, batch: pa.RecordBatch, *, screen: int
                        ) -> tuple[SchemaNeeds, list[Converted]]:
        """A batch (or a piece of one) column-wise; with error tolerance, a declined one is screened or split.

        ``screen``: 2 = the column-wise check may run, then the per-value one; 1 = the per-value one; 0 = none.
        """
        try:
            result = self._write(self._columnar_rows(batch), may_ask=self.path == COLUMNAR)
        except Declined as declined:
            reason = declined.reason
            self.batches[f"declined: {reason}"] += 1
            log.debug("Task %s: batch declined by the %s path (%s)", self.task_id, self.path, reason)
            if self.errors.tolerant and not reason.startswith(_STRUCTURAL_DECLINES):
                for level in range(screen, 0, -1):
                    suspicious = self._suspicious(batch, thorough=level == 1)
                    if suspicious is not None:
                        self.batches[f"screened: {reason}"] += 1
                        self._screen_ahead = self._screen_ahead or level == 2
                        return self._screened(batch, suspicious, level - 1)
                if batch.num_rows > SPLIT_ROWS:
                    self.batches[f"split: {reason}"] += 1
                    half = batch.num_rows // 2
                    return _merged([self._columnar_piece(batch.slice(0, half), screen=0),
                                    self._columnar_piece(batch.slice(half), screen=0)])
        else:
            self.batches[COLUMNAR] += 1
            return result
        self.batches[PER_RECORD] += 1
        return self._write(self._per_record_rows(batch), may_ask=True)

    def _suspicious(self, batch: pa.RecordBatch, thorough: bool) -> np.ndarray | None:
        """Rows of a declined batch that look bad on their own (:mod:`connector.data.suspicious_rows`)."""
        values = batch.column("value")
        if self.path in (COLUMNAR_AVRO, COLUMNAR_AVRO_WITH_SMTS, COLUMNAR_JSON_SCHEMA, COLUMNAR_JSON_SCHEMA_WITH_SMTS,
                         COLUMNAR_PROTOBUF, COLUMNAR_PROTOBUF_WITH_SMTS):
            return not_registry_framed(values)
        if self.path in (COLUMNAR, COLUMNAR_WITH_SMTS, COLUMNAR_JSON_SCHEMAS, COLUMNAR_JSON_SCHEMAS_WITH_SMTS):
            return not_json_objects(values, thorough)
        return None

    def _screened(self, batch: pa.RecordBatch, suspicious: np.ndarray, screen: int
                  ) -> tuple[SchemaNeeds, list[Converted]]:
        """The suspicious rows per record, the others column-wise again."""
        self.batches[PER_RECORD] += 1
        pieces = [self._write(self._per_record_rows(batch.filter(pa.array(suspicious))), may_ask=True)]
        rest = batch.filter(pa.array(~suspicious))
        if rest.num_rows:
            pieces.append(self._columnar_piece(rest, screen=screen))
        return _merged(pieces)

    # --- decode, transform and route -------------------------------------------------------

    def _columnar_rows(self, batch: pa.RecordBatch) -> dict[str, TableRows]:
        """The rows each table gets, by the task's columnar strategy; Declined when not exact."""
        if self.path == COLUMNAR:
            return self._raw_json_rows(batch)
        if self.path in (COLUMNAR_AVRO, COLUMNAR_AVRO_WITH_SMTS):
            return self._avro_rows(batch)
        if self.path in (COLUMNAR_JSON_SCHEMAS, COLUMNAR_JSON_SCHEMAS_WITH_SMTS):
            return self._envelope_rows(batch)
        if self.path in (COLUMNAR_JSON_SCHEMA, COLUMNAR_JSON_SCHEMA_WITH_SMTS):
            return self._json_schema_rows(batch)
        if self.path in (COLUMNAR_PROTOBUF, COLUMNAR_PROTOBUF_WITH_SMTS):
            return self._registry_rows(batch, self.protobuf_reader)
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
        if self.batch_chain is not None:
            return self._typed_transformed_rows(batch, decoded)
        return self._typed_rows(batch, decoded)

    def _envelope_rows(self, batch: pa.RecordBatch) -> dict[str, TableRows]:
        assert self.envelope_reader is not None  # chosen with the strategy
        present = batch.filter(batch.column("value").is_valid())  # tombstones are skipped
        decoded = self.envelope_reader.decode(present.column("value"))
        if self.batch_chain is not None:
            return self._typed_transformed_rows(batch, _with_tombstones(decoded, batch))
        return self._typed_rows(present, decoded)

    def _json_schema_rows(self, batch: pa.RecordBatch) -> dict[str, TableRows]:
        assert self.json_schema_reader is not None  # chosen with the strategy
        present = batch.filter(batch.column("value").is_valid())  # tombstones are skipped
        if present.num_rows == 0:
            raise Declined("only tombstones")
        decoded = self.json_schema_reader.decode(present.column("topic")[0].as_py(), present.column("value"),
                                                 batch.column("headers"))
        if self.batch_chain is not None:
            return self._typed_transformed_rows(batch, _with_tombstones(decoded, batch))
        return self._typed_rows(present, decoded)

    def _registry_rows(self, batch: pa.RecordBatch, reader: Any) -> dict[str, TableRows]:
        """The rows of a typed reader that takes the present values of one topic (Protobuf): tombstones skipped."""
        present = batch.filter(batch.column("value").is_valid())
        if present.num_rows == 0:
            raise Declined("only tombstones")
        decoded = reader.decode(present.column("topic")[0].as_py(), present.column("value"), batch.column("headers"))
        if self.batch_chain is not None:
            return self._typed_transformed_rows(batch, _with_tombstones(decoded, batch))
        return self._typed_rows(present, decoded)

    def _typed_rows(self, batch: pa.RecordBatch, decoded: DecodedBatch) -> dict[str, TableRows]:
        """Every table gets the decoded rows of ``batch`` (one per record; null rows, tombstones, left out)."""
        rows = TableRows(TYPED, decoded.values, batch.column("topic"), batch.column("partition"),
                         batch.column("offset"), decoded.connect_schema)
        kept = rows.filter(decoded.values.is_valid()) if decoded.values.null_count else rows
        return {table: kept for table in self.router.static_tables}

    def _typed_transformed_rows(self, batch: pa.RecordBatch, decoded: DecodedBatch) -> dict[str, TableRows]:
        """The decoded rows of ``batch`` (tombstones included) through the typed batch SMTs, to every table."""
        assert self.batch_chain is not None  # chosen with the strategy
        view = RecordBatchView.from_raw(batch, Values(decoded.values, schema=decoded.connect_schema), raw=False)
        try:
            view = self.batch_chain.apply(view)
        except Declined as declined:
            raise Declined(f"transforms ({declined.reason})") from declined
        values, schema = view.value.array, view.value.schema
        if values.null_count == len(values):
            return {}  # every record filtered out, or a tombstone (skipped)
        if schema is None or schema.type is not Type.STRUCT or not pa.types.is_struct(values.type):
            raise Declined("values are not Structs after the transforms")
        rows = TableRows(TYPED, values, view.original_topic, view.original_partition, view.offset, schema)
        kept = rows.filter(values.is_valid()) if values.null_count else rows  # tombstones are skipped
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
        for record in self._decoded(batch):
            try:
                transformed = self.decoder.retry.run(functools.partial(self.chain.apply, record))
            except ConnectException as exc:
                self.errors.fail(exc, (record.original_topic, record.original_kafka_partition,
                                       record.original_kafka_offset))
                continue
            if transformed is None:
                continue
            for table in self.router.route(transformed):
                routed.setdefault(table, []).append(transformed)
        return {table: TableRows.of_records(records) for table, records in routed.items()}

    def _decoded(self, batch: pa.RecordBatch):
        """The batch's records through the converters; with error tolerance, failures are skipped."""
        if not self.errors.tolerant:
            yield from self.decoder.decode_batch(batch)
            return
        columns = [batch.column(n).to_pylist() for n in
                   ("topic", "partition", "offset", "timestamp", "timestamp_type", "key", "value", "headers")]
        for row in zip(*columns):
            try:
                yield self.decoder.decode(*row)
            except RecordConversionFailed as exc:
                self.errors.fail(exc, (row[0], row[1], row[2]))

    # --- drop committed, convert, buffer ----------------------------------------------------

    def _write(self, routed: dict[str, TableRows], *, may_ask: bool
               ) -> tuple[SchemaNeeds, list[Converted]]:
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
            if len(self.errors.failed) == failed_before or len(routed) == 1:
                return (needs, []) if needs else (needs, converted)

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

    def close(self) -> Written:
        """Flush buffers: the data files, rows written and (upsert/CDC tables) change segments per table.

        Then the errant records go to the DLQ, acknowledged before this returns (so before
        the coordinator can commit the cycle).
        """
        if self.batches:
            log.info("Task %s: batches by path: %s", self.task_id,
                     ", ".join(f"{k}: {v}" for k, v in sorted(self.batches.items())))
        written = self.tables.close()
        if self.dead_letters is not None:  # last: a task that fails before has sent (nearly) nothing
            self.dead_letters.send(self.take_errant())
            self.dead_letters.flush()
            self.dead_letters.close()
        return written


def _with_tombstones(decoded: DecodedBatch, batch: pa.RecordBatch) -> DecodedBatch:
    """The decoded values of ``batch``'s non-null values, with its tombstones back in place as null rows."""
    if len(decoded.values) == batch.num_rows:
        return decoded
    return DecodedBatch(spread_rows(decoded.values, batch.column("value").is_valid()), decoded.connect_schema)


def _merged(pieces: list[tuple[SchemaNeeds, list[Converted]]]
            ) -> tuple[SchemaNeeds, list[Converted]]:
    """The results of a batch's pieces: their needs, or all their tables (in piece order)."""
    needs = SchemaNeeds()
    for piece_needs, _ in pieces:
        needs.merge(piece_needs)
    if needs:
        return needs, []
    return needs, [converted for _, tables in pieces for converted in tables]


def _sample(rows: TableRows, skip_bad: bool = False) -> tuple[Any, Any, str]:
    """(value, Connect schema, where) of the first row, from which a new table's schema is derived.

    ``skip_bad`` (error tolerance): the first raw JSON row that is an object (the bad ones are
    reported when the rows are converted).
    """
    if rows.form == RECORDS:
        record = rows.values[0]
        return record.value, record.value_schema, record.describe()
    first_error: tuple[str, Exception] | None = None
    for index in range(len(rows) if skip_bad else 1):
        try:
            value = json.loads(rows.values[index].as_py())
        except (ValueError, RecursionError) as exc:
            first_error = first_error or (rows.where(index), exc)
            continue
        if isinstance(value, dict) or not skip_bad:
            return value, None, rows.where(index)
    where, error = first_error if first_error is not None else (rows.where(0), ValueError("no JSON object"))
    raise DataException(f"An error occurred converting record, {where}: invalid JSON: {error}") from error
