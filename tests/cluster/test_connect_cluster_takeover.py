"""Taking over a real Kafka Connect 3.9 cluster's topics, and handing them back readable.

A real Connect 3.9 distributed worker (../shared/tools/connect39.sh: registry
packages only) runs a FileStream sink connector; its config topic also holds
an Iceberg sink connector in Connect's record format, whose Java sink was
stopped with a commit in flight (tests/takeover/java_sink.py's stand-in: the
Java sink's jar is not in a registry). The Connect worker is stopped, and an
icefloe worker joins the same group on the same topics: the Iceberg connector
runs, finishing the Java commit, every record lands once; the FileStream one
is FAILED, saying why. Then the Connect worker starts again on those topics
and lists what the icefloe worker created.

Slow by nature: two starts of a Connect JVM (~10 s each).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import pytest
import requests
from confluent_kafka import Producer

from connector.cluster import config_records as records
from connector.embedded.tansu import free_port
from tests.cluster.conftest import FAST_GROUP, InProcessWorker
from tests.integration.harness import table_rows, unique
from tests.takeover.test_replay import PER_PARTITION, _java_history

pytestmark = [pytest.mark.integration, pytest.mark.slow]

def _connect39() -> Path:
    """The team's script that starts a real Connect 3.9 worker from registry packages: ``../shared/tools`` beside
    the checkout (``CONNECT39_SCRIPT`` names another place)."""
    if os.environ.get("CONNECT39_SCRIPT"):
        return Path(os.environ["CONNECT39_SCRIPT"])
    repo = Path(__file__).resolve().parents[2]
    for candidate in (repo.parent / "shared", Path("/work/shared")):
        if (candidate / "tools" / "connect39.sh").exists():
            return candidate / "tools" / "connect39.sh"
    return repo.parent / "shared" / "tools" / "connect39.sh"


CONNECT39 = _connect39()
FILE_SINK = "org.apache.kafka.connect.file.FileStreamSinkConnector"

needs_connect = pytest.mark.skipif(not CONNECT39.exists() or shutil.which("java") is None,
                                   reason="a real Kafka Connect 3.9 worker needs ../shared/tools/connect39.sh "
                                          "and a JDK")


class ConnectWorker:
    def __init__(self, bootstrap: str, work: Path, group: str, topics_of: str | None = None):
        """``topics_of``: another group whose config, offset and status topics this worker uses."""
        self.bootstrap, self.work, self.group = bootstrap, work, group
        if topics_of is not None:
            work.mkdir(parents=True, exist_ok=True)
            (work / "extra.properties").write_text("".join(
                f"{kind}.storage.topic=connect-{kind}s-{topics_of}\n" for kind in ("config", "offset"))
                + f"status.storage.topic=connect-status-{topics_of}\n")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.pid: int | None = None

    def start(self) -> "ConnectWorker":
        out = subprocess.run(["bash", str(CONNECT39), "distributed", self.bootstrap, str(self.port),
                              str(self.work), self.group], capture_output=True, text=True, timeout=600, check=True)
        self.pid = int(out.stdout.split()[-1])
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if requests.get(f"{self.url}/connectors", timeout=2).status_code == 200:
                    return self
            except requests.RequestException:
                pass
            time.sleep(0.5)
        raise AssertionError(f"Connect did not start:\n{(self.work / 'connect.log').read_text()[-3000:]}")

    def stop(self) -> None:
        if self.pid is None:
            return
        os.kill(self.pid, signal.SIGTERM)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and Path(f"/proc/{self.pid}").exists():
            time.sleep(0.2)
        if Path(f"/proc/{self.pid}").exists():
            os.kill(self.pid, signal.SIGKILL)
        self.pid = None


def _write_connect_records(bootstrap: str, topic: str, batch: list[tuple[str, bytes | None]]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "partitioner": "murmur2_random"})
    for key, value in batch:
        producer.produce(topic, key=key.encode(), value=value)
    producer.flush(30)


def _wait(condition, what: str, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = condition()
            if last:
                return last
        except (requests.RequestException, KeyError, ValueError) as exc:
            last = exc
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}; last: {last!r}")


def _answer(url: str) -> dict | None:
    response = requests.get(url, timeout=120)
    return response.json() if response.status_code == 200 else None


@needs_connect
def test_icefloe_workers_take_over_a_connect_clusters_topics(kafka_broker, spark, tmp_path):
    bootstrap = kafka_broker.bootstrap
    group = unique("cg")
    iceberg, topic, _java = _java_history(kafka_broker, tmp_path / "java")  # a Java commit left in flight
    iceberg["iceberg.control.commit.interval-ms"] = "500"
    connect = ConnectWorker(bootstrap, tmp_path / "connect", group).start()
    try:
        file_config = {"connector.class": FILE_SINK, "tasks.max": "1", "topics": topic,
                       "file": str(tmp_path / "fs.txt")}
        # Connect answers 409 while its worker is still joining its group (Tansu makes a new group wait)
        _wait(lambda: requests.post(f"{connect.url}/connectors", json={"name": "fs", "config": file_config},
                                    timeout=120).status_code in (201, 409) and "fs" in
              requests.get(f"{connect.url}/connectors", timeout=60).json(), "Connect to create the connector")
        _wait(lambda: requests.get(f"{connect.url}/connectors/fs/status", timeout=5).json()["connector"]["state"]
              == "RUNNING", "the FileStream connector RUNNING on Connect")
    finally:
        connect.stop()
    # the Iceberg connector as a Connect cluster with the Iceberg plugin wrote it
    _write_connect_records(bootstrap, f"connect-configs-{group}",
                           [records.connector_record(iceberg["name"], iceberg),
                            *records.task_records(iceberg["name"], [{**iceberg, "task.class": "x"}])])

    properties = {"bootstrap.servers": bootstrap, "group.id": group, **FAST_GROUP,
                  **{f"{kind}.storage.topic": f"connect-{kind}s-{group}" for kind in ("config", "offset")},
                  "status.storage.topic": f"connect-status-{group}"}
    worker = InProcessWorker(properties, spark).start()
    try:
        assert sorted(worker.request("GET", "/connectors").json()) == sorted(["fs", iceberg["name"]])
        failed = _wait(lambda: (s := worker.request("GET", "/connectors/fs/status").json())["connector"]["state"]
                       == "FAILED" and s["connector"]["worker_id"] == worker.worker_id and s,
                       "the FileStream connector FAILED on the icefloe worker")
        assert f"icefloe does not run connector class {FILE_SINK}" in failed["connector"]["trace"]
        _wait(lambda: worker.request("GET", f"/connectors/{iceberg['name']}/status").json()["connector"]["state"]
              == "RUNNING", "the Iceberg connector RUNNING")
        expected = Counter(range(2 * PER_PARTITION))
        for table in ("db.a", "db.b"):  # the Java sink's in-flight commit finished, then the rest read once
            _wait(lambda table=table: Counter(r["id"] for r in table_rows(iceberg, table)) == expected,
                  f"{table} exact")
        later = {**iceberg, "name": "made-by-icefloe", "iceberg.tables": "db.c"}
        del later["name"]
        answer = worker.request("POST", "/connectors", json={"name": "made-by-icefloe", "config": later,
                                                             "initial_state": "STOPPED"})
        assert answer.status_code == 201, answer.text
    finally:
        worker.stop()

    # Connect reads them back. A group of its own on the same topics: on Tansu, a Connect group whose members
    # all stopped does not form again (its workers loop on SyncGroup), which is Tansu's, not the topics'
    connect = ConnectWorker(bootstrap, tmp_path / "connect-again", f"{group}-again", topics_of=group).start()
    try:
        listed = requests.get(f"{connect.url}/connectors", timeout=10).json()
        assert sorted(listed) == sorted(["fs", iceberg["name"], "made-by-icefloe"])
        # Connect answers these once its worker has joined its group (a 409 during the rebalance; Tansu makes a
        # new group wait ~half a session timeout)
        config = _wait(lambda: _answer(f"{connect.url}/connectors/made-by-icefloe/config"), "Connect's config")
        assert config["iceberg.tables"] == "db.c"
        status = _wait(lambda: _answer(f"{connect.url}/connectors/made-by-icefloe/status"), "Connect's status")
        assert status["connector"]["state"] == "STOPPED" and status["tasks"] == []
    finally:
        connect.stop()
