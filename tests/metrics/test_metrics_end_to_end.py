"""Metrics of real jobs: a job on a private registry, and `icefloe run --metrics-port` scraped over HTTP."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import httpx
import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from connector.config.sink_config import SinkConfig
from connector.embedded.tansu import free_port
from connector.job import SinkJob
from connector.metrics import JobMetrics
from connector.spark.runner import SparkTaskRunner
from tests.integration.harness import produce_round_robin, sink_props, table_rows, unique, write_config_file
from tests.support.tansu import create_topic

pytestmark = pytest.mark.integration

SCRAPE_DEADLINE_SECONDS = 240  # a bound on waiting for a slow machine, not an assertion on speed


def records(start: int, stop: int) -> list[bytes]:
    return [json.dumps({"id": i, "name": f"n{i}"}).encode() for i in range(start, stop)]


def samples(registry: CollectorRegistry, name: str) -> dict[tuple, float]:
    """Label values (without the connector) → value, of every sample called ``name``."""
    found = {}
    for family in registry.collect():
        for sample in family.samples:
            if sample.name == name:
                found[tuple(v for k, v in sorted(sample.labels.items()) if k != "connector")] = sample.value
    return found


def test_a_job_reports_what_it_read_wrote_and_committed(kafka_broker, spark, tmp_path):
    topic, table = unique("metrics"), "db.metrics"
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    produce_round_robin(kafka_broker.bootstrap, topic, records(0, 120), 2)
    props = sink_props(unique("metrics"), topic, table, tmp_path, **{"icefloe.commit.max-records": "50"})
    registry = CollectorRegistry()
    metrics = JobMetrics(props["name"], registry=registry)

    job = SinkJob(SinkConfig.parse(props, {"bootstrap.servers": kafka_broker.bootstrap}), SparkTaskRunner(spark),
                  default_parallelism=2, until_caught_up=True, metrics=metrics)
    summary = job.run()

    assert len(table_rows(props, table)) == 120
    assert sum(samples(registry, "icefloe_records_read_total").values()) == 120
    assert samples(registry, "icefloe_records_written_total") == {(table,): 120}
    assert samples(registry, "icefloe_commits_total")[(table,)] == len(summary.cycles) >= 1
    assert samples(registry, "icefloe_files_written_total")[(table,)] >= 1
    assert samples(registry, "icefloe_bytes_written_total")[(table,)] > 0
    assert samples(registry, "icefloe_consumer_lag_records") == {("0", topic): 0, ("1", topic): 0}
    assert samples(registry, "icefloe_committed_offset") == {("0", topic): 60, ("1", topic): 60}
    assert samples(registry, "icefloe_schema_changes_total") == {("create", table): 1}
    assert samples(registry, "icefloe_commit_latency_seconds_count") == {(): len(summary.cycles)}
    assert samples(registry, "icefloe_connector_up") == {(): 0}  # caught up: the job ended


def test_a_new_field_counts_one_schema_evolution(kafka_broker, spark, tmp_path):
    topic, table = unique("metrics_evolve"), "db.metrics_evolve"
    create_topic(kafka_broker.bootstrap, topic)
    produce_round_robin(kafka_broker.bootstrap, topic, records(0, 10), 1)
    produce_round_robin(kafka_broker.bootstrap, topic,
                        [json.dumps({"id": i, "extra": f"x{i}"}).encode() for i in range(10, 20)], 1)
    props = sink_props(unique("metricsevolve"), topic, table, tmp_path,
                       **{"iceberg.tables.evolve-schema-enabled": "true"})
    registry = CollectorRegistry()

    SinkJob(SinkConfig.parse(props, {"bootstrap.servers": kafka_broker.bootstrap}), SparkTaskRunner(spark),
            default_parallelism=2, until_caught_up=True, metrics=JobMetrics(props["name"], registry=registry)).run()

    assert samples(registry, "icefloe_schema_changes_total") == {("create", table): 1, ("update", table): 1}
    assert samples(registry, "icefloe_records_written_total") == {(table,): 20}


def test_a_failed_job_counts_the_failure(kafka_broker, spark, tmp_path):
    topic = unique("metrics_bad")
    create_topic(kafka_broker.bootstrap, topic)
    produce_round_robin(kafka_broker.bootstrap, topic, [b"not json"], 1)
    props = sink_props(unique("metricsbad"), topic, "db.bad", tmp_path)
    registry = CollectorRegistry()
    job = SinkJob(SinkConfig.parse(props, {"bootstrap.servers": kafka_broker.bootstrap}), SparkTaskRunner(spark),
                  default_parallelism=2, until_caught_up=True, metrics=JobMetrics(props["name"], registry=registry))

    with pytest.raises(Exception) as failure:
        job.run()

    assert samples(registry, "icefloe_failures_total") == {(type(failure.value).__name__,): 1}
    assert samples(registry, "icefloe_connector_up") == {(): 0}


def scrape(port: int) -> dict[tuple[str, tuple], float]:
    """(sample name, sorted label items) → value, from the job's /metrics; empty while it is not up."""
    try:
        text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=5).text
    except httpx.TransportError:
        return {}
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def wait_for(port: int, job: subprocess.Popen, wanted: dict[tuple[str, tuple], float]) -> dict:
    deadline = time.monotonic() + SCRAPE_DEADLINE_SECONDS
    seen: dict = {}
    while time.monotonic() < deadline and job.poll() is None:
        seen = scrape(port)
        if all(seen.get(key) == value for key, value in wanted.items()):
            return seen
        time.sleep(0.5)
    raise AssertionError(f"/metrics never showed {wanted}; last scrape: "
                         f"{ {k: v for k, v in seen.items() if k[0].startswith('icefloe_')} }")


