"""Small cycles run their tasks in the driver (``icefloe.driver.max-records``), large ones on Spark.

A user's first `icefloe run` on a quiet topic should not wait for a Spark
session to start, nor start one at all; a backfill must still spread over Spark.
"""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import Future

import pytest

from connector.commit.messages import TaskAssignment
from connector.config.icefloe_config import IcefloeConfig
from connector.config.sink_config import SinkConfig
from connector.kafka.offsets import OffsetRange
from connector.spark.on_demand import OnDemandSession
from connector.spark.runner import SparkTaskRunner, runs_in_driver
from tests.integration.harness import produce_round_robin, sink_props, table_rows, unique, write_config_file
from tests.support.tansu import create_topic


def _assignments(tmp_path, limit: str, *counts: int) -> list[TaskAssignment]:
    config = SinkConfig.parse(sink_props("d", "t", "db.t", tmp_path, **{"icefloe.driver.max-records": limit}),
                              {"bootstrap.servers": "127.0.0.1:1"})
    return [TaskAssignment(f"d-{i}", (OffsetRange("t", i, 0, count),), config) for i, count in enumerate(counts)]


@pytest.mark.parametrize("limit, counts, in_driver", [
    ("20000", (10_000, 10_000), True),
    ("20000", (10_000, 10_001), False),
    ("0", (1,), False),
    ("5", (5,), True),
])
def test_a_round_runs_in_the_driver_only_up_to_the_limit_over_all_its_tasks(tmp_path, limit, counts, in_driver):
    assert runs_in_driver(_assignments(tmp_path, limit, *counts)) is in_driver


def test_a_small_round_never_waits_for_the_spark_session(tmp_path, monkeypatch):
    ran = []
    monkeypatch.setattr("connector.spark.runner.run_task", lambda assignment: ran.append(assignment.task_id))
    never_starts: Future = Future()
    runner = SparkTaskRunner(never_starts)

    runner(_assignments(tmp_path, "100", 40, 60))

    assert ran == ["d-0", "d-1"] and runner.driver_rounds == 1


def test_an_on_demand_session_starts_only_for_a_cycle_too_large_for_the_driver(tmp_path, monkeypatch):
    monkeypatch.setattr("connector.spark.runner.run_task", lambda assignment: assignment.task_id)
    built = []
    session = OnDemandSession(lambda: built.append("session") or "a session")
    runner = SparkTaskRunner(session)

    config = IcefloeConfig(commit_max_records=0, driver_max_records=100)
    runner.expect_cycle(100, config)
    runner(_assignments(tmp_path, "100", 40, 60))
    assert not session.started

    runner.expect_cycle(101, config)
    assert session.start().result(timeout=10) == "a session" and built == ["session"]
    runner.expect_cycle(5_000, config)
    assert built == ["session"]  # started once


#: `icefloe run` in a new process, then whether a Spark JVM was started (PySpark's gateway to it)
RUN_AND_REPORT_JVM = """
import sys, threading
from connector import cli
code = cli.main(sys.argv[1:])
for thread in threading.enumerate():  # a session still starting counts: wait for it
    if thread.name == "spark-start":
        thread.join()
from pyspark import SparkContext
print("JVM started:", SparkContext._gateway is not None)
sys.exit(code)
"""


def _run_and_report_jvm(kafka_broker, tmp_path, records: int, **extra: str) -> tuple[subprocess.CompletedProcess,
                                                                                        dict]:
    topic = unique("small")
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    produce_round_robin(kafka_broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(records)], 2)
    props = sink_props(unique("small"), topic, "db.small", tmp_path, **extra)
    config = write_config_file(tmp_path / "c.json", props)
    run = subprocess.run([sys.executable, "-c", RUN_AND_REPORT_JVM, "run", str(config), "--bootstrap-servers",
                          kafka_broker.bootstrap, "--until-caught-up"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert sorted(row["id"] for row in table_rows(props, "db.small")) == list(range(records))
    return run, props


@pytest.mark.integration
def test_icefloe_run_on_a_small_topic_never_starts_a_spark_jvm(kafka_broker, tmp_path):
    run, _ = _run_and_report_jvm(kafka_broker, tmp_path, 300, **{"icefloe.driver.max-records": "20000"})
    assert "JVM started: False" in run.stdout


@pytest.mark.integration
def test_icefloe_run_starts_spark_for_a_cycle_larger_than_the_driver_limit(kafka_broker, tmp_path):
    run, _ = _run_and_report_jvm(kafka_broker, tmp_path, 300, **{"icefloe.driver.max-records": "100",
                                                                  "icefloe.driver.while-spark-starts": "false"})
    assert "JVM started: True" in run.stdout
    assert "Starting Spark: the cycle covers 300 offsets" in run.stderr
    # it starts before the driver probes the first records to create the table: the two overlap
    assert run.stderr.index("Starting Spark") < run.stderr.index("Task probe")
    assert "Cycle 1: 300 records, rows" in run.stderr  # its tasks ran on Spark


@pytest.mark.integration
def test_icefloe_run_reads_in_the_driver_while_spark_starts(kafka_broker, tmp_path):
    run, _ = _run_and_report_jvm(kafka_broker, tmp_path, 300, **{"icefloe.driver.max-records": "100"})
    assert "JVM started: True" in run.stdout
    # 300 records take far less than a JVM's start: the driver read them all before Spark was up
    assert "Cycle 1: 300 records (in the driver while Spark starts)" in run.stderr


@pytest.mark.integration
def test_icefloe_run_on_a_small_topic_commits_with_its_tasks_in_the_driver(kafka_broker, tmp_path):
    topic = unique("small")
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    produce_round_robin(kafka_broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(1000)], 2)
    props = sink_props(unique("small"), topic, "db.small", tmp_path)
    del props["icefloe.driver.max-records"]  # the default
    config = write_config_file(tmp_path / "c.json", props)

    run = subprocess.run([sys.executable, "-m", "connector.cli", "run", str(config), "--bootstrap-servers",
                          kafka_broker.bootstrap, "--until-caught-up"], capture_output=True, text=True, timeout=300)

    assert run.returncode == 0, run.stderr[-3000:]
    assert "Cycle 1: 1000 records (tasks in the driver)" in run.stderr
    assert sorted(row["id"] for row in table_rows(props, "db.small")) == list(range(1000))
