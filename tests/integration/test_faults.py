"""Faults a running job rides out without losing or duplicating a record."""

from __future__ import annotations

import json
import threading
import time

import pytest

from connector.config.sink_config import SinkConfig
from connector.embedded.tansu import TansuBroker
from connector.job import SinkJob
from connector.spark.runner import SparkTaskRunner
from tests.integration.harness import produce_round_robin, sink_props, table_rows, unique
from tests.support.tansu import create_topic

pytestmark = [pytest.mark.integration, pytest.mark.slow]

OUTAGE_SECONDS = 40  # longer than librdkafka's 30 s metadata timeout, which used to end the job


def test_a_broker_outage_longer_than_the_client_timeouts_is_ridden_out(spark, tmp_path):
    with TansuBroker() as broker:  # its own broker: the outage must not reach other tests
        topic = unique("outage")
        create_topic(broker.bootstrap, topic, partitions=2)
        produce_round_robin(broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(100)], 2)
        props = sink_props(unique("outage"), topic, "db.outage", tmp_path, **{
            "iceberg.control.commit.interval-ms": "500", "errors.retry.delay.max.ms": "2000",
            "icefloe.transient.retry-timeout-ms": "120000"})
        job = SinkJob(SinkConfig.parse(props, {"bootstrap.servers": broker.bootstrap}), SparkTaskRunner(spark))
        failure: list[BaseException] = []
        thread = threading.Thread(target=_run, args=(job, failure))
        thread.start()
        try:
            _wait_for_ids(props, list(range(100)), failure)
            broker.pause()
            time.sleep(OUTAGE_SECONDS)
            broker.resume()
            produce_round_robin(broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(100, 200)], 2)
            _wait_for_ids(props, list(range(200)), failure)
        finally:
            job.stop.event.set()
            thread.join(timeout=120)
    assert not failure
    assert sorted(row["id"] for row in table_rows(props, "db.outage")) == list(range(200))


def _run(job: SinkJob, failure: list[BaseException]) -> None:
    try:
        job.run()
    except BaseException as exc:  # noqa: BLE001 - handed to the test thread
        failure.append(exc)


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
