"""The task pipeline: one raw Kafka batch → rows buffered for each destination table.

::

    raw batch (Arrow: topic, partition, offset, timestamp, key, value, headers)
      → decode + transform   one strategy per batch, chosen once per task (strategy.py):
                             column-wise (columnar_rows.py; a declined batch: columnar_tries.py)
                             or record by record (per_record.py)
      → route                RecordRouter: per table, the rows it gets (table_rows.py)
      → drop committed       rows below the table's committed offset of their source partition
      → convert              to the table's Arrow schema, or report SchemaNeeds (table_conversion.py)
      → buffer               TableWriters: Parquet files, flushed in large chunks

The strategy is chosen once per task from the config (:mod:`connector.data.strategy`
lists them) and tried per batch: a columnar strategy decodes, transforms and routes a
whole batch column-wise (:mod:`connector.data.columnar_rows`) and declines it whenever
it cannot promise the per-record result, which Connect's per-record contract then
gives (:mod:`connector.data.per_record`). :attr:`TaskPipeline.batches` counts each
batch by the strategy that took it and each decline by its reason
(:mod:`connector.data.columnar_tries`).

A batch that needs a table created or evolved buffers nothing: the caller
applies :class:`SchemaNeeds`, calls :meth:`TaskPipeline.forget_tables` and
processes the batch again (:mod:`connector.data.convert.table_conversion`).

Error tolerance (``errors.tolerance=all``, :mod:`connector.tolerance.errant`): a
record that fails in a converter, an SMT or its conversion to the table is
skipped and kept in :attr:`TaskPipeline.errant` (for the dead-letter queue)
instead of failing the task; every other table a record was routed to loses
it too (a record reaches the tables or the DLQ, never both). A declined
columnar batch is screened and split rather than sent per record as a whole
(:mod:`connector.data.columnar_tries`).
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

import pyarrow as pa

from connector.config.sink_config import SinkConfig
from connector.data.catalog import load_catalog
from connector.data.columnar_rows import ColumnarRows
from connector.data.columnar_tries import ColumnarTries
from connector.data.convert.table_conversion import Converted, TableConversion
from connector.data.decoder import RecordDecoder
from connector.data.per_record import PerRecordRows
from connector.data.router import RecordRouter
from connector.data.schema_ids import RegistrySchemaIds
from connector.data.strategy import PER_RECORD, choose_strategy, columnar_switched_on
from connector.data.write.table_writer import CommittedOffsets, SchemaNeeds, TableWriters, Written
from connector.tolerance.errant import ErrantRecord, ErrorHandler, ErrorSettings
from smt.batch import BatchTransformationChain
from smt.chain import TransformationChain

log = logging.getLogger(__name__)

#: Errant records kept in memory before they are handed to the DLQ producer (the rest go at close;
#: with context headers off, all go at close).
DLQ_SEND_RECORDS = 10_000


class TaskPipeline:
    """Decode → transform → route → drop committed → convert → buffer, for the raw batches of one task."""

    def __init__(self, config: SinkConfig, task_id: str, *, committed_offsets: CommittedOffsets,
                 catalog=None, columnar: bool | None = None, dead_letters: Any = True):
        """``columnar=False`` (or ``ICEFLOE_COLUMNAR=false``) forces the per-record strategy.

        ``dead_letters``: where errant records go when the pipeline closes (``True``: the
        connector's DLQ, :class:`~connector.tolerance.dead_letters.DeadLetterQueue`, when one is configured
        with ``errors.tolerance=all``; ``None``: nowhere, they stay in :attr:`errant`).
        """
        self.config = config
        self.task_id = task_id
        self.catalog = catalog if catalog is not None else load_catalog(config.props)
        self.schema_ids = RegistrySchemaIds()
        self.decoder = RecordDecoder.from_config(config, self.schema_ids)
        self.chain = TransformationChain.from_config(config.props)
        self.router = RecordRouter(config.iceberg)
        self.tables = TableWriters(config, self.catalog, task_id, committed_offsets=committed_offsets,
                                   schema_ids=self.schema_ids)
        self.errors = ErrorHandler(ErrorSettings.of(config.props), config.name, task_id)
        self.per_record = PerRecordRows(self.decoder, self.chain, self.router, self.errors)
        self.strategy = choose_strategy(columnar_switched_on() if columnar is None else columnar,
                                        self.decoder, self.chain, self.router, self.per_record.records_of)
        log.info("Task %s: %s path (%s)", task_id, self.strategy.name, self.strategy.reason)
        self.batches: Counter = Counter()  # batches per strategy taken, and declines per reason
        self.conversion = TableConversion(config, self.tables, self.errors, self.schema_ids)
        self.columnar_tries = ColumnarTries(task_id, self.strategy, self.decoder,
                                            ColumnarRows(self.strategy, self.router), self.per_record,
                                            self.conversion, self.errors, self.batches)
        self.errant: list[ErrantRecord] = []  # records skipped by error tolerance, for the DLQ, in order
        self.errant_counts: Counter = Counter()  # source topic → records skipped by error tolerance
        self.dead_letters = self._dead_letters(dead_letters)

    def _dead_letters(self, dead_letters: Any) -> Any:
        """``True``: the connector's DLQ when errors are tolerated and a DLQ topic is configured, else None."""
        if dead_letters is not True:
            return dead_letters
        settings = self.errors.settings
        if not (settings.tolerance_all and settings.dlq_topic):
            return None
        from connector.tolerance.dead_letters import DeadLetterQueue

        return DeadLetterQueue(self.config, self.task_id, self.catalog)

    @property
    def path(self) -> str:
        """The name of the task's strategy (``columnar``, ``per-record``, ...)."""
        return self.strategy.name

    @property
    def batch_chain(self) -> BatchTransformationChain | None:
        """The SMT chain's batch form the strategy runs, if any."""
        return self.strategy.batch_chain

    def process(self, batch: pa.RecordBatch) -> SchemaNeeds:
        """Convert and buffer one raw batch; nothing is buffered if the batch needs a schema change.

        Records skipped by error tolerance are added to :attr:`errant` when the batch is buffered.
        """
        self.errors.begin(batch)
        needs, converted = self._converted(batch)
        if needs:
            self.errors.discard()
            return needs
        for table_name, data, positions in converted:
            self.tables.buffer(table_name, data, positions)
        self._keep_errant(self.errors.take())
        return needs

    def _keep_errant(self, taken: list[ErrantRecord]) -> None:
        """Add a buffered batch's errant records to :attr:`errant`, sending them early or trimming them
        when too many are held."""
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

    def take_errant(self) -> list[ErrantRecord]:
        """The errant records of the batches buffered so far (and forget them)."""
        errant, self.errant = self.errant, []
        return errant

    def _converted(self, batch: pa.RecordBatch) -> tuple[SchemaNeeds, list[Converted]]:
        """The batch by the task's strategy: the schema changes it needs, or its rows converted per table."""
        if self.path != PER_RECORD:
            return self.columnar_tries.process(batch)
        self.batches[PER_RECORD] += 1
        return self.conversion.convert(self.per_record.rows(batch), may_ask=True)

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
