"""A group of real `icefloe serve` processes under kills, freezes and a full restart.

Each worker is a process with its own Spark session, as on separate hosts;
they share only the Tansu broker (config, status and members topics) and the
tables' catalog. Timeouts are the tests' (tests/cluster/conftest.py): a 3 s
session, 0.5 s heartbeats, no scheduled delay.

Slow by nature (three JVMs start, then a kill is waited out): ~2 min together.
"""

from __future__ import annotations

import json
import signal
import threading
import time
import uuid
from collections import Counter

import pytest
from pyiceberg.exceptions import NoSuchTableError

from tests.cluster.conftest import group_properties
from tests.cluster.processes import GroupWorker, wait_until
from tests.integration.harness import produce_round_robin, sink_props, table_rows, unique
from tests.support.tansu import create_topic

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# What failover may take here: a session timeout to notice (3 s), a heartbeat round for the leader to
# assign, then the connector's first cycle on a worker whose Spark is warm. Generous for a loaded CI box.
FAILOVER_BOUND_SECONDS = 45.0


def _connector(bootstrap: str, work, prefix: str, records: int) -> dict[str, str]:
    topic = unique(prefix)
    create_topic(bootstrap, topic, partitions=2)
    _produce(bootstrap, topic, 0, records)
    return sink_props(unique(prefix), topic, f"db.{topic}", work / prefix,
                      **{"iceberg.control.commit.interval-ms": "500", "tasks.max": "1"})


def _produce(bootstrap: str, topic: str, start: int, end: int) -> None:
    produce_round_robin(bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(start, end)], 2)


def _ids(props: dict[str, str]) -> Counter:
    try:
        return Counter(row["id"] for row in table_rows(props, props["iceberg.tables"]))
    except NoSuchTableError:
        return Counter()


def _create(worker: GroupWorker, props: dict[str, str]) -> None:
    config = {k: v for k, v in props.items() if k != "name"}
    response = worker.request("POST", "/connectors", json={"name": props["name"], "config": config})
    assert response.status_code == 201, response.text


def _status(worker: GroupWorker, name: str) -> dict:
    return worker.get(f"/connectors/{name}/status")


def _running_on(worker: GroupWorker, name: str, allowed: set[str]) -> str | None:
    status = _status(worker, name)
    states = {status["connector"]["state"], *(t["state"] for t in status["tasks"])}
    owner = status["connector"]["worker_id"]
    return owner if states == {"RUNNING"} and owner in allowed else None


@pytest.fixture
def started():
    """The test's workers, killed at the end whatever happened (a frozen one woken first)."""
    workers: list[GroupWorker] = []
    yield workers
    for worker in workers:
        if worker.alive:
            worker.signal(signal.SIGCONT)
            worker.kill()


