"""Maintenance rounds: budget, resuming, partitioned tables, schema evolution, metrics."""

from __future__ import annotations

import json

from prometheus_client import CollectorRegistry

from connector.commit.commit import commit_table, schema_rounds
from connector.commit.coordinator import CycleReport
from connector.config.sink_config import SinkConfig
from connector.data.catalog import load_catalog
from connector.iceberg.snapshot_offsets import committed_offsets
from connector.maintenance import compaction
from connector.maintenance.compaction import live_data_files
from connector.maintenance.runner import Maintainer
from connector.metrics import JobMetrics
from connector.task import new_pipeline
from tests.commit.test_commit import _batch, _process
from tests.integration.harness import sink_props, unique
from tests.maintenance.readers import ids_by_both, rows_by_both


def write(config: SinkConfig, offsets, values) -> list:
    pipeline = new_pipeline(config, unique("task"))
    schema_rounds(pipeline.catalog, config, _batch(offsets, values), lambda b: _process(pipeline, b))
    files, _ = pipeline.close()
    return files["db.events"]


def test_a_partitioned_table_with_an_added_column_compacts_per_partition_keeping_every_row(tmp_path):
    config = SinkConfig.parse(sink_props(unique("maint"), "t", "db.events", tmp_path,
                                         **{"iceberg.tables.default-partition-by": "kind",
                                            "iceberg.tables.evolve-schema-enabled": "true",
                                            "icefloe.maintenance.compaction.min-input-files": "3"}))
    catalog = load_catalog(config.props)
    expected = []
    for n in range(8):  # from the fifth commit on, rows have a new column
        offsets = range(n * 4, n * 4 + 4)
        values = [{"id": o, "kind": "ab"[o % 2], **({"extra": f"x{o}"} if n >= 4 else {})} for o in offsets]
        expected += values
        commit_table(catalog, config, "db.events", write(config, offsets, values), {("t", 0): offsets[-1] + 1},
                     f"c{n}", None)
    assert len(live_data_files(catalog.load_table("db.events"), None)[0]) == 16
    registry = CollectorRegistry()
    maintainer = Maintainer(config, catalog, metrics=JobMetrics(config.name, registry=registry))

    report = maintainer.run_round()

    table = catalog.load_table("db.events")
    files, _ = live_data_files(table, None)
    assert len(files) == 2 and sorted(f.partition[0] for f in files) == ["a", "b"]
    rows = rows_by_both(table, ["id", "kind", "extra"])
    assert rows == [{"id": v["id"], "kind": v["kind"], "extra": v.get("extra")} for v in expected]
    assert committed_offsets(table, config.group_id) == {("t", 0): 32}
    done = report.tables["db.events"]
    assert report.finished and done.compaction.groups == 2 and done.data_files == 2
    assert registry.get_sample_value("icefloe_table_data_files", {"connector": config.name,
                                                                  "table": "db.events"}) == 2
    assert registry.get_sample_value("icefloe_compaction_files_rewritten_total",
                                     {"connector": config.name, "table": "db.events"}) == 16


def test_a_round_stops_when_its_budget_is_spent_and_the_next_resumes_there(tmp_path):
    config = SinkConfig.parse(sink_props(unique("maint"), "t", "db.events", tmp_path,
                                         **{"icefloe.maintenance.compaction.min-input-files": "2",
                                            "icefloe.maintenance.interval-ms": "1000"}))
    catalog = load_catalog(config.props)
    for n in range(3):
        offsets = range(n * 2, n * 2 + 2)
        commit_table(catalog, config, "db.events", write(config, offsets, [{"id": o} for o in offsets]),
                     {("t", 0): offsets[-1] + 1}, f"c{n}", None)
    now = [0.0]
    maintainer = Maintainer(config, catalog, clock=lambda: now[0])
    steps = []

    def tick(table, step):  # every step takes an hour of the fake clock
        steps.append(step)
        now[0] += 3600

    first = maintainer.run_round(budget_seconds=1.0, on_step=tick)
    assert not first.finished and steps == ["compact"] and maintainer.cursor == (0, 1)
    steps.clear()
    second = maintainer.run_round(on_step=lambda table, step: steps.append(step))
    assert second.finished and steps == ["manifests", "expire", "orphans", "compact"] and maintainer.cursor == (0, 0)
    now[0] += 3600
    assert maintainer.between_cycles([]) is not None  # due: an hour since the last round
    assert maintainer.between_cycles([]) is None  # not due yet


