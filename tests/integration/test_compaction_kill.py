"""SIGKILL of a continuous ``icefloe run`` in the middle of a maintenance compaction, then a restart.

The job commits small cycles with maintenance thresholds low enough that its
rounds compact; ``ICEFLOE_FAULT_POINT=compaction.before-commit`` kills its
whole process group once the first compaction has written its new file and
before that file is committed (connector/faults.py). The restarted job must
leave the table exactly the topic's rows (pyiceberg and DuckDB agree), delete
the killed compaction's file as an orphan once older than
``icefloe.maintenance.orphan.min-age-ms``, and end with few files.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from connector.maintenance.compaction import MAINTENANCE_OPERATION, live_data_files
from connector.maintenance.files import local_path, references
from tests.integration.harness import load_table, produce_round_robin, sink_props, unique, write_config_file
from tests.maintenance.readers import id_counts_by_both
from tests.support.tansu import create_topic

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TABLE = "db.killed"
ORPHAN_MIN_AGE_MS = 2000  # the restarted job's round comes later than that after the kill
SPARK = ["--spark-conf", "spark.master=local[1]", "--spark-conf", "spark.ui.enabled=false"]
MAINTAINED = {
    "tasks.max": "2", "iceberg.control.commit.interval-ms": "200",
    "icefloe.commit.max-records": "60",  # a backlog of 600 commits in ten small cycles
    "icefloe.driver.max-records": "20000",  # small cycles run in the driver: no Spark to wait for
    "icefloe.maintenance.interval-ms": "0", "icefloe.maintenance.compaction.min-input-files": "3",
    "icefloe.maintenance.snapshot.max-age-ms": "0", "icefloe.maintenance.snapshot.min-to-keep": "1",
    "icefloe.maintenance.orphan.min-age-ms": str(ORPHAN_MIN_AGE_MS)}


def values(first: int, stop: int) -> list[bytes]:
    return [json.dumps({"id": i, "pad": "x" * 30}).encode() for i in range(first, stop)]


def data_files_on_disk(table) -> set[str]:
    return {str(p) for p in (Path(local_path(table.location())) / "data").rglob("*.parquet")}


def referenced(table) -> set[str]:
    return references(table, table.metadata.snapshots).files


def compactions(table) -> int:
    return sum(1 for s in table.metadata.snapshots if s.summary and s.summary.get(MAINTENANCE_OPERATION))


def run(config_file: Path, bootstrap: str, log_file, *args: str, env: dict[str, str]) -> int:
    """``icefloe run`` in its own session (the fault point kills that session only); its exit code."""
    job = subprocess.Popen([sys.executable, "-m", "connector.cli", "run", str(config_file), "--bootstrap-servers",
                            bootstrap, *SPARK, *args], stdout=log_file, stderr=subprocess.STDOUT,
                           start_new_session=True, env=env)
    try:
        return job.wait(timeout=60)
    finally:
        if job.poll() is None:
            os.killpg(job.pid, 9)
            job.wait(timeout=30)


def test_sigkill_during_a_compaction_loses_and_duplicates_nothing_and_its_file_is_cleaned_up(kafka_broker, tmp_path):
    bootstrap = kafka_broker.bootstrap
    topic = unique("ckill")
    props = sink_props(unique("ckill"), topic, TABLE, tmp_path, **MAINTAINED)
    config_file = write_config_file(tmp_path / "ckill.json", props)
    create_topic(bootstrap, topic, partitions=2)
    produce_round_robin(bootstrap, topic, values(0, 600), 2)
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    log_path = tmp_path / "job.log"
    began = time.monotonic()
    with open(log_path, "wb") as log_file:
        code = run(config_file, bootstrap, log_file, env={**env, "ICEFLOE_FAULT_POINT": "compaction.before-commit"})
        assert code == -9, f"the job was not killed inside a compaction: exit {code}; see {log_path}"

        table = load_table(props, TABLE)
        killed_files = data_files_on_disk(table) - referenced(table)
        assert killed_files, "the killed compaction left no new file: it was not killed after writing it"
        assert compactions(table) == 0  # killed before its commit: the table is as the data commits left it
        assert max(Counter(row["id"] for row in table.scan().to_arrow().to_pylist()).values()) == 1

        produce_round_robin(bootstrap, topic, values(600, 800), 2)
        code = run(config_file, bootstrap, log_file, "--until-caught-up", env=env)
        assert code == 0, f"the restarted job failed: exit {code}; see {log_path}"

    table = load_table(props, TABLE)
    assert id_counts_by_both(table) == Counter(range(800))  # exactly the topic: nothing lost, nothing twice
    assert compactions(table) >= 1
    assert not any(Path(path).exists() for path in killed_files)  # deleted as orphans
    on_disk = data_files_on_disk(table)
    assert on_disk == referenced(table), f"unreferenced files left: {sorted(on_disk - referenced(table))}"
    # bounded: the restart's round compacted everything into one file and expired the old snapshots
    assert len(live_data_files(table, None)[0]) == 1
    assert len(table.metadata.snapshots) <= 3
    # what stays on disk: that file, and the small files the newest snapshot with offsets still references
    # (at most one per task per cycle, docs/operations.md), never more whatever the kill left
    assert len(on_disk) <= 1 + int(MAINTAINED["tasks.max"]) * math.ceil(800 / int(MAINTAINED[
        "icefloe.commit.max-records"]))
    print(f"kill and restart: {time.monotonic() - began:.1f}s, {len(on_disk)} data file(s) on disk")
