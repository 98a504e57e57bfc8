"""``iceberg.control.commit.timeout-ms``: a cycle that runs out of time commits what its tasks read.

The Java coordinator commits what its workers finished when the timeout
passes; icefloe's tasks stop reading at the cycle's deadline, the cycle
commits as far as they reached, and the next cycle reads on from there —
without losing or repeating a record.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from connector.maintenance.compaction import MAINTENANCE_OPERATION
from tests.integration.harness import (
    load_table,
    produce_round_robin,
    run_until_caught_up,
    sink_props,
    table_rows,
    unique,
)
from tests.support.tansu import create_topic

pytestmark = [pytest.mark.integration]

BATCH = 500  # the tasks' read batch, made small so that a few thousand records take several batches


@pytest.fixture
def small_batches(monkeypatch):
    # tasks run in the driver (icefloe.driver.max-records below), so the patch reaches them
    monkeypatch.setattr("connector.task.READ_BATCH_SIZE", BATCH)


def _props(tmp_path, topic: str, table: str, **extra: str) -> dict[str, str]:
    return sink_props(unique("timeout"), topic, table, tmp_path, **{
        "iceberg.control.commit.timeout-ms": "1", "icefloe.driver.max-records": "1000000",
        "icefloe.maintenance.enabled": "false", **extra})


def _committed_offsets(props: dict[str, str], table: str, topic: str) -> list[int]:
    """Per data snapshot, oldest first, the next offsets it records for ``topic``, summed over partitions."""
    totals = []
    for snapshot in load_table(props, table).snapshots():
        summary = snapshot.summary.additional_properties
        if MAINTENANCE_OPERATION in summary:
            continue
        offsets = next(json.loads(v) for k, v in summary.items() if k.startswith(f"kafka.connect.offsets.{topic}."))
        totals.append(sum(offsets.values()))
    return totals


def test_a_cycle_past_its_timeout_commits_what_was_read_and_the_next_cycle_reads_on(
        kafka_broker, spark, tmp_path, small_batches):
    topic, table = unique("timeout"), "db.timeout"
    props = _props(tmp_path, topic, table)
    create_topic(kafka_broker.bootstrap, topic, partitions=3)
    produce_round_robin(kafka_broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(6000)], 3)

    summary = run_until_caught_up(props, kafka_broker.bootstrap, spark)

    # each cycle is cut short at once: its tasks read one batch of each partition, then it commits
    assert len(summary.cycles) >= 4
    assert all(cycle.records_read <= 3 * BATCH for cycle in summary.cycles)
    assert sorted(Counter(r["id"] for r in table_rows(props, table)).items()) == [(i, 1) for i in range(6000)]
    committed = _committed_offsets(props, table, topic)
    assert committed == sorted(set(committed)) and committed[-1] == 6000  # every partial commit moved forward


def test_a_backfill_cycle_that_splits_a_partition_is_not_cut_short(kafka_broker, spark, tmp_path, small_batches,
                                                                   monkeypatch):
    # A slice cut short would leave a gap under the slices after it: such a cycle reads all of its range.
    monkeypatch.setattr("connector.commit.coordinator.MIN_SPLIT_RECORDS", 100)
    topic, table = unique("timeout_split"), "db.timeout_split"
    props = _props(tmp_path, topic, table)
    create_topic(kafka_broker.bootstrap, topic, partitions=1)
    produce_round_robin(kafka_broker.bootstrap, topic, [json.dumps({"id": i}).encode() for i in range(2000)], 1)

    summary = run_until_caught_up(props, kafka_broker.bootstrap, spark)

    assert [cycle.records_read for cycle in summary.cycles] == [2000]
    assert sorted(Counter(r["id"] for r in table_rows(props, table)).items()) == [(i, 1) for i in range(2000)]
