"""At every start, one line says where each partition resumes and why."""

from __future__ import annotations

import json
import logging

import pytest

from connector.config.sink_config import SinkConfig
from connector.job import SinkJob
from connector.spark.runner import SparkTaskRunner
from tests.integration.harness import produce_round_robin, sink_props, unique
from tests.support.tansu import create_topic

pytestmark = pytest.mark.integration

LOGGER = "connector.commit.resume_log"


def run(props, bootstrap, spark):
    job = SinkJob(SinkConfig.parse(props, {"bootstrap.servers": bootstrap}), SparkTaskRunner(spark),
                  default_parallelism=1, until_caught_up=True)
    return job.run()


def resume_lines(caplog) -> list[tuple[int, str]]:
    lines = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == LOGGER]
    caplog.clear()
    return lines


def test_changed_tables_under_a_name_that_ran_before_say_they_resume_from_the_group(kafka_broker, spark, tmp_path,
                                                                                   caplog):
    topic, name = unique("resume"), unique("resume")
    create_topic(kafka_broker.bootstrap, topic, partitions=1)
    produce_round_robin(kafka_broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(5)], 1)
    small = {"icefloe.driver.max-records": "20000"}  # cycles in the driver: the test is about the start
    first = sink_props(name, topic, "db.first", tmp_path, **small)

    with caplog.at_level(logging.INFO, logger=LOGGER):
        run(first, kafka_broker.bootstrap, spark)
        assert resume_lines(caplog) == [(logging.INFO, f"Resuming {topic}[0]@0 from auto.offset.reset=earliest, "
                                                       "since neither the tables nor the consumer groups hold a "
                                                       "position")]
        run(first, kafka_broker.bootstrap, spark)
        assert resume_lines(caplog) == [(logging.INFO, f"Resuming {topic}[0]@5 from the offsets the tables "
                                                       "recorded (db.first)")]
        summary = run({**first, "iceberg.tables": "db.second"}, kafka_broker.bootstrap, spark)
        [(level, line)] = resume_lines(caplog)

    assert summary.records_read == 0
    assert level == logging.WARNING
    assert line.startswith(f"Resuming {topic}[0]@5 from consumer group connect-{name}'s offsets, since no table "
                           "holds offsets for them: the tables hold no offsets yet (iceberg.tables changed")
