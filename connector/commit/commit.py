"""The one commit path: task results → one Iceberg snapshot per table, with the offsets it covers.

Used by the coordinator (``icefloe run``) and by the Spark Data Source sink alike:

* :func:`schema_rounds` — run work, apply the schema needs it reports, re-run
  what it left unfinished, until nothing is left (bounded);
* :class:`CommitBatch` — the results of one commit aggregated: files and rows
  per table, next offsets and newest timestamps per source partition;
* :func:`commit_table` — one fast append per table with the offsets in the
  snapshot summary (never moving a table's offsets backwards), retried when
  another writer committed to the branch in between, and refused when another
  writer moved the table's offsets since the cycle started (``fence``,
  connector/commit/fencing.py); for a table in upsert mode, the same snapshot
  carries the position deletes of the keys the cycle changed
  (connector/commit/upserts.py);
* :func:`commit_manifest_merge` — one ``replace`` snapshot adding no data whose manifests are the head's, merged.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, TypeVar

from pyiceberg.exceptions import CommitFailedException, ValidationException
from pyiceberg.manifest import ManifestFile
from pyiceberg.table import Transaction
from pyiceberg.table.snapshots import Operation, Summary
from pyiceberg.table.update.snapshot import _MergeAppendFiles
from pyiceberg.typedef import EMPTY_DICT

from connector.api.errors import ConnectException, RetriableException
from connector.api.record import TopicPartition
from connector.commit.fencing import Fence
from connector.commit.messages import TaskResult
from connector.commit.schema_changes import apply_schema_needs
from connector.commit.upserts import commit_upserts
from connector.config.sink_config import SinkConfig
from connector.data.convert.changes import ChangeSegment, id_columns_of
from connector.data.write.table_writer import SchemaNeeds
from connector.iceberg.append import append_files
from connector.iceberg.branches import commit_to_branch
from connector.iceberg.snapshot_offsets import (
    branch_head,
    committed_offsets,
    java_control_properties,
    java_keys,
    offsets_reset_key,
    summary_properties,
)
from connector.iceberg.snapshot_summary import with_totals

log = logging.getLogger(__name__)

MAX_SCHEMA_ROUNDS = 20
COMMIT_ATTEMPTS = 10
COMMIT_BACKOFF_SECONDS = (0.1, 2.0)  # first and largest pause between attempts
REWRITE_ATTEMPTS = 3

Work = TypeVar("Work")


def schema_rounds(catalog, config: SinkConfig, work: Work,
                  run: Callable[[Work], tuple[SchemaNeeds, Work | None]]) -> int:
    """Run ``work`` until ``run`` leaves nothing; apply the schema needs of each round in between.

    ``run(work)`` returns the needs the work found and what is left of it (None
    when done). Returns the number of rounds.
    """
    for round_number in range(1, MAX_SCHEMA_ROUNDS + 1):
        needs, remaining = run(work)
        if needs:
            apply_schema_needs(catalog, config, needs.create, needs.updates)
        if remaining is None:
            return round_number
        work = remaining
    raise ConnectException(f"Gave up after {MAX_SCHEMA_ROUNDS} rounds of schema changes")


@dataclass
class CommitBatch:
    """The task results of one commit, aggregated."""

    files: dict[str, list[Any]] = field(default_factory=dict)
    changes: dict[str, list[ChangeSegment]] = field(default_factory=dict)  # upsert tables: segments, in task order
    rows: dict[str, int] = field(default_factory=dict)
    next_offsets: dict[TopicPartition, int] = field(default_factory=dict)
    max_timestamps: dict[TopicPartition, int | None] = field(default_factory=dict)
    records_read: int = 0
    bytes_read: dict[str, int] = field(default_factory=dict)  # topic → key and value bytes
    dlq_records: dict[str, int] = field(default_factory=dict)  # source topic → records sent to the DLQ

    @classmethod
    def of(cls, results: Iterable[TaskResult]) -> "CommitBatch":
        batch = cls()
        for result in results:
            batch.add(result)
        return batch

    def add(self, result: TaskResult) -> None:
        self.records_read += result.records_read
        for topic, size in result.bytes_read.items():
            self.bytes_read[topic] = self.bytes_read.get(topic, 0) + size
        for topic, count in result.dlq_records.items():
            self.dlq_records[topic] = self.dlq_records.get(topic, 0) + count
        for table, table_files in result.data_files.items():
            self.files.setdefault(table, []).extend(table_files)
        for table, segments in result.changes.items():
            self.changes.setdefault(table, []).extend(segments)
        for table, rows in result.records_written.items():
            self.rows[table] = self.rows.get(table, 0) + rows
        for tp, offset in result.next_offsets.items():
            self.next_offsets[tp] = max(offset, self.next_offsets.get(tp, offset))
        for tp, ts in result.max_timestamps.items():
            if tp not in self.max_timestamps:
                self.max_timestamps[tp] = ts
            else:
                current = self.max_timestamps[tp]
                self.max_timestamps[tp] = None if current is None or ts is None else max(current, ts)

    def tables(self) -> list[str]:
        """The tables this commit writes to: new files, or (upsert tables) keys to delete."""
        return sorted({*self.files, *self.changes})

    def valid_through(self, covered: Iterable[TopicPartition]) -> int | None:
        """Min over ``covered`` partitions of their newest record timestamp; None if any lacks one."""
        newest = self.max_timestamps
        covered = set(covered)
        if set(newest) != covered or any(newest[tp] is None for tp in covered):
            return None
        return min(newest.values()) if newest else None  # type: ignore[type-var]


def commit_tables(catalog, config: SinkConfig, tables: Iterable[str], files: Mapping[str, list],
                  covered: Mapping[TopicPartition, int], properties: Mapping[str, str], *,
                  valid_through: int | None = None, changes: Mapping[str, list[ChangeSegment]] | None = None,
                  fence: Fence | None = None,
                  after_each: Callable[[str, list], None] | None = None) -> dict[str, int]:
    """The one driver-side commit loop, shared by the coordinator's cycles, the Spark format's batches and
    the DLQ replay: one snapshot per table of ``tables``, all under one commit id, each recording ``covered``
    and ``properties`` in its summary (:func:`commit_table`); ``after_each`` is told each table committed.
    The new snapshot ids by table."""
    commit_id = str(uuid.uuid4())
    snapshots: dict[str, int] = {}
    for table_name in tables:
        table_files = list(files.get(table_name, []))
        snapshots[table_name] = commit_table(catalog, config, table_name, table_files, dict(covered), commit_id,
                                             valid_through, dict(properties), fence=fence,
                                             changes=(changes or {}).get(table_name))
        if after_each is not None:
            after_each(table_name, table_files)
    return snapshots


def commit_table(catalog, config: SinkConfig, table_name: str, data_files: list,
                 covered: Mapping[TopicPartition, int | None], commit_id: str, valid_through: int | None,
                 extra_properties: dict[str, str] | None = None, *, rewind: bool = False,
                 fence: Fence | None = None, changes: list[ChangeSegment] | None = None) -> int:
    """One fast append of ``data_files`` with the offsets in the snapshot summary; the new snapshot's id.

    The offsets recorded are the table's previous ones updated with ``covered``,
    never lower than what the table had. When another writer commits to the
    branch first, the append is retried on the new head (a fast append does not
    conflict with appends), with backoff, up to :data:`COMMIT_ATTEMPTS` times.

    ``rewind`` (altering or resetting offsets, no data files) records ``covered``
    as given, lower or not, and a None offset removes that partition.

    ``fence``: what the cycle saw at its start; the commit is refused
    (:class:`~connector.commit.fencing.FencedException`) if the table moved since.
    The Java sinks' control-topic keys are carried into the new snapshot unchanged.

    ``changes``: the segments of an upsert table (``connector/data/convert/changes.py``); the
    snapshot then also deletes, by position, every row they supersede.
    """
    branch = config.iceberg.table_config(table_name).commit_branch or "main"
    pause, longest = COMMIT_BACKOFF_SECONDS
    for attempt in range(1, COMMIT_ATTEMPTS + 1):
        table = catalog.load_table(table_name)
        try:
            snapshot_id = _append(table, config, branch, data_files, covered, commit_id, valid_through,
                                  extra_properties, rewind, fence, table_name, changes)
        except CommitFailedException as exc:
            if attempt == COMMIT_ATTEMPTS:
                # contention, not a fault of this data: the job runs the cycle again (connector.tolerance.transient)
                raise RetriableException(f"Could not commit to {table_name} after {attempt} attempts: {exc}") from exc
            log.info("Commit to %s conflicted with another writer (%s); retrying", table_name, exc)
            time.sleep(pause)
            pause = min(pause * 2, longest)
            continue
        log.info("Committed %d file(s) to %s (snapshot %s)", len(data_files), table_name, snapshot_id)
        return snapshot_id
    raise AssertionError("unreachable")


def _append(table, config: SinkConfig, branch: str, data_files: list, covered: Mapping[TopicPartition, int | None],
            commit_id: str, valid_through: int | None, extra_properties: dict[str, str] | None,
            rewind: bool, fence: Fence | None = None, table_name: str = "",
            changes: list[ChangeSegment] | None = None) -> int:
    java = java_keys(config)
    previous = committed_offsets(table, config.group_id, branch, java)
    java_props = java_control_properties(table, java, branch)
    if fence is not None:
        fence.check(table_name, previous, java_props, covered)
    offsets = _next_offsets(previous, covered, rewind)
    props = summary_properties(offsets, config.group_id, commit_id, valid_through)
    if not offsets:
        props[offsets_reset_key(config.group_id)] = "true"
    props.update(java_props)
    props.update(extra_properties or {})
    if changes is not None:
        return commit_upserts(table, branch, props, data_files, changes,
                              id_columns_of(config.iceberg, table_name, table))
    append_files(table, branch, props, data_files)  # a branch of a table without snapshots too
    head = branch_head(table, branch)
    assert head is not None, "the append just made a snapshot"
    return head.snapshot_id


def _next_offsets(previous: dict[TopicPartition, int], covered: Mapping[TopicPartition, int | None],
                  rewind: bool) -> dict[TopicPartition, int]:
    if rewind:
        merged = {**previous, **covered}
        return {tp: offset for tp, offset in merged.items() if offset is not None}
    return {**previous, **{tp: max(offset, previous.get(tp, offset)) for tp, offset in covered.items()
                           if offset is not None}}


def commit_manifest_merge(catalog, config: SinkConfig, table_name: str, properties: dict[str, str]) -> int | None:
    """Merge the branch head's data manifests in a ``replace`` snapshot adding no data; the snapshot's id.

    As Java's ``RewriteManifests``: entries keep their snapshot ids and sequence numbers (they become
    EXISTING), and the summary counts the manifests created, kept and replaced. None when it kept
    conflicting for :data:`REWRITE_ATTEMPTS` attempts.
    """
    branch = config.iceberg.table_config(table_name).commit_branch or "main"
    for attempt in range(1, REWRITE_ATTEMPTS + 1):
        table = catalog.load_table(table_name)
        try:
            return commit_to_branch(table, branch, lambda transaction, target: _ManifestRewrite(
                transaction, target, properties))
        except (CommitFailedException, ValidationException) as exc:
            log.info("Merging the manifests of %s conflicted (attempt %d): %s", table_name, attempt, exc)
    return None


class _ManifestRewrite(_MergeAppendFiles):
    """pyiceberg's merge of manifests, forced on, recorded as Java's ``RewriteManifests`` records it."""

    def __init__(self, transaction: Transaction, branch: str | None, properties: Mapping[str, str]):
        super().__init__(operation=Operation.REPLACE, transaction=transaction, io=transaction._table.io,
                         branch=branch, snapshot_properties=dict(properties))
        self._merge_enabled = True  # whatever commit.manifest-merge.enabled says for appends
        self._min_count_to_merge = 2
        self._counts: dict[str, str] = {}

    def _manifests(self) -> list[ManifestFile]:
        merged = super()._manifests()
        before = {m.manifest_path: m for m in self._parent_manifests()}
        after = {m.manifest_path for m in merged}
        replaced = [m for path, m in before.items() if path not in after]
        self._counts = {
            "manifests-created": str(sum(1 for m in merged if m.manifest_path not in before)),
            "manifests-kept": str(sum(1 for m in merged if m.manifest_path in before)),
            "manifests-replaced": str(len(replaced)),
            "entries-processed": str(sum((m.added_files_count or 0) + (m.existing_files_count or 0)
                                         for m in replaced)),
        }
        return merged

    def _parent_manifests(self) -> list[ManifestFile]:
        if self._parent_snapshot_id is None:
            return []
        parent = self._transaction.table_metadata.snapshot_by_id(self._parent_snapshot_id)
        return parent.manifests(self._io) if parent is not None else []

    def _summary(self, snapshot_properties: dict[str, str] = EMPTY_DICT) -> Summary:
        metadata = self._transaction.table_metadata
        parent = metadata.snapshot_by_id(self._parent_snapshot_id) if self._parent_snapshot_id is not None else None
        return with_totals(Operation.REPLACE, {**self._counts, **snapshot_properties},
                           parent.summary if parent is not None else None)
