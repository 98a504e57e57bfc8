"""Manifest rewrite: a head with many small manifests (a fast append adds one per commit) gets them merged.

Once a branch head has ``icefloe.maintenance.manifests.min-count`` data
manifests, one snapshot that adds no data replaces them by manifests of about
``commit.manifest.target-size-bytes`` (pyiceberg's merge of manifests, forced
on for this snapshot), through :func:`connector.commit.commit.commit_manifest_merge`.
The entries keep their snapshot ids and sequence numbers; the snapshot carries
no offsets. Compaction also shrinks the manifest list (the manifests of the
files it replaced are dropped or rewritten), so this matters most for tables
whose files are large already (backfills, big cycles).
"""

from __future__ import annotations

import logging

from pyiceberg.manifest import ManifestContent

from connector.commit.commit import commit_manifest_merge
from connector.iceberg.snapshot_offsets import branch_head
from connector.maintenance.compaction import MAINTENANCE_OPERATION
from connector.maintenance.policy import TablePolicy

log = logging.getLogger(__name__)


def data_manifests(table, branch: str | None) -> int:
    head = branch_head(table, branch)
    if head is None:
        return 0
    return sum(1 for m in head.manifests(table.io) if m.content == ManifestContent.DATA)


def rewrite_manifests(catalog, config, table_name: str, policy: TablePolicy) -> tuple[int, int]:
    """Merge the head's manifests if they are many; (manifests before, after) — equal when untouched."""
    branch = config.iceberg.table_config(table_name).commit_branch
    table = catalog.load_table(table_name)
    before = data_manifests(table, branch)
    if before < policy.manifests_min_count:
        return before, before
    snapshot = commit_manifest_merge(catalog, config, table_name, {MAINTENANCE_OPERATION: "rewrite-manifests"})
    if snapshot is None:
        return before, before
    after = data_manifests(catalog.load_table(table_name), branch)
    log.info("Merged %d manifest(s) of %s into %d (snapshot %s)", before, table_name, after, snapshot)
    return before, after
