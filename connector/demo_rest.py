"""``make demo-rest``: the quickstart deployed to an ``icefloe serve`` worker, as a Connect user would.

Starts a Tansu broker on a free loopback port and produces sample events,
starts ``icefloe serve`` (a Kafka Connect-compatible REST worker) on another
free port, deploys ``connector-configs/quickstart.json`` with ``icefloe
deploy`` (the same ``PUT /connectors/quickstart/config`` a CI script sends to
Connect), shows the connector's status as Connect's API reports it, waits for
the table to hold every event, then stops the worker with SIGTERM (its commit
in flight finishes) and the broker.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import requests

from connector.demo import CONFIG, EVENT_COUNT, PARTITIONS, WORK, sample_events, show_table
from connector.embedded.tansu import TansuBroker, create_topic, free_port, produce

DEADLINE_SECONDS = 180


def main() -> int:
    from connector import cli
    from connector.config.sink_config import load_connector_file

    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    with TansuBroker() as broker:
        _produce_events(broker.bootstrap)
        url = f"http://127.0.0.1:{free_port()}"
        worker = _start_worker(broker.bootstrap, url)
        try:
            _wait_healthy(url, worker)
            code = cli.main(["deploy", str(CONFIG), "--url", url])
            if code != 0:
                return code
            print("\n$ curl", f"{url}/connectors?expand=status")
            print(json.dumps(requests.get(f"{url}/connectors", params={"expand": "status"}, timeout=10).json(),
                             indent=2))
            props = load_connector_file(CONFIG)
            _wait_for_rows(props, EVENT_COUNT)
            show_table(props)
        finally:
            print("\nStopping the worker (SIGTERM: the commit in flight finishes)")
            worker.send_signal(signal.SIGTERM)
            print(f"Worker exited with {worker.wait(timeout=60)}")
    return 0


def _produce_events(bootstrap: str) -> None:
    print(f"Tansu broker on {bootstrap}")
    create_topic(bootstrap, "events", partitions=PARTITIONS)
    events = sample_events(EVENT_COUNT)
    produce(bootstrap, "events", events, keys=[json.loads(e)["user"].encode() for e in events])
    print(f"Produced {EVENT_COUNT} events to 'events' ({PARTITIONS} partitions)")


def _start_worker(bootstrap: str, url: str) -> subprocess.Popen:
    properties = WORK / "worker.properties"
    properties.write_text(f"bootstrap.servers={bootstrap}\nlisteners={url}\n")
    command = [sys.executable, "-m", "connector.cli", "serve", "--worker", str(properties),
               "--data-dir", str(WORK / "worker")]
    print("$", "icefloe", *command[3:])
    return subprocess.Popen(command, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def _wait_healthy(url: str, worker: subprocess.Popen) -> None:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while time.monotonic() < deadline:
        if worker.poll() is not None:
            raise SystemExit(f"The worker exited with {worker.returncode} before it was healthy")
        try:
            if requests.get(f"{url}/health", timeout=2).status_code == 200:
                print(f"Worker healthy at {url}")
                return
        except requests.ConnectionError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"The worker at {url} was not healthy after {DEADLINE_SECONDS} s")


def _wait_for_rows(props: dict[str, str], expected: int) -> None:
    from pyiceberg.exceptions import NoSuchTableError

    from connector.data.catalog import load_catalog

    catalog = load_catalog(props)
    deadline = time.monotonic() + DEADLINE_SECONDS
    rows = 0
    while time.monotonic() < deadline:
        try:
            rows = catalog.load_table(props["iceberg.tables"]).scan().count()
        except NoSuchTableError:
            rows = 0
        print(f"Table {props['iceberg.tables']}: {rows} of {expected} rows")
        if rows >= expected:
            return
        time.sleep(3)
    raise SystemExit(f"Only {rows} of {expected} rows arrived within {DEADLINE_SECONDS} s")


if __name__ == "__main__":
    sys.exit(main())
