"""The upsert part of a commit: changed keys → position deletes, committed with the new files in one snapshot.

For a table in upsert mode (``connector/data/convert/changes.py``) a commit carries, besides
its data files, the :class:`~connector.data.convert.changes.ChangeSegment` of each task
flush. Every row of a changed key that is not its latest version is deleted
by position: the rows the table held (found through the branch's
:class:`~connector.commit.key_index.KeyIndex`, in any partition) and the rows
an older record of the key left in another segment of this commit. The new data
files and the position delete files (one per data file they refer to) land in
one snapshot with the offsets, so a reader never sees a key twice or a
deleted key, and a crash before the snapshot leaves the table as it was (the
files written are orphans, which maintenance removes).
"""

from __future__ import annotations

import logging
from typing import Mapping, Sequence

import pyarrow as pa
from pyiceberg.manifest import DataFile
from pyiceberg.table import Table

from connector.api.errors import ConnectException
from connector.commit import key_index
from connector.commit.key_index import FILE, POS, KeyIndex, read_keys, rows_to_delete, winners
from connector.data.convert.changes import ChangeSegment
from connector.iceberg.live_files import live_files
from connector.iceberg.position_deletes import read_position_deletes, write_position_deletes
from connector.iceberg.row_delta import commit_row_delta
from connector.iceberg.snapshot_offsets import branch_head

log = logging.getLogger(__name__)


def commit_upserts(table: Table, branch: str, properties: Mapping[str, str], data_files: Sequence[DataFile],
                   segments: Sequence[ChangeSegment], id_columns: Sequence[str]) -> int:
    """One snapshot of ``data_files`` and the position deletes ``segments`` call for; the snapshot's id.

    Raises what the commit raises (CommitFailedException when another writer won:
    the caller reloads the table and calls again; the index is then rebuilt).
    """
    _check_files(table, data_files, segments)
    index = _index(table, branch, tuple(id_columns))
    added = pa.concat_tables([read_keys(table, s.files, id_columns, segment=i) for i, s in enumerate(segments)])
    won = winners([s.keys for s in segments], id_columns)
    candidates = pa.concat_tables([index.rows, added], promote_options="permissive")
    doomed = rows_to_delete(candidates, won, id_columns)
    referenced = {**index.files, **{f.file_path: f for f in data_files}}
    delete_files = write_position_deletes(table, doomed.rename_columns(["file_path", "pos"]), referenced)
    try:
        snapshot_id = commit_row_delta(table, branch, dict(properties), added_data=list(data_files),
                                       added_deletes=delete_files)
    except BaseException:  # whatever failed the commit is re-raised; this only cleans up after it
        for delete_file in delete_files:  # never referenced by a snapshot: remove them now
            table.io.delete(delete_file.file_path)
        raise
    index.advance(snapshot_id, data_files, added, doomed)
    key_index.remember(_key(table, branch), index)
    log.info("Upserted %d key(s) of %s: %d row(s) deleted by position in %d delete file(s)", won.num_rows,
             table.name(), doomed.num_rows, len(delete_files))
    return snapshot_id


def _check_files(table: Table, data_files: Sequence[DataFile], segments: Sequence[ChangeSegment]) -> None:
    """Every new file of an upsert table comes with its segment's keys (else its keys would go unindexed)."""
    in_segments = {f.file_path for s in segments for f in s.files}
    stray = [f.file_path for f in data_files if f.file_path not in in_segments]
    if stray:
        raise AssertionError(f"data files of upsert table {table.name()} without their keys: {stray[:3]}")


def _key(table: Table, branch: str) -> tuple[str, str]:
    return str(table.metadata.table_uuid), branch


def _index(table: Table, branch: str, id_columns: tuple[str, ...]) -> KeyIndex:
    """The branch's key index: kept from this process's last commit when the head is still that one."""
    head = branch_head(table, branch)
    snapshot_id = head.snapshot_id if head is not None else None
    index = key_index.cached(_key(table, branch), snapshot_id, id_columns)
    if index is None:
        index = build_index(table, branch, id_columns)
    return index


def build_index(table: Table, branch: str | None, id_columns: tuple[str, ...]) -> KeyIndex:
    """The key index of the branch head, read from its data files minus their position deletes."""
    live = live_files(table, branch)
    if live.unscoped():
        raise ConnectException(f"{table.name()} has delete files that are not position deletes of one data file "
                               "(equality deletes, written by another engine): icefloe's upsert mode cannot "
                               "tell which rows they remove; compact the table with that engine first")
    data_files = [f.file for f in live.data]
    rows = read_keys(table, data_files, id_columns)
    applying = [d.file for deletes in live.deletes_by_data_file().values() for d in deletes]
    if applying:
        deleted = read_position_deletes(table.io, applying).rename_columns([FILE, POS])
        rows = key_index.without(rows, deleted)
    head = branch_head(table, branch)
    log.info("Built the key index of %s: %d live row(s) in %d file(s)", table.name(), rows.num_rows,
             len(data_files))
    return KeyIndex(head.snapshot_id if head is not None else None, id_columns, rows,
                    {f.file_path: f for f in data_files})
