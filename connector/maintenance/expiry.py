"""Snapshot expiry, and the deletion of the files only expired snapshots referenced.

A snapshot expires when it is older than the table's
``history.expire.max-snapshot-age-ms`` (or ``icefloe.maintenance.snapshot.max-age-ms``)
unless it is

* the head of a branch or a tag;
* one of the newest ``history.expire.min-snapshots-to-keep`` (or
  ``icefloe.maintenance.snapshot.min-to-keep``) snapshots of a branch;
* on the way from a branch head back to the newest snapshot carrying the
  connector's source offsets (or an offsets reset), so that
  :func:`connector.iceberg.snapshot_offsets.committed_offsets`, which walks the
  ancestry back, still finds them after any number of maintenance snapshots.

pyiceberg's expiry only removes the snapshot entries, so after the commit the
manifest lists, manifests and data files that only expired snapshots
referenced are deleted here (what the kept snapshots reference is read from
the table as committed). Old metadata files are not maintenance's business:
each commit deletes those it drops from the metadata log when the table's
rules say so (:mod:`connector.iceberg.metadata_cleanup`), as Java's writers do.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from pyiceberg.exceptions import CommitFailedException
from pyiceberg.table import Table
from pyiceberg.table.refs import SnapshotRefType
from pyiceberg.table.snapshots import ancestors_of

from connector.iceberg.snapshot_offsets import OFFSETS_PREFIX, offsets_reset_key
from connector.maintenance.files import delete_files, references
from connector.maintenance.policy import TablePolicy

log = logging.getLogger(__name__)

EXPIRE_ATTEMPTS = 3


@dataclass
class ExpiryReport:
    expired: int = 0
    kept: int = 0
    files_deleted: int = 0


def protected_snapshots(table: Table, policy: TablePolicy, group_id: str) -> set[int]:
    """The snapshots that must stay: ref heads, the newest of each branch, the way to the offsets."""
    metadata = table.metadata
    keep: set[int] = set()
    offsets_suffix = "." + group_id
    reset = offsets_reset_key(group_id)
    for ref in metadata.refs.values():
        keep.add(ref.snapshot_id)
        if ref.snapshot_ref_type != SnapshotRefType.BRANCH:
            continue
        found_offsets = False
        for depth, snapshot in enumerate(ancestors_of(metadata.snapshot_by_id(ref.snapshot_id), metadata)):
            if depth >= policy.min_snapshots_to_keep and found_offsets:
                break
            keep.add(snapshot.snapshot_id)
            props = snapshot.summary.additional_properties if snapshot.summary else {}
            if reset in props or any(k.startswith(OFFSETS_PREFIX) and k.endswith(offsets_suffix) for k in props):
                found_offsets = True
    return keep


def expired_snapshots(table: Table, policy: TablePolicy, group_id: str, now_ms: int) -> list[int]:
    keep = protected_snapshots(table, policy, group_id)
    oldest = now_ms - policy.max_snapshot_age_ms
    return [s.snapshot_id for s in table.metadata.snapshots if s.snapshot_id not in keep and s.timestamp_ms < oldest]


def expire(catalog, table_name: str, policy: TablePolicy, group_id: str, now_ms: int | None = None) -> ExpiryReport:
    """Expire the snapshots due, then delete what only they referenced."""
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    report = ExpiryReport()
    for attempt in range(1, EXPIRE_ATTEMPTS + 1):
        table = catalog.load_table(table_name)
        doomed = expired_snapshots(table, policy, group_id, now_ms)
        if not doomed:
            break
        doomed_set = set(doomed)
        before = references(table, [s for s in table.metadata.snapshots if s.snapshot_id in doomed_set])
        try:
            table.maintenance.expire_snapshots().by_ids(doomed).commit()
        except CommitFailedException as exc:
            log.info("Expiring snapshots of %s conflicted (attempt %d): %s", table_name, attempt, exc)
            continue
        table = catalog.load_table(table_name)
        kept = references(table, table.metadata.snapshots)
        report.expired = len(doomed)
        report.files_deleted = delete_files(table, before.all() - kept.all())
        log.info("Expired %d snapshot(s) of %s, deleted %d file(s) only they referenced", len(doomed), table_name,
                 report.files_deleted)
        break
    report.kept = len(catalog.load_table(table_name).metadata.snapshots)
    return report
