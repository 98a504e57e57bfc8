"""Backfills commit in bounded cycles (icefloe.commit.max-records): progress is kept as it goes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest

from connector.config.sink_config import SinkConfig
from connector.iceberg.snapshot_offsets import committed_offsets
from connector.maintenance.compaction import MAINTENANCE_OPERATION
from tests.integration.harness import (
    load_table,
    produce_round_robin,
    run_until_caught_up,
    sink_props,
    table_rows,
    unique,
    write_config_file,
)
from tests.support.tansu import create_topic

pytestmark = [pytest.mark.integration]


def _committed(props: dict[str, str], table: str) -> int:
    """Offsets the table's snapshot summary says are committed, over all partitions."""
    config = SinkConfig.parse(props)
    return sum(committed_offsets(load_table(props, table), config.group_id).values())


def test_a_backlog_is_read_and_committed_in_bounded_cycles(kafka_broker, spark, tmp_path, caplog):
    topic, table = unique("chunks"), "db.chunks"
    props = sink_props(unique("chunks"), topic, table, tmp_path, **{"icefloe.commit.max-records": "3000"})
    create_topic(kafka_broker.bootstrap, topic, partitions=3)
    produce_round_robin(kafka_broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(10_000)], 3)
    with caplog.at_level("INFO", logger="connector.progress"):
        summary = run_until_caught_up(props, kafka_broker.bootstrap, spark)

    assert [c.records_read for c in summary.cycles] == [3000, 3000, 3000, 1000]
    assert sorted(Counter(r["id"] for r in table_rows(props, table)).items()) == [(i, 1) for i in range(10_000)]
    # one commit per cycle, each with the offsets it reached: a crash would have kept the cycles before it
    snapshots = [s for s in load_table(props, table).snapshots()  # the data commits, not maintenance's
                 if MAINTENANCE_OPERATION not in s.summary.additional_properties]
    assert [_offsets_in(s.summary.additional_properties, topic) for s in snapshots] == [3000, 6000, 9000, 10_000]
    progress = [r.getMessage() for r in caplog.records if r.name == "connector.progress"]
    assert progress[0].startswith(f"Progress {topic}: 3,000/10,000 records, ") and "ETA" in progress[0]
    assert progress[-1].startswith(f"Progress {topic}: 10,000/10,000 records, ") and "ETA done" in progress[-1]


def test_sigkill_during_a_backfill_keeps_the_committed_cycles(kafka_broker, tmp_path):
    topic, table = unique("killfill"), "db.killfill"
    props = sink_props(unique("killfill"), topic, table, tmp_path, **{"icefloe.commit.max-records": "4000"})
    config_file = write_config_file(tmp_path / "killfill.json", props)
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    total = 40_000
    produce_round_robin(kafka_broker.bootstrap, topic,
                        [json.dumps({"id": i, "pad": "x" * 40}).encode() for i in range(total)], 2)
    command = [sys.executable, "-m", "connector.cli", "run", str(config_file), "--bootstrap-servers",
               kafka_broker.bootstrap, "--until-caught-up", "--spark-conf", "spark.master=local[2]",
               "--spark-conf", "spark.ui.enabled=false"]
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    with open(tmp_path / "job.log", "wb") as log_file:
        job = subprocess.Popen(command, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True, env=env)
        try:
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline and _committed_or_zero(props, table) < 4000:
                time.sleep(0.2)
        finally:
            os.killpg(job.pid, signal.SIGKILL)  # a crash in the middle of the backfill
            job.wait(timeout=30)

    kept = _committed(props, table)
    assert 4000 <= kept < total, (tmp_path / "job.log").read_text()[-3000:]
    assert kept % 4000 == 0  # whole cycles, each committed with its offsets
    assert len(table_rows(props, table)) == kept  # the rows of exactly the committed cycles

    finish = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)
    assert finish.returncode == 0, finish.stderr[-3000:]
    result = json.loads(finish.stdout.strip().splitlines()[-1])
    assert result["records_read"] == total - kept  # what was committed before the kill is not read again
    counts = Counter(row["id"] for row in table_rows(props, table))
    assert sorted(counts) == list(range(total)) and set(counts.values()) == {1}


def _offsets_in(summary: dict[str, str], topic: str) -> int:
    """The next offsets a snapshot summary records for ``topic``, summed over its partitions."""
    prefix = f"kafka.connect.offsets.{topic}."
    return sum(sum(json.loads(v).values()) for k, v in summary.items() if k.startswith(prefix))


def _committed_or_zero(props: dict[str, str], table: str) -> int:
    try:
        return _committed(props, table)
    except Exception:  # noqa: BLE001 - polled while the job starts: the table may not exist yet
        return 0


class _CountingRunner:
    """Runs each round's tasks in this process and keeps how many there were; as many cores as Spark would have."""

    def __init__(self, cores: int):
        self.default_parallelism = cores
        self.rounds: list[int] = []

    def __call__(self, assignments):
        from connector.task import run_task

        self.rounds.append(len(assignments))
        return [run_task(a) for a in assignments]


@pytest.mark.parametrize("tasks_max", ["1", "8"])
def test_a_backfill_runs_one_task_per_core_whatever_tasks_max(kafka_broker, tmp_path, tasks_max):
    from connector.job import SinkJob

    topic, table = unique("cores"), "db.cores"
    create_topic(kafka_broker.bootstrap, topic, partitions=4)
    produce_round_robin(kafka_broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(400)], 4)
    props = sink_props(unique("cores"), topic, table, tmp_path,
                       **{"tasks.max": tasks_max, "icefloe.driver.max-records": "0"})
    runner = _CountingRunner(cores=3)

    SinkJob(SinkConfig.parse(props, {"bootstrap.servers": kafka_broker.bootstrap}), runner,
            until_caught_up=True).run()

    assert runner.rounds and set(runner.rounds) == {3}
    assert sorted(row["id"] for row in table_rows(props, table)) == list(range(400))
