"""Compaction of an upsert table: position deletes folded into rewritten data files, never a row resurrected;
expiry and orphan cleanup around delete files."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType

from connector.config.icefloe_config import MaintenanceConfig
from connector.data.catalog import load_catalog
from connector.iceberg.live_files import live_files
from connector.iceberg.position_deletes import write_position_deletes
from connector.iceberg.row_delta import commit_row_delta
from connector.iceberg.snapshot_offsets import committed_offsets, summary_properties
from connector.maintenance import compaction
from connector.maintenance.compaction import compact
from connector.maintenance.expiry import expire
from connector.maintenance.files import local_path
from connector.maintenance.orphans import delete_orphans
from connector.maintenance.planner import Candidate, plan_groups
from connector.maintenance.policy import table_policy
from tests.iceberg.test_row_delta import duckdb_ids, positions_of, pyiceberg_ids, write
from tests.maintenance.test_compaction import config  # noqa: F401 - fixture

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "region", StringType(),
                                                                                required=False))
FUTURE = int(time.time() * 1000) + 3_600_000


class Upserts:
    """An upsert table ``db.events`` partitioned by region, written through row deltas with offsets."""

    def __init__(self, sink_config):
        self.config = sink_config
        self.catalog = load_catalog(sink_config.props)
        self.catalog.create_namespace("db")
        self.catalog.create_table("db.events", SCHEMA, properties={"format-version": "2"},
                                  partition_spec=PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "region")))
        self.offset = 0
        self.rows: set[int] = set()

    @property
    def table(self):
        return self.catalog.load_table("db.events")

    def commit(self, inserts=(), region: str = "eu", deleted=()) -> None:
        """One row delta: ``inserts`` as a new data file, the table's rows of ``deleted`` ids deleted."""
        table = self.table
        live = [f.file for f in live_files(table, None).data]
        added = write(table, list(inserts), region) if inserts else []
        doomed = positions_of(table, live, set(deleted))
        deletes = write_position_deletes(table, doomed, {f.file_path: f for f in live})
        self.offset += 1
        props = summary_properties({("t", 0): self.offset}, self.config.group_id, f"c{self.offset}", None)
        commit_row_delta(table, "main", props, added_data=added, added_deletes=deletes)
        self.rows = (self.rows - set(deleted)) | set(inserts)

    def delete_files_in(self, region: str) -> list:
        return [d for d in live_files(self.table, None).deletes if d.file.partition[0] == region]


@pytest.fixture
def upserts(config) -> Upserts:  # noqa: F811
    table = Upserts(config)
    table.commit(range(0, 10))
    table.commit(range(10, 20))
    table.commit(range(100, 110), region="us")
    return table


def test_a_partition_past_the_delete_threshold_is_rewritten_with_its_deletes_applied(upserts):
    for n in range(6):  # six cycles, each deleting a row of each older eu file and adding one
        upserts.commit([200 + n], deleted=[n, 10 + n])
    upserts.commit(deleted=[100])  # one delete file in us: below the thresholds
    assert len(upserts.delete_files_in("eu")) == 12
    before = upserts.table.current_snapshot()
    policy = table_policy({}, MaintenanceConfig(min_input_files=50, deletes_min_files=5))

    report = compact(upserts.catalog, upserts.config, "db.events", policy, deadline=float("inf"))

    table = upserts.table
    assert report.groups == 1 and report.delete_files_removed == 12
    assert pyiceberg_ids(table) == duckdb_ids(table) == sorted(upserts.rows)
    assert upserts.delete_files_in("eu") == [] and len(upserts.delete_files_in("us")) == 1
    summary = table.current_snapshot().summary
    assert (summary.operation.value, summary["total-delete-files"], summary["total-position-deletes"]) == (
        "replace", "1", "1")
    assert summary["icefloe.maintenance"] == "compaction"
    assert table.current_snapshot().parent_snapshot_id == before.snapshot_id
    assert committed_offsets(table, upserts.config.group_id) == {("t", 0): upserts.offset}  # walked back past it
    upserts.commit([300], deleted=[9])  # later upserts see the rewritten file as live
    assert pyiceberg_ids(upserts.table) == duckdb_ids(upserts.table) == sorted(upserts.rows)


def test_small_file_compaction_applies_and_drops_the_deletes_of_its_files(upserts):
    upserts.commit([20, 21], deleted=[3, 15])
    upserts.commit([22], deleted=[20])  # a delete against a file a later cycle wrote
    policy = table_policy({}, MaintenanceConfig(min_input_files=3, deletes_min_files=1000, deletes_min_ratio=5.0))

    report = compact(upserts.catalog, upserts.config, "db.events", policy, deadline=float("inf"))

    table = upserts.table
    assert report.groups == 1 and report.files_removed == 4 and report.delete_files_removed == 3
    assert pyiceberg_ids(table) == duckdb_ids(table) == sorted(upserts.rows)
    assert 3 not in upserts.rows and upserts.delete_files_in("eu") == []


