"""`icefloe serve` as an operator runs it: a real worker process, deployed to, killed and restarted.

The worker is a subprocess with its own Spark session, talking to the
session's Tansu broker; connectors are deployed with `icefloe deploy` (the
public REST API only) and checked through the API and by reading the tables.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import requests
from pyiceberg.exceptions import NoSuchTableError

from connector import cli
from connector.embedded.tansu import free_port
from tests.integration.harness import produce_round_robin, sink_props, table_rows, unique, write_config_file
from tests.support.tansu import create_topic

pytestmark = [pytest.mark.integration, pytest.mark.slow]

DEADLINE = 120.0


class WorkerProcess:
    """One `icefloe serve` process on a free loopback port, with a data dir that outlives it."""

    def __init__(self, bootstrap: str, work: Path):
        self.url = f"http://127.0.0.1:{free_port()}"
        self.properties = work / "worker.properties"
        self.properties.write_text(f"bootstrap.servers={bootstrap}\nlisteners={self.url}\n")
        self.data_dir = work / "worker-data"
        self.log = work / "worker.log"
        self.process: subprocess.Popen | None = None

    def start(self) -> "WorkerProcess":
        command = [sys.executable, "-m", "connector.cli", "serve", "--worker", str(self.properties),
                   "--data-dir", str(self.data_dir)]
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        self.wait_until(lambda: self._healthy(), "the worker to be healthy")
        return self

    def _healthy(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise AssertionError(f"worker exited with {self.process.returncode}:\n{self.log.read_text()[-4000:]}")
        try:
            return requests.get(f"{self.url}/health", timeout=2).status_code == 200
        except requests.ConnectionError:
            return False

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait(timeout=30)

    def terminate(self) -> int:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=90)

    def get(self, path: str, **params: Any) -> Any:
        response = requests.get(f"{self.url}{path}", params=params, timeout=10)
        assert response.status_code == 200, response.text
        return response.json()

    def put(self, path: str) -> requests.Response:
        return requests.put(f"{self.url}{path}", timeout=60)

    def wait_until(self, condition, what: str) -> None:
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            if condition():
                return
            time.sleep(0.3)
        raise AssertionError(f"timed out waiting for {what}; worker log:\n{self.log.read_text()[-4000:]}")

    def wait_for_state(self, name: str, state: str) -> dict:
        seen: dict = {}

        def reached() -> bool:
            nonlocal seen
            seen = self.get(f"/connectors/{name}/status")
            return seen["connector"]["state"] == state and all(t["state"] == state for t in seen["tasks"])

        self.wait_until(reached, f"{name} to be {state} (last status {seen})")
        return seen


@pytest.fixture
def worker(kafka_broker, tmp_path):
    process = WorkerProcess(kafka_broker.bootstrap, tmp_path).start()
    yield process
    if process.process is not None and process.process.poll() is None:
        process.kill()


def _connector(kafka_broker, tmp_path: Path, prefix: str, records: int) -> dict[str, str]:
    topic = unique(prefix)
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    produce_round_robin(kafka_broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(records)], 2)
    return sink_props(unique(prefix), topic, f"db.{topic}", tmp_path / prefix,
                      **{"iceberg.control.commit.interval-ms": "500"})


def _ids(props: dict[str, str]) -> Counter:
    try:
        return Counter(row["id"] for row in table_rows(props, props["iceberg.tables"]))
    except NoSuchTableError:  # not before the first commit
        return Counter()


def _descendants(pid: int) -> list[str]:
    """The command lines of every process below ``pid``."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                parents[int(entry)] = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
    found, below = [], {pid}
    for _ in range(8):  # worker -> JVM -> daemon -> forked Python workers
        below = {child for child, parent in parents.items() if parent in below}
        for child in below:
            with contextlib.suppress(OSError):
                found.append(Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ").decode())
    return found


def test_a_started_worker_warms_its_executors_python_workers_before_any_connector(worker):
    """The first connector's first cycle does not pay for forking workers and importing a task's modules."""
    assert worker.process is not None

    def python_workers() -> int:
        return sum("connector.spark.worker_daemon" in command for command in _descendants(worker.process.pid))

    worker.wait_until(lambda: python_workers() >= 2, "the executors' Python daemon and a worker forked from it")
    assert worker.get("/connectors") == []


def test_deploy_runs_the_connector_and_a_second_deploy_changes_nothing(worker, kafka_broker, tmp_path, capsys):
    props = _connector(kafka_broker, tmp_path, "dep", 300)
    config = write_config_file(tmp_path / "conn.json", props)

    assert cli.main(["deploy", str(config), "--url", worker.url]) == 0
    worker.wait_until(lambda: _ids(props) == Counter(range(300)), "all 300 records in the table")
    capsys.readouterr()
    assert cli.main(["deploy", str(config), "--url", worker.url]) == 0
    assert "Nothing to change" in capsys.readouterr().out

    # counted once the cycle that committed them has ended (after its consumer-group mirror)
    written = f'icefloe_records_written_total{{connector="{props["name"]}",table="{props["iceberg.tables"]}"}} 300.0'
    worker.wait_until(lambda: written in requests.get(f"{worker.url}/metrics", timeout=10).text,
                      "/metrics to count the 300 rows")

    status = worker.get(f"/connectors/{props['name']}/status")
    assert status["connector"]["state"] == "RUNNING"
    assert [t["id"] for t in status["tasks"]] == [0, 1]
    assert worker.get("/connectors") == [props["name"]]
    assert worker.terminate() == 0


def test_connectors_come_back_in_their_states_after_the_worker_is_killed(worker, kafka_broker, tmp_path):
    running, paused, stopped = (_connector(kafka_broker, tmp_path, p, 200) for p in ("run", "pau", "stp"))
    for props in (running, paused, stopped):
        write_config_file(tmp_path / f"{props['name']}.json", props)
        assert cli.main(["deploy", str(tmp_path / f"{props['name']}.json"), "--url", worker.url]) == 0
    for props in (running, paused, stopped):
        worker.wait_until(lambda props=props: _ids(props) == Counter(range(200)), f"{props['name']} caught up")
    assert worker.put(f"/connectors/{paused['name']}/pause").status_code == 202
    assert worker.put(f"/connectors/{stopped['name']}/stop").status_code == 204
    worker.wait_for_state(paused["name"], "PAUSED")
    worker.wait_for_state(stopped["name"], "STOPPED")

    worker.kill()
    for props in (running, paused, stopped):  # more records arrive while the worker is down
        produce_round_robin(kafka_broker.bootstrap, props["topics"],
                            [json.dumps({"id": i}).encode() for i in range(200, 260)], 2)
    worker.start()

    worker.wait_for_state(paused["name"], "PAUSED")
    assert worker.get(f"/connectors/{stopped['name']}/status")["connector"]["state"] == "STOPPED"
    worker.wait_until(lambda: _ids(running) == Counter(range(260)), "the running connector to resume exactly")
    assert _ids(paused) == Counter(range(200)) and _ids(stopped) == Counter(range(200))

    assert worker.put(f"/connectors/{paused['name']}/resume").status_code == 202
    assert worker.put(f"/connectors/{stopped['name']}/resume").status_code == 202
    for props in (paused, stopped):
        worker.wait_until(lambda props=props: _ids(props) == Counter(range(260)), f"{props['name']} resumed exactly")
    assert worker.terminate() == 0
