"""The columnar strategies: a whole raw batch → the rows each table gets, column-wise, or Declined.

One method per kind of value (:mod:`connector.data.strategy` names the
strategies): raw JSON as it is, JSON parsed to maps through the batch SMTs,
and values a typed reader decodes (Avro, JSON with schemas, JSON Schema,
Protobuf), with or without a typed SMT chain. A strategy declines a batch
(:class:`~connector.api.declined.Declined`) whenever it cannot promise the
per-record result; the reasons are counted in ``TaskPipeline.batches``, so
their strings are part of what the task reports.

Tombstones (null values) are skipped, as the Iceberg sink skips them; a typed
SMT chain sees them as null rows (its stages may act on their keys and
headers), and they are skipped after it.
"""

from __future__ import annotations

from dataclasses import replace

import pyarrow as pa

from connector.api.declined import Declined
from connector.api.schema import Type
from connector.data.convert.json_rows import parse_json_objects
from connector.data.router import RecordRouter
from connector.data.strategy import (
    COLUMNAR,
    COLUMNAR_AVRO,
    COLUMNAR_AVRO_WITH_SMTS,
    COLUMNAR_JSON_SCHEMAS,
    COLUMNAR_JSON_SCHEMAS_WITH_SMTS,
    COLUMNAR_WITH_SMTS,
    Strategy,
)
from connector.data.table_rows import MAPS, RAW_JSON, TYPED, TableRows
from converters.batch.avro import AvroBatchReader
from converters.batch.json_envelope import EnvelopeReader
from converters.batch.json_schema import JsonSchemaBatchReader
from converters.batch.protobuf import ProtobufBatchReader
from converters.batch.typed import DecodedBatch, spread_rows
from smt.batch import RecordBatchView, Values


