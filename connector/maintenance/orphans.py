"""Orphan files: files under the table's data and metadata locations that no snapshot references.

They come from cycles that wrote files and crashed (or were killed) before
committing them, and from commits that lost and were given up. Only files
older than ``icefloe.maintenance.orphan.min-age-ms`` are deleted: a younger
one may belong to a commit another writer (or this job's next cycle) is
about to make. Metadata JSON files are left to :mod:`.expiry`.
"""

from __future__ import annotations

import logging
import time

from pyiceberg.table import Table

from connector.maintenance.files import delete_files, list_files, local_path, references

log = logging.getLogger(__name__)


def orphan_files(table: Table, min_age_ms: int, now_ms: int | None = None) -> list[str]:
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    before_s = (now_ms - min_age_ms) / 1000
    referenced = references(table, table.metadata.snapshots).all()
    referenced.add(local_path(table.metadata_location))
    referenced.update(local_path(entry.metadata_file) for entry in table.metadata.metadata_log)
    referenced.update(local_path(stats.statistics_path) for stats in table.metadata.statistics)
    referenced.update(local_path(stats.statistics_path) for stats in table.metadata.partition_statistics)
    location = table.location().rstrip("/")
    data = table.properties.get("write.data.path", f"{location}/data")
    meta = table.properties.get("write.metadata.path", f"{location}/metadata")
    found = []
    for root in (data, meta):
        for path, mtime in list_files(table, root):
            if mtime < before_s and path not in referenced and not path.endswith(".metadata.json"):
                found.append(path)
    return found


def delete_orphans(catalog, table_name: str, min_age_ms: int, now_ms: int | None = None) -> int:
    table = catalog.load_table(table_name)  # loaded right before listing: the freshest references
    doomed = orphan_files(table, min_age_ms, now_ms)
    deleted = delete_files(table, doomed)
    if deleted:
        log.info("Deleted %d orphan file(s) of %s", deleted, table_name)
    return deleted
