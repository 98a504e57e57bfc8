"""Every snapshot icefloe commits carries the operation and summary Iceberg's Java writers give the same change.

Java: ``AppendFiles`` → ``append``; ``RowDelta`` → ``append`` (data only), ``delete`` (delete files only),
``overwrite`` (both); ``RewriteFiles`` (compaction, delete files folded in) and ``RewriteManifests`` →
``replace``. Each summary has the counts of what changed, the totals carried on from the parent,
``changed-partition-count`` and the writer's ``iceberg-version``/``engine-name``/``engine-version``.
"""

from __future__ import annotations

from importlib import metadata

from connector.commit.commit import commit_table
from connector.config.icefloe_config import MaintenanceConfig
from connector.data.catalog import load_catalog
from connector.maintenance.compaction import compact
from connector.maintenance.manifests import rewrite_manifests
from connector.maintenance.policy import table_policy
from tests.commit.test_commit import _written
from tests.maintenance.test_compaction import config, tiny_commits  # noqa: F401 - fixture
from tests.maintenance.test_compaction_deletes import Upserts

TOTALS = {"total-records": ("added-records", "deleted-records"),
          "total-files-size": ("added-files-size", "removed-files-size"),
          "total-data-files": ("added-data-files", "deleted-data-files"),
          "total-delete-files": ("added-delete-files", "removed-delete-files"),
          "total-position-deletes": ("added-position-deletes", "removed-position-deletes"),
          "total-equality-deletes": ("added-equality-deletes", "removed-equality-deletes")}
ENVIRONMENT = {"engine-name": "icefloe", "engine-version": metadata.version("icefloe"),
               "iceberg-version": f"PyIceberg {metadata.version('pyiceberg')}"}


def history(table) -> list:
    """The snapshots of main, oldest first."""
    by_id = {s.snapshot_id: s for s in table.metadata.snapshots}
    chain, snapshot = [], table.current_snapshot()
    while snapshot is not None:
        chain.append(snapshot)
        snapshot = by_id.get(snapshot.parent_snapshot_id)
    return chain[::-1]


def check_as_java_writes(table) -> list[str]:
    """Each snapshot's totals carried on from its parent's, and its environment; the operations, oldest first."""
    previous: dict[str, str] = {key: "0" for key in TOTALS}
    for snapshot in history(table):
        summary = snapshot.summary.additional_properties
        for total, (added, removed) in TOTALS.items():
            expected = int(previous[total]) + int(summary.get(added, 0)) - int(summary.get(removed, 0))
            assert summary[total] == str(expected), (snapshot.summary.operation, total)
        assert {key: summary.get(key) for key in ENVIRONMENT} == ENVIRONMENT
        assert "changed-partition-count" in summary
        previous = summary
    return [s.summary.operation.value for s in history(table)]


def test_appends_deletes_upserts_and_the_delete_file_fold_record_javas_operations(config):  # noqa: F811
    upserts = Upserts(config)
    upserts.commit(range(0, 10))  # data only
    upserts.commit(range(100, 110), region="us")
    upserts.commit(deleted=[1])  # delete files only
    for n in range(5):  # an upsert: new rows and deletes of old ones
        upserts.commit([200 + n], deleted=[2 + n])
    first_upsert = history(upserts.table)[3].summary

    compact(upserts.catalog, config, "db.events",
            table_policy({}, MaintenanceConfig(min_input_files=50, deletes_min_files=3)), deadline=float("inf"))

    table = upserts.table
    assert check_as_java_writes(table) == ["append", "append", "delete", *["overwrite"] * 5, "replace"]
    assert {k: first_upsert[k] for k in ("added-data-files", "added-records", "added-delete-files",
                                         "added-position-delete-files", "added-position-deletes",
                                         "changed-partition-count")} == {
        "added-data-files": "1", "added-records": "1", "added-delete-files": "1",
        "added-position-delete-files": "1", "added-position-deletes": "1", "changed-partition-count": "1"}
    fold = table.current_snapshot().summary
    # what RewriteFiles writes: the eu data files and their 6 delete files out, one file in, one partition
    assert {k: fold[k] for k in ("added-data-files", "deleted-data-files", "removed-delete-files",
                                 "removed-position-delete-files", "removed-position-deletes",
                                 "added-records", "deleted-records", "changed-partition-count",
                                 "total-delete-files", "total-records")} == {
        "added-data-files": "1", "deleted-data-files": "6", "removed-delete-files": "6",
        "removed-position-delete-files": "6", "removed-position-deletes": "6",
        "added-records": "9", "deleted-records": "15", "changed-partition-count": "1",
        "total-delete-files": "0", "total-records": "19"}
    assert int(fold["added-records"]) <= int(fold["deleted-records"])  # Java refuses a replace adding rows
    assert fold["icefloe.maintenance"] == "compaction"


def test_compaction_and_manifest_rewrite_are_replaces_and_appends_count_an_unpartitioned_table_once(
        config):  # noqa: F811
    tiny_commits(config, 6)
    catalog = load_catalog(config.props)
    append = catalog.load_table("db.events").current_snapshot().summary
    assert (append["added-data-files"], append["changed-partition-count"]) == ("1", "1")

    assert rewrite_manifests(catalog, config, "db.events", table_policy({}, MaintenanceConfig(
        manifests_min_count=5))) == (6, 1)
    merge = catalog.load_table("db.events").current_snapshot().summary
    assert {k: merge[k] for k in ("manifests-created", "manifests-kept", "manifests-replaced",
                                  "entries-processed", "changed-partition-count", "total-data-files")} == {
        "manifests-created": "1", "manifests-kept": "0", "manifests-replaced": "6", "entries-processed": "6",
        "changed-partition-count": "0", "total-data-files": "6"}
    assert merge.get("added-data-files") is None

    compact(catalog, config, "db.events", table_policy({}, MaintenanceConfig(min_input_files=3)),
            deadline=float("inf"))
    commit_table(catalog, config, "db.events", _written(config, range(60, 70)), {("t", 0): 70}, "c", None)

    table = catalog.load_table("db.events")
    assert check_as_java_writes(table) == ["append"] * 6 + ["replace", "replace", "append"]
    compaction = history(table)[-2].summary
    assert {k: compaction[k] for k in ("added-data-files", "deleted-data-files", "added-records",
                                       "deleted-records", "changed-partition-count", "total-data-files")} == {
        "added-data-files": "1", "deleted-data-files": "6", "added-records": "60", "deleted-records": "60",
        "changed-partition-count": "1", "total-data-files": "1"}
