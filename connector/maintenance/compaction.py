"""Compaction: a partition's data files rewritten into target-sized files, one snapshot per group.

Two reasons to rewrite a partition's files (the rules: :mod:`.planner`):
many small files, and, in upsert and CDC tables, many position deletes
(``icefloe.maintenance.deletes.min-files`` delete files or
``icefloe.maintenance.deletes.min-ratio`` of its rows deleted), which every
reader otherwise applies on every scan.

The rows are read through pyiceberg's Arrow scan of exactly the group's files,
each with the position delete files that apply to it (so a deleted row never
comes back), projected on the table's current schema (files written before a
column was added read it as nulls), written as one Parquet file with
pyiceberg's write path (the table's compression codec, column statistics,
partition values) and committed as one row delta
(:func:`connector.iceberg.row_delta.commit_row_delta`): one ``replace``
snapshot (as Iceberg's ``RewriteFiles`` records it, so that incremental
readers skip it) removing the group's data files and their delete files and
adding the new file, with no offsets. The row delta refuses to land when a file of the group
is gone or another writer added deletes against one since it was read; then,
or when other writers keep winning the race, the new file is deleted and the
files stay as they were.

When the table has a sort order (on columns, identity transforms), the
rows of the new file follow it.

The round at the end of a backfill (``--until-caught-up``) leaves the files
that backfill just wrote as they are when each holds at least
:data:`BACKFILL_FILE_ROWS` rows: a backfill task writes one file per table
partition for a range of at least that many records, as a Spark batch write
writes one file per task, and merging a few such files into one at exit
would write the whole backfill a second time for little gain to readers.
Compaction is for the small files of frequent commits (streaming cycles,
cycles bounded by a small ``icefloe.commit.max-records``); a continuous job's
budgeted rounds may still fold the backfill's files in later, with the small
files of the commits after them.

Only files of the table's current partition spec are compacted, and a table
with delete files that do not reference one data file each (equality deletes,
partition-scoped position deletes, written by other engines) is skipped:
dropping those needs every data file they may apply to rewritten at once.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable, Collection, Mapping

import pyarrow as pa
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.expressions import AlwaysTrue
from pyiceberg.io.pyarrow import ArrowScan, write_file
from pyiceberg.manifest import DataFile
from pyiceberg.partitioning import PartitionFieldValue, PartitionKey
from pyiceberg.table import FileScanTask, Table, WriteTask
from pyiceberg.table.sorting import NullOrder, SortDirection
from pyiceberg.transforms import IdentityTransform

from connector.commit.commit import REWRITE_ATTEMPTS
from connector.faults import fault_point
from connector.iceberg.live_files import live_files
from connector.iceberg.row_delta import RowDeltaConflict, commit_row_delta
from connector.kafka.offsets import MIN_SPLIT_RECORDS
from connector.maintenance.planner import Candidate, Group, plan_groups
from connector.maintenance.policy import TablePolicy

log = logging.getLogger(__name__)

MAINTENANCE_OPERATION = "icefloe.maintenance"  # snapshot summary property of maintenance snapshots
#: A file a backfill just wrote with at least this many rows is kept as written (the least a backfill
#: task reads when it splits a partition's range).
BACKFILL_FILE_ROWS = MIN_SPLIT_RECORDS


@dataclass
class CompactionReport:
    groups: int = 0  # groups committed
    files_removed: int = 0
    delete_files_removed: int = 0  # position delete files applied and dropped
    files_added: int = 0
    bytes_rewritten: int = 0  # size of the files removed
    given_up: int = 0  # groups that could not commit
    pending: int = 0  # groups left for a later round (budget spent)
    seconds: float = 0.0
    snapshots: list[int] = field(default_factory=list)


def live_data_files(table: Table, branch: str | None) -> tuple[list[DataFile], bool]:
    """The data files of the branch head, and whether it has delete files."""
    live = live_files(table, branch)
    return [f.file for f in live.data], bool(live.deletes)


@dataclass
class Plan:
    """The groups to rewrite now, the data files by path and the delete files applying to each."""

    groups: list[Group] = field(default_factory=list)
    data: dict[str, DataFile] = field(default_factory=dict)
    deletes: dict[str, list[DataFile]] = field(default_factory=dict)


def plan(table: Table, branch: str | None, policy: TablePolicy, backfill_snapshots: Collection[int] = ()) -> Plan:
    """What to rewrite on ``branch``'s head: nothing when it holds delete files that are not file-scoped.

    ``backfill_snapshots``: the data commits of the backfill that just ended, whose files of at least
    :data:`BACKFILL_FILE_ROWS` rows are kept as written.
    """
    live = live_files(table, branch)
    if live.unscoped():
        log.info("Not compacting %s: it has delete files that do not reference one data file each", table.name())
        return Plan()
    deletes = {path: [d.file for d in found] for path, found in live.deletes_by_data_file().items()}
    spec_id = table.metadata.default_spec_id
    backfill = set(backfill_snapshots)
    fresh = {s.sequence_number for s in table.metadata.snapshots if s.snapshot_id in backfill}
    candidates = [_candidate(f.file, deletes.get(f.file.file_path, []),
                             as_written=f.sequence_number in fresh and f.file.record_count >= BACKFILL_FILE_ROWS)
                  for f in live.data if f.file.spec_id == spec_id]
    groups = plan_groups(candidates, target_size=policy.target_file_size, small_file_size=policy.small_file_size,
                         min_input_files=policy.min_input_files, deletes_min_files=policy.deletes_min_files,
                         deletes_min_ratio=policy.deletes_min_ratio)
    return Plan(groups, {f.file.file_path: f.file for f in live.data}, deletes)


def _candidate(data_file: DataFile, deletes: list[DataFile], *, as_written: bool = False) -> Candidate:
    return Candidate((data_file.spec_id, _values(data_file)), data_file.file_path, data_file.file_size_in_bytes,
                     delete_files=len(deletes), deleted_rows=sum(d.record_count for d in deletes),
                     rows=data_file.record_count, as_written=as_written)


def _values(data_file: DataFile) -> tuple:
    partition = data_file.partition
    return tuple(partition[index] for index in range(len(partition)))


def _partition_text(group: Group) -> str:
    key: tuple = group.partition  # type: ignore[assignment]  # (spec id, values), as plan() builds it
    return repr(key[1])


def _sorted(rows: pa.Table, metadata) -> pa.Table:
    """``rows`` in the table's sort order, when it has one on top-level columns (identity transforms)."""
    order = metadata.sort_order_by_id(metadata.default_sort_order_id)
    if order is None or order.is_unsorted:
        return rows
    keys: list[tuple[str, str, str]] = []
    for sort_field in order.fields:
        name = metadata.schema().find_column_name(sort_field.source_id)
        if not isinstance(sort_field.transform, IdentityTransform) or name is None or "." in name:
            return rows  # a transform or a nested column: left unsorted
        keys.append((name, "descending" if sort_field.direction == SortDirection.DESC else "ascending",
                     "at_start" if sort_field.null_order == NullOrder.NULLS_FIRST else "at_end"))
    return rows.sort_by(keys)  # (name, order, null placement) keys: pyarrow >= 25


