"""Old metadata files are deleted by the table's rules only (connector/iceberg/metadata_cleanup.py).

Java's writers delete, after a commit and only when ``write.metadata.delete-after-commit.enabled``
is true, the metadata files that commit dropped from the metadata log (which keeps
``write.metadata.previous-versions-max`` entries): never a file the log does not name.
"""

from __future__ import annotations

import itertools
import os
import time
from pathlib import Path

import pytest

from connector.config.sink_config import SinkConfig
from connector.data.catalog import load_catalog
from connector.iceberg.metadata_cleanup import MetadataCleanup
from connector.maintenance.files import local_path
from connector.maintenance.runner import Maintainer
from tests.integration.harness import sink_props, unique
from tests.maintenance.test_compaction import tiny_commits

DELETE_AFTER_COMMIT = "write.metadata.delete-after-commit.enabled"
PREVIOUS_VERSIONS_MAX = "write.metadata.previous-versions-max"
COMMITS = 6


def metadata_jsons(table) -> set[str]:
    return {str(p) for p in (Path(local_path(table.location())) / "metadata").glob("*.metadata.json")}


def decoys(table) -> set[str]:
    """Metadata files no log names (another writer's, a catalog's own), an hour old."""
    folder = Path(local_path(table.location())) / "metadata"
    made = set()
    for name in ("00000-not-logged.metadata.json", "99999-catalogs-own.metadata.json"):
        path = folder / name
        path.write_text("{}")
        os.utime(path, (time.time() - 3600, time.time() - 3600))
        made.add(str(path))
    return made


def commit_and_watch(config: SinkConfig, commits: int) -> tuple[set[str], set[str]]:
    """Make ``commits`` commits; (every file a metadata log named meanwhile, the files the last log names)."""
    catalog = load_catalog(config.props)
    named: set[str] = set()
    for n in range(1, commits + 1):
        tiny_commits(config, 1, first=n)
        table = catalog.load_table("db.events")
        named |= {local_path(e.metadata_file) for e in table.metadata.metadata_log}
    table = catalog.load_table("db.events")
    return named, {local_path(e.metadata_file) for e in table.metadata.metadata_log} | {
        local_path(table.metadata_location)}


@pytest.mark.parametrize("property_value, versions_max, key", list(itertools.product(
    [None, "true", "false"], [None, "2"], [None, "true"])))
def test_only_files_a_commit_drops_from_the_log_are_deleted_and_only_when_the_rules_say_so(
        tmp_path, property_value, versions_max, key):
    extra = {} if key is None else {"icefloe.maintenance.metadata.delete-old": key}
    config = SinkConfig.parse(sink_props(unique("meta"), "t", "db.events", tmp_path, **extra))
    tiny_commits(config, 1)  # creates the table
    table = load_catalog(config.props).load_table("db.events")
    properties = {k: v for k, v in ((DELETE_AFTER_COMMIT, property_value), (PREVIOUS_VERSIONS_MAX, versions_max))
                  if v is not None}
    if properties:
        table.transaction().set_properties(properties).commit_transaction()
    strangers = decoys(table)
    written_before = metadata_jsons(table)

    named, live = commit_and_watch(config, COMMITS)

    table = load_catalog(config.props).load_table("db.events")
    left = metadata_jsons(table)
    full = versions_max is not None  # the log dropped entries: 2 kept of the 7 previous versions
    assert len(table.metadata.metadata_log) == (2 if full else len(written_before - strangers) - 1 + COMMITS)
    rule = property_value == "true" if property_value is not None else key == "true"
    dropped = (named | written_before) - live - strangers
    if rule and full:
        assert left == live | strangers  # exactly what the commits dropped from the log is gone
        assert dropped and not dropped & left
    else:
        assert left == live | dropped | strangers  # nothing deleted
    assert strangers <= left


def test_an_empty_metadata_log_deletes_nothing_after_a_commit_or_in_a_maintenance_round(tmp_path):
    """A REST catalog may return tables with an empty ``metadata-log``: no file may go for lack of a name."""
    config = SinkConfig.parse(sink_props(unique("meta"), "t", "db.events", tmp_path, **{
        "icefloe.maintenance.metadata.delete-old": "true", "icefloe.maintenance.orphan.min-age-ms": "0"}))
    tiny_commits(config, 3)
    catalog = load_catalog(config.props)
    table = catalog.load_table("db.events")
    table.transaction().set_properties({DELETE_AFTER_COMMIT: "true", PREVIOUS_VERSIONS_MAX: "1"}).commit_transaction()
    table = catalog.load_table("db.events")
    for path in metadata_jsons(table):
        os.utime(path, (time.time() - 3600, time.time() - 3600))
    before = metadata_jsons(table)
    as_rest_returns = table.metadata.model_copy(update={"metadata_log": []})

    MetadataCleanup(delete_old=True).after_commit(table.io, as_rest_returns, as_rest_returns)
    Maintainer(config, catalog).run_round()

    assert metadata_jsons(catalog.load_table("db.events")) >= before


def test_a_rest_catalog_keeps_its_metadata_files_unless_the_user_asks():
    from pyiceberg.partitioning import PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.table.metadata import new_table_metadata
    from pyiceberg.table.sorting import SortOrder
    from pyiceberg.types import LongType, NestedField

    def metadata(properties):
        return new_table_metadata(Schema(NestedField(1, "id", LongType())), PartitionSpec(), SortOrder(),
                                  "file:///t", properties)

    on = metadata({DELETE_AFTER_COMMIT: "true"})
    off = metadata({DELETE_AFTER_COMMIT: "false"})
    unset = metadata({})
    assert not MetadataCleanup(delete_old=True, rest=True).applies(on)
    assert MetadataCleanup(rest=True, delete_on_rest=True).applies(on)
    assert not MetadataCleanup(delete_old=True, rest=True, delete_on_rest=True).applies(off)
    assert MetadataCleanup(delete_old=True, rest=True, delete_on_rest=True).applies(unset)
    assert not MetadataCleanup().applies(unset)  # Iceberg's default: keep them
    assert MetadataCleanup().applies(on)
