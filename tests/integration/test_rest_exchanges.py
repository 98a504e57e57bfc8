"""The reference Connect 3.9 exchanges replayed against the real herder: a broker, Spark, Iceberg tables.

The same ordered sequence as tests/rest/test_exchanges.py (which pins the HTTP
layer on a fake herder), here answered by `connector.herder.Herder` running the
connectors for real: the offsets are the ones committed to the table, the topics
the ones read. As the recorded run did, a GET that waits for a state change
(a connector RUNNING, offsets committed) is repeated until it answers as
expected or a deadline passes.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import Future

import pytest
from starlette.testclient import TestClient

from connector.herder.herder import Herder
from connector.rest.app import create_app
from tests.integration.harness import produce_round_robin, sink_props, unique
from tests.rest.fake_herder import WORKER_ID
from tests.rest.log_levels import log_levels_restored
from tests.rest.test_exchanges import answers, assert_answer, exchange_steps, send
from tests.support.tansu import create_topic

pytestmark = pytest.mark.integration

DEADLINE = 60.0


@pytest.fixture(scope="module")
def topic(kafka_broker):
    name = unique("sbs")
    create_topic(kafka_broker.bootstrap, name, partitions=1)
    produce_round_robin(kafka_broker.bootstrap, name, [json.dumps({"id": i}).encode() for i in range(3)], 1)
    return name


@pytest.fixture(scope="module")
def config(topic, tmp_path_factory):
    props = sink_props("unused", topic, f"db.{topic}", tmp_path_factory.mktemp("sbs"),
                       **{"tasks.max": "1", "iceberg.control.commit.interval-ms": "300"})
    del props["name"]
    return props


@pytest.fixture(scope="module")
def client(kafka_broker, spark, tmp_path_factory):
    session: Future = Future()
    session.set_result(spark)
    herder = Herder({"bootstrap.servers": kafka_broker.bootstrap}, data_dir=tmp_path_factory.mktemp("worker"),
                    spark=session, worker_id=WORKER_ID)
    herder.start()
    with log_levels_restored(), TestClient(create_app(herder, {})) as test_client:
        yield test_client
    herder.shutdown()


def _root(text: str) -> bool:
    body = json.loads(text)
    return list(body) == ["version", "commit", "kafka_cluster_id"] and body["kafka_cluster_id"] is not None


def _steps():
    # the steps' shapes do not depend on the topic's name: parametrize on names, build with the real one
    return exchange_steps({}, "t", _root)


@pytest.mark.parametrize("index", range(len(_steps())), ids=[s[0] for s in _steps()])
def test_connect_exchange_on_the_real_herder(client, config, topic, index):
    step, method, path, body, status, expected, location = exchange_steps(config, topic, _root)[index]
    deadline = time.monotonic() + DEADLINE
    response = send(client, method, path, body)
    while method == "GET" and not answers(response, status, expected) and time.monotonic() < deadline:
        time.sleep(0.2)
        response = send(client, method, path, body)
    assert_answer(response, status, expected, location)
