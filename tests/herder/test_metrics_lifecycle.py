"""Every step of a connector's lifecycle on the worker, against the metrics that claim its state."""

from __future__ import annotations

import json

import pytest
from prometheus_client import REGISTRY

from connector.data.catalog import load_catalog
from tests.herder.conftest import states, wait_until
from tests.integration.harness import produce_round_robin, sink_props, unique
from tests.support.tansu import create_topic

pytestmark = pytest.mark.integration


def up(name: str) -> float | None:
    return REGISTRY.get_sample_value("icefloe_connector_up", {"connector": name})


def lag(name: str, topic: str) -> float | None:
    return REGISTRY.get_sample_value("icefloe_consumer_lag_records",
                                     {"connector": name, "topic": topic, "partition": "0"})


def running_and_up(herder, name: str) -> bool:
    return states(herder.connector_status(name))[0] == "RUNNING" and up(name) == 1


def test_up_follows_the_connector_through_every_lifecycle_step(herder, kafka_broker, tmp_path):
    first, second = unique("up"), unique("up")
    for topic in (first, second):
        create_topic(kafka_broker.bootstrap, topic, partitions=1)
        produce_round_robin(kafka_broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(10)], 1)
    # small cycles run in the driver: the test is about states, not Spark
    props = sink_props(unique("conn"), first, "db.up", tmp_path / "lake", **{
        "iceberg.control.commit.interval-ms": "300", "tasks.max": "1", "icefloe.driver.max-records": "20000"})
    load_catalog(props)
    name = props["name"]

    herder.create_connector(name, props, None)
    wait_until(lambda: running_and_up(herder, name), "RUNNING and up after create")
    wait_until(lambda: lag(name, first) == 0, "the first topic's lag")

    herder.pause(name)
    assert states(herder.connector_status(name))[0] == "PAUSED" and up(name) == 0
    herder.resume(name)
    wait_until(lambda: running_and_up(herder, name), "RUNNING and up after resume")

    herder.put_connector_config(name, {**props, "topics": second})
    wait_until(lambda: running_and_up(herder, name), "RUNNING and up after a config PUT")
    wait_until(lambda: lag(name, second) == 0, "the new topic's lag")
    assert lag(name, first) is None  # no longer read: no frozen lag series

    herder.restart_connector(name)
    wait_until(lambda: running_and_up(herder, name), "RUNNING and up after a restart")
    herder.restart_connector(name, include_tasks=True)
    wait_until(lambda: running_and_up(herder, name), "RUNNING and up after a restart with its tasks")

    herder.stop(name)
    assert states(herder.connector_status(name))[0] == "STOPPED" and up(name) == 0
    herder.resume(name)
    wait_until(lambda: running_and_up(herder, name), "RUNNING and up after resuming a stopped connector")

    herder.delete_connector(name)
    assert up(name) is None and lag(name, second) is None
