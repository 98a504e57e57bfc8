"""``icefloe.driver.while-spark-starts``: a backlog lands from the driver while Spark starts.

A cycle too large for ``icefloe.driver.max-records`` needs Spark, which takes
seconds to start (longer on a cluster waiting for executors). Meanwhile the
driver reads that cycle itself, as one task, and stops at the first batch
boundary after Spark is up; the cycle commits what it read, and the next one
runs on Spark from exactly there: no record lost, none twice.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from concurrent.futures import Future

import pytest

from connector.config.sink_config import SinkConfig
from connector.job import SinkJob
from connector.spark.runner import SparkTaskRunner
from tests.integration.harness import produce_round_robin, sink_props, table_rows, unique
from tests.support.tansu import create_topic

pytestmark = [pytest.mark.integration]

BATCH = 500  # the driver task's read batch: a few thousand records take several batches
RECORDS = 6000


@pytest.fixture
def small_batches(monkeypatch):
    monkeypatch.setattr("connector.task.READ_BATCH_SIZE", BATCH)


def _topic_with_records(bootstrap: str) -> str:
    topic = unique("bridge")
    create_topic(bootstrap, topic, partitions=3)
    produce_round_robin(bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(RECORDS)], 3)
    return topic


def _job(props: dict[str, str], bootstrap: str, runner: SparkTaskRunner) -> SinkJob:
    config = SinkConfig.parse(props, {"bootstrap.servers": bootstrap})
    return SinkJob(config, runner, until_caught_up=True)


def _spark_comes_up_after_batches(monkeypatch, starting: Future, spark, batches: int) -> None:
    """Make the Spark session "finish starting" once the driver has processed ``batches`` batches."""
    seen = []

    def after_batch(name: str) -> None:
        if name == "task.mid-batch":
            seen.append(name)
            if len(seen) == batches:
                starting.set_result(spark)

    monkeypatch.setattr("connector.task.fault_point", after_batch)


def test_the_driver_reads_while_spark_starts_and_spark_reads_on_from_where_it_stopped(
        kafka_broker, spark, tmp_path, small_batches, monkeypatch):
    topic, table = _topic_with_records(kafka_broker.bootstrap), "db.bridge"
    props = sink_props(unique("bridge"), topic, table, tmp_path, **{
        "icefloe.driver.max-records": "100", "icefloe.maintenance.enabled": "false"})
    starting: Future = Future()
    _spark_comes_up_after_batches(monkeypatch, starting, spark, batches=2)
    runner = SparkTaskRunner(starting)

    summary = _job(props, kafka_broker.bootstrap, runner).run()

    first, *rest = summary.cycles
    # one task in the driver: two batches of the first partition, then Spark was up, so it kept
    # only the batch in hand and one batch of each partition it had not begun
    assert runner.driver_rounds == 1 and first.files_written == {table: 1}
    assert first.records_read == 4 * BATCH
    assert len(rest) == 1 and rest[0].records_read == RECORDS - 4 * BATCH  # on Spark, from there
    assert sorted(Counter(r["id"] for r in table_rows(props, table)).items()) == [(i, 1) for i in range(RECORDS)]


def test_with_the_key_off_a_large_cycle_waits_for_spark(kafka_broker, spark, tmp_path, small_batches):
    topic, table = _topic_with_records(kafka_broker.bootstrap), "db.bridge_off"
    props = sink_props(unique("bridge"), topic, table, tmp_path, **{
        "icefloe.driver.max-records": "100", "icefloe.driver.while-spark-starts": "false",
        "icefloe.maintenance.enabled": "false"})
    starting: Future = Future()
    threading.Timer(0.5, starting.set_result, args=(spark,)).start()
    runner = SparkTaskRunner(starting)

    summary = _job(props, kafka_broker.bootstrap, runner).run()

    assert runner.driver_rounds == 0 and [c.records_read for c in summary.cycles] == [RECORDS]
    assert sorted(r["id"] for r in table_rows(props, table)) == list(range(RECORDS))


def test_a_cycle_that_finishes_before_spark_is_up_commits_it_all_from_the_driver(
        kafka_broker, tmp_path, small_batches):
    topic, table = _topic_with_records(kafka_broker.bootstrap), "db.bridge_all"
    props = sink_props(unique("bridge"), topic, table, tmp_path, **{
        "icefloe.driver.max-records": "100", "icefloe.maintenance.enabled": "false"})
    never_starts: Future = Future()
    runner = SparkTaskRunner(never_starts)

    summary = _job(props, kafka_broker.bootstrap, runner).run()

    assert runner.driver_rounds == 1 and [c.records_read for c in summary.cycles] == [RECORDS]
    assert sorted(r["id"] for r in table_rows(props, table)) == list(range(RECORDS))
