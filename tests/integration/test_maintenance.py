"""Table maintenance end to end: Tansu, Spark tasks, the job loop, compaction, expiry, resuming."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from connector.config.sink_config import SinkConfig
from connector.data.catalog import load_catalog
from connector.iceberg.snapshot_offsets import committed_offsets
from connector.job import SinkJob, StopSignal
from connector.maintenance.compaction import live_data_files
from connector.maintenance.files import local_path
from connector.maintenance.runner import Maintainer
from connector.spark.runner import SparkTaskRunner
from tests.integration.harness import load_table, produce_round_robin, run_until_caught_up, sink_props, unique
from tests.maintenance.readers import id_counts_by_both
from tests.support.tansu import create_topic

pytestmark = pytest.mark.integration

AGGRESSIVE = {"icefloe.maintenance.compaction.min-input-files": "3", "icefloe.maintenance.snapshot.max-age-ms": "0",
              "icefloe.maintenance.snapshot.min-to-keep": "1", "icefloe.maintenance.interval-ms": "0"}


def values(start: int, stop: int) -> list[bytes]:
    return [json.dumps({"id": i, "pad": "x" * 40}).encode() for i in range(start, stop)]


def data_files_on_disk(table) -> int:
    return sum(1 for p in (Path(local_path(table.location())) / "data").rglob("*.parquet"))


def ids_of(table) -> Counter:
    return id_counts_by_both(table)  # read by pyiceberg and by DuckDB, which must agree


def test_tiny_backfill_cycles_compact_and_a_restarted_job_resumes_exactly(kafka_broker, spark, tmp_path):
    topic, table_name = unique("maint"), "db.maint"
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    produce_round_robin(kafka_broker.bootstrap, topic, values(0, 600), 2)
    props = sink_props(unique("maint"), topic, table_name, tmp_path, **{
        "icefloe.commit.max-records": "50", "icefloe.maintenance.enabled": "false"})
    run_until_caught_up(props, kafka_broker.bootstrap, spark)
    table = load_table(props, table_name)
    small = len(live_data_files(table, None)[0])
    assert small >= 12  # a file per task per cycle

    on = {**props, **AGGRESSIVE, "icefloe.maintenance.enabled": "true"}
    config = SinkConfig.parse(on, {"bootstrap.servers": kafka_broker.bootstrap})
    report = Maintainer(config, load_catalog(on)).run_round()

    table = load_table(props, table_name)
    assert report.tables[table_name].compaction.files_removed == small
    assert len(live_data_files(table, None)[0]) == 1
    assert ids_of(table) == Counter(range(600))
    assert committed_offsets(table, config.group_id) == {(topic, 0): 300, (topic, 1): 300}

    # more records; the restarted job (maintenance on) resumes exactly where the data commits left off
    produce_round_robin(kafka_broker.bootstrap, topic, values(600, 800), 2)
    run_until_caught_up(on, kafka_broker.bootstrap, spark)
    table = load_table(props, table_name)
    assert ids_of(table) == Counter(range(800))  # no duplicate, no gap
    assert committed_offsets(table, config.group_id) == {(topic, 0): 400, (topic, 1): 400}
    assert len(live_data_files(table, None)[0]) == 1
    # expired snapshots' files are gone: what is left is the live file and what the snapshot holding the
    # offsets (the last data commit) still references: the first compacted file and this run's 8 small ones
    assert len(table.metadata.snapshots) <= 3
    assert data_files_on_disk(table) == 1 + 1 + 2 * 4


def test_a_continuous_job_with_maintenance_stays_bounded_in_files_and_snapshots(kafka_broker, spark, tmp_path):
    topic, table_name = unique("stream"), "db.stream"
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    props = sink_props(unique("stream"), topic, table_name, tmp_path, **{
        **AGGRESSIVE, "iceberg.control.commit.interval-ms": "300", "icefloe.maintenance.budget-ms": "2000"})
    config = SinkConfig.parse(props, {"bootstrap.servers": kafka_broker.bootstrap})
    stop = StopSignal()
    job = SinkJob(config, SparkTaskRunner(spark), default_parallelism=2, stop=stop)
    thread = threading.Thread(target=job.run, daemon=True)
    thread.start()
    produced, files_seen, snapshots_seen = 0, [], []
    try:
        for _ in range(40):
            produce_round_robin(kafka_broker.bootstrap, topic, values(produced, produced + 20), 2)
            produced += 20
            time.sleep(0.4)
            try:
                table = load_table(props, table_name)
            except Exception:  # noqa: BLE001 - not created yet
                continue
            files_seen.append(len(live_data_files(table, None)[0]))
            snapshots_seen.append(len(table.metadata.snapshots))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            table = load_table(props, table_name)
            if committed_offsets(table, config.group_id) == {(topic, 0): produced // 2, (topic, 1): produced // 2}:
                break
            time.sleep(0.5)
    finally:
        stop.event.set()
        thread.join(timeout=120)
    assert not thread.is_alive()
    table = load_table(props, table_name)
    assert ids_of(table) == Counter(range(produced))
    assert job.coordinator.cycle_number >= 10
    print(f"cycles {job.coordinator.cycle_number}, live files {files_seen}, snapshots {snapshots_seen}, "
          f"data files on disk {data_files_on_disk(table)}")
    # bounded: compaction keeps the live files few, expiry the snapshots, whatever the number of cycles
    assert max(files_seen[len(files_seen) // 2:]) <= 3 + 2 * 2
    assert max(snapshots_seen[len(snapshots_seen) // 2:]) <= 8
    assert data_files_on_disk(table) <= 3 + 2 * 4
