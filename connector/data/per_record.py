"""The per-record strategy: Connect's own contract, record by record.

converters → ``SinkRecord`` → SMT chain → route. It is the specification the
columnar strategies must match, the strategy of every configuration they do
not cover, and where every batch (or piece of one) they decline goes. With
error tolerance a record that fails in a converter or an SMT is reported to
the task's :class:`~connector.tolerance.errant.ErrorHandler` and skipped.
"""

from __future__ import annotations

import functools
from dataclasses import replace

import pyarrow as pa

from connector.api.errors import ConnectException
from connector.api.record import SinkRecord
from connector.data.decoder import RecordConversionFailed, RecordDecoder
from connector.data.router import RecordRouter
from connector.data.table_rows import TableRows
from connector.tolerance.errant import ErrorHandler
from smt.batch import RecordBatchView
from smt.chain import TransformationChain

#: The raw batch's columns, in the order ``RecordDecoder.decode`` takes them.
_RECORD_COLUMNS = ("topic", "partition", "offset", "timestamp", "timestamp_type", "key", "value", "headers")


class PerRecordRows:
    """The rows each table gets from a raw batch, record by record."""

    def __init__(self, decoder: RecordDecoder, chain: TransformationChain, router: RecordRouter,
                 errors: ErrorHandler):
        self.decoder = decoder
        self.chain = chain
        self.router = router
        self.errors = errors

    def rows(self, batch: pa.RecordBatch) -> dict[str, TableRows]:
        routed: dict[str, list[SinkRecord]] = {}
        for record in self._decoded(batch):
            try:
                transformed = self.decoder.retry.run(functools.partial(self.chain.apply, record))
                if transformed is None:
                    continue
                tables = self.router.route(transformed)  # a dynamic route value may name no table
            except ConnectException as exc:
                self.errors.fail(exc, (record.original_topic, record.original_kafka_partition,
                                       record.original_kafka_offset))
                continue
            for table in tables:
                routed.setdefault(table, []).append(transformed)
        return {table: TableRows.of_records(records) for table, records in routed.items()}

    def _decoded(self, batch: pa.RecordBatch):
        """The batch's records through the converters; with error tolerance, failures are skipped."""
        if not self.errors.tolerant:
            yield from self.decoder.decode_batch(batch)
            return
        columns = [batch.column(n).to_pylist() for n in _RECORD_COLUMNS]
        for row in zip(*columns):
            try:
                yield self.decoder.decode(*row)
            except RecordConversionFailed as exc:
                self.errors.fail(exc, (row[0], row[1], row[2]))

    def records_of(self, view: RecordBatchView, with_values: bool) -> list[SinkRecord]:
        """The records a per-record stage of a batch SMT chain sees for the view's rows: keys and headers
        through the converters.

        ``with_values``: decode the values from the raw JSON too (else they are left null, for the
        caller to fill in from the maps).
        """
        columns = [view.original_topic, view.original_partition, view.offset, view.timestamp,
                   view.timestamp_type, view.key, view.raw_value if with_values else None, view.headers]
        rows = zip(*(c.to_pylist() if c is not None else [None] * view.num_rows for c in columns))
        topics, partitions = view.topic.to_pylist(), view.partition.to_pylist()
        return [replace(self.decoder.decode(*row), topic=topic, kafka_partition=partition)
                for row, topic, partition in zip(rows, topics, partitions)]
