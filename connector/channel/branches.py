"""Committing a snapshot to a branch, including the first commit to a branch of a table without snapshots.

Iceberg Java creates the branch with that first snapshot (the Apache sink's
integration tests commit to `commit-branch` on new tables); pyiceberg 0.12
refuses any branch but `main` while the table has no snapshots. Then the
snapshot is committed staged (no ref, nothing visible), and the branch is
created at it in a second commit that asserts the branch does not exist yet:
a writer that created it concurrently makes that commit fail and the caller
retry on the branch (the staged snapshot stays unreferenced, as an orphan).

Any snapshot producer goes through :func:`commit_to_branch`: the fast append
of data files here, the row delta (:mod:`connector.channel.row_delta`) of
data and delete files.

A commit that loses the race for the branch fails here, never lands on the
new head: pyiceberg 0.12 retries a snapshot producer by itself, rebuilding the
snapshot on whatever head another writer made (``commit.retry.*``). Every
icefloe commit is decided on the head it loaded: the offsets merged into the
summary, the fence (``connector/channel/fencing.py``), the rows an upsert or a
compaction removes. Rebuilt elsewhere, it would commit records another job
already committed, or record offsets older than the head's. So the caller
reloads, decides again and retries (``connector.channel.commit``).
"""

from __future__ import annotations

from typing import Callable, Iterable, Mapping

from pyiceberg.exceptions import CommitFailedException
from pyiceberg.manifest import DataFile, DataFileContent
from pyiceberg.table import Table, Transaction
from pyiceberg.table.snapshots import Operation, Summary
from pyiceberg.table.update.snapshot import _FastAppendFiles, _SnapshotProducer
from pyiceberg.typedef import EMPTY_DICT

from connector.channel.snapshot_summary import as_java_writes

#: Builds the snapshot producer of one commit: (transaction, target branch or None for a staged snapshot).
Producer = Callable[[Transaction, "str | None"], _SnapshotProducer]


def commit_to_branch(table: Table, branch: str, produce: Producer) -> int:
    """Commit the snapshot ``produce`` makes to ``branch``; its id. ``table`` holds the new metadata after.

    When the commit fails (:class:`CommitFailedException`, nothing landed) the manifests written for it
    are deleted and the exception raised unchanged.
    """
    staged = branch != "main" and not table.metadata.snapshots
    producer: _SnapshotProducer | None = None
    try:
        with _DecidedOnItsHead(table) as transaction:
            producer = produce(transaction, None if staged else branch)
            producer.commit()
    except CommitFailedException:
        if producer is not None:
            producer._clean_all_uncommitted()  # pyiceberg does so for the producers it retries itself only
        raise
    assert producer is not None, "the transaction ran"
    if staged:
        table.manage_snapshots().create_branch(producer.snapshot_id, branch).commit()
    return producer.snapshot_id


class _FastAppend(_FastAppendFiles):
    """pyiceberg's fast append, its summary as Java's ``AppendFiles`` writes it."""

    def _summary(self, snapshot_properties: dict[str, str] = EMPTY_DICT) -> Summary:
        return as_java_writes(super()._summary(snapshot_properties))


class _DecidedOnItsHead(Transaction):
    """A transaction whose snapshot is committed on the head it was built on, or not at all."""

    def _register_snapshot_producer(self, producer: _SnapshotProducer) -> None:
        """Not registered: pyiceberg rebuilds only the producers registered here on a new head."""


def append_files(table: Table, branch: str, properties: Mapping[str, str], files: Iterable[DataFile]) -> None:
    """One fast append of ``files`` to ``branch`` with ``properties`` in the snapshot summary.

    Position delete files among ``files`` make it a row delta of the data and delete files instead
    (:func:`connector.channel.row_delta.commit_row_delta`, format-version 2 tables only).
    """
    files = list(files)
    data = [f for f in files if f.content == DataFileContent.DATA]
    if len(data) < len(files):
        from connector.channel.row_delta import commit_row_delta  # it commits through this module

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