class ColumnarRows:
    """The rows each table gets from a raw batch, by the task's columnar strategy."""

    def __init__(self, strategy: Strategy, router: RecordRouter):
        self.strategy = strategy
        self.router = router

    def rows(self, batch: pa.RecordBatch) -> dict[str, TableRows]:
        """The rows each table gets; Declined when the result could differ from the per-record one."""
        name = self.strategy.name
        if name == COLUMNAR:
            return self._raw_json_rows(batch)
        if name == COLUMNAR_WITH_SMTS:
            return self._transformed_rows(batch)
        if name in (COLUMNAR_AVRO, COLUMNAR_AVRO_WITH_SMTS):
            return self._avro_rows(batch)
        if name in (COLUMNAR_JSON_SCHEMAS, COLUMNAR_JSON_SCHEMAS_WITH_SMTS):
            return self._envelope_rows(batch)
        return self._registry_rows(batch)  # JSON Schema, Protobuf

    # --- schemaless JSON ---------------------------------------------------------------------

    def _raw_json_rows(self, batch: pa.RecordBatch) -> dict[str, TableRows]:
        values = batch.column("value")
        rows = TableRows(RAW_JSON, values, batch.column("topic"), batch.column("partition"), batch.column("offset"))
        kept = rows.filter(values.is_valid())
        return {table: kept for table in self.router.static_tables}

    def _transformed_rows(self, batch: pa.RecordBatch) -> dict[str, TableRows]:
        """The batch's JSON objects parsed to maps, through the batch SMTs, routed column-wise."""
        batch_chain = self.strategy.batch_chain
        assert batch_chain is not None  # chosen with the strategy
        if batch_chain.unsuitable:
            raise Declined(f"transforms ({batch_chain.unsuitable})")
        parsed = parse_json_objects(batch.column("value"))
        try:
            view = batch_chain.apply(RecordBatchView.from_raw(batch, Values.from_json(parsed.array, parsed.loose)))
        except Declined as declined:
            raise Declined(f"transforms ({declined.reason})") from declined
        values = view.value.array
        if not pa.types.is_struct(values.type) and values.null_count < len(values):
            raise Declined("values are not maps after the transforms")
        rows = TableRows(MAPS, values, view.original_topic, view.original_partition, view.offset)
        return {table: rows.filter(mask) for table, mask in self.router.route_batch(values).items()}

    # --- values a typed reader decodes ----------------------------------------------------------

    def _avro_rows(self, batch: pa.RecordBatch) -> dict[str, TableRows]:
        """The Avro reader takes every value, tombstones included (they come back as null rows)."""
        reader = self.strategy.reader
        assert isinstance(reader, AvroBatchReader)  # chosen with the strategy
        decoded = reader.decode(batch.column("topic")[0].as_py(), batch.column("value"), batch.column("headers"))
        return self._typed(batch, batch, decoded)

    def _envelope_rows(self, batch: pa.RecordBatch) -> dict[str, TableRows]:
        """The envelope reader takes the present values."""
        reader = self.strategy.reader
        assert isinstance(reader, EnvelopeReader)  # chosen with the strategy
        present = batch.filter(batch.column("value").is_valid())
        return self._typed(batch, present, reader.decode(present.column("value")))

    def _registry_rows(self, batch: pa.RecordBatch) -> dict[str, TableRows]:
        """A reader that takes the present values of one topic (JSON Schema, Protobuf)."""
        reader = self.strategy.reader
        assert isinstance(reader, (JsonSchemaBatchReader, ProtobufBatchReader))  # chosen with the strategy
        present = batch.filter(batch.column("value").is_valid())
        if present.num_rows == 0:
            raise Declined("only tombstones")
        decoded = reader.decode(present.column("topic")[0].as_py(), present.column("value"), batch.column("headers"))
        return self._typed(batch, present, decoded)

    def _typed(self, batch: pa.RecordBatch, decoded_rows: pa.RecordBatch, decoded: DecodedBatch
               ) -> dict[str, TableRows]:
        """Every table gets the decoded rows, through the typed SMT chain if there is one.

        ``decoded_rows``: the rows of ``batch`` that ``decoded`` holds (``batch`` itself, or its
        present values only).
        """
        if self.strategy.batch_chain is None:
            return self._typed_rows(decoded_rows, decoded)
        return self._typed_transformed_rows(batch, _with_tombstones(decoded, batch))

    def _typed_rows(self, batch: pa.RecordBatch, decoded: DecodedBatch) -> dict[str, TableRows]:
        """Every table gets the decoded rows of ``batch`` (one per record; null rows, tombstones, left out)."""
        rows = TableRows(TYPED, decoded.values, batch.column("topic"), batch.column("partition"),
                         batch.column("offset"), decoded.connect_schema)
        kept = rows.filter(decoded.values.is_valid()) if decoded.values.null_count else rows
        return {table: kept for table in self.router.static_tables}

    def _typed_transformed_rows(self, batch: pa.RecordBatch, decoded: DecodedBatch) -> dict[str, TableRows]:
        """The decoded rows of ``batch`` (tombstones included) through the typed batch SMTs, to every table."""
        batch_chain = self.strategy.batch_chain
        assert batch_chain is not None  # chosen with the strategy
        view = replace(RecordBatchView.from_raw(batch, Values(decoded.values, schema=decoded.connect_schema),
                                                raw=False), tombstone=batch.column("value").is_null())
        try:
            view = batch_chain.apply(view)
        except Declined as declined:
            raise Declined(f"transforms ({declined.reason})") from declined
        values, schema = view.value.array, view.value.schema
        if values.null_count == len(values):
            return {}  # every record filtered out, or a tombstone (skipped)
        if schema is None or schema.type is not Type.STRUCT or not pa.types.is_struct(values.type):
            raise Declined("values are not Structs after the transforms")
        rows = TableRows(TYPED, values, view.original_topic, view.original_partition, view.offset, schema)
        kept = rows.filter(values.is_valid()) if values.null_count else rows
        return {table: kept for table in self.router.static_tables}


def _with_tombstones(decoded: DecodedBatch, batch: pa.RecordBatch) -> DecodedBatch:
    """The decoded values of ``batch``'s non-null values, with its tombstones back in place as null rows."""
    if len(decoded.values) == batch.num_rows:
        return decoded
    return DecodedBatch(spread_rows(decoded.values, batch.column("value").is_valid()), decoded.connect_schema)
