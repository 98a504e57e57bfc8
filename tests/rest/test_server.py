"""``icefloe serve`` as a process: listens where ``listeners`` says, logs its URL, stops cleanly on SIGTERM.

The worker runs in a subprocess with the in-memory herder and no Spark (the
herder's own tests cover jobs): what is checked here is the server's part —
the listener, the ready line, the signal handling and that the herder is shut
down (which is where in-flight commits finish) before the process exits 0.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import httpx
import pytest

from connector.embedded.tansu import free_port

ROOT = Path(__file__).resolve().parents[2]

WORKER = textwrap.dedent("""
    import sys
    from concurrent.futures import Future
    from pathlib import Path

    from connector import cli
    from connector.rest import server
    from tests.rest.fake_herder import FakeHerder

    marker = Path(sys.argv[1])

    class Herder(FakeHerder):
        def shutdown(self):
            marker.write_text("shut down")

    class Session:
        def stop(self):
            pass

    def spark(pairs):
        future = Future()
        future.set_result(Session())
        return future

    server._start_spark = spark
    server._herder = lambda worker, data_dir, spark, worker_id: Herder(ready=False)
    sys.exit(cli.main(sys.argv[2:]))
""")


def wait_for(predicate, what: str, process: subprocess.Popen, deadline: float = 60.0):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if process.poll() is not None:
            raise AssertionError(f"worker exited with {process.returncode} while waiting for {what}")
        result = predicate()
        if result:
            return result
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def healthy(url: str):
    try:
        return httpx.get(f"{url}/health", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
def test_serve_listens_logs_its_url_and_stops_cleanly(tmp_path, stop_signal):
    port = free_port()
    properties = tmp_path / "worker.properties"
    properties.write_text(f"bootstrap.servers=127.0.0.1:9\nlisteners=http://127.0.0.1:{port}\n")
    marker, log = tmp_path / "shutdown", tmp_path / "worker.log"
    command = [sys.executable, "-c", WORKER, str(marker), "serve", "--worker", str(properties),
               "--data-dir", str(tmp_path / "data")]
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                   env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        url = f"http://127.0.0.1:{port}"
        wait_for(lambda: healthy(url), "the worker to be healthy", process)
        assert httpx.get(f"{url}/connectors").json() == []
        assert httpx.get(f"{url}/no/such/route").json() == {"error_code": 404, "message": "HTTP 404 Not Found"}
        wait_for(lambda: f"REST API at http://127.0.0.1:{port}" in log.read_text(), "the ready line", process)
        process.send_signal(stop_signal)
        assert process.wait(timeout=60) == 0, log.read_text()
    finally:
        if process.poll() is None:
            process.kill()
    assert marker.read_text() == "shut down"
    assert (tmp_path / "data").is_dir()


def test_serve_refuses_a_worker_without_a_kafka_cluster(tmp_path):
    properties = tmp_path / "worker.properties"
    properties.write_text("listeners=http://127.0.0.1:1\n")
    result = subprocess.run([sys.executable, "-m", "connector.cli", "serve", "--worker", str(properties),
                             "--data-dir", str(tmp_path / "data")], cwd=ROOT, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2
    assert "No Kafka cluster given" in result.stderr


def test_the_metrics_app_answers_at_metrics_exactly():
    from prometheus_client import CollectorRegistry, Counter, make_asgi_app
    from starlette.testclient import TestClient

    from connector.rest.app import create_app
    from connector.rest.server import mount_metrics
    from tests.rest.fake_herder import FakeHerder

    registry = CollectorRegistry()
    Counter("icefloe_test_records", "records", registry=registry).inc(3)
    app = create_app(FakeHerder(), {})
    mount_metrics(app, make_asgi_app(registry=registry))
    with TestClient(app) as client:
        response = client.get("/metrics")
        assert response.status_code == 200
        assert "icefloe_test_records_total 3.0" in response.text
        assert client.get("/metrics/x").json() == {"error_code": 404, "message": "HTTP 404 Not Found"}
