"""What travels between the driver and the tasks: task assignments and commit messages.

A task's :class:`TaskResult` is the equivalent of the Iceberg sink's
``DataWritten`` + ``DataComplete`` events: the data files it wrote per table and
the next offset it reached per source partition. It can also stop early and ask
the coordinator for a table to be created or evolved; the coordinator applies
one schema change per table for all such requests of a cycle and re-runs the
unfinished ranges, so no file is ever written against a schema the table does
not have.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from connector.kafka.offsets import OffsetRange

TopicPartition = tuple[str, int]


@dataclass(frozen=True)
class TaskAssignment:
    """One Spark partition's work: offset ranges to read, and the connector to run."""

    task_id: str
    ranges: tuple[OffsetRange, ...]
    props: dict[str, str]
    worker: dict[str, str]


@dataclass
class TaskResult:
    """A task's commit message (pickled back to the driver)."""

    task_id: str
    data_files: dict[str, list[Any]] = field(default_factory=dict)  # table → pyiceberg DataFiles
    next_offsets: dict[TopicPartition, int] = field(default_factory=dict)
    max_timestamps: dict[TopicPartition, int | None] = field(default_factory=dict)
    unfinished: list[OffsetRange] = field(default_factory=list)
    create_requests: dict[str, Any] = field(default_factory=dict)  # table → pyiceberg Schema
    schema_updates: dict[str, Any] = field(default_factory=dict)  # table → SchemaUpdates
    records_read: int = 0
    records_written: dict[str, int] = field(default_factory=dict)
    error: str | None = None

    @property
    def needs_schema_change(self) -> bool:
        return bool(self.create_requests or self.schema_updates)
