"""Spark's console output goes to icefloe's log: no raw log4j line on the terminal, and nothing printed
by the JVM after ``icefloe run`` has exited (it used to print Spark's start-up lines after the summary,
and ``Python worker exited unexpectedly (crashed)`` about 2 s after a successful exit)."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import time

import pytest

from connector.spark.jvm_output import parse
from tests.integration.harness import produce_round_robin, sink_props, table_rows, unique, write_config_file
from tests.support.tansu import create_topic

RAW_SPARK_LINE = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d ")


def test_spark_lines_keep_their_level_and_a_stack_trace_keeps_the_level_of_its_line():
    level, message = parse("26/11/29 08:41:02 ERROR Executor: Exception in task 0.0", logging.INFO)
    assert (level, message) == (logging.ERROR, "Executor: Exception in task 0.0")
    assert parse("\tat org.apache.spark.SparkContext.runJob(SparkContext.scala:1)", level) == (
        logging.ERROR, "\tat org.apache.spark.SparkContext.runJob(SparkContext.scala:1)")
    assert parse("26/11/29 08:41:02 WARN TaskSetManager: Lost task 1.0", logging.INFO)[0] == logging.WARNING


@pytest.mark.integration
def test_a_spark_run_prints_only_log_lines_and_nothing_after_it_exits(kafka_broker, tmp_path):
    topic = unique("console")
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    produce_round_robin(kafka_broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(2000)], 2)
    props = sink_props(unique("console"), topic, "db.console", tmp_path / "w")  # max-records 0: tasks on Spark
    config = write_config_file(tmp_path / "c.json", props)
    stderr_path = tmp_path / "stderr.txt"
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    with open(stderr_path, "wb") as stderr:  # a file, as a terminal: the JVM could write to it after exit
        run = subprocess.run([sys.executable, "-m", "connector.cli", "run", str(config), "--bootstrap-servers",
                              kafka_broker.bootstrap, "--until-caught-up"], stdout=subprocess.PIPE,
                             stderr=stderr, env=env, timeout=300)
    at_exit = stderr_path.read_text()
    assert run.returncode == 0, at_exit[-3000:]
    assert sorted(row["id"] for row in table_rows(props, "db.console")) == list(range(2000))

    time.sleep(4)  # the JVM stops itself once the process is gone: give it time to say anything
    assert stderr_path.read_text() == at_exit
    raw = [line for line in at_exit.splitlines() if RAW_SPARK_LINE.match(line) or line.startswith("Using Spark's")]
    assert raw == [], raw
    assert "Using Spark's default log4j profile" in at_exit  # it did start Spark, and logged its lines
    assert "Python worker exited unexpectedly" not in at_exit
