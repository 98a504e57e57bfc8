"""Commits to a branch of a table that has no snapshots yet (connector/iceberg/branches.py)."""

from __future__ import annotations

import pytest

from connector.commit.commit import commit_table
from connector.config.sink_config import SinkConfig
from connector.data.catalog import load_catalog
from connector.iceberg.snapshot_offsets import committed_offsets
from tests.commit.test_commit import _written
from tests.integration.harness import sink_props, unique


@pytest.mark.parametrize("key", ["iceberg.tables.default-commit-branch", "iceberg.table.db.events.commit-branch"])
def test_the_first_commit_to_a_branch_of_a_new_table_creates_the_branch(tmp_path, key):
    config = SinkConfig.parse(sink_props(unique("branch"), "t", "db.events", tmp_path, **{key: "feature"}))
    catalog = load_catalog(config.props)
    commit_table(catalog, config, "db.events", _written(config, range(0, 5)), {("t", 0): 5}, "c1", None)
    commit_table(catalog, config, "db.events", _written(config, range(5, 8)), {("t", 0): 8}, "c2", None)
    table = catalog.load_table("db.events")
    assert set(table.metadata.refs) == {"feature"}  # main untouched, as with Iceberg Java
    assert table.current_snapshot() is None
    head = table.snapshot_by_name("feature")
    assert sorted(r["id"] for r in table.scan(snapshot_id=head.snapshot_id).to_arrow().to_pylist()) == list(range(8))
    assert committed_offsets(table, config.group_id, "feature") == {("t", 0): 8}
    assert len(list(table.snapshots())) == 2
