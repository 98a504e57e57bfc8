"""The throughput baseline: raw confluent-kafka consumption of a whole topic.

icefloe's throughput figures are quoted as ratios to this number: how fast
a plain librdkafka consumer (tuned settings, direct partition assignment,
no decoding) drains the same topic on the same machine.

Command line (starts a Tansu broker and fills a topic unless ``--bootstrap``
is given; ``--compare`` also measures :func:`connector.kafka.range_reader.read_range`
over the same records, one partition after another)::

    python -m tests.bench.raw_consume --records 1000000 --partitions 4 --compare
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from typing import Optional

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

from connector.kafka.client_config import THROUGHPUT_DEFAULTS

RECORD_TEMPLATE = '{"id": %d, "user": "user-%06d", "action": "page_view", "amount": %d.25, "ok": true, "src": "web"}'


def raw_consume_records_per_second(bootstrap: str, topic: str, expected_count: int, *, timeout: float = 300.0) -> float:
    """Records/s for one consumer reading every partition of ``topic`` from the start.

    Timed from assignment to the ``expected_count``-th record; fails if
    fewer records arrive within ``timeout`` seconds.
    """
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "icefloe-bench-raw",  # required by librdkafka; never joined
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            **THROUGHPUT_DEFAULTS,
        }
    )
    try:
        partitions = sorted(consumer.list_topics(topic, timeout=30).topics[topic].partitions)
        started = time.perf_counter()
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        received = _drain(consumer, expected_count, started + timeout)
        elapsed = time.perf_counter() - started
    finally:
        consumer.close()
    if received < expected_count:
        raise RuntimeError(f"only {received} of {expected_count} records of {topic} arrived within {timeout:.0f}s")
    return received / elapsed


def _drain(consumer: Consumer, expected_count: int, deadline: float) -> int:
    """Consume until ``expected_count`` records arrived or the deadline passed."""
    received = 0
    while received < expected_count and time.perf_counter() < deadline:
        # Never ask for more than remain: consume() would wait out its timeout.
        messages = consumer.consume(min(50_000, expected_count - received), timeout=0.5)
        for message in messages:
            if message.error() is not None:
                raise RuntimeError(f"consume failed: {message.error()}")
        received += len(messages)
    return received


def read_range_records_per_second(bootstrap: str, topic: str) -> tuple[float, int]:
    """Records/s of ``read_range`` over all of ``topic``, partitions in turn."""
    from connector.kafka.offsets import OffsetRange, earliest_offsets, end_offsets
    from connector.kafka.range_reader import read_range
    from connector.kafka.topics import resolve_partitions

    conf = {"bootstrap.servers": bootstrap}
    partitions = resolve_partitions(conf, [topic], None)
    start, end = earliest_offsets(conf, partitions), end_offsets(conf, partitions)
    started = time.perf_counter()
    rows = 0
    for key in partitions:
        for batch in read_range(conf, OffsetRange(key[0], key[1], start[key], end[key])):
            rows += batch.num_rows
    return rows / (time.perf_counter() - started), rows


def sample_records(count: int) -> Iterator[bytes]:
    """``count`` JSON records of about 100 bytes."""
    for i in range(count):
        yield (RECORD_TEMPLATE % (i, i % 1_000_000, i % 10_000)).encode()


def _fill_topic(bootstrap: str, topic: str, records: int, partitions: int) -> None:
    from tests.support.tansu import create_topic, produce

    create_topic(bootstrap, topic, partitions=partitions)
    produce(bootstrap, topic, sample_records(records))


def _measure(bootstrap: str, topic: str, records: int, repeat: int, compare: bool) -> dict[str, list[float]]:
    results: dict[str, list[float]] = {"raw": [], "read_range": []}
    for _ in range(repeat):  # interleaved, so machine noise hits both alike
        results["raw"].append(raw_consume_records_per_second(bootstrap, topic, records))
        if compare:
            rate, rows = read_range_records_per_second(bootstrap, topic)
            if rows != records:
                raise RuntimeError(f"read_range returned {rows} records, expected {records}")
            results["read_range"].append(rate)
    return {name: rates for name, rates in results.items() if rates}


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bootstrap", help="existing broker (topic must hold --records records); default: start Tansu")
    parser.add_argument("--topic", default="bench-raw")
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--compare", action="store_true", help="also measure read_range")
    args = parser.parse_args(argv)

    if args.bootstrap:
        results = _measure(args.bootstrap, args.topic, args.records, args.repeat, args.compare)
    else:
        from tests.support.tansu import TansuBroker

        with TansuBroker() as broker:
            _fill_topic(broker.bootstrap, args.topic, args.records, args.partitions)
            results = _measure(broker.bootstrap, args.topic, args.records, args.repeat, args.compare)
    print(
        json.dumps({name: {"best": max(r), "median": sorted(r)[len(r) // 2], "runs": r} for name, r in results.items()})
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
