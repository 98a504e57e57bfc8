"""The reference Connect 3.9 exchanges, sent to a worker that does not lead its group.

The same ordered sequence as tests/integration/test_rest_exchanges.py, answered
by the follower of a two-worker group: reads from the state it read from
Kafka, config writes forwarded to the leader, restarts passed to whichever
worker runs the connector. The answers must be Connect's, with two
substitutions only: the worker id is whichever worker runs the connector, and
a ``Location`` names the follower that was asked.
"""

from __future__ import annotations

import json
import time
import uuid

import pytest

from tests.cluster.conftest import InProcessWorker, group_properties
from tests.integration.harness import produce_round_robin, sink_props, unique
from tests.rest.fake_herder import WORKER_ID
from tests.rest.log_levels import log_levels_restored
from tests.rest.test_exchanges import answers, assert_answer, exchange_steps
from tests.support.tansu import create_topic

pytestmark = pytest.mark.integration

DEADLINE = 60.0


@pytest.fixture(scope="module")
def topic(kafka_broker):
    name = unique("fsbs")
    create_topic(kafka_broker.bootstrap, name, partitions=1)
    produce_round_robin(kafka_broker.bootstrap, name, [json.dumps({"id": i}).encode() for i in range(3)], 1)
    return name


@pytest.fixture(scope="module")
def config(topic, tmp_path_factory):
    props = sink_props("unused", topic, f"db.{topic}", tmp_path_factory.mktemp("fsbs"),
                       **{"tasks.max": "1", "iceberg.control.commit.interval-ms": "300"})
    del props["name"]
    return props


@pytest.fixture(scope="module")
def workers(kafka_broker, spark):
    properties = group_properties(kafka_broker.bootstrap, f"g-{uuid.uuid4().hex[:8]}")
    leader = InProcessWorker(properties, spark).start()
    time.sleep(1.0)  # two heartbeat rounds: the first worker leads
    follower = InProcessWorker(properties, spark).start()
    deadline = time.monotonic() + 20
    while not (leader.herder.is_leader() and follower.herder.leader_url() == leader.url):
        assert time.monotonic() < deadline, "the group did not settle on its first worker as leader"
        time.sleep(0.1)
    with log_levels_restored():
        yield leader, follower
    follower.stop()
    leader.stop()


class FollowerClient:
    """Sends a step to the follower; its answer is shown as a single worker's would be."""

    def __init__(self, follower: InProcessWorker, leader: InProcessWorker):
        self.follower = follower
        self.ids = (follower.worker_id, leader.worker_id)

    def request(self, method, path, content=None, headers=None):
        response = self.follower.request(method, path, data=content, headers=headers)
        text = response.text
        for worker_id in self.ids:
            text = text.replace(f'"worker_id":"{worker_id}"', f'"worker_id":"{WORKER_ID}"')
        response._content = text.encode()
        if "location" in response.headers:
            response.headers["location"] = response.headers["location"].replace(self.follower.url,
                                                                                "http://testserver")
        return response


def _root(text: str) -> bool:
    body = json.loads(text)
    return list(body) == ["version", "commit", "kafka_cluster_id"] and body["kafka_cluster_id"] is not None


def _steps():
    return exchange_steps({}, "t", _root)


def _send(client: FollowerClient, method: str, path: str, body):
    if body is None:
        return client.request(method, path)
    content = body if isinstance(body, str) else json.dumps(body)
    return client.request(method, path, content=content, headers={"Content-Type": "application/json"})


@pytest.mark.parametrize("index", range(len(_steps())), ids=[s[0] for s in _steps()])
def test_connect_exchange_answered_by_a_follower(workers, config, topic, index):
    leader, follower = workers
    assert not follower.herder.is_leader()
    client = FollowerClient(follower, leader)
    step, method, path, body, status, expected, location = exchange_steps(config, topic, _root)[index]
    deadline = time.monotonic() + DEADLINE
    response = _send(client, method, path, body)
    while method == "GET" and not answers(response, status, expected) and time.monotonic() < deadline:
        time.sleep(0.2)
        response = _send(client, method, path, body)
    assert_answer(response, status, expected, location)