def test_icefloe_run_serves_metrics_during_a_continuous_run(kafka_broker, tmp_path):
    topic, table = unique("metrics_cli"), "db.metrics_cli"
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    produce_round_robin(kafka_broker.bootstrap, topic, records(0, 40), 2)
    props = sink_props(unique("metricscli"), topic, table, tmp_path,
                       **{"iceberg.control.commit.interval-ms": "500"})
    config_file = write_config_file(tmp_path / "c.json", props)
    port = free_port()
    command = [sys.executable, "-m", "connector.cli", "run", str(config_file), "--bootstrap-servers",
               kafka_broker.bootstrap, "--metrics-port", str(port), "--quiet",
               "--spark-conf", "spark.master=local[2]", "--spark-conf", "spark.ui.enabled=false"]
    connector = ("connector", props["name"])
    log_path = tmp_path / "job.log"
    with open(log_path, "wb") as log_file:
        job = subprocess.Popen(command, stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True,
                               env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"})
        try:
            wait_for(port, job, {("icefloe_records_written_total", (connector, ("table", table))): 40})
            produce_round_robin(kafka_broker.bootstrap, topic, records(40, 100), 2)
            seen = wait_for(port, job, {
                ("icefloe_records_written_total", (connector, ("table", table))): 100,
                ("icefloe_consumer_lag_records", (connector, ("partition", "0"), ("topic", topic))): 0,
                ("icefloe_consumer_lag_records", (connector, ("partition", "1"), ("topic", topic))): 0,
            })
            job.send_signal(signal.SIGTERM)
            code = job.wait(timeout=120)
        finally:
            if job.poll() is None:
                os.killpg(job.pid, signal.SIGKILL)
                job.wait()

    assert code == 0, log_path.read_text()[-3000:]
    read = {dict(labels)["task"]: v for (name, labels), v in seen.items()
            if name == "icefloe_records_read_total" and connector in labels}
    assert sum(read.values()) == 100
    assert set(read) <= {"0", "1"}  # Connect's task ids under tasks.max=2
    assert seen[("icefloe_commits_total", (connector, ("table", table)))] >= 2
    assert seen[("icefloe_connector_up", (connector,))] == 1
    assert len(table_rows(props, table)) == 100
