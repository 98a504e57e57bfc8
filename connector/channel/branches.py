"""Appending to a branch, including the first commit to a branch of a table that has no snapshots yet.

Iceberg Java creates the branch with that first snapshot (the Apache sink's
integration tests commit to `commit-branch` on new tables); pyiceberg 0.12
refuses any branch but `main` while the table has no snapshots. Then the files
are appended as a staged snapshot (no ref, nothing visible), and the branch is
created at it in a second commit that asserts the branch does not exist yet: a
writer that created it concurrently makes that commit fail and the caller
retry on the branch (the staged snapshot stays unreferenced, as an orphan).
"""

from __future__ import annotations

from typing import Iterable, Mapping


def append_files(table, branch: str, properties: Mapping[str, str], data_files: Iterable) -> None:
    """One fast append of ``data_files`` to ``branch`` with ``properties`` in the snapshot summary."""
    if branch != "main" and not table.metadata.snapshots:
        with table.transaction() as transaction:
            with transaction.update_snapshot(snapshot_properties=dict(properties), branch=None).fast_append() \
                    as staged:
                for data_file in data_files:
                    staged.append_data_file(data_file)
                snapshot_id = staged.snapshot_id
        table.manage_snapshots().create_branch(snapshot_id, branch).commit()
        return
    with table.transaction() as transaction:
        with transaction.update_snapshot(snapshot_properties=dict(properties), branch=branch).fast_append() \
                as append:
            for data_file in data_files:
                append.append_data_file(data_file)
