"""A columnar strategy's batch: tried column-wise, and where that is declined, per record — or, with error
tolerance, screened and split first.

A columnar strategy declines a batch (:class:`~connector.api.declined.Declined`)
whenever it cannot promise the per-record result — including every error,
table creation and (for batch SMTs) schema change, so those always come from
the per-record strategy — and ``TaskPipeline.batches`` counts each batch by
the strategy that took it (``columnar`` for every columnar strategy) and each
decline by its reason (``declined: <reason>``).

Error tolerance (``errors.tolerance=all``, :mod:`connector.tolerance.errant`): a
declined batch is not handed to the per-record strategy as a whole, or one bad
record would send every batch down the slow path. Its suspicious values
(:mod:`connector.data.suspicious_rows`: JSON that does not parse to an object,
values without the registry frame) are screened out and go per record, the
rest is tried column-wise again and, if it still declines for its contents,
split in halves (down to :data:`~connector.data.convert.table_conversion.SPLIT_ROWS`
rows, which go per record). ``batches`` counts these as ``screened: <reason>``
and ``split: <reason>``, and each piece by the strategy that took it. After a
batch whose values failed the column-wise screen, the next batches are
screened before their first column-wise try (``screened ahead``) until one
comes out clean.
"""

from __future__ import annotations

import logging
from collections import Counter

import numpy as np
import pyarrow as pa

from connector.api.declined import Declined
from connector.data.columnar_rows import ColumnarRows
from connector.data.convert.table_conversion import SPLIT_ROWS, Converted, TableConversion
from connector.data.decoder import RecordDecoder
from connector.data.per_record import PerRecordRows
from connector.data.strategy import COLUMNAR, JSON_OBJECTS, PER_RECORD, REGISTRY_FRAMED, Strategy
from connector.data.suspicious_rows import not_json_objects, not_registry_framed
from connector.data.write.table_writer import SchemaNeeds
from connector.tolerance.errant import ErrorHandler

log = logging.getLogger(__name__)

#: Decline reasons that are about the table or the configuration, never about the records' contents:
#: splitting such a batch cannot help, so it goes per record as a whole.
_STRUCTURAL_DECLINES = ("table to create", "schema changes", "columns looked up case-insensitively",
                        "transforms (", "only tombstones", "empty batch", "null values",
                        "the schema does not fit the table")  # (one schema for the whole batch)

#: How thoroughly a declined batch may still be screened: the quick column-wise check, then the per-value
#: one; only the per-value one; none.
_BOTH_SCREENS, _PER_VALUE_SCREEN, _NO_SCREEN = 2, 1, 0

Result = tuple[SchemaNeeds, list[Converted]]


class ColumnarTries:
    """Runs the batches of a task with a columnar strategy, counting in ``batches`` what took each."""

    def __init__(self, task_id: str, strategy: Strategy, decoder: RecordDecoder, columnar: ColumnarRows,
                 per_record: PerRecordRows, conversion: TableConversion, errors: ErrorHandler,
                 batches: Counter):
        self.task_id = task_id
        self.strategy = strategy
        self.decoder = decoder
        self.columnar = columnar
        self.per_record = per_record
        self.conversion = conversion
        self.errors = errors
        self.batches = batches
        self._screen_ahead = False  # screen the next batch before trying it column-wise (bad values seen)

    def process(self, batch: pa.RecordBatch) -> Result:
        """One raw batch: its keys and headers checked by their converters (the columnar strategies build no
        records, but a rejected key or header is still the record's failure), then its values column-wise."""
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
                return self._screened(batch, suspicious, _PER_VALUE_SCREEN)
            self._screen_ahead = False
        return self._piece(batch, screen=_BOTH_SCREENS if tolerant else _NO_SCREEN)

    def _piece(self, batch: pa.RecordBatch, *, screen: int) -> Result:
        """A batch (or a piece of one) column-wise; with error tolerance, a declined one is screened or split.

        ``screen``: how thoroughly it may still be screened (``_BOTH_SCREENS``, ``_PER_VALUE_SCREEN``,
        ``_NO_SCREEN``).
        """
        try:
            result = self.conversion.convert(self.columnar.rows(batch), may_ask=self.strategy.name == COLUMNAR)
        except Declined as declined:
            reason = declined.reason
            self.batches[f"declined: {reason}"] += 1
            log.debug("Task %s: batch declined by the %s path (%s)", self.task_id, self.strategy.name, reason)
            if self.errors.tolerant and not reason.startswith(_STRUCTURAL_DECLINES):
                return self._screened_or_split(batch, reason, screen)
            return self._per_record(batch)
        self.batches[COLUMNAR] += 1
        return result

    def _screened_or_split(self, batch: pa.RecordBatch, reason: str, screen: int) -> Result:
        """A batch declined for its contents: its suspicious rows apart, else its halves, else per record."""
        for level in range(screen, _NO_SCREEN, -1):
            suspicious = self._suspicious(batch, thorough=level == _PER_VALUE_SCREEN)
            if suspicious is not None:
                self.batches[f"screened: {reason}"] += 1
                self._screen_ahead = self._screen_ahead or level == _BOTH_SCREENS
                return self._screened(batch, suspicious, level - 1)
        if batch.num_rows > SPLIT_ROWS:
            self.batches[f"split: {reason}"] += 1
            half = batch.num_rows // 2
            return merged([self._piece(batch.slice(0, half), screen=_NO_SCREEN),
                           self._piece(batch.slice(half), screen=_NO_SCREEN)])
        return self._per_record(batch)

    def _suspicious(self, batch: pa.RecordBatch, thorough: bool) -> np.ndarray | None:
        """Rows of a declined batch that look bad on their own (:mod:`connector.data.suspicious_rows`)."""
        values = batch.column("value")
        if self.strategy.name in REGISTRY_FRAMED:
            return not_registry_framed(values)
        if self.strategy.name in JSON_OBJECTS:
            return not_json_objects(values, thorough)
        return None

    def _screened(self, batch: pa.RecordBatch, suspicious: np.ndarray, screen: int) -> Result:
        """The suspicious rows per record, the others column-wise again."""
        pieces = [self._per_record(batch.filter(pa.array(suspicious)))]
        rest = batch.filter(pa.array(~suspicious))
        if rest.num_rows:
            pieces.append(self._piece(rest, screen=screen))
        return merged(pieces)

    def _per_record(self, batch: pa.RecordBatch) -> Result:
        self.batches[PER_RECORD] += 1
        return self.conversion.convert(self.per_record.rows(batch), may_ask=True)


def merged(pieces: list[Result]) -> Result:
    """The results of a batch's pieces: their needs, or all their tables (in piece order)."""
    needs = SchemaNeeds()
    for piece_needs, _ in pieces:
        needs.merge(piece_needs)
    if needs:
        return needs, []
    return needs, [converted for _, tables in pieces for converted in tables]