def test_deletes_landing_between_the_rewrite_and_its_commit_make_it_give_up_and_no_row_comes_back(
        upserts, monkeypatch):
    for n in range(5):
        upserts.commit(deleted=[n])
    real_commit = compaction.commit_group
    written = []

    def upsert_first(catalog, table_name, branch, inputs, deletes, added):
        upserts.commit([400], deleted=[7])  # another cycle deletes a row of a file being rewritten
        written.extend(added)
        return real_commit(catalog, table_name, branch, inputs, deletes, added)

    monkeypatch.setattr("connector.maintenance.compaction.commit_group", upsert_first)
    policy = table_policy({}, MaintenanceConfig(min_input_files=50, deletes_min_files=3))
    report = compact(upserts.catalog, upserts.config, "db.events", policy, deadline=float("inf"))

    table = upserts.table
    assert (report.groups, report.given_up) == (0, 1)
    assert 7 not in pyiceberg_ids(table) and pyiceberg_ids(table) == duckdb_ids(table) == sorted(upserts.rows)
    assert written and not table.io.new_input(written[0].file_path).exists()


def test_expiry_deletes_the_delete_files_only_expired_snapshots_referenced(upserts):
    for n in range(4):
        upserts.commit(deleted=[n])
    folded = {local_path(d.file.file_path) for d in upserts.delete_files_in("eu")}
    policy = table_policy({}, MaintenanceConfig(min_input_files=50, deletes_min_files=2, snapshot_min_to_keep=1,
                                                snapshot_max_age_ms=0))
    compact(upserts.catalog, upserts.config, "db.events", policy, deadline=float("inf"))
    upserts.commit([500])  # carries the offsets past the compaction

    report = expire(upserts.catalog, "db.events", policy, upserts.config.group_id, now_ms=FUTURE)

    table = upserts.table
    assert report.expired > 0
    assert not any(Path(p).exists() for p in folded)
    assert pyiceberg_ids(table) == duckdb_ids(table) == sorted(upserts.rows)


def test_orphan_cleanup_keeps_live_delete_files(upserts):
    upserts.commit(deleted=[1, 101])
    upserts.commit(deleted=[2])
    table = upserts.table
    live = {local_path(d.file.file_path) for d in live_files(table, None).deletes}
    root = Path(local_path(table.location()))
    crashed = write_position_deletes(table, positions_of(table, [f.file for f in live_files(table, None).data],
                                                         {5}), {f.file.file_path: f.file for f in
                                                                live_files(table, None).data})
    old = time.time() - 7200
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (old, old))

    assert delete_orphans(upserts.catalog, "db.events", min_age_ms=3_600_000) == len(crashed)

    assert len(live) == 3 and all(Path(p).exists() for p in live)
    assert not any(Path(local_path(d.file_path)).exists() for d in crashed)
    assert pyiceberg_ids(upserts.table) == duckdb_ids(upserts.table) == sorted(upserts.rows)


def test_merging_manifests_keeps_the_delete_manifests_and_their_sequence_numbers(upserts):
    from connector.maintenance.manifests import rewrite_manifests

    upserts.commit([30], deleted=[4, 104])
    upserts.commit([31], deleted=[30])
    before = sorted((d.file.file_path, d.sequence_number) for d in live_files(upserts.table, None).deletes)
    policy = table_policy({}, MaintenanceConfig(manifests_min_count=2))
    assert rewrite_manifests(upserts.catalog, upserts.config, "db.events", policy)[1] == 1
    table = upserts.table
    assert sorted((d.file.file_path, d.sequence_number) for d in live_files(table, None).deletes) == before
    assert pyiceberg_ids(table) == duckdb_ids(table) == sorted(upserts.rows)


def test_planning_folds_a_partition_past_either_threshold_and_keeps_single_files_with_deletes():
    def candidate(partition, path, deletes=0, deleted=0, size=100, rows=100):
        return Candidate(partition, path, size, delete_files=deletes, deleted_rows=deleted, rows=rows)

    files = [candidate("a", "a1", deletes=2, deleted=10, size=900), candidate("a", "a2", size=900),
             candidate("b", "b1", deletes=1, deleted=40, size=900), candidate("b", "b2", size=900),
             candidate("c", "c1", deletes=1, deleted=1, size=900)]
    groups = plan_groups(files, target_size=1000, small_file_size=500, min_input_files=5, deletes_min_files=2,
                         deletes_min_ratio=0.3)
    # a: two delete files; b: one, and 40 of its 200 rows deleted (0.2 < 0.3); c: one, 1 of 100 rows
    assert {(g.partition, tuple(f.path for f in g.files)) for g in groups} == {("a", ("a1",))}
    groups = plan_groups(files, target_size=1000, small_file_size=500, min_input_files=5, deletes_min_files=9,
                         deletes_min_ratio=0.2)
    assert {(g.partition, tuple(f.path for f in g.files)) for g in groups} == {("b", ("b1",))}
