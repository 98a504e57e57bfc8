"""Committing a snapshot to a branch, including the first commit to a branch of a table without snapshots.

Iceberg Java creates the branch with that first snapshot (the Apache sink's
integration tests commit to `commit-branch` on new tables); pyiceberg 0.12
refuses any branch but `main` while the table has no snapshots. Then the
snapshot is committed staged (no ref, nothing visible), and the branch is
created at it in a second commit that asserts the branch does not exist yet:
a writer that created it concurrently makes that commit fail and the caller
retry on the branch (the staged snapshot stays unreferenced, as an orphan).

Any snapshot producer goes through :func:`commit_to_branch`: the fast append
of data files (:mod:`connector.iceberg.append`), the row delta
(:mod:`connector.iceberg.row_delta`) of data and delete files.

A commit that loses the race for the branch fails here, never lands on the
new head: pyiceberg 0.12 retries a snapshot producer by itself, rebuilding the
snapshot on whatever head another writer made (``commit.retry.*``). Every
icefloe commit is decided on the head it loaded: the offsets merged into the
summary, the fence (``connector/commit/fencing.py``), the rows an upsert or a
compaction removes. Rebuilt elsewhere, it would commit records another job
already committed, or record offsets older than the head's. So the caller
reloads, decides again and retries (``connector.commit.commit``).
"""

from __future__ import annotations

from typing import Callable

from pyiceberg.exceptions import CommitFailedException
from pyiceberg.table import Table, Transaction
from pyiceberg.table.update.snapshot import _SnapshotProducer

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


class _DecidedOnItsHead(Transaction):
    """A transaction whose snapshot is committed on the head it was built on, or not at all."""

    def _register_snapshot_producer(self, producer: _SnapshotProducer) -> None:
        """Not registered: pyiceberg rebuilds only the producers registered here on a new head."""
