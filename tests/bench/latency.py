"""Continuous mode as a user sees it: how soon the first commit is visible, and record-to-visible latency.

A new ``icefloe run`` process (no ``--until-caught-up``) with a short commit
interval sinks a topic that already holds some records; a producer then
writes records at a steady rate, each carrying the time it was sent. The
table is polled: the first snapshot's time after the command started is the
time to first commit, and each record's latency is the time its row was first
seen minus the time it was sent (so the figures include the poll interval).
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka import Producer

POLL_SECONDS = 0.25


@dataclass
class Latency:
    first_commit_seconds: float
    p50_seconds: float
    p95_seconds: float
    records: int


def measure_latency(props: dict[str, str], bootstrap: str, topic: str, work: Path, *,
                    rate: int = 2000, seconds: float = 20.0) -> Latency:
    """Run ``props`` continuously; produce ``rate`` records/s for ``seconds``; fail loudly if rows go missing."""
    from connector.data.catalog import load_catalog

    config = work / f"{props['name']}.json"
    config.write_text(json.dumps({"name": props["name"], "config": {k: v for k, v in props.items() if k != "name"}}))
    command = [sys.executable, "-m", "connector.cli", "run", str(config), "--bootstrap-servers", bootstrap, "--quiet"]
    started = time.time()
    job = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           start_new_session=True, env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"})
    catalog = load_catalog(props)
    table_name = props["iceberg.tables"]
    try:
        first_commit = _await_first_snapshot(catalog, table_name, started, job)
        sent: dict[int, float] = {}
        producing = threading.Thread(target=_produce, args=(bootstrap, topic, rate, seconds, sent), daemon=True)
        producing.start()
        seen = _watch(catalog, table_name, sent, producing, deadline=time.time() + seconds + 60)
    finally:
        job.send_signal(signal.SIGTERM)
        job.wait(timeout=120)
    missing = set(sent) - set(seen)
    if missing:
        raise SystemExit(f"latency: {len(missing)} produced records never became visible")
    latencies = sorted(seen[i] - sent[i] for i in sent)
    return Latency(first_commit, statistics.median(latencies), latencies[int(0.95 * (len(latencies) - 1))],
                   len(latencies))


def _await_first_snapshot(catalog, table_name: str, started: float, job: subprocess.Popen) -> float:
    while time.time() - started < 120:
        if job.poll() is not None:
            raise SystemExit(f"latency: the job exited {job.returncode}: {job.stderr.read()[-2000:]}")
        try:
            if catalog.load_table(table_name).current_snapshot() is not None:
                return time.time() - started
        except Exception:  # noqa: BLE001 - polled while the job starts: the table may not exist yet
            pass
        time.sleep(0.05)
    raise SystemExit("latency: no commit within 120 s")


def _produce(bootstrap: str, topic: str, rate: int, seconds: float, sent: dict[int, float]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    began = time.time()
    index = 0
    while time.time() - began < seconds:
        due = int((time.time() - began) * rate)
        while index < due:
            now = time.time()
            producer.produce(topic, json.dumps({"id": 1_000_000 + index, "sent": now}).encode())
            sent[1_000_000 + index] = now
            index += 1
        producer.poll(0)
        time.sleep(0.005)
    producer.flush(30)


def _watch(catalog, table_name: str, sent: dict[int, float], producing: threading.Thread,
           deadline: float) -> dict[int, float]:
    """When each produced id was first seen in the table."""
    seen: dict[int, float] = {}
    snapshot = None
    while time.time() < deadline:
        table = catalog.load_table(table_name)
        head = table.current_snapshot()
        if head is not None and head.snapshot_id != snapshot:
            snapshot = head.snapshot_id
            now = time.time()
            for row_id in table.scan(selected_fields=("id",)).to_arrow().column("id").to_pylist():
                if row_id in sent and row_id not in seen:
                    seen[row_id] = now
        if not producing.is_alive() and len(seen) == len(sent):
            break
        time.sleep(POLL_SECONDS)
    return seen
