"""What travels between the driver and the tasks: task assignments and task results.

A task's :class:`TaskResult` is the equivalent of the Iceberg sink's
``DataWritten`` + ``DataComplete`` events: the data files it wrote per table and
the next offset it reached per source partition; for upsert and CDC tables, also
the keys each of its flushes changed (``changes``, :mod:`connector.data.convert.changes`). It can
also stop early and ask for tables to be created or evolved (``needs``); the coordinator applies one
schema change per table for all such requests of a round and re-runs the
unfinished ranges, so no file is ever written against a schema the table does
not have. A task past its deadline (``iceberg.control.commit.timeout-ms``)
stops reading and reports where it stopped (``cut_short``): the cycle
commits that far. The Spark Data Source sink returns the same result from each of its
tasks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.compute as pc

from connector.api.record import TopicPartition
from connector.config.sink_config import SinkConfig
from connector.data.convert.changes import ChangeSegment
from connector.data.write.table_writer import SchemaNeeds
from connector.kafka.offsets import OffsetRange


@dataclass(frozen=True)
class TaskAssignment:
    """One Spark partition's work: offset ranges to read, and the connector (parsed once, on the driver)."""

    task_id: str
    ranges: tuple[OffsetRange, ...]
    config: SinkConfig
    # wall-clock time (time.time()) past which the task stops reading (iceberg.control.commit.timeout-ms);
    # None: it reads its ranges to their ends
    deadline: float | None = None


@dataclass
class TaskResult:
    """A task's commit message (pickled back to the driver)."""

    task_id: str
    data_files: dict[str, list[Any]] = field(default_factory=dict)  # table → pyiceberg DataFiles
    # upsert/CDC tables only: table → one segment per flush, in flush order (their files are in data_files too)
    changes: dict[str, list[ChangeSegment]] = field(default_factory=dict)
    next_offsets: dict[TopicPartition, int] = field(default_factory=dict)
    max_timestamps: dict[TopicPartition, int | None] = field(default_factory=dict)
    unfinished: list[OffsetRange] = field(default_factory=list)
    # partitions the task stopped reading at its deadline → the next offset it reached (the range's start
    # when it read nothing of it): the cycle commits up to there and the next cycle reads on
    cut_short: dict[TopicPartition, int] = field(default_factory=dict)
    needs: SchemaNeeds = field(default_factory=SchemaNeeds)
    records_read: int = 0
    bytes_read: dict[str, int] = field(default_factory=dict)  # topic → key and value bytes
    records_written: dict[str, int] = field(default_factory=dict)
    dlq_records: dict[str, int] = field(default_factory=dict)  # source topic → records sent to the DLQ
    # table → the offsets it held for this task's partitions each time the task loaded it (None: no offset);
    # the task skipped the records below them. The fence's note for a table the cycle did not know at its start.
    offsets_seen: dict[str, list[dict[TopicPartition, int | None]]] = field(default_factory=dict)
    error: str | None = None
    trace: str | None = None  # the task's Python traceback when it failed (shown as a Connect task's trace)
    retriable: bool = False  # the failure was transient (a RetriableException): the cycle may be run again

    def saw(self, table_name: str, offsets: dict[TopicPartition, int], partitions: Iterable[TopicPartition]) -> None:
        """Note the ``offsets`` ``table_name`` held for ``partitions`` when this task loaded it."""
        self.offsets_seen.setdefault(table_name, []).append({tp: offsets.get(tp) for tp in partitions})

    def track(self, batch: pa.RecordBatch) -> None:
        """Count a processed batch of one source partition: records, bytes, next offset, newest timestamp.

        The newest timestamp of a partition becomes None once a record without
        one is seen (then the commit cannot say how current the table is).
        """
        tp = (batch.column("topic")[0].as_py(), batch.column("partition")[0].as_py())
        self.records_read += batch.num_rows
        size = sum(pc.sum(pc.binary_length(batch.column(c))).as_py() or 0 for c in ("key", "value"))
        self.bytes_read[tp[0]] = self.bytes_read.get(tp[0], 0) + size
        following = pc.max(batch.column("offset")).as_py() + 1
        self.next_offsets[tp] = max(following, self.next_offsets.get(tp, following))
        timestamps = batch.column("timestamp")
        newest = pc.max(timestamps).as_py()
        if timestamps.null_count or newest is None:
            self.max_timestamps[tp] = None
        elif self.max_timestamps.get(tp, 0) is not None:
            self.max_timestamps[tp] = max(self.max_timestamps.get(tp, newest), newest)
