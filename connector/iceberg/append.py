"""Appending data files to a branch: Java's ``AppendFiles`` (a fast append), or a row delta when delete
files come with them."""

from __future__ import annotations

from typing import Iterable, Mapping

from pyiceberg.manifest import DataFile, DataFileContent
from pyiceberg.table import Table, Transaction
from pyiceberg.table.snapshots import Operation, Summary
from pyiceberg.table.update.snapshot import _FastAppendFiles, _SnapshotProducer
from pyiceberg.typedef import EMPTY_DICT

from connector.iceberg.branches import commit_to_branch
from connector.iceberg.row_delta import commit_row_delta
from connector.iceberg.snapshot_summary import as_java_writes


class _FastAppend(_FastAppendFiles):
    """pyiceberg's fast append, its summary as Java's ``AppendFiles`` writes it."""

    def _summary(self, snapshot_properties: dict[str, str] = EMPTY_DICT) -> Summary:
        return as_java_writes(super()._summary(snapshot_properties))


def append_files(table: Table, branch: str, properties: Mapping[str, str], files: Iterable[DataFile]) -> None:
    """One fast append of ``files`` to ``branch`` with ``properties`` in the snapshot summary.

    Position delete files among ``files`` make it a row delta of the data and delete files instead
    (:func:`connector.iceberg.row_delta.commit_row_delta`, format-version 2 tables only).
    """
    files = list(files)
    data = [f for f in files if f.content == DataFileContent.DATA]
    if len(data) < len(files):
        commit_row_delta(table, branch, properties, added_data=data,
                         added_deletes=[f for f in files if f.content != DataFileContent.DATA])
        return

    def fast_append(transaction: Transaction, target: str | None) -> _SnapshotProducer:
        append = _FastAppend(operation=Operation.APPEND, transaction=transaction, io=transaction._table.io,
                             branch=target, snapshot_properties=dict(properties))
        for data_file in data:
            append.append_data_file(data_file)
        return append

    commit_to_branch(table, branch, fast_append)
