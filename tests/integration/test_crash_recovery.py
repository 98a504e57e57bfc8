"""SIGKILL the streaming job at arbitrary moments: after restarts the table equals the topic."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest

from tests.integration.harness import (
    produce_round_robin,
    sink_props,
    table_rows,
    unique,
    write_config_file,
)
from tests.support.tansu import create_topic

pytestmark = [pytest.mark.integration, pytest.mark.slow]

KILLS = 3


def start_streaming_job(config_file, bootstrap: str, log_file) -> subprocess.Popen:
    command = [sys.executable, "-m", "connector.cli", "run", str(config_file), "--bootstrap-servers", bootstrap,
               "--spark-conf", "spark.master=local[2]", "--spark-conf", "spark.ui.enabled=false"]
    # Its own process group, so the kill takes the Spark JVM down with the driver, as a crash would.
    return subprocess.Popen(command, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True,
                            env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"})


def test_sigkill_during_streaming_loses_and_duplicates_nothing(kafka_broker, tmp_path):
    rng = random.Random(1234)
    topic, table = unique("crash"), "db.crash"
    props = sink_props(unique("crash"), topic, table, tmp_path, **{
        "iceberg.control.commit.interval-ms": "500", "tasks.max": "2"})
    config_file = write_config_file(tmp_path / "crash.json", props)
    create_topic(kafka_broker.bootstrap, topic, partitions=3)
    produced = 0
    with open(tmp_path / "job.log", "wb") as log_file:
        for _ in range(KILLS):
            batch = [json.dumps({"id": i, "pad": "x" * 50}).encode() for i in range(produced, produced + 3000)]
            produce_round_robin(kafka_broker.bootstrap, topic, batch, 3)
            produced += len(batch)
            job = start_streaming_job(config_file, kafka_broker.bootstrap, log_file)
            time.sleep(rng.uniform(6.0, 14.0))
            os.killpg(job.pid, signal.SIGKILL)
            job.wait(timeout=30)
    finish = subprocess.run(
        [sys.executable, "-m", "connector.cli", "run", str(config_file), "--bootstrap-servers",
         kafka_broker.bootstrap, "--until-caught-up", "--spark-conf", "spark.master=local[2]"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"})
    assert finish.returncode == 0, finish.stderr[-3000:]

    counts = Counter(row["id"] for row in table_rows(props, table))
    duplicates = {i: n for i, n in counts.items() if n > 1}
    missing = set(range(produced)) - set(counts)
    assert not duplicates, f"duplicated ids: {sorted(duplicates)[:20]}"
    assert not missing, f"missing ids: {sorted(missing)[:20]}"


def test_sigterm_finishes_the_commit_in_flight_and_exits_cleanly(kafka_broker, tmp_path):
    topic, table = unique("stop"), "db.stop"
    props = sink_props(unique("stop"), topic, table, tmp_path, **{"iceberg.control.commit.interval-ms": "500"})
    config_file = write_config_file(tmp_path / "stop.json", props)
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    produce_round_robin(kafka_broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(500)], 2)
    with open(tmp_path / "job.log", "wb") as log_file:
        job = start_streaming_job(config_file, kafka_broker.bootstrap, log_file)
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and not _has_rows(props, table):
                time.sleep(0.5)
            produce_round_robin(kafka_broker.bootstrap, topic,
                                [json.dumps({"id": i}).encode() for i in range(500, 800)], 2)
            time.sleep(1.0)
            job.send_signal(signal.SIGTERM)
            assert job.wait(timeout=120) == 0
        finally:
            if job.poll() is None:
                os.killpg(job.pid, signal.SIGKILL)
    ids = [row["id"] for row in table_rows(props, table)]
    assert len(ids) == len(set(ids))
    assert set(ids) >= set(range(500))


def _has_rows(props, table) -> bool:
    try:
        return len(table_rows(props, table)) > 0
    except Exception:  # noqa: BLE001 - polled while the sink starts: the table may not exist yet
        return False
