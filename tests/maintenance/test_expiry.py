"""Snapshot expiry, file deletion and orphan cleanup against a real SQL catalog."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pyarrow as pa

from connector.commit.commit import commit_table
from connector.config.icefloe_config import MaintenanceConfig
from connector.data.catalog import load_catalog
from connector.iceberg.snapshot_offsets import committed_offsets
from connector.maintenance.compaction import compact
from connector.maintenance.expiry import expire
from connector.maintenance.files import local_path
from connector.maintenance.orphans import delete_orphans
from connector.maintenance.policy import table_policy
from tests.commit.test_commit import _written
from tests.maintenance.test_compaction import config, ids, tiny_commits  # noqa: F401 - fixture

FUTURE = int(time.time() * 1000) + 3_600_000  # "now" for expiry: every snapshot an hour old


def files_under(table, folder: str) -> set[str]:
    root = Path(local_path(table.location())) / folder
    return {str(p) for p in root.rglob("*") if p.is_file()}


def test_expiry_keeps_the_newest_the_refs_and_the_way_to_the_offsets_and_deletes_what_only_expired_ones_used(
        config):  # noqa: F811
    tiny_commits(config, 6)
    catalog = load_catalog(config.props)
    table = catalog.load_table("db.events")
    first = table.metadata.snapshots[0].snapshot_id
    table.manage_snapshots().create_tag(first, "v1").commit()
    policy = table_policy({}, MaintenanceConfig(min_input_files=3, snapshot_min_to_keep=1, snapshot_max_age_ms=0))
    compact(catalog, config, "db.events", policy, deadline=float("inf"))
    table = catalog.load_table("db.events")
    compacted = table.current_snapshot()
    offsets_snapshot = table.snapshot_by_id(compacted.parent_snapshot_id)  # the last data commit
    assert len(files_under(table, "data")) == 7

    # while the compaction is the head, the snapshot with the offsets (and all the small files) stays
    report = expire(catalog, "db.events", policy, config.group_id, now_ms=FUTURE)
    table = catalog.load_table("db.events")
    assert {s.snapshot_id for s in table.metadata.snapshots} == {compacted.snapshot_id,
                                                                 offsets_snapshot.snapshot_id, first}
    assert report.expired == 4 and report.kept == 3
    assert committed_offsets(table, config.group_id) == {("t", 0): 60}
    assert len(files_under(table, "data")) == 7

    # the next data commit carries the offsets: the small files only older snapshots had go
    tiny_commits(config, 1, first=6)
    report = expire(catalog, "db.events", policy, config.group_id, now_ms=FUTURE)
    table = catalog.load_table("db.events")
    head = table.current_snapshot()
    assert {s.snapshot_id for s in table.metadata.snapshots} == {head.snapshot_id, first}
    assert committed_offsets(table, config.group_id) == {("t", 0): 70}
    assert ids(table) == list(range(70))
    assert len(files_under(table, "data")) == 3  # the compacted file, the new one, and the tag's first
    assert report.files_deleted >= 5
    assert table.scan(snapshot_id=first).to_arrow().num_rows == 10
    # manifest lists of expired snapshots are gone
    lists = {p for p in files_under(table, "metadata") if Path(p).name.startswith("snap-")}
    assert lists == {local_path(s.manifest_list) for s in table.metadata.snapshots}


def test_young_snapshots_and_the_minimum_are_kept(config):  # noqa: F811
    tiny_commits(config, 4)
    catalog = load_catalog(config.props)
    policy = table_policy({}, MaintenanceConfig(snapshot_min_to_keep=2))  # an hour
    assert expire(catalog, "db.events", policy, config.group_id).expired == 0
    table_props = {"history.expire.max-snapshot-age-ms": "0", "history.expire.min-snapshots-to-keep": "3"}
    report = expire(catalog, "db.events", table_policy(table_props, MaintenanceConfig()), config.group_id,
                    now_ms=FUTURE)
    assert (report.expired, report.kept) == (1, 3)


def test_orphan_cleanup_deletes_only_old_unreferenced_files(config):  # noqa: F811
    tiny_commits(config, 2)
    catalog = load_catalog(config.props)
    crashed = _written(config, range(20, 30))  # a cycle that wrote and died before committing
    fresh = _written(config, range(30, 40))  # another writer about to commit
    old = time.time() - 7200
    for data_file in crashed:
        os.utime(local_path(data_file.file_path), (old, old))
    table = catalog.load_table("db.events")
    for path in files_under(table, "data") | files_under(table, "metadata"):
        if path not in {local_path(f.file_path) for f in fresh}:
            os.utime(path, (old, old))  # committed files are old too: referenced, so kept
    assert delete_orphans(catalog, "db.events", min_age_ms=3_600_000) == len(crashed)
    assert not any(Path(local_path(f.file_path)).exists() for f in crashed)
    assert all(Path(local_path(f.file_path)).exists() for f in fresh)
    commit_table(catalog, config, "db.events", fresh, {("t", 0): 40}, "late", None)
    table = catalog.load_table("db.events")
    assert ids(table) == [*range(20), *range(30, 40)]
    assert table.scan().to_arrow().num_rows == 30
    assert pa.__name__  # keep the import for readers' sake


def test_a_branch_keeps_its_head_and_its_own_newest_snapshots(config):  # noqa: F811
    tiny_commits(config, 5)
    catalog = load_catalog(config.props)
    table = catalog.load_table("db.events")
    snapshots = table.metadata.snapshots
    table.manage_snapshots().create_branch(snapshots[2].snapshot_id, "audit").commit()
    policy = table_policy({}, MaintenanceConfig(snapshot_min_to_keep=2, snapshot_max_age_ms=0))
    report = expire(catalog, "db.events", policy, config.group_id, now_ms=FUTURE)
    kept = {s.snapshot_id for s in catalog.load_table("db.events").metadata.snapshots}
    # main: its two newest; audit: its head and its parent
    assert kept == {snapshots[i].snapshot_id for i in (4, 3, 2, 1)}
    assert report.expired == 1
    assert catalog.load_table("db.events").scan(snapshot_id=snapshots[1].snapshot_id).to_arrow().num_rows == 20


def test_a_compaction_killed_before_its_commit_leaves_the_table_as_it_was_and_an_orphan_cleanup_removes(
        config, monkeypatch):  # noqa: F811
    tiny_commits(config, 5)
    catalog = load_catalog(config.props)
    table = catalog.load_table("db.events")
    before = files_under(table, "data")

    def killed(*args, **kwargs):  # the process dies between writing the new file and committing it
        raise KeyboardInterrupt

    monkeypatch.setattr("connector.maintenance.compaction.commit_group", killed)
    try:
        compact(catalog, config, "db.events", table_policy({}, MaintenanceConfig(min_input_files=3)),
                deadline=float("inf"))
    except KeyboardInterrupt:
        pass
    table = catalog.load_table("db.events")
    leftover = files_under(table, "data") - before
    assert len(leftover) == 1 and ids(table) == list(range(50))
    assert delete_orphans(catalog, "db.events", min_age_ms=3_600_000) == 0  # young: maybe still committing
    old = time.time() - 7200
    for path in files_under(table, "data") | files_under(table, "metadata"):
        os.utime(path, (old, old))
    assert delete_orphans(catalog, "db.events", min_age_ms=3_600_000) == 1
    assert files_under(table, "data") == before and ids(catalog.load_table("db.events")) == list(range(50))
