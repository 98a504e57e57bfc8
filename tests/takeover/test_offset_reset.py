"""auto.offset.reset: where a connector with no committed position starts."""

from __future__ import annotations

import json

import pytest

from connector.kafka.client_config import consumer_config
from connector.kafka.offset_reset import NoOffsetError, reset_offsets
from tests.integration.harness import produce_round_robin, run_until_caught_up, sink_props, table_rows, unique
from tests.support.tansu import create_topic

pytestmark = pytest.mark.integration


def _topic(broker, records: int) -> str:
    topic = unique("reset")
    create_topic(broker.bootstrap, topic, partitions=2)
    produce_round_robin(broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(records)], 2)
    return topic


def test_the_policy_comes_from_the_connector_over_the_worker_over_connects_default(kafka_broker):
    topic = _topic(kafka_broker, 10)
    parts = [(topic, 0), (topic, 1)]
    worker = {"bootstrap.servers": kafka_broker.bootstrap}

    def start(worker_extra, connector):
        return reset_offsets(consumer_config({**worker, **worker_extra}, connector, connector_name="c"), parts)

    assert start({}, {}) == {(topic, 0): 0, (topic, 1): 0}  # Connect's sink default: earliest
    assert start({"consumer.auto.offset.reset": "latest"}, {}) == {(topic, 0): 5, (topic, 1): 5}
    assert start({"consumer.auto.offset.reset": "latest"},
                 {"consumer.override.auto.offset.reset": "earliest"}) == {(topic, 0): 0, (topic, 1): 0}
    with pytest.raises(NoOffsetError, match=rf"{topic}\[0\], {topic}\[1\] and auto.offset.reset=none"):
        start({}, {"consumer.override.auto.offset.reset": "none"})


def test_latest_reads_only_what_comes_after_the_first_start(kafka_broker, spark, tmp_path):
    topic = _topic(kafka_broker, 10)
    props = sink_props(unique("reset"), topic, "db.reset", tmp_path,
                       **{"consumer.override.auto.offset.reset": "latest"})
    from connector.config.sink_config import SinkConfig
    from connector.job import SinkJob
    from connector.spark.runner import SparkTaskRunner

    job = SinkJob(SinkConfig.parse(props, {"bootstrap.servers": kafka_broker.bootstrap}), SparkTaskRunner(spark),
                  default_parallelism=2, until_caught_up=True)
    start = job.start_offsets([(topic, 0), (topic, 1)])
    assert start == {(topic, 0): 5, (topic, 1): 5}
    produce_round_robin(kafka_broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(10, 14)], 2)
    job.run()  # the positions resolved at the first start hold: the records produced since are read
    assert sorted(r["id"] for r in table_rows(props, "db.reset")) == [10, 11, 12, 13]
    with pytest.raises(NoOffsetError):
        run_until_caught_up({**props, "name": unique("none"), "consumer.override.auto.offset.reset": "none"},
                            kafka_broker.bootstrap, spark)
