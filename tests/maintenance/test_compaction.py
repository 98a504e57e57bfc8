"""Compaction against a real SQL catalog: fewer, larger files, the same rows, the offsets still found."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from connector.commit.commit import commit_table
from connector.config.icefloe_config import MaintenanceConfig
from connector.config.sink_config import SinkConfig
from connector.data.catalog import load_catalog
from connector.iceberg.snapshot_offsets import committed_offsets
from connector.maintenance import compaction
from connector.maintenance.compaction import compact, live_data_files
from connector.maintenance.planner import Candidate, plan_groups
from connector.maintenance.policy import table_policy
from tests.commit.test_commit import _written
from tests.integration.harness import sink_props, unique
from tests.maintenance.readers import ids_by_both


@pytest.fixture
def config(tmp_path) -> SinkConfig:
    return SinkConfig.parse(sink_props(unique("maint"), "t", "db.events", tmp_path))


def tiny_commits(config: SinkConfig, count: int, per: int = 10, first: int = 0) -> None:
    catalog = load_catalog(config.props)
    for n in range(first, first + count):
        offsets = range(n * per, (n + 1) * per)
        commit_table(catalog, config, "db.events", _written(config, offsets), {("t", 0): offsets[-1] + 1},
                     f"c{n}", None)


def ids(table) -> list[int]:
    return ids_by_both(table)  # read by pyiceberg and by DuckDB, which must agree


POLICY = MaintenanceConfig(min_input_files=3)


def test_many_tiny_commits_compact_into_one_file_with_the_same_rows_and_offsets(config):
    tiny_commits(config, 12)
    catalog = load_catalog(config.props)
    before = catalog.load_table("db.events")
    assert len(live_data_files(before, None)[0]) == 12
    rows = ids(before)

    report = compact(catalog, config, "db.events", table_policy(before.properties, POLICY), deadline=float("inf"))

    table = catalog.load_table("db.events")
    files, _ = live_data_files(table, None)
    assert (report.groups, report.files_removed, len(files)) == (1, 12, 1)
    assert ids(table) == rows == list(range(120))
    assert table.current_snapshot().summary.operation.value == "replace"  # as RewriteFiles records it
    assert committed_offsets(table, config.group_id) == {("t", 0): 120}  # walked back past compaction
    # the next data commit keeps the offsets moving forward from there
    commit_table(catalog, config, "db.events", _written(config, range(120, 130)), {("t", 0): 130}, "c", None)
    assert committed_offsets(catalog.load_table("db.events"), config.group_id) == {("t", 0): 130}


def test_a_partition_below_the_threshold_or_a_spent_budget_is_left_for_later(config):
    tiny_commits(config, 2)
    catalog = load_catalog(config.props)
    policy = table_policy({}, POLICY)
    assert compact(catalog, config, "db.events", policy, deadline=float("inf")).groups == 0
    tiny_commits(config, 3, first=2)
    small = table_policy({"write.target-file-size-bytes": "2000"}, POLICY)  # groups of about three files
    report = compact(catalog, config, "db.events", small, deadline=0.0)
    assert (report.groups, report.pending) == (1, 1)  # the first group whatever the time, then no more
    assert compact(catalog, config, "db.events", small, deadline=0.0).groups == 1


def test_a_concurrent_append_between_planning_and_commit_is_kept(config, monkeypatch):
    tiny_commits(config, 5)
    catalog = load_catalog(config.props)
    real_rewrite = compaction.commit_group

    def append_first(*args, **kwargs):  # another writer commits after the group was read and written
        other = catalog.load_table("db.events")
        other.append(pa.Table.from_pylist([{"id": 1000}], schema=other.schema().as_arrow()))
        return real_rewrite(*args, **kwargs)

    monkeypatch.setattr("connector.maintenance.compaction.commit_group", append_first)
    report = compact(catalog, config, "db.events", table_policy({}, POLICY), deadline=float("inf"))
    table = catalog.load_table("db.events")
    assert report.groups == 1
    assert ids(table) == [*range(50), 1000]
    assert len(live_data_files(table, None)[0]) == 2
    assert committed_offsets(table, config.group_id) == {("t", 0): 50}


def test_a_group_whose_files_were_removed_meanwhile_is_given_up_and_its_new_file_deleted(config, monkeypatch):
    tiny_commits(config, 4)
    catalog = load_catalog(config.props)
    real_rewrite = compaction.commit_group
    written = []

    def delete_first(catalog_, table_name, branch, removed, deletes, added):
        other = catalog.load_table("db.events")
        other.delete("id < 5")  # removes one of the group's files
        written.extend(added)
        return real_rewrite(catalog_, table_name, branch, removed, deletes, added)

    monkeypatch.setattr("connector.maintenance.compaction.commit_group", delete_first)
    report = compact(catalog, config, "db.events", table_policy({}, POLICY), deadline=float("inf"))
    table = catalog.load_table("db.events")
    assert (report.groups, report.given_up) == (0, 1)
    assert ids(table) == list(range(5, 40))
    assert not table.io.new_input(written[0].file_path).exists()


PARTITION = st.sampled_from(["a", "b", "c"])


@given(st.lists(st.tuples(PARTITION, st.integers(1, 1000)), max_size=40), st.integers(100, 2000),
       st.integers(2, 6))
def test_bin_packing_puts_each_small_file_in_one_group_within_the_target_and_one_partition(files, target, least):
    candidates = [Candidate(partition, f"f{i}", size) for i, (partition, size) in enumerate(files)]
    small = int(target * 0.75)
    groups = plan_groups(candidates, target_size=target, small_file_size=small, min_input_files=least)
    grouped = [f for g in groups for f in g.files]
    assert len(grouped) == len({f.path for f in grouped})  # no file twice
    for group in groups:
        assert len(group.files) > 1 and group.size <= target
        assert {f.partition for f in group.files} == {group.partition}
        assert all(f.size < small for f in group.files)
    for partition in {c.partition for c in candidates}:
        mine = [c for c in candidates if c.partition == partition and c.size < small]
        in_groups = [f for f in grouped if f.partition == partition]
        if len(mine) < least:
            assert not in_groups
        else:  # every small file is grouped unless it fit with no other file
            singles = len(mine) - len(in_groups)
            assert singles <= max(1, len(mine))
            assert sum(f.size for f in in_groups) <= sum(f.size for f in mine)


def test_a_table_with_a_sort_order_gets_sorted_files(config):
    from pyiceberg.transforms import IdentityTransform

    tiny_commits(config, 1)
    catalog = load_catalog(config.props)
    catalog.load_table("db.events").update_sort_order().desc("id", IdentityTransform()).commit()
    tiny_commits(config, 3, first=1)
    compact(catalog, config, "db.events", table_policy({}, POLICY), deadline=float("inf"))
    table = catalog.load_table("db.events")
    assert len(live_data_files(table, None)[0]) == 1
    assert table.scan().to_arrow().column("id").to_pylist() == list(range(39, -1, -1))
    assert ids(table) == list(range(40))


def test_many_manifests_are_merged_into_one_snapshot_that_adds_no_data(config):
    from connector.maintenance.manifests import data_manifests, rewrite_manifests

    tiny_commits(config, 6)
    catalog = load_catalog(config.props)
    table = catalog.load_table("db.events")
    assert data_manifests(table, None) == 6
    untouched = table_policy({}, MaintenanceConfig(manifests_min_count=7))
    assert rewrite_manifests(catalog, config, "db.events", untouched) == (6, 6)

    assert rewrite_manifests(catalog, config, "db.events", table_policy({}, MaintenanceConfig())) == (6, 6)
    merged = rewrite_manifests(catalog, config, "db.events", table_policy({}, MaintenanceConfig(
        manifests_min_count=5)))

    table = catalog.load_table("db.events")
    assert merged == (6, 1)
    assert table.current_snapshot().summary["added-data-files"] is None or \
        table.current_snapshot().summary.get("added-data-files") in (None, "0")
    assert ids(table) == list(range(60))
    assert len(live_data_files(table, None)[0]) == 6
    assert committed_offsets(table, config.group_id) == {("t", 0): 60}
    entries = [e for m in table.current_snapshot().manifests(table.io) for e in m.fetch_manifest_entry(table.io)]
    assert sorted(e.sequence_number for e in entries) == [1, 2, 3, 4, 5, 6]  # kept, not renumbered


def test_files_a_backfill_just_wrote_at_full_size_are_not_small_unless_they_carry_deletes():
    fresh = [Candidate("p", f"backfill{i}", 100, as_written=True) for i in range(6)]
    assert plan_groups(fresh, target_size=1000, small_file_size=750, min_input_files=2) == []
    with_deletes = [*fresh[:5], Candidate("p", "backfill5", 100, delete_files=3, deleted_rows=30, rows=60,
                                          as_written=True)]
    groups = plan_groups(with_deletes, target_size=1000, small_file_size=750, min_input_files=2,
                         deletes_min_files=3)
    assert [f.path for g in groups for f in g.files] == ["backfill5"]  # rewritten alone to apply its deletes
