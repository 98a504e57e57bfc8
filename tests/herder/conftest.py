"""A started Herder on the test broker and the shared Spark session, stopped after the test."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from connector.herder.herder import Herder

WORKER_ID = "127.0.0.1:8083"
DEADLINE_SECONDS = 180


def new_herder(bootstrap: str, spark, data_dir: Path) -> Herder:
    herder = Herder({"bootstrap.servers": bootstrap}, data_dir=data_dir, spark=spark, worker_id=WORKER_ID)
    herder.start()
    return herder


@pytest.fixture
def herder(kafka_broker, spark, tmp_path) -> Iterator[Herder]:
    started = new_herder(kafka_broker.bootstrap, spark, tmp_path / "worker")
    try:
        yield started
    finally:
        started.shutdown()


def wait_until(predicate: Callable[[], object], what: str, timeout: float = DEADLINE_SECONDS):
    """Poll ``predicate`` until it returns something truthy; fail naming ``what`` at the deadline."""
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
        except Exception as exc:  # noqa: BLE001 - polled while the job starts: tables may not exist yet
            last = exc
        if last and not isinstance(last, Exception):
            return last
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}; last: {last!r}")


def states(status: dict) -> tuple[str, list[str]]:
    return status["connector"]["state"], [task["state"] for task in status["tasks"]]