def test_maintenance_switched_off_does_nothing(tmp_path):
    config = SinkConfig.parse(sink_props(unique("maint"), "t", "db.events", tmp_path,
                                         **{"icefloe.maintenance.enabled": "false"}))
    maintainer = Maintainer(config, load_catalog(config.props))
    assert maintainer.between_cycles([]) is None
    assert maintainer.after_backfill([]) is None
    assert json.dumps(maintainer.state) == '"idle"'


def test_icefloe_maintain_compacts_a_stopped_connectors_tables_offline(tmp_path, capsys):
    from connector.cli import main
    from tests.integration.harness import write_config_file

    props = sink_props(unique("maint"), "t", "db.events", tmp_path,
                       **{"icefloe.maintenance.compaction.min-input-files": "2"})
    config = SinkConfig.parse(props)
    catalog = load_catalog(config.props)
    for n in range(4):
        offsets = range(n * 2, n * 2 + 2)
        commit_table(catalog, config, "db.events", write(config, offsets, [{"id": o} for o in offsets]),
                     {("t", 0): offsets[-1] + 1}, f"c{n}", None)

    assert main(["maintain", str(write_config_file(tmp_path / "sink.json", props)), "--quiet"]) == 0

    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["tables"]["db.events"]["data_files"] == 1
    assert out["tables"]["db.events"]["files_compacted"] == 4
    assert ids_by_both(catalog.load_table("db.events")) == list(range(8))
    assert committed_offsets(catalog.load_table("db.events"), config.group_id) == {("t", 0): 8}


def test_table_properties_win_over_the_connectors_keys():
    from connector.config.icefloe_config import MaintenanceConfig
    from connector.maintenance.policy import table_policy

    keys = MaintenanceConfig(min_input_files=5, snapshot_max_age_ms=1000, snapshot_min_to_keep=3)
    assert table_policy({}, keys).target_file_size == 512 * 1024 * 1024
    policy = table_policy({"write.target-file-size-bytes": "1000", "history.expire.max-snapshot-age-ms": "7",
                           "icefloe.maintenance.compaction.min-input-files": "9",
                           "icefloe.maintenance.snapshot.min-to-keep": "4",
                           "history.expire.min-snapshots-to-keep": "2",
                           "icefloe.maintenance.enabled": "FALSE"}, keys)
    assert (policy.target_file_size, policy.small_file_size, policy.min_input_files) == (1000, 750, 9)
    assert (policy.max_snapshot_age_ms, policy.min_snapshots_to_keep) == (7, 2)  # Iceberg's own keys first
    assert not policy.enabled
    assert table_policy({"icefloe.maintenance.snapshot.min-to-keep": "4"}, keys).min_snapshots_to_keep == 4


def test_the_round_after_a_backfill_keeps_its_full_size_files_and_compacts_the_small_ones(tmp_path, monkeypatch):
    monkeypatch.setattr(compaction, "BACKFILL_FILE_ROWS", 10)  # a backfill task's least range, scaled down
    config = SinkConfig.parse(sink_props(unique("maint"), "t", "db.events", tmp_path,
                                         **{"icefloe.maintenance.compaction.min-input-files": "2"}))
    catalog = load_catalog(config.props)
    sizes = [2, 2, 2, 10, 10, 5]  # three streaming commits before, then the backfill's three cycles
    snapshots, start = [], 0
    for n, size in enumerate(sizes):
        offsets = range(start, start + size)
        files = write(config, offsets, [{"id": o} for o in offsets])
        snapshots.append(commit_table(catalog, config, "db.events", files, {("t", 0): offsets[-1] + 1}, f"c{n}", None))
        start += size
    backfill = [CycleReport(snapshots={"db.events": snapshot}) for snapshot in snapshots[3:]]

    report = Maintainer(config, catalog).after_backfill(backfill)

    table = catalog.load_table("db.events")
    files, _ = live_data_files(table, None)
    assert sorted(f.record_count for f in files) == [10, 10, 11]  # the two full-size files as written
    assert report.tables["db.events"].compaction.files_removed == 4
    assert sorted(ids_by_both(table)) == list(range(sum(sizes)))
