"""JobMetrics: cycle reports and failures become Prometheus series, per connector, removed on close."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from connector.api.errors import ConnectException
from connector.commit.coordinator import CycleReport
from connector.metrics import JobMetrics, metrics_app


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


def value(registry: CollectorRegistry, name: str, **labels) -> float | None:
    return registry.get_sample_value(name, labels)


def report(**fields) -> CycleReport:
    defaults = dict(records_read=30, records_by_task={"0": 20, "1": 10}, bytes_read={"orders": 3000},
                    rows_written={"db.orders": 30}, files_written={"db.orders": 2},
                    bytes_written={"db.orders": 4096}, snapshots={"db.orders": 11},
                    next_offsets={("orders", 0): 20, ("orders", 1): 10}, schema_rounds=1, seconds=1.5)
    return CycleReport(**{**defaults, **fields})


def test_a_cycle_counts_records_per_task_and_writes_per_table(registry):
    metrics = JobMetrics("sink", registry=registry)
    metrics.started()

    metrics.cycle_done(report(), {("orders", 0): 25, ("orders", 1): 10})
    metrics.cycle_done(report(records_by_task={"0": 5}, rows_written={"db.orders": 5},
                              files_written={"db.orders": 1}, bytes_written={"db.orders": 100},
                              next_offsets={("orders", 0): 25}, seconds=0.7),
                       {("orders", 0): 25, ("orders", 1): 12})

    assert value(registry, "icefloe_connector_up", connector="sink") == 1
    assert value(registry, "icefloe_cycles_total", connector="sink") == 2
    assert value(registry, "icefloe_records_read_total", connector="sink", task="0") == 25
    assert value(registry, "icefloe_records_read_total", connector="sink", task="1") == 10
    assert value(registry, "icefloe_bytes_read_total", connector="sink", topic="orders") == 6000
    assert value(registry, "icefloe_records_written_total", connector="sink", table="db.orders") == 35
    assert value(registry, "icefloe_commits_total", connector="sink", table="db.orders") == 2
    assert value(registry, "icefloe_files_written_total", connector="sink", table="db.orders") == 3
    assert value(registry, "icefloe_bytes_written_total", connector="sink", table="db.orders") == 4196
    assert value(registry, "icefloe_commit_latency_seconds_count", connector="sink") == 2
    assert value(registry, "icefloe_commit_latency_seconds_sum", connector="sink") == pytest.approx(2.2)
    assert (value(registry, "icefloe_last_commit_timestamp_seconds", connector="sink") or 0) > 0


def test_records_sent_to_the_dlq_are_counted_per_source_topic(registry):
    metrics = JobMetrics("sink", registry=registry)

    metrics.cycle_done(report(dlq_records={"orders": 3}), {("orders", 0): 20, ("orders", 1): 10})
    metrics.cycle_done(report(dlq_records={"orders": 2, "refunds": 1}), {("orders", 0): 20, ("orders", 1): 10})

    assert value(registry, "icefloe_dlq_records_total", connector="sink", topic="orders") == 5
    assert value(registry, "icefloe_dlq_records_total", connector="sink", topic="refunds") == 1


def test_lag_is_the_target_minus_the_committed_offset_and_keeps_uncovered_partitions(registry):
    metrics = JobMetrics("sink", registry=registry)

    metrics.cycle_done(report(), {("orders", 0): 25, ("orders", 1): 10, ("orders", 2): 7})
    assert value(registry, "icefloe_consumer_lag_records", connector="sink", topic="orders", partition="0") == 5
    assert value(registry, "icefloe_consumer_lag_records", connector="sink", topic="orders", partition="1") == 0
    # never covered: no position known, so no lag rather than a guess
    assert value(registry, "icefloe_consumer_lag_records", connector="sink", topic="orders", partition="2") is None

    # partition 1 is not covered by the next cycle: its last committed offset still counts
    metrics.cycle_done(report(next_offsets={("orders", 0): 25}), {("orders", 0): 25, ("orders", 1): 14})
    assert value(registry, "icefloe_consumer_lag_records", connector="sink", topic="orders", partition="0") == 0
    assert value(registry, "icefloe_consumer_lag_records", connector="sink", topic="orders", partition="1") == 4
    assert value(registry, "icefloe_committed_offset", connector="sink", topic="orders", partition="1") == 10


def test_positions_before_a_cycle_give_the_lag_of_every_partition(registry):
    metrics = JobMetrics("sink", registry=registry)

    metrics.positions({("orders", 0): 0, ("orders", 1): 10}, {("orders", 0): 25, ("orders", 1): 10})

    assert value(registry, "icefloe_consumer_lag_records", connector="sink", topic="orders", partition="0") == 25
    assert value(registry, "icefloe_consumer_lag_records", connector="sink", topic="orders", partition="1") == 0
    assert value(registry, "icefloe_cycles_total", connector="sink") is None


def test_a_cycle_without_files_commits_nothing(registry):
    metrics = JobMetrics("sink", registry=registry)

    metrics.cycle_done(report(rows_written={}, files_written={}, bytes_written={}, snapshots={}), {})

    assert value(registry, "icefloe_cycles_total", connector="sink") == 1
    assert value(registry, "icefloe_commits_total", connector="sink", table="db.orders") is None
    assert value(registry, "icefloe_commit_latency_seconds_count", connector="sink") is None


def test_schema_changes_are_counted_per_table_and_kind(registry):
    metrics = JobMetrics("sink", registry=registry)

    metrics.cycle_done(report(schema_changes={"db.orders": {"create": 1, "update": 2}}), {})

    assert value(registry, "icefloe_schema_changes_total", connector="sink", table="db.orders", kind="create") == 1
    assert value(registry, "icefloe_schema_changes_total", connector="sink", table="db.orders", kind="update") == 2


def test_a_failure_is_counted_by_exception_class_and_the_connector_is_down(registry):
    metrics = JobMetrics("sink", registry=registry)

    metrics.failed(ConnectException("boom"))

    assert value(registry, "icefloe_failures_total", connector="sink", exception="ConnectException") == 1
    assert value(registry, "icefloe_connector_up", connector="sink") == 0


def test_a_stopped_job_is_down_without_a_failure(registry):
    metrics = JobMetrics("sink", registry=registry)
    metrics.started()
    assert value(registry, "icefloe_connector_up", connector="sink") == 1

    metrics.stopped()

    assert value(registry, "icefloe_connector_up", connector="sink") == 0
    assert value(registry, "icefloe_failures_total", connector="sink", exception="ConnectException") is None


def test_a_job_started_again_is_up_again(registry):
    """The REST worker keeps one JobMetrics per connector across its jobs (pause/resume, restart, new config)."""
    metrics = JobMetrics("sink", registry=registry)
    metrics.started()
    metrics.stopped()
    metrics.started()

    assert value(registry, "icefloe_connector_up", connector="sink") == 1


def test_a_partition_no_longer_read_loses_its_lag_series(registry):
    metrics = JobMetrics("sink", registry=registry)
    metrics.positions({("orders", 0): 5, ("old", 0): 7}, {("orders", 0): 9, ("old", 0): 10})

    metrics.positions({("orders", 0): 5}, {("orders", 0): 9})  # a new config reads only orders

    assert value(registry, "icefloe_consumer_lag_records", connector="sink", topic="orders", partition="0") == 4
    assert value(registry, "icefloe_consumer_lag_records", connector="sink", topic="old", partition="0") is None
    assert value(registry, "icefloe_committed_offset", connector="sink", topic="old", partition="0") is None


def test_close_removes_only_that_connectors_series(registry):
    kept, deleted = JobMetrics("kept", registry=registry), JobMetrics("deleted", registry=registry)
    for metrics in (kept, deleted):
        metrics.cycle_done(report(), {("orders", 0): 25})
        metrics.failed(ConnectException("boom"))

    deleted.close()

    connectors = {sample.labels.get("connector") for family in registry.collect() for sample in family.samples}
    assert connectors == {"kept"}
    assert value(registry, "icefloe_records_written_total", connector="kept", table="db.orders") == 30


def test_a_connector_created_again_after_close_starts_from_zero(registry):
    JobMetrics("sink", registry=registry).cycle_done(report(), {})
    first = JobMetrics("sink", registry=registry)
    first.close()

    JobMetrics("sink", registry=registry).cycle_done(report(rows_written={"db.orders": 4}), {})

    assert value(registry, "icefloe_records_written_total", connector="sink", table="db.orders") == 4


def test_the_asgi_app_serves_the_registry_in_prometheus_text_format(registry):
    import asyncio

    import httpx

    JobMetrics("sink", registry=registry).cycle_done(report(), {})

    async def scrape() -> httpx.Response:
        transport = httpx.ASGITransport(app=metrics_app(registry))
        async with httpx.AsyncClient(transport=transport, base_url="http://worker") as client:
            return await client.get("/")

    response = asyncio.run(scrape())

    assert response.status_code == 200
    families = {family.name: family for family in text_string_to_metric_families(response.text)}
    assert families["icefloe_records_written"].type == "counter"
    assert [s.value for s in families["icefloe_records_written"].samples if s.name.endswith("_total")] == [30]
