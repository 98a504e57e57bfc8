"""The pipeline a user writes by hand in an afternoon: the bar icefloe must clear.

One process: a tuned confluent-kafka consumer drains the topic, every 100,000
values are parsed by ``pyarrow.json`` and appended to an Iceberg table with
pyiceberg (its schema inferred from the first chunk). No converters, SMTs,
offsets or exactly-once: just the data moved.
"""

from __future__ import annotations

import io
import time
from pathlib import Path

import pyarrow.json as pa_json
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
from pyiceberg.catalog import load_catalog

from connector.kafka.client_config import THROUGHPUT_DEFAULTS

CHUNK = 100_000


def hand_rolled_records_per_second(bootstrap: str, topic: str, expected: int, work: Path) -> float:
    """Records/s from assignment until the last chunk is committed to a fresh table."""
    work.mkdir(parents=True, exist_ok=True)
    catalog = load_catalog("hand", type="sql", uri=f"sqlite:///{work}/catalog.db", warehouse=f"file://{work}/wh")
    catalog.create_namespace_if_not_exists("hand")
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "icefloe-bench-hand", "enable.auto.commit": False,
                         **THROUGHPUT_DEFAULTS})
    table = None
    received = 0
    try:
        partitions = sorted(consumer.list_topics(topic, timeout=30).topics[topic].partitions)
        started = time.perf_counter()
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        pending: list[bytes] = []
        while received < expected:
            messages = consumer.consume(min(50_000, expected - received), timeout=0.5)
            pending += [m.value() for m in messages]
            received += len(messages)
            if len(pending) >= CHUNK or (received >= expected and pending):
                data = pa_json.read_json(io.BytesIO(b"\n".join(pending)))
                if table is None:
                    table = catalog.create_table(f"hand.t{int(started)}", schema=data.schema)
                table.append(data)
                pending = []
        return received / (time.perf_counter() - started)
    finally:
        consumer.close()


def main(argv: list[str]) -> int:
    """``python -m tests.bench.hand_rolled BOOTSTRAP TOPIC RECORDS WORK``: the pipeline as a script of its own,
    for timing it as a user times a script, from the command to its exit (imports included)."""
    bootstrap, topic, records, work = argv
    rate = hand_rolled_records_per_second(bootstrap, topic, int(records), Path(work))
    print(f"{rate:.0f} records/s from assignment to the last append")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
