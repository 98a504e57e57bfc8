"""Workers of one distributed group in this process: each a DistributedHerder with its own REST listener.

They share the test run's Spark session (a worker's Spark is its own business:
tests/cluster/test_worker_processes.py runs real `icefloe serve` processes with
a session each), and talk to each other over HTTP on loopback, as workers on
several hosts do.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator

import pytest
import requests
import uvicorn

from connector.cluster.herder import DistributedHerder
from connector.embedded.tansu import free_port
from connector.rest.app import create_app
from connector.rest.forwarding import install_forwarding

FAST_GROUP = {  # timeouts sized for tests: a departed worker's connectors move within ~3 s
    "heartbeat.interval.ms": "500",
    "session.timeout.ms": "3000",
    "scheduled.rebalance.max.delay.ms": "0",
    "rebalance.timeout.ms": "10000",
    "config.storage.replication.factor": "-1",
    "offset.storage.replication.factor": "-1",
    "status.storage.replication.factor": "-1",
}


def group_properties(bootstrap: str, group: str, **extra: str) -> dict[str, str]:
    return {"bootstrap.servers": bootstrap, "group.id": group, "config.storage.topic": f"{group}-configs",
            "offset.storage.topic": f"{group}-offsets", "status.storage.topic": f"{group}-status",
            **FAST_GROUP, **extra}


class InProcessWorker:
    """A DistributedHerder answering REST on its own loopback port."""

    def __init__(self, worker: dict[str, str], spark, port: int | None = None):
        port = port or free_port()
        self.worker_id = f"127.0.0.1:{port}"
        self.url = f"http://{self.worker_id}"
        self.herder = DistributedHerder(worker, spark=spark, worker_id=self.worker_id, url=self.url)
        app = create_app(self.herder, worker)
        install_forwarding(app, self.herder)
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None,
                                                    lifespan="off"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self) -> "InProcessWorker":
        self.thread.start()
        self.herder.start()
        while not self.server.started:
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        self.herder.shutdown()
        self.server.should_exit = True
        self.thread.join(timeout=10)

    def request(self, method: str, path: str, **kwargs) -> requests.Response:
        return requests.request(method, f"{self.url}{path}", timeout=60, **kwargs)


@pytest.fixture
def group(kafka_broker, spark) -> Iterator[list[InProcessWorker]]:
    """Two workers of a new group (the first is the leader: it joined first)."""
    properties = group_properties(kafka_broker.bootstrap, f"g-{uuid.uuid4().hex[:8]}")
    workers = [InProcessWorker(properties, spark).start()]
    time.sleep(0.6)  # a heartbeat round apart, so the leader is known: the first
    workers.append(InProcessWorker(properties, spark).start())
    try:
        yield workers
    finally:
        for worker in reversed(workers):
            worker.stop()
