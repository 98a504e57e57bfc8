"""Faults a running job rides out without losing or duplicating a record."""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
import uuid
from typing import Iterator

import pytest

from connector.config.sink_config import SinkConfig
from connector.embedded.tansu import TansuBroker
from connector.job import SinkJob
from connector.spark.runner import SparkTaskRunner
from tests.integration.harness import produce_round_robin, sink_props, table_rows, unique
from tests.support.moto_s3 import MotoServer, S3Endpoint
from tests.support.tansu import create_topic

pytestmark = [pytest.mark.integration, pytest.mark.slow]

OUTAGE_SECONDS = 40  # longer than librdkafka's 30 s metadata timeout, which used to end the job


def test_a_broker_outage_longer_than_the_client_timeouts_is_ridden_out(spark, tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="connector.tolerance.transient")
    caplog.set_level(logging.INFO, logger="icefloe.librdkafka")
    with TansuBroker() as broker:  # its own broker: the outage must not reach other tests
        topic = unique("outage")
        create_topic(broker.bootstrap, topic, partitions=2)
        produce_round_robin(broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(100)], 2)
        props = sink_props(unique("outage"), topic, "db.outage", tmp_path, **{
            "iceberg.control.commit.interval-ms": "500", "errors.retry.delay.max.ms": "2000",
            "icefloe.transient.retry-timeout-ms": "120000"})
        job = SinkJob(SinkConfig.parse(props, {"bootstrap.servers": broker.bootstrap}), SparkTaskRunner(spark))
        with running(job) as failure:
            _wait_for_ids(props, list(range(100)), failure)
            broker.pause()
            time.sleep(OUTAGE_SECONDS)
            broker.resume()
            produce_round_robin(broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(100, 200)], 2)
            _wait_for_ids(props, list(range(200)), failure)
    assert not failure
    assert sorted(row["id"] for row in table_rows(props, "db.outage")) == list(range(200))
    # one line when the broker was lost, one when it was back; the attempts between only at DEBUG
    retries = [r.getMessage() for r in caplog.records if r.name == "connector.tolerance.transient"]
    assert len(retries) == 2, retries
    assert " failed (" in retries[0] and "retrying with backoff for up to 120s" in retries[0]
    assert "succeeded again after" in retries[1] and "the fault is over" in retries[1]
    client_lines = [r.getMessage() for r in caplog.records if r.name == "icefloe.librdkafka"]
    assert len(client_lines) <= 20, client_lines  # librdkafka's repeats counted, not ~16 lines a second


def test_an_object_store_outage_is_ridden_out(spark, kafka_broker, tmp_path):
    server = MotoServer().start()  # its own store: the outage must not reach other tests
    try:
        endpoint = S3Endpoint(url=server.url)
        bucket = f"outage-{uuid.uuid4().hex[:10]}"
        endpoint.client().create_bucket(Bucket=bucket)
        topic = unique("s3out")
        create_topic(kafka_broker.bootstrap, topic, partitions=2)
        produce_round_robin(kafka_broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(100)], 2)
        props = sink_props(unique("s3out"), topic, "db.outage", tmp_path, **{
            "iceberg.control.commit.interval-ms": "500", "errors.retry.delay.max.ms": "2000",
            "iceberg.catalog.warehouse": f"s3://{bucket}/wh", "iceberg.catalog.s3.endpoint": endpoint.url,
            "iceberg.catalog.s3.access-key-id": endpoint.access_key_id,
            "iceberg.catalog.s3.secret-access-key": endpoint.secret_access_key,
            "iceberg.catalog.s3.path-style-access": "true", "iceberg.catalog.s3.region": endpoint.region,
            "iceberg.catalog.s3.request-timeout": "2", "iceberg.catalog.s3.connect-timeout": "2"})
        job = SinkJob(SinkConfig.parse(props, {"bootstrap.servers": kafka_broker.bootstrap}), SparkTaskRunner(spark))
        with running(job) as failure:
            _wait_for_ids(props, list(range(100)), failure)
            server.pause()
            later = [json.dumps({"id": i}).encode() for i in range(100, 200)]
            produce_round_robin(kafka_broker.bootstrap, topic, later, 2)
            time.sleep(15)  # cycles meet the unreachable store meanwhile
            server.resume()
            _wait_for_ids(props, list(range(200)), failure)
        assert not failure
        assert sorted(row["id"] for row in table_rows(props, "db.outage")) == list(range(200))
    finally:
        server.stop()


@contextlib.contextmanager
def running(job: SinkJob) -> Iterator[list[BaseException]]:
    """``job`` run in a thread for the block (then stopped); the list holds what it raised, if anything."""
    failure: list[BaseException] = []

    def run() -> None:
        try:
            job.run()
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            failure.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        yield failure
    finally:
        job.stop.event.set()
        thread.join(timeout=120)


def _wait_for_ids(props: dict[str, str], expected: list[int], failure: list[BaseException]) -> None:
    from pyiceberg.exceptions import NoSuchTableError

    deadline = time.monotonic() + 180
    ids: list[int] = []
    while time.monotonic() < deadline:
        assert not failure, failure
        try:
            ids = sorted(row["id"] for row in table_rows(props, "db.outage"))
        except NoSuchTableError:
            ids = []
        if ids == expected:
            return
        time.sleep(0.5)
    raise AssertionError(f"expected {len(expected)} rows, the table has {len(ids)}")