def test_three_workers_share_six_connectors_survive_a_kill_and_a_full_restart(kafka_broker, tmp_path, started):
    bootstrap = kafka_broker.bootstrap
    properties = group_properties(bootstrap, f"g-{uuid.uuid4().hex[:8]}")
    workers = [GroupWorker(properties, tmp_path, i) for i in range(3)]
    started.extend(workers)
    for worker in workers:
        worker.launch()
    for worker in workers:
        worker.wait_healthy()
    ids = {w.worker_id for w in workers}

    connectors = [_connector(bootstrap, tmp_path, f"c{i}", 400) for i in range(6)]
    for index, props in enumerate(connectors):  # each created through a different worker
        _create(workers[index % 3], props)
    owners = {p["name"]: wait_until(lambda p=p: _running_on(workers[0], p["name"], ids),
                                    f"{p['name']} RUNNING", *workers) for p in connectors}
    assert sorted(Counter(owners.values()).values()) == [2, 2, 2]  # balanced
    for props in connectors:
        assert sum(w.runs(props["name"]) for w in workers) == 1  # ran on exactly one worker
        wait_until(lambda p=props: _ids(p) == Counter(range(400)), f"{props['name']} exact", *workers)

    # SIGKILL the worker that runs the first connector, while every connector is committing new records
    victim = next(w for w in workers if w.worker_id == owners[connectors[0]["name"]])
    survivors = [w for w in workers if w is not victim]
    for props in connectors:
        _produce(bootstrap, props["topics"], 400, 1400)
    time.sleep(0.8)
    killed_at = time.monotonic()
    victim.kill()
    alive = {w.worker_id for w in survivors}
    for props in connectors:
        wait_until(lambda p=props: _running_on(survivors[0], p["name"], alive), f"{props['name']} on a survivor",
                   *survivors)
    failover = time.monotonic() - killed_at
    print(f"failover after SIGKILL: {failover:.1f}s")
    assert failover < FAILOVER_BOUND_SECONDS
    for props in connectors:
        wait_until(lambda p=props: _ids(p) == Counter(range(1400)), f"{props['name']} exact after the kill",
                   *survivors)
        status = _status(survivors[1], props["name"])
        assert {t["worker_id"] for t in status["tasks"]} == {status["connector"]["worker_id"]}

    # pause one, delete one, then stop every worker at once and start them all again
    paused, deleted = connectors[1]["name"], connectors[2]["name"]
    assert survivors[1].request("PUT", f"/connectors/{paused}/pause").status_code == 202
    assert survivors[0].request("DELETE", f"/connectors/{deleted}").status_code == 204
    wait_until(lambda: _status(survivors[0], paused)["connector"]["state"] == "PAUSED", "the pause", *survivors)
    terminators = [threading.Thread(target=w.terminate) for w in survivors]
    for thread in terminators:
        thread.start()
    for thread in terminators:
        thread.join()
    assert all(w.process is not None and w.process.returncode == 0 for w in survivors)
    for props in connectors:
        _produce(bootstrap, props["topics"], 1400, 1600)
    for worker in workers:
        worker.launch()
    for worker in workers:
        worker.wait_healthy()

    wait_until(lambda: deleted not in workers[2].get("/connectors"), "the deleted connector to stay deleted",
               *workers)
    assert sorted(workers[2].get("/connectors")) == sorted(p["name"] for p in connectors if p["name"] != deleted)
    wait_until(lambda: _status(workers[1], paused)["connector"]["state"] == "PAUSED", "the paused one paused",
               *workers)
    for props in connectors:
        if props["name"] not in (paused, deleted):
            wait_until(lambda p=props: _ids(p) == Counter(range(1600)), f"{props['name']} exact after the restart",
                       *workers)
    assert _ids(next(p for p in connectors if p["name"] == paused)) == Counter(range(1400))


def test_a_frozen_worker_that_comes_back_duplicates_no_row(kafka_broker, tmp_path, started):
    """SIGSTOP the worker running a connector: the other takes it over after the session timeout; when the
    frozen one wakes, its job may still try to commit the range it was on: the fence refuses it."""
    bootstrap = kafka_broker.bootstrap
    properties = group_properties(bootstrap, f"g-{uuid.uuid4().hex[:8]}")
    workers = [GroupWorker(properties, tmp_path, i) for i in range(2)]
    started.extend(workers)
    for worker in workers:
        worker.launch()
    for worker in workers:
        worker.wait_healthy()
    props = _connector(bootstrap, tmp_path, "frozen", 200)
    _create(workers[1], props)
    ids = {w.worker_id for w in workers}
    owner_id = wait_until(lambda: _running_on(workers[0], props["name"], ids), "RUNNING", *workers)
    frozen = next(w for w in workers if w.worker_id == owner_id)
    other = next(w for w in workers if w is not frozen)

    total = 200
    for start in range(200, 1200, 200):  # records keep coming around the freeze
        _produce(bootstrap, props["topics"], start, start + 200)
        total = start + 200
        if start == 400:
            frozen.signal(signal.SIGSTOP)
        time.sleep(0.5)
    wait_until(lambda: _running_on(other, props["name"], {other.worker_id}), "the other worker to take over",
               other)
    time.sleep(2.0)
    frozen.signal(signal.SIGCONT)
    _produce(bootstrap, props["topics"], total, total + 200)
    total += 200
    wait_until(lambda: _ids(props) == Counter(range(total)), "every record exactly once", *workers)
    time.sleep(3.0)  # the woken worker's last cycle has had time to try its commit
    assert _ids(props) == Counter(range(total))
    assert "rejoins the group" in frozen.tail()
    assert _running_on(frozen, props["name"], {other.worker_id}) == other.worker_id