def rewrite_group(table: Table, inputs: list[DataFile],
                  deletes: Mapping[str, list[DataFile]] | None = None) -> list[DataFile]:
    """Write the rows of ``inputs`` (all of one partition of the current spec) as one new data file.

    ``deletes``: the position delete files applying to each input (by path), applied in the read.
    """
    metadata = table.metadata
    schema = metadata.schema()
    deletes = deletes or {}
    tasks = [FileScanTask(f, delete_files=set(deletes.get(f.file_path, []))) for f in inputs]
    rows = ArrowScan(metadata, table.io, schema, AlwaysTrue()).to_table(tasks)
    if rows.num_rows == 0:
        return []
    rows = _sorted(rows, metadata)
    spec = metadata.spec()
    partition_key = None
    if not spec.is_unpartitioned():
        values = [PartitionFieldValue(field=spec_field, value=inputs[0].partition[index])
                  for index, spec_field in enumerate(spec.fields)]
        partition_key = PartitionKey(field_values=values, partition_spec=spec, schema=schema)
    task = WriteTask(write_uuid=uuid.uuid4(), task_id=0, record_batches=rows.to_batches(),
                     partition_key=partition_key, schema=schema)
    return list(write_file(table.io, metadata, iter([task])))


def compact(catalog, config, table_name: str, policy: TablePolicy, deadline: float,
            resume: Callable[[list[Group]], list[Group]] = lambda groups: groups,
            on_progress: Callable[[int], None] | None = None,
            clock: Callable[[], float] = time.monotonic, backfill_snapshots: Collection[int] = ()) -> CompactionReport:
    """Rewrite groups of ``table_name`` until done or ``deadline`` (of ``clock``) passes.

    The first group is rewritten whatever the time, so every round makes progress even
    when one group takes longer than the budget. ``resume`` orders the planned groups.
    ``backfill_snapshots``: see :func:`plan`.
    """
    began = clock()
    report = CompactionReport()
    branch = config.iceberg.table_config(table_name).commit_branch
    table = catalog.load_table(table_name)
    planned = plan(table, branch, policy, backfill_snapshots)
    groups = resume(planned.groups)
    for index, group in enumerate(groups):
        if index > 0 and clock() >= deadline:
            report.pending = len(groups) - index
            break
        inputs = [planned.data[c.path] for c in group.files]
        their_deletes = [d for f in inputs for d in planned.deletes.get(f.file_path, [])]
        added = rewrite_group(table, inputs, planned.deletes)
        fault_point("compaction.before-commit")  # the fault tests: the new file written, not committed
        snapshot = commit_group(catalog, table_name, branch, inputs, their_deletes, added)
        if snapshot is None:
            report.given_up += 1
            for data_file in added:
                table.io.delete(data_file.file_path)
            log.info("Gave up compacting %d file(s) of %s partition %s this round", len(inputs), table_name,
                     _partition_text(group))
            continue
        report.groups += 1
        report.files_removed += len(inputs)
        report.delete_files_removed += len(their_deletes)
        report.files_added += len(added)
        report.bytes_rewritten += group.size
        report.snapshots.append(snapshot)
        if on_progress is not None:
            on_progress(index + 1)
        log.info("Compacted %d file(s) (%d bytes) and %d delete file(s) of %s partition %s into %d file(s) "
                 "(%d bytes), snapshot %s", len(inputs), group.size, len(their_deletes), table_name,
                 _partition_text(group), len(added), sum(f.file_size_in_bytes for f in added), snapshot)
        table = catalog.load_table(table_name)
    report.seconds = clock() - began
    return report


def commit_group(catalog, table_name: str, branch: str | None, inputs: list[DataFile], deletes: list[DataFile],
                 added: list[DataFile]) -> int | None:
    """Replace ``inputs`` and their ``deletes`` by ``added`` in one snapshot; its id, or None if given up.

    Tried again on a new head when another writer committed first (its files stay), up to
    :data:`~connector.commit.commit.REWRITE_ATTEMPTS` times; given up at once when the head no longer
    fits (a file of the group gone, or new deletes against one: rewriting would lose them).
    """
    properties = {MAINTENANCE_OPERATION: "compaction"}
    for attempt in range(1, REWRITE_ATTEMPTS + 1):
        table = catalog.load_table(table_name)
        try:
            return commit_row_delta(table, branch, properties, added_data=added, removed_data=inputs,
                                    removed_deletes=deletes, rewrite=True)
        except RowDeltaConflict as exc:
            log.info("Rewrite of %d file(s) of %s no longer fits the table: %s", len(inputs), table_name, exc)
            return None
        except CommitFailedException as exc:
            log.info("Rewrite of %d file(s) of %s conflicted (attempt %d): %s", len(inputs), table_name,
                     attempt, exc)
    return None
