"""Compaction: a partition's small data files rewritten into target-sized files, one snapshot per group.

The rows are read through pyiceberg's Arrow scan of exactly the group's files,
projected on the table's current schema (files written before a column was
added read it as nulls), written as one Parquet file with pyiceberg's write
path (the table's compression codec, column statistics, partition values) and
committed by :func:`connector.channel.commit.commit_rewrite`: one overwrite
snapshot removing the group's files and adding the new one, with no offsets.
If it cannot commit (another writer removed an input file, or kept winning
the race), the new file is deleted and the files stay as they were.

When the table has a sort order (on columns, identity transforms), the
rows of the new file follow it.

Only files of the table's current partition spec are compacted, and a table
with delete files (row-level deletes, written by other engines) is skipped:
rewriting data files under delete files needs their sequence numbers kept,
which pyiceberg's overwrite does not do.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable

import pyarrow as pa
from pyiceberg.expressions import AlwaysTrue
from pyiceberg.io.pyarrow import ArrowScan, write_file
from pyiceberg.manifest import DataFile, ManifestContent
from pyiceberg.partitioning import PartitionFieldValue, PartitionKey
from pyiceberg.table import FileScanTask, Table, WriteTask
from pyiceberg.table.sorting import NullOrder, SortDirection
from pyiceberg.transforms import IdentityTransform

from connector.channel.commit import commit_rewrite
from connector.channel.offsets import branch_head
from connector.maintenance.planner import Candidate, Group, plan_groups
from connector.maintenance.policy import TablePolicy

log = logging.getLogger(__name__)

MAINTENANCE_OPERATION = "icefloe.maintenance"  # snapshot summary property of maintenance snapshots


@dataclass
class CompactionReport:
    groups: int = 0  # groups committed
    files_removed: int = 0
    files_added: int = 0
    bytes_rewritten: int = 0  # size of the files removed
    given_up: int = 0  # groups that could not commit
    pending: int = 0  # groups left for a later round (budget spent)
    seconds: float = 0.0
    snapshots: list[int] = field(default_factory=list)


def live_data_files(table: Table, branch: str | None) -> tuple[list[DataFile], bool]:
    """The data files of the branch head, and whether it has delete files."""
    head = branch_head(table, branch)
    if head is None:
        return [], False
    files: list[DataFile] = []
    has_deletes = False
    for manifest in head.manifests(table.io):
        if manifest.content == ManifestContent.DELETES:
            has_deletes = has_deletes or bool(manifest.existing_files_count or manifest.added_files_count)
            continue
        files.extend(entry.data_file for entry in manifest.fetch_manifest_entry(table.io, discard_deleted=True))
    return files, has_deletes


def plan(table: Table, branch: str | None, policy: TablePolicy) -> tuple[list[Group], dict[str, DataFile]]:
    """The groups to rewrite now and the data files by path."""
    files, has_deletes = live_data_files(table, branch)
    if has_deletes:
        log.info("Not compacting %s: it has delete files", table.name())
        return [], {}
    spec_id = table.metadata.default_spec_id
    by_path = {f.file_path: f for f in files}
    candidates = [Candidate((f.spec_id, _values(f)), f.file_path, f.file_size_in_bytes)
                  for f in files if f.spec_id == spec_id]
    groups = plan_groups(candidates, target_size=policy.target_file_size, small_file_size=policy.small_file_size,
                         min_input_files=policy.min_input_files)
    return groups, by_path


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


def rewrite_group(table: Table, inputs: list[DataFile]) -> list[DataFile]:
    """Write the rows of ``inputs`` (all of one partition of the current spec) as one new data file."""
    metadata = table.metadata
    schema = metadata.schema()
    rows = ArrowScan(metadata, table.io, schema, AlwaysTrue()).to_table([FileScanTask(f) for f in inputs])
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
            clock: Callable[[], float] = time.monotonic) -> CompactionReport:
    """Rewrite groups of ``table_name`` until done or ``deadline`` (of ``clock``) passes.

    The first group is rewritten whatever the time, so every round makes progress even
    when one group takes longer than the budget. ``resume`` orders the planned groups.
    """
    began = clock()
    report = CompactionReport()
    branch = config.iceberg.table_config(table_name).commit_branch
    table = catalog.load_table(table_name)
    groups, by_path = plan(table, branch, policy)
    groups = resume(groups)
    for index, group in enumerate(groups):
        if index > 0 and clock() >= deadline:
            report.pending = len(groups) - index
            break
        inputs = [by_path[c.path] for c in group.files]
        added = rewrite_group(table, inputs)
        properties = {MAINTENANCE_OPERATION: "compaction"}
        snapshot = commit_rewrite(catalog, config, table_name, inputs, added, properties)
        if snapshot is None:
            report.given_up += 1
            for data_file in added:
                table.io.delete(data_file.file_path)
            log.info("Gave up compacting %d file(s) of %s partition %s this round", len(inputs), table_name,
                     _partition_text(group))
            continue
        report.groups += 1
        report.files_removed += len(inputs)
        report.files_added += len(added)
        report.bytes_rewritten += group.size
        report.snapshots.append(snapshot)
        if on_progress is not None:
            on_progress(index + 1)
        log.info("Compacted %d file(s) (%d bytes) of %s partition %s into %d file(s) (%d bytes), snapshot %s",
                 len(inputs), group.size, table_name, _partition_text(group), len(added),
                 sum(f.file_size_in_bytes for f in added), snapshot)
        table = catalog.load_table(table_name)
    report.seconds = clock() - began
    return report
