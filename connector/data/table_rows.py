"""The rows one table gets from a batch, in whichever form the strategy produced them.

Every strategy hands the convert step a :class:`TableRows` per table; the
form says how the values are held (``RAW_JSON``, ``MAPS``, ``TYPED`` or
``RECORDS``) and the source coordinates travel with them, so the committed
rows can be dropped (:func:`not_committed`) and a failing row named and sent
to the dead-letter queue whatever the form.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from connector.api.record import SinkRecord, TopicPartition

RAW_JSON, MAPS, TYPED, RECORDS = "raw JSON", "maps", "typed", "records"

#: A record's source coordinates before any SMT: (original topic, partition, offset).
Coordinates = tuple[str, int, int]


@dataclass
class TableRows:
    """The rows one table gets from a batch, with their source coordinates (before any SMT).

    ``values`` is one of four forms: ``RAW_JSON`` (a binary array of JSON
    objects), ``MAPS`` (a struct array of parsed, transformed JSON objects),
    ``TYPED`` (a struct array typed by the Connect STRUCT schema ``schema``,
    as :func:`~converters.batch.typed.to_table` takes it: decoded Avro
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
