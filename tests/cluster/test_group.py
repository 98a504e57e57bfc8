"""A group of in-process workers: deploys through any worker, rolling restarts, connectors icefloe cannot run."""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections import Counter

import pytest
from confluent_kafka import Producer
from pyiceberg.exceptions import NoSuchTableError

from connector import cli
from connector.cluster import config_records as records
from tests.cluster.conftest import InProcessWorker, group_properties
from tests.integration.harness import produce_round_robin, sink_props, table_rows, unique, write_config_file
from tests.support.tansu import create_topic

pytestmark = pytest.mark.integration

FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"


def _wait(condition, what: str, timeout: float = 90.0):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = condition()
            if last:
                return last
        except (KeyError, ValueError, NoSuchTableError) as exc:  # polled before the first commit
            last = exc
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}; last: {last!r}")


def _connector(bootstrap: str, work, prefix: str, records_: int = 100) -> dict[str, str]:
    topic = unique(prefix)
    create_topic(bootstrap, topic, partitions=2)
    produce_round_robin(bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(records_)], 2)
    return sink_props(unique(prefix), topic, f"db.{topic}", work / prefix,
                      **{"iceberg.control.commit.interval-ms": "300", "tasks.max": "1"})


def _state(worker: InProcessWorker, name: str) -> tuple[str, str]:
    status = worker.request("GET", f"/connectors/{name}/status").json()
    return status["connector"]["state"], status["connector"]["worker_id"]


def test_icefloe_deploy_through_a_follower_runs_the_connector(group, kafka_broker, tmp_path):
    leader, follower = group
    props = _connector(kafka_broker.bootstrap, tmp_path, "dep")
    config = write_config_file(tmp_path / "dep.json", props)
    assert cli.main(["deploy", str(config), "--url", follower.url]) == 0
    _wait(lambda: Counter(r["id"] for r in table_rows(props, props["iceberg.tables"])) == Counter(range(100)),
          "the deployed connector's rows")
    assert _state(leader, props["name"])[0] == "RUNNING"


def test_a_rolling_restart_within_the_scheduled_delay_moves_nothing(kafka_broker, spark, tmp_path, caplog):
    properties = group_properties(kafka_broker.bootstrap, f"g-{uuid.uuid4().hex[:8]}",
                                  **{"scheduled.rebalance.max.delay.ms": "30000"})
    workers = [InProcessWorker(properties, spark).start()]
    time.sleep(0.6)
    workers.append(InProcessWorker(properties, spark).start())
    caplog.set_level(logging.INFO, logger="connector.cluster.herder")
    try:
        connectors = [_connector(kafka_broker.bootstrap, tmp_path, f"r{i}") for i in range(2)]
        for props in connectors:
            config = {k: v for k, v in props.items() if k != "name"}
            assert workers[0].request("POST", "/connectors",
                                      json={"name": props["name"], "config": config}).status_code == 201
        placed = {p["name"]: _wait(lambda p=p: (s := _state(workers[1], p["name"]))[0] == "RUNNING" and s[1],
                                   f"{p['name']} RUNNING") for p in connectors}
        assert sorted(placed.values()) == sorted(w.worker_id for w in workers)
        for index in range(2):  # restart each worker in turn, on the same address
            old = workers[index]
            old.stop()
            workers[index] = InProcessWorker(properties, spark, port=int(old.worker_id.rsplit(":", 1)[1])).start()
            other = workers[1 - index]
            for props in connectors:
                _wait(lambda p=props, w=other: _state(w, p["name"]) == ("RUNNING", placed[p["name"]]),
                      f"{props['name']} RUNNING where it was")
        started = [r.getMessage() for r in caplog.records if " now runs on worker " in r.getMessage()]
        for props in connectors:  # each started once, then once again after its own worker's restart
            ran = [m for m in started if m.startswith(f"Connector {props['name']} ")]
            assert ran and all(f" on worker {placed[props['name']]} " in m for m in ran), ran
    finally:
        for worker in workers:
            worker.stop()


def test_a_config_topic_written_by_connect_runs_the_iceberg_sink_and_fails_other_classes(
        kafka_broker, spark, tmp_path):
    group = f"g-{uuid.uuid4().hex[:8]}"
    properties = group_properties(kafka_broker.bootstrap, group)
    iceberg = _connector(kafka_broker.bootstrap, tmp_path, "ice")
    file_sink = {"connector.class": FILE_SINK, "tasks.max": "1", "topics": iceberg["topics"], "file": "/tmp/x",
                 "name": "fs"}
    create_topic(kafka_broker.bootstrap, properties["config.storage.topic"], partitions=1)
    producer = Producer({"bootstrap.servers": kafka_broker.bootstrap, "partitioner": "murmur2_random"})
    for key, value in [records.connector_record("fs", file_sink),
                       *records.task_records("fs", [{**file_sink, "task.class": "x"}]),
                       records.connector_record(iceberg["name"], iceberg)]:
        producer.produce(properties["config.storage.topic"], key=key.encode(), value=value)
    producer.flush(10)
    worker = InProcessWorker(properties, spark).start()
    try:
        status = _wait(lambda: (s := worker.request("GET", "/connectors/fs/status").json())["connector"]["state"]
                       == "FAILED" and s, "fs FAILED")
        assert f"icefloe does not run connector class {FILE_SINK}" in status["connector"]["trace"]
        assert [t["state"] for t in status["tasks"]] == ["FAILED"]
        _wait(lambda: Counter(r["id"] for r in table_rows(iceberg, iceberg["iceberg.tables"])) == Counter(range(100)),
              "the Iceberg connector's rows")
    finally:
        worker.stop()
