"""Spark with Iceberg's own runtime reads icefloe's upsert tables as pyiceberg and DuckDB do.

The tables here are written through the same calls the coordinator makes (row deltas with
file-scoped position deletes, then compaction folding them into the data files), without a
broker, so the three readers can be compared on a history chosen to cover the cases: deletes of
rows in older files, in a file of the same commit, in several partitions, a key moving to another
partition. The Kafka end to end runs are in test_upserts.py, which compares Spark too.
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType, NestedField, StringType

from connector.config.icefloe_config import MaintenanceConfig
from connector.config.sink_config import SinkConfig
from connector.data.catalog import load_catalog
from connector.data.write.writer import write_data_files
from connector.iceberg.live_files import live_files
from connector.iceberg.position_deletes import write_position_deletes
from connector.iceberg.row_delta import commit_row_delta
from connector.iceberg.snapshot_offsets import summary_properties
from connector.maintenance.compaction import compact
from connector.maintenance.policy import table_policy
from tests.integration.harness import sink_props, unique
from tests.support import duckdb_iceberg, spark_iceberg
from tests.support.positions import positions_of

pytestmark = pytest.mark.integration

SCHEMA = Schema(NestedField(1, "id", LongType(), required=False),
                NestedField(2, "region", StringType(), required=False),
                NestedField(3, "version", LongType(), required=False))
BY_REGION = PartitionSpec(PartitionField(2, 1000, IdentityTransform(), "region"))
COLUMNS = "id, region, version"


class UpsertTable:
    """An upsert table written by row deltas; ``rows`` is what every reader must see (id → row)."""

    def __init__(self, config: SinkConfig, name: str):
        self.config, self.name = config, name
        self.catalog = load_catalog(config.props)
        self.catalog.create_table(name, SCHEMA, partition_spec=BY_REGION, properties={"format-version": "2"})
        self.rows: dict[int, dict] = {}
        self.commits = 0

    @property
    def table(self):
        return self.catalog.load_table(self.name)

    def commit(self, upserts: dict[int, str] | None = None, deletes: frozenset[int] = frozenset()) -> None:
        """One row delta: each key of ``upserts`` (id → region) written anew, ``deletes`` removed.

        The previous row of every changed key is deleted by position wherever it is: in an older
        file, or in this commit's own new files (a key written twice in one commit).
        """
        table, upserts = self.table, upserts or {}
        self.commits += 1
        rows = [{"id": key, "region": region, "version": self.commits} for key, region in upserts.items()]
        added = []
        for region in sorted({r["region"] for r in rows}):
            mine = pa.Table.from_pylist([r for r in rows if r["region"] == region], schema=SCHEMA.as_arrow())
            added += write_data_files(table, mine, task_id="spark-reads")
        live = [f.file for f in live_files(table, None).data]
        doomed = set(upserts) | set(deletes)
        positions = positions_of(table, live, doomed)
        deletes_files = write_position_deletes(table, positions, {f.file_path: f for f in live})
        props = summary_properties({("t", 0): self.commits}, self.config.group_id, f"c{self.commits}", None)
        commit_row_delta(table, "main", props, added_data=added, added_deletes=deletes_files)
        for key in deletes:
            self.rows.pop(key, None)
        self.rows.update({r["id"]: r for r in rows})

    def raw_row_count(self) -> int:
        """Rows in the live data files, before any delete applies: what a reader ignoring deletes returns."""
        return sum(f.file.record_count for f in live_files(self.table, None).data)

    def expected(self) -> list[dict]:
        return [self.rows[key] for key in sorted(self.rows)]


def history(table: UpsertTable) -> None:
    """Inserts, updates in place and across partitions, deletes, a same-commit rewrite, a ghost delete."""
    table.commit({i: "eu" for i in range(10)})
    table.commit({i: "us" for i in range(10, 15)}, deletes=frozenset({2, 3, 7}))  # deletes in an older file
    # 5 moves from eu to us, 11 is rewritten in place; 999 was never there.
    table.commit({5: "us", 11: "us", 20: "apac"}, deletes=frozenset({12, 999}))
    table.commit({20: "eu", 21: "apac"}, deletes=frozenset({0}))  # 20 written in the previous commit, moved again
    table.commit({21: "apac", 22: "apac"})


@pytest.fixture
def config(tmp_path) -> SinkConfig:
    config = SinkConfig.parse(sink_props(unique("spark-reads"), "t", "db.upserts,db.compacted", tmp_path))
    load_catalog(config.props).create_namespace("db")
    return config


def test_spark_reads_position_deletes_and_a_compacted_table_as_pyiceberg_and_duckdb_do(config):
    merge_on_read = UpsertTable(config, "db.upserts")
    history(merge_on_read)
    compacted = UpsertTable(config, "db.compacted")
    history(compacted)
    policy = table_policy({}, MaintenanceConfig(min_input_files=2, deletes_min_files=1))
    report = compact(compacted.catalog, config, compacted.name, policy, deadline=float("inf"))
    assert report.delete_files_removed > 0, report  # the deletes were folded into rewritten files

    # The deletes must matter: a reader that ignored them would return more rows than the model.
    summary = merge_on_read.table.current_snapshot().summary
    assert int(summary["total-position-deletes"]) > 0
    assert merge_on_read.raw_row_count() > len(merge_on_read.rows)

    tables = (merge_on_read, compacted)
    # One JVM for every read: both tables, and a filtered aggregate through the same deletes.
    *spark, us_count = spark_iceberg.scan_tables([*((t.table, COLUMNS) for t in tables),
                                                  (merge_on_read.table, "count(*) AS n", "region = 'us'")])
    for table, spark_rows in zip(tables, spark):
        pyiceberg_rows = sorted(table.table.scan(selected_fields=("id", "region", "version")).to_arrow().to_pylist(),
                                key=lambda r: r["id"])
        duck_rows = sorted(duckdb_iceberg.scan(table.table, COLUMNS).to_pylist(), key=lambda r: r["id"])
        assert pyiceberg_rows == table.expected(), f"pyiceberg on {table.name}"
        assert duck_rows == table.expected(), f"DuckDB on {table.name}"
        assert spark_rows == table.expected(), f"Spark on {table.name}"
    assert us_count == [{"n": sum(r["region"] == "us" for r in merge_on_read.rows.values())}]


def test_a_table_spark_cannot_read_fails_with_sparks_own_message(tmp_path):
    missing = f"file://{tmp_path}/db/t/metadata/00001-gone.metadata.json"
    with pytest.raises(RuntimeError) as failure:
        spark_iceberg.scan(missing, "id")
    message = str(failure.value)
    assert "NotFoundException" in message and "00001-gone.metadata.json" in message, message


def test_a_spark_stream_reads_each_row_once_across_a_maintenance_round(tmp_path):
    """Spark's streaming Iceberg source (default options) skips the ``replace`` snapshots maintenance
    writes: it neither fails (as on an ``overwrite``) nor reads the rewritten rows again."""
    from connector.maintenance.runner import Maintainer
    from tests.maintenance.test_compaction import tiny_commits

    config = SinkConfig.parse(sink_props(unique("stream"), "t", "db.events", tmp_path,
                                         **{"icefloe.maintenance.compaction.min-input-files": 3,
                                            "icefloe.maintenance.manifests.min-count": 2}))
    catalog = load_catalog(config.props)
    tiny_commits(config, 4)  # rows 0-39, one file each
    before = catalog.load_table("db.events")
    Maintainer(config, catalog).run_round()
    tiny_commits(config, 2, first=4)  # rows 40-59
    after = catalog.load_table("db.events")

    maintenance = [s.summary.operation.value for s in after.metadata.snapshots
                   if "icefloe.maintenance" in s.summary.additional_properties]
    assert maintenance and set(maintenance) == {"replace"}, maintenance
    first_run, second_run = spark_iceberg.stream([before, after], "id")
    assert [r["id"] for r in first_run] == list(range(40))
    assert [r["id"] for r in second_run] == list(range(40, 60))  # the compacted rows not again
    (from_scratch,) = spark_iceberg.stream([after], "id")
    assert [r["id"] for r in from_scratch] == list(range(60))


def test_snapshots_and_a_new_table_match_what_icebergs_java_writers_make(tmp_path):
    """The same history made by Iceberg's Java writers (Spark 3.5: CREATE TABLE, two INSERTs,
    rewrite_data_files, rewrite_manifests) and by icefloe (auto-create, two commits, a maintenance
    round): the same new-table properties and format, each snapshot's operation and summary keys, and
    the same counts. Java commits the compaction of both partitions in one snapshot, icefloe one
    snapshot per partition (so that a round's budget can stop between them)."""
    from connector.maintenance.runner import Maintainer
    from tests.data.test_auto_create import write

    java = spark_iceberg.java_history(tmp_path / "java")
    config = SinkConfig.parse(sink_props(unique("oracle"), "t", "db.events", tmp_path / "icefloe", **{
        "iceberg.tables.default-partition-by": "name", "icefloe.maintenance.compaction.min-input-files": 2,
        "icefloe.maintenance.manifests.min-count": 2}))
    write(config, [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}])
    write(config, [{"id": 3, "name": "a"}, {"id": 4, "name": "b"}], first=2)
    catalog = load_catalog(config.props)
    created = catalog.load_table("db.events").metadata
    Maintainer(config, catalog).run_round()
    table = catalog.load_table("db.events")

    java_created = java["created"]
    assert created.format_version == java_created["format-version"] == 2
    assert created.properties == {k: v for k, v in java_created["properties"].items() if k != "owner"}  # Spark's

    def kind(summary: dict) -> str:
        return "manifests" if "manifests-created" in summary else summary["operation"]

    def ours(summary: dict) -> dict:
        return {k: v for k, v in summary.items() if not k.startswith(("kafka.connect.", "icefloe."))}

    java_snapshots = [s["summary"] for s in java["metadata"]["snapshots"]]
    icefloe_snapshots = [ours(s.summary.model_dump()) for s in sorted(table.metadata.snapshots,
                                                                        key=lambda s: s.sequence_number)]
    assert [kind(s) for s in java_snapshots] == ["append", "append", "replace", "manifests"]
    assert [kind(s) for s in icefloe_snapshots] == ["append", "append", "replace", "replace", "manifests"]
    for name in ("append", "replace", "manifests"):
        java_keys = {frozenset(set(s) - {"app-id", "spark.app.id"}) for s in java_snapshots if kind(s) == name}
        icefloe_keys = {frozenset(s) for s in icefloe_snapshots if kind(s) == name}
        assert java_keys == icefloe_keys, name

    counted = ("added-data-files", "deleted-data-files", "added-records", "deleted-records")
    for name in ("append", "replace"):
        java_counts = [sum(int(s.get(k, 0)) for s in java_snapshots if kind(s) == name) for k in counted]
        icefloe_counts = [sum(int(s.get(k, 0)) for s in icefloe_snapshots if kind(s) == name) for k in counted]
        assert java_counts == icefloe_counts, name
    assert [s["changed-partition-count"] for s in java_snapshots[:2]] == \
        [s["changed-partition-count"] for s in icefloe_snapshots[:2]] == ["2", "2"]
    totals = ("total-data-files", "total-records", "total-delete-files", "changed-partition-count")
    assert {k: java_snapshots[-1][k] for k in totals} == {k: icefloe_snapshots[-1][k] for k in totals}
