"""Prometheus metrics of running jobs: what they read, wrote and committed, how far behind they are.

One :class:`JobMetrics` per running job feeds the metric families of a
registry (the process-wide default unless a test passes its own); every series
carries the connector's name, so one worker serves all its connectors on one
``/metrics`` endpoint and :meth:`JobMetrics.close` drops exactly one
connector's series when it is deleted. docs/operations.md lists every metric.
"""

from __future__ import annotations

import threading
import time
import weakref
from typing import TYPE_CHECKING, Any, Callable

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram, make_asgi_app, start_http_server

from connector.api.record import TopicPartition
from connector.commit.coordinator import CycleReport

if TYPE_CHECKING:
    from connector.maintenance.status import MaintenanceReport

# A cycle takes from about a second (a small continuous cycle) to many minutes (a backfill's).
LATENCY_BUCKETS = (0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)


class _Families:
    """The metric families, registered once per registry and shared by all its jobs."""

    def __init__(self, registry: CollectorRegistry):
        def counter(name: str, text: str, *labels: str) -> Counter:
            return Counter(name, text, ["connector", *labels], registry=registry)

        def gauge(name: str, text: str, *labels: str) -> Gauge:
            return Gauge(name, text, ["connector", *labels], registry=registry)

        self.up = gauge("icefloe_connector_up", "1 while the connector's job runs, 0 while it is paused, "
                        "stopped or failed")
        self.cycles = counter("icefloe_cycles", "Commit cycles completed")
        self.records_read = counter("icefloe_records_read", "Kafka records read, per task", "task")
        self.bytes_read = counter("icefloe_bytes_read", "Key and value bytes of the records read", "topic")
        self.records_written = counter("icefloe_records_written", "Rows committed to a table", "table")
        self.commits = counter("icefloe_commits", "Iceberg snapshots committed to a table", "table")
        self.files_written = counter("icefloe_files_written", "Data files committed to a table", "table")
        self.bytes_written = counter("icefloe_bytes_written", "Bytes of the data files committed to a table",
                                     "table")
        self.schema_changes = counter("icefloe_schema_changes", "Tables created (kind=create) or evolved "
                                      "(kind=update) by the job", "table", "kind")
        self.dlq_records = counter("icefloe_dlq_records", "Records sent to the dead letter queue, by source "
                                   "topic", "topic")
        self.failures = counter("icefloe_failures", "Job failures, by exception class", "exception")
        self.task_failures = counter("icefloe_task_failures", "Tasks that failed while the connector ran on "
                                     "(the REST worker's isolated tasks)", "task")
        self.lag = gauge("icefloe_consumer_lag_records", "End offset of the cycle's target minus the "
                         "committed next offset", "topic", "partition")
        self.group_mirror_lag = gauge("icefloe_group_mirror_lag_records", "Records by which the consumer "
                                      "group's offsets differ from the tables' while mirroring them fails "
                                      "(0 once the group has them)")
        self.committed_offset = gauge("icefloe_committed_offset", "Next offset committed to the tables",
                                      "topic", "partition")
        self.last_commit = gauge("icefloe_last_commit_timestamp_seconds", "Unix time of the last commit cycle")
        self.commit_latency = Histogram("icefloe_commit_latency_seconds", "From a cycle's start until its "
                                        "commit is visible", ["connector"], buckets=LATENCY_BUCKETS,
                                        registry=registry)
        # table maintenance (connector/maintenance/)
        self.table_files = gauge("icefloe_table_data_files", "Data files of the table's current snapshot",
                                 "table")
        self.table_file_size = gauge("icefloe_table_average_file_size_bytes", "Average size of the data files "
                                     "of the table's current snapshot", "table")
        self.table_snapshots = gauge("icefloe_table_snapshots", "Snapshots the table keeps", "table")
        self.compaction_seconds = gauge("icefloe_compaction_last_duration_seconds", "Duration of the table's "
                                        "last compaction", "table")
        self.compaction_time = gauge("icefloe_compaction_last_timestamp_seconds", "Unix time of the table's "
                                     "last compaction that committed", "table")
        self.bytes_rewritten = counter("icefloe_compaction_bytes_rewritten", "Bytes of data files compaction "
                                       "replaced", "table")
        self.files_rewritten = counter("icefloe_compaction_files_rewritten", "Data files compaction replaced",
                                       "table")
        self.files_deleted = counter("icefloe_maintenance_files_deleted", "Files maintenance deleted",
                                     "table", "kind")
        self.snapshots_expired = counter("icefloe_snapshots_expired", "Snapshots expired", "table")
        self.maintenance_seconds = gauge("icefloe_maintenance_last_round_seconds", "Duration of the last "
                                         "maintenance round")
        # connector → (family, label values) of every series it has, so that deleting a connector
        # removes them all, whichever of its jobs (before a restart, after) created them
        self.series: dict[str, set[tuple[Any, tuple[str, ...]]]] = {}
        self.lock = threading.Lock()

    def child(self, family: Any, values: tuple[str, ...]) -> Any:
        with self.lock:
            self.series.setdefault(values[0], set()).add((family, values))
        return family.labels(*values)

    def drop(self, family: Any, values: tuple[str, ...]) -> None:
        """Remove one series (a partition the connector no longer reads)."""
        with self.lock:
            self.series.get(values[0], set()).discard((family, values))
        try:
            family.remove(*values)
        except KeyError:  # never set
            pass

    def remove(self, connector: str) -> None:
        with self.lock:
            series = self.series.pop(connector, set())
        for family, values in series:
            try:
                family.remove(*values)
            except KeyError:  # already gone
                pass


