"""Another writer appending to the same table as fast as it can (tens of times a second) while icefloe commits cycles.

The job must never fail (a commit that loses to the other writer is retried on
the new head); icefloe's rows are exact and the other writer's rows untouched.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter

import pyarrow as pa
import pytest
from pyiceberg.exceptions import CommitFailedException

from tests.integration.harness import (
    load_table,
    produce_round_robin,
    run_until_caught_up,
    sink_props,
    table_rows,
    unique,
)
from tests.support.tansu import create_topic

pytestmark = pytest.mark.integration


def _other_writer(props: dict[str, str], stop: threading.Event, appended: list[int]) -> None:
    """Appends one row with a negative id per commit, with pyiceberg, until stopped."""
    k = 0
    while not stop.is_set():
        k += 1
        table = load_table(props, "db.cw")
        schema = table.schema().as_arrow()
        row = pa.Table.from_pylist([{"id": -k}], schema=schema)
        try:
            table.append(row)
            appended.append(-k)
        except CommitFailedException:
            pass  # lost to icefloe: this writer's own business
        time.sleep(0.02)


def test_a_concurrent_writer_between_cycles_does_not_fail_the_job_nor_change_its_rows(kafka_broker, spark, tmp_path):
    topic = unique("cw")
    props = sink_props(unique("cw"), topic, "db.cw", tmp_path, **{"icefloe.commit.max-records": "150"})
    create_topic(kafka_broker.bootstrap, topic, partitions=2)
    produce_round_robin(kafka_broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(100)], 2)
    run_until_caught_up(props, kafka_broker.bootstrap, spark)  # creates the table

    stop, appended = threading.Event(), []
    writer = threading.Thread(target=_other_writer, args=(props, stop, appended))
    writer.start()
    try:
        produce_round_robin(kafka_broker.bootstrap, topic,
                            [json.dumps({"id": i}).encode() for i in range(100, 1600)], 2)
        summary = run_until_caught_up(props, kafka_broker.bootstrap, spark)
    finally:
        stop.set()
        writer.join(timeout=30)
    assert len(summary.cycles) >= 8
    assert len(appended) >= 10  # the other writer did commit in between
    counts = Counter(row["id"] for row in table_rows(props, "db.cw"))
    assert {i: n for i, n in counts.items() if n > 1} == {}
    assert {i for i in counts if i >= 0} == set(range(1600))
    assert {i for i in counts if i < 0} == set(appended)
