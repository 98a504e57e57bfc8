"""SIGKILL of a continuous ``icefloe run`` at each step of the commit cycle, with DLQ traffic.

Each iteration produces good and bad records, starts the job in its own
session with ``ICEFLOE_FAULT_POINT`` (connector/faults.py: the job kills its
own session when it reaches the named point, so the kill lands exactly there),
and waits for it to die. A catch-up run then finishes: both tables equal the
topic's good records exactly and the DLQ holds exactly the bad ones, once each.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter

import pytest

from connector.kafka.offsets import OffsetRange, end_offsets
from connector.kafka.range_reader import read_range
from tests.integration.harness import produce_round_robin, sink_props, table_rows, unique, write_config_file
from tests.support.tansu import create_topic

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PER_ITERATION = 400  # even: record k goes to partition k % 2 at offset k // 2
#: (point, which hit): before files are written, after, during the catalog commit (between the two
#: tables' commits), after the commit before the group mirror, during a task's DLQ writes
POINTS = [("cycle.before-tasks", 2), ("cycle.after-files", 1), ("cycle.between-table-commits", 1),
          ("cycle.before-group-mirror", 2), ("dlq.during-writes", 1)]
TABLES = ("db.fa", "db.fb")
SPARK = ["--spark-conf", "spark.master=local[2]", "--spark-conf", "spark.ui.enabled=false"]


def record(k: int) -> tuple[bytes, bool]:
    """Record ``k``'s value and whether it is good: every 7th is bad (broken JSON or a string in a long)."""
    if k % 14 == 3:
        return b'{"id": %d, "n": ' % k, False
    if k % 14 == 10:
        return json.dumps({"id": k, "n": f"bad{k}"}).encode(), False
    return json.dumps({"id": k, "n": k}).encode(), True


def test_sigkill_at_each_step_of_the_commit_cycle_keeps_tables_and_dlq_exact(kafka_broker, tmp_path):
    bootstrap = kafka_broker.bootstrap
    topic, dlq = unique("points"), unique("points_dlq")
    props = sink_props(unique("points"), topic, ",".join(TABLES), tmp_path, **{
        "tasks.max": "2", "iceberg.control.commit.interval-ms": "300", "icefloe.commit.max-records": "250",
        "errors.tolerance": "all", "errors.deadletterqueue.topic.name": dlq,
        "errors.deadletterqueue.context.headers.enable": "true",
        "errors.deadletterqueue.topic.replication.factor": "1"})
    config_file = write_config_file(tmp_path / "points.json", props)
    create_topic(bootstrap, topic, partitions=2)
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    produced = 0
    log_path = tmp_path / "job.log"
    with open(log_path, "wb") as log_file:
        for point, hit in POINTS:
            produce_round_robin(bootstrap, topic, [record(k)[0] for k in range(produced, produced + PER_ITERATION)], 2)
            produced += PER_ITERATION
            job = subprocess.Popen(
                [sys.executable, "-m", "connector.cli", "run", str(config_file), "--bootstrap-servers", bootstrap,
                 *SPARK], stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True,
                env={**env, "ICEFLOE_FAULT_POINT": f"{point}:{hit}"})
            try:
                code = job.wait(timeout=90)
            finally:
                if job.poll() is None:
                    os.killpg(job.pid, 9)
                    job.wait(timeout=30)
            assert code == -9, f"the job was not killed at {point}: exit {code}; see {log_path}"
            twice = {c: n for c, n in dlq_coordinates(bootstrap, dlq).items() if n > 1}
            assert not twice, f"after the kill at {point}: in the DLQ twice: {sorted(twice)[:10]}"
    finish = subprocess.run(
        [sys.executable, "-m", "connector.cli", "run", str(config_file), "--bootstrap-servers", bootstrap,
         "--until-caught-up", *SPARK], capture_output=True, text=True, timeout=300, env=env)
    assert finish.returncode == 0, finish.stderr[-3000:]
    assert "dlq_records" in json.loads(finish.stdout.strip().splitlines()[-1])

    good = {k for k in range(produced) if record(k)[1]}
    for table in TABLES:
        counts = Counter(row["id"] for row in table_rows(props, table))
        assert not {i: n for i, n in counts.items() if n > 1}, f"{table}: duplicated ids"
        assert set(counts) == good, f"{table}: missing {sorted(good - set(counts))[:10]}, " \
                                    f"extra {sorted(set(counts) - good)[:10]}"
    bad = Counter((k % 2, k // 2) for k in range(produced) if not record(k)[1])
    assert dlq_coordinates(bootstrap, dlq) == bad


def dlq_coordinates(bootstrap: str, dlq: str) -> Counter:
    """(source partition, offset) of each DLQ record, counted."""
    found: Counter = Counter()
    conf = {"bootstrap.servers": bootstrap}
    try:
        end = end_offsets(conf, [(dlq, 0)])[(dlq, 0)]
    except Exception:  # noqa: BLE001 - no DLQ topic yet
        return found
    for batch in read_range(conf, OffsetRange(dlq, 0, 0, end)):
        for row in batch.to_pylist():
            headers = {h["key"]: h["value"] for h in row["headers"]}
            found[(int(headers["__connect.errors.partition"]), int(headers["__connect.errors.offset"]))] += 1
    return found
