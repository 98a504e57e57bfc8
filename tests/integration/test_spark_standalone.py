"""Scale-out: ``icefloe run`` as its own Spark driver against a standalone cluster on loopback.

The tasks run in the worker's executor JVM and its Python workers (the
venv's interpreter, via PYSPARK_PYTHON), not in the driver; the table must
equal the topic and the command must exit 0.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.integration.harness import (
    produce_round_robin,
    sink_props,
    snapshot_offsets,
    table_rows,
    unique,
    write_config_file,
)
from tests.support.tansu import create_topic

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PARTITIONS = 4
RECORDS = 4000
QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def events(count: int) -> list[bytes]:
    return [json.dumps({"id": i, "kind": ["a", "b", "c", "d"][i % 4], "amount": i / 8,
                        "note": f"record {i}"}).encode() for i in range(count)]


def icefloe_command() -> list[str]:
    script = Path(sys.executable).with_name("icefloe")  # the console script of this venv
    return [str(script)] if script.exists() else [sys.executable, "-m", "connector.cli"]


def test_icefloe_run_on_a_standalone_cluster_writes_the_whole_topic(kafka_broker, spark_cluster, tmp_path):
    topic, table = unique("scaleout"), "db.scaleout"
    props = sink_props(unique("scaleout"), topic, table, tmp_path / "work", **{"tasks.max": PARTITIONS})
    config_file = write_config_file(tmp_path / "config.json", props)
    create_topic(kafka_broker.bootstrap, topic, partitions=PARTITIONS)
    produce_round_robin(kafka_broker.bootstrap, topic, events(RECORDS), PARTITIONS)

    result, elapsed = run_on_cluster(spark_cluster, config_file, kafka_broker.bootstrap, tmp_path)

    assert result.returncode == 0, (f"exit {result.returncode} after {elapsed:.0f}s\nstdout:\n{result.stdout}\n"
                                    f"stderr:\n{result.stderr[-20000:]}\n{spark_cluster.logs()}")
    rows = table_rows(props, table)
    assert sorted(r["id"] for r in rows) == list(range(RECORDS))
    by_id = {r["id"]: r for r in rows}
    assert by_id[1] == {"id": 1, "kind": "b", "amount": 1 / 8, "note": "record 1"}
    per_partition = RECORDS // PARTITIONS
    assert snapshot_offsets(props, table) == {
        f"{topic}.connect-{props['name']}": {str(p): per_partition for p in range(PARTITIONS)}}
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["records_read"] == RECORDS and summary["rows_written"] == {table: RECORDS}

    # The job ran as an application of the standalone master, on the worker's executors.
    app = _completed_app(spark_cluster, f"icefloe-{props['name']}")
    assert app is not None, json.dumps(spark_cluster.state(), indent=1)
    assert app["cores"] >= 1


def test_a_backfill_on_a_cluster_master_runs_its_cycles_on_the_executors(kafka_broker, spark_cluster, tmp_path):
    """With icefloe's defaults (no driver keys), a backlog larger than icefloe.driver.max-records is not
    read by the driver while the cluster's executors start: every cycle's tasks run on an executor."""
    records = 30_000
    topic, table = unique("clusterfill"), "db.clusterfill"
    props = sink_props(unique("clusterfill"), topic, table, tmp_path / "work", **{"tasks.max": PARTITIONS})
    del props["icefloe.driver.max-records"]  # the defaults are the point
    config_file = write_config_file(tmp_path / "config.json", props)
    create_topic(kafka_broker.bootstrap, topic, partitions=PARTITIONS)
    produce_round_robin(kafka_broker.bootstrap, topic, events(records), PARTITIONS)
    events_dir = tmp_path / "events"
    events_dir.mkdir()

    result, elapsed = run_on_cluster(spark_cluster, config_file, kafka_broker.bootstrap, tmp_path,
                                     "spark.eventLog.enabled=true", "spark.eventLog.compress=false",
                                     f"spark.eventLog.dir=file://{events_dir}")

    assert result.returncode == 0, (f"exit {result.returncode} after {elapsed:.0f}s\nstderr:\n"
                                    f"{result.stderr[-20000:]}\n{spark_cluster.logs()}")
    assert sorted(r["id"] for r in table_rows(props, table)) == list(range(records))
    assert "in the driver" not in result.stderr and "driver reads this cycle" not in result.stderr, result.stderr
    executors = _icefloe_task_executors(events_dir)
    assert executors and "driver" not in executors, executors


def test_a_lost_executor_is_said_in_the_log_and_its_tasks_run_again(kafka_broker, spark_cluster, tmp_path):
    """An executor JVM killed mid-task (as when its host dies): Spark runs the tasks again on a new
    executor, the log says so, and the table is exact."""
    records = 4000
    topic, table = unique("lostexec"), "db.lostexec"
    props = sink_props(unique("lostexec"), topic, table, tmp_path / "work", **{"tasks.max": PARTITIONS})
    config_file = write_config_file(tmp_path / "config.json", props)
    create_topic(kafka_broker.bootstrap, topic, partitions=PARTITIONS)
    produce_round_robin(kafka_broker.bootstrap, topic, events(records), PARTITIONS)

    result, elapsed = run_on_cluster(
        spark_cluster, config_file, kafka_broker.bootstrap, tmp_path,
        "spark.executorEnv.ICEFLOE_FAULT_POINT=task.mid-batch", "spark.executorEnv.ICEFLOE_FAULT_KILL=executor",
        f"spark.executorEnv.ICEFLOE_FAULT_ONCE={tmp_path / 'fired'}")

    assert (tmp_path / "fired").exists(), result.stderr[-5000:]  # an executor was killed
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stderr[-20000:]}\n{spark_cluster.logs()}"
    assert "Spark lost executor(s)" in result.stderr, result.stderr[-5000:]
    assert "failed task attempt(s)" in result.stderr
    assert sorted(r["id"] for r in table_rows(props, table)) == list(range(records))


def run_on_cluster(cluster, config_file: Path, bootstrap: str, cwd: Path, *spark_conf: str):
    """``icefloe run --until-caught-up`` against ``cluster``; the completed process and its seconds."""
    # No PYSPARK_PYTHON: icefloe must itself give the executors the driver's (this venv's) Python.
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    conf = [f"spark.master={cluster.master_url}", "spark.ui.enabled=false",
            # Short-lived JVMs: C1 only and the serial collector halve start-up on a small machine.
            f"spark.driver.extraJavaOptions={QUICK_JVM}", f"spark.executor.extraJavaOptions={QUICK_JVM}",
            *spark_conf]
    started = time.monotonic()
    try:
        result = subprocess.run(
            [*icefloe_command(), "run", str(config_file), "--bootstrap-servers", bootstrap, "--until-caught-up",
             *(arg for pair in conf for arg in ("--spark-conf", pair))],
            cwd=cwd, env=env, capture_output=True, text=True, timeout=150,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"icefloe run did not finish in {exc.timeout}s\nstdout:\n{exc.stdout}\nstderr:\n{exc.stderr}\n"
                    f"{cluster.logs()}", pytrace=False)
    return result, time.monotonic() - started


def _icefloe_task_executors(events_dir: Path) -> set[str]:
    """The executor ids that ran the tasks of icefloe's cycles (jobs described ``icefloe tasks ...``),
    read from the application's Spark event log."""
    stages: set[int] = set()
    executors: set[str] = set()
    for path in events_dir.rglob("events_*"):  # Spark 4: a folder of rolled files per application
        for line in path.read_text().splitlines():
            event = json.loads(line)
            kind = event.get("Event")
            if kind == "SparkListenerJobStart":
                if str((event.get("Properties") or {}).get("spark.job.description", "")).startswith("icefloe tasks"):
                    stages.update(event["Stage IDs"])
            elif kind == "SparkListenerTaskEnd" and event["Stage ID"] in stages:
                executors.add(event["Task Info"]["Executor ID"])
    return executors


def _completed_app(cluster, name: str, timeout: float = 15.0) -> dict | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = cluster.state() or {}
        for app in state.get("completedapps", []):
            if app.get("name") == name:
                return app
        time.sleep(0.25)
    return None