_families: weakref.WeakKeyDictionary[CollectorRegistry, _Families] = weakref.WeakKeyDictionary()
_families_lock = threading.Lock()


def _families_of(registry: CollectorRegistry) -> _Families:
    with _families_lock:
        if registry not in _families:
            _families[registry] = _Families(registry)
        return _families[registry]


class JobMetrics:
    """The metrics of one connector's job: fed after each cycle and on failure."""

    def __init__(self, connector: str, registry: CollectorRegistry = REGISTRY):
        self.connector = connector
        self._m = _families_of(registry)
        self._committed: dict[TopicPartition, int] = {}

    def started(self) -> None:
        """A job of the connector runs (the first, or again after a pause, a restart or a config change)."""
        self._child(self._m.up).set(1)

    def _child(self, family: Any, *labels: Any) -> Any:
        return self._m.child(family, (self.connector, *(str(label) for label in labels)))

    def cycle_done(self, report: CycleReport, targets: dict[TopicPartition, int]) -> None:
        """Count what a committed cycle did; ``targets`` are the end offsets the job is heading for."""
        self._child(self._m.cycles).inc()
        self._add(self._m.records_read, report.records_by_task)
        self._add(self._m.bytes_read, report.bytes_read)
        self._add(self._m.records_written, report.rows_written)
        self._add(self._m.files_written, report.files_written)
        self._add(self._m.bytes_written, report.bytes_written)
        self._add(self._m.dlq_records, report.dlq_records)
        self._add(self._m.commits, {table: 1 for table in report.snapshots})
        for table, kinds in report.schema_changes.items():
            for kind, count in kinds.items():
                self._child(self._m.schema_changes, table, kind).inc(count)
        if report.snapshots:
            self._child(self._m.commit_latency).observe(report.seconds)
            self._child(self._m.last_commit).set(time.time())
        self._child(self._m.group_mirror_lag).set(report.group_mirror_lag)
        self._positions(report.next_offsets, targets)

    def _add(self, family: Counter, counts: dict[str, int]) -> None:
        for label, count in counts.items():
            self._child(family, label).inc(count)

    def positions(self, start: dict[TopicPartition, int], targets: dict[TopicPartition, int]) -> None:
        """Where each partition resumes and the end offsets now, before cycles run (or when none is due).

        So a long backfill shows its lag before its first commit, and an idle
        continuous job keeps its lag current. ``targets`` are all the partitions the job reads: a
        partition it no longer reads (its topic left the config) loses its series, whose lag would
        otherwise stay frozen at its last value.
        """
        for gone in set(self._committed) - set(targets):
            del self._committed[gone]
            self._m.drop(self._m.lag, (self.connector, gone[0], str(gone[1])))
            self._m.drop(self._m.committed_offset, (self.connector, gone[0], str(gone[1])))
        self._positions(start, targets)

    def _positions(self, committed: dict[TopicPartition, int], targets: dict[TopicPartition, int]) -> None:
        # A partition the cycle did not cover keeps its last known position; one with no known
        # position yet gets no lag rather than a guess.
        self._committed.update(committed)
        for (topic, partition), end in targets.items():
            offset = self._committed.get((topic, partition))
            if offset is None:
                continue
            self._child(self._m.committed_offset, topic, partition).set(offset)
            self._child(self._m.lag, topic, partition).set(max(0, end - offset))

    def maintenance_done(self, report: MaintenanceReport) -> None:
        """A maintenance round ended: the tables' file counts and sizes, what it rewrote and deleted."""
        self._child(self._m.maintenance_seconds).set(report.seconds)
        for table, done in report.tables.items():
            self._child(self._m.table_files, table).set(done.data_files)
            self._child(self._m.table_file_size, table).set(done.average_file_size)
            self._child(self._m.table_snapshots, table).set(done.snapshots)
            compaction = done.compaction
            if compaction is not None and compaction.groups:
                self._child(self._m.compaction_seconds, table).set(compaction.seconds)
                self._child(self._m.compaction_time, table).set(time.time())
                self._child(self._m.bytes_rewritten, table).inc(compaction.bytes_rewritten)
                self._child(self._m.files_rewritten, table).inc(compaction.files_removed)
            if done.expiry is not None:
                self._child(self._m.snapshots_expired, table).inc(done.expiry.expired)
                self._child(self._m.files_deleted, table, "expired").inc(done.expiry.files_deleted)
            self._child(self._m.files_deleted, table, "orphan").inc(done.orphans_deleted)

    def stopped(self) -> None:
        """The job ended without failing (caught up, or asked to stop)."""
        self._child(self._m.up).set(0)

    def failed(self, exc: BaseException) -> None:
        self._child(self._m.failures, type(exc).__name__).inc()
        self._child(self._m.up).set(0)

    def task_failed(self, task: int) -> None:
        """One task failed and the connector went on without it (``icefloe serve`` isolates tasks)."""
        self._child(self._m.task_failures, str(task)).inc()

    def close(self) -> None:
        """Remove every series of this connector (it was deleted: its counters must not linger)."""
        self._m.remove(self.connector)


def metrics_app(registry: CollectorRegistry = REGISTRY) -> Callable:
    """The ASGI app serving the registry in Prometheus' text format (the REST worker mounts it at /metrics)."""
    return make_asgi_app(registry=registry)


def start_metrics_server(port: int, registry: CollectorRegistry = REGISTRY, addr: str = "0.0.0.0") -> Any:
    """Serve the registry on http://addr:port/metrics from a daemon thread; the HTTP server, to shut down."""
    server, _thread = start_http_server(port, addr=addr, registry=registry)
    return server
