"""An executor's Python worker SIGKILLed mid-task: the job runs the cycle again and the table is exact."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter

import pytest

from tests.integration.harness import produce_round_robin, sink_props, table_rows, unique, write_config_file
from tests.support.tansu import create_topic

pytestmark = pytest.mark.integration


def test_a_python_worker_killed_mid_task_loses_and_duplicates_nothing(kafka_broker, tmp_path):
    run, props = _run_with_a_worker_killed(kafka_broker, tmp_path, "local[2]")
    assert "Python worker died during the tasks" in run.stderr  # the cycle was run again
    assert Counter(row["id"] for row in table_rows(props, "db.wkill")) == Counter(range(2000))


def test_a_task_spark_ran_again_after_its_worker_died_is_logged(kafka_broker, tmp_path):
    """With task retries (as on a cluster, spark.task.maxFailures), Spark reruns the task itself and the
    cycle succeeds at once: the log still says a task attempt failed and was run again."""
    run, props = _run_with_a_worker_killed(kafka_broker, tmp_path, "local[2,3]")
    assert "Python worker died during the tasks" not in run.stderr  # Spark's retry sufficed
    assert "Spark ran 1 failed task attempt(s) of" in run.stderr, run.stderr[-3000:]
    assert Counter(row["id"] for row in table_rows(props, "db.wkill")) == Counter(range(2000))


def _run_with_a_worker_killed(kafka_broker, tmp_path, master: str):
    topic = unique("wkill")
    props = sink_props(unique("wkill"), topic, "db.wkill", tmp_path, **{"icefloe.driver.max-records": "0"})  # Spark
    config_file = write_config_file(tmp_path / "wkill.json", props)
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    produce_round_robin(kafka_broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(2000)], 2)
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "ICEFLOE_FAULT_POINT": "task.mid-batch",
           "ICEFLOE_FAULT_KILL": "self", "ICEFLOE_FAULT_ONCE": str(tmp_path / "fired")}
    run = subprocess.run(
        [sys.executable, "-m", "connector.cli", "run", str(config_file), "--bootstrap-servers", kafka_broker.bootstrap,
         "--until-caught-up", "--spark-conf", f"spark.master={master}", "--spark-conf", "spark.ui.enabled=false"],
        capture_output=True, text=True, timeout=240, env=env)
    assert (tmp_path / "fired").exists(), run.stderr[-3000:]  # a worker was killed
    assert run.returncode == 0, run.stderr[-3000:]
    return run, props
