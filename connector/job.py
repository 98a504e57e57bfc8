"""The job loop: commit cycles until caught up (``--until-caught-up``) or continuously until stopped.

A cycle reads from where each partition resumes up to a target, at most
``icefloe.commit.max-records`` offsets over all partitions, and commits: a
large backlog is read and committed in several cycles, so a crash loses at
most one cycle's work. ``--until-caught-up`` takes the end offsets seen at
its start as the target and runs cycles until every partition reached it.
Continuous mode starts a cycle every ``iceberg.control.commit.interval-ms``
with the end offsets of that moment as the target, and starts the next one at
once while a cycle left part of the backlog behind. SIGTERM or Ctrl-C asks
the loop to stop: a cycle in flight finishes and commits first, a second
Ctrl-C aborts at once (nothing uncommitted is ever visible, so an abort loses
no data either: the next run resumes from the tables).

Between cycles the job's :class:`~connector.maintenance.runner.Maintainer`
maintains its tables (compaction, manifest rewrite, snapshot expiry, orphan
files; docs/operations.md, Maintenance): in continuous mode at most every
``icefloe.maintenance.interval-ms`` within ``icefloe.maintenance.budget-ms``,
with ``--until-caught-up`` once at the end.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from connector.api.record import TopicPartition
from connector.commit.coordinator import Coordinator, CycleReport, TaskRunner
from connector.config.sink_config import SinkConfig
from connector.data.catalog import open_catalog
from connector.kafka.client_config import consumer_config
from connector.kafka.offsets import bounded_end, end_offsets
from connector.kafka.reachability import check_reachable
from connector.kafka.topics import resolve_partitions
from connector.log_context import CONNECTOR
from connector.maintenance.runner import Maintainer
from connector.progress import Progress, TopicBars
from connector.takeover.replay import take_over_if_needed
from connector.task import probe_schema_needs
from connector.tolerance.transient import StoppedWhileRetrying, TransientRetry

if TYPE_CHECKING:
    from connector.metrics import JobMetrics
    from connector.progress_feed import ProgressFeed

log = logging.getLogger(__name__)


@dataclass
class JobSummary:
    cycles: list[CycleReport] = field(default_factory=list)

    @property
    def records_read(self) -> int:
        return sum(c.records_read for c in self.cycles)


class StopSignal:
    """Set by SIGTERM/SIGINT; a second SIGINT raises KeyboardInterrupt."""

    def __init__(self) -> None:
        self.event = threading.Event()

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        signal.signal(signal.SIGTERM, self._handle)
        signal.signal(signal.SIGINT, self._handle)

    def _handle(self, signum, frame) -> None:
        if self.event.is_set() and signum == signal.SIGINT:
            raise KeyboardInterrupt
        log.warning("Stop requested (%s): finishing the commit in flight", signal.Signals(signum).name)
        self.event.set()

    @property
    def requested(self) -> bool:
        return self.event.is_set()


class SinkJob:
    """Drives the coordinator for one connector config."""

    def __init__(self, config: SinkConfig, runner: TaskRunner, *, default_parallelism: int | None = None,
                 until_caught_up: bool = False, stop: StopSignal | None = None, progress_bar: Any = None,
                 metrics: JobMetrics | None = None, progress_feed: ProgressFeed | None = None):
        """``default_parallelism`` None: the runner's, asked when the first cycle plans its tasks (so a
        Spark session may still be starting while the job reads offsets and prepares tables).
        ``metrics`` is told of every committed cycle and of the failure that ends the job. ``progress_bar``
        (a rich Progress) gets one bar per topic, moved by ``progress_feed`` as the tasks read."""
        self.config = config
        self.runner = runner
        self.until_caught_up = until_caught_up
        self.stop = stop or StopSignal()
        self.bars = TopicBars(progress_bar) if progress_bar is not None else None
        self.feed = progress_feed
        self.metrics = metrics
        self.client_conf = consumer_config(config.worker, config.props, connector_name=config.name)
        self.retry = TransientRetry(config.icefloe.transient_retry_timeout_ms,
                                    config.connect.errors_retry_delay_max_ms, self.stop.event)
        catalog = self.retry.call(lambda: open_catalog(config.props), "Opening the catalog")
        self.coordinator = Coordinator(config, catalog, self.client_conf,
                                       max_tasks=self._max_tasks, split_large=until_caught_up,
                                       probe=probe_schema_needs)
        self._default_parallelism = default_parallelism
        self._cycle_records = 0  # offsets the cycle being planned covers
        self._took_over = False
        self.maintainer = Maintainer(config, self.coordinator.catalog, metrics=metrics)

    def _max_tasks(self) -> int:
        if getattr(self.runner, "bridging", False):
            return 1  # read in the driver while Spark starts: one consumer, one file per table partition
        if not self.until_caught_up or self._cycle_records <= self.config.icefloe.driver_max_records:
            return self.config.connect.tasks_max  # (a small cycle runs in the driver: no Spark to wait for)
        # A backfill runs one task per core Spark has, whatever tasks.max and the partition count: more
        # tasks would only queue behind each other, each with its own consumer, setup and files.
        parallelism = self._default_parallelism
        if parallelism is None:
            parallelism = getattr(self.runner, "default_parallelism", None)
        return parallelism or self.config.connect.tasks_max

    def run(self) -> JobSummary:
        named = CONNECTOR.set(self.config.name)  # while it runs, this thread's log lines name the connector
        try:
            if self.metrics is not None:
                self.metrics.started()
            try:
                summary = self._run()
            except Exception as exc:
                if self.metrics is not None:
                    self.metrics.failed(exc)
                raise
            if self.metrics is not None:
                self.metrics.stopped()
            return summary
        finally:
            CONNECTOR.reset(named)

    def _run(self) -> JobSummary:
        summary = JobSummary()
        if self.config.icefloe.kafka_connect_timeout_ms > 0:
            check_reachable(self.client_conf, self.config.icefloe.kafka_connect_timeout_ms)
        try:
            if self.until_caught_up:
                target = self.retry.call(self.targets, f"Reading the end offsets from {self._servers}")
                self.retry.call(lambda: self.catch_up(target, summary), "A commit cycle")
                self.maintainer.after_backfill(summary.cycles, stop=lambda: self.stop.requested)
                return summary
            interval = self.config.iceberg.commit_interval_ms / 1000
            while not self.stop.requested:
                began = time.monotonic()
                behind = self.retry.call(lambda: self.catch_up(self.targets(), summary, cycles=1),
                                         "A commit cycle")
                self.maintainer.between_cycles(summary.cycles, stop=lambda: self.stop.requested)
                if not behind:
                    self.stop.event.wait(max(0.0, interval - (time.monotonic() - began)))
        except StoppedWhileRetrying as stopped:  # nothing was in flight: a clean stop
            log.warning("%s", stopped)
        return summary

    @property
    def _servers(self) -> str:
        return f"bootstrap.servers={self.client_conf.get('bootstrap.servers')}"

    def targets(self) -> dict[TopicPartition, int]:
        """The end offsets of every partition of the connector's topics, now."""
        partitions = resolve_partitions(self.client_conf, list(self.config.connect.topics),
                                        self.config.connect.topics_regex)
        return end_offsets(self.client_conf, partitions)

    def start_offsets(self, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
        """Where each partition resumes; at the job's first start, after taking over from a Java sink
        (its complete commits finished: connector.takeover)."""
        if not self._took_over:
            take_over_if_needed(self.coordinator.catalog, self.config, self.client_conf, partitions)
            self._took_over = True  # not before: a transient failure runs it again
        return self.coordinator.start_offsets(partitions)

    def catch_up(self, target: dict[TopicPartition, int], summary: JobSummary, cycles: int | None = None) -> bool:
        """Run cycles towards ``target`` (at most ``cycles``); whether some backlog is left."""
        start = self.start_offsets(list(target))
        if self.metrics is not None:
            self.metrics.positions(start, target)
        progress = Progress(start, target, bars=self.bars)
        if self.feed is not None:
            self.feed.on_update = progress.live
        try:
            done = 0
            while not progress.caught_up and not self.stop.requested and (cycles is None or done < cycles):
                try:
                    report = self.cycle(start, target)
                finally:
                    if self.feed is not None:
                        self.feed.forget()  # the commit's figures count now (or the cycle's retry's)
                if report is None:
                    return False
                if self.metrics is not None:
                    self.metrics.cycle_done(report, target)
                summary.cycles.append(report)
                progress.advance(report)
                done += 1
                start = self.start_offsets(list(target))
            return not progress.caught_up
        finally:
            if self.feed is not None:
                self.feed.on_update = None
            progress.finish()

    def cycle(self, start: dict[TopicPartition, int], target: dict[TopicPartition, int]) -> CycleReport | None:
        """One commit cycle from ``start`` towards ``target``, bounded by ``icefloe.commit.max-records``."""
        end = bounded_end(start, target, self.config.icefloe.commit_max_records)
        self._cycle_records = sum(end[tp] - start.get(tp, end[tp]) for tp in end)
        self._expect_cycle()
        driver_rounds = getattr(self.runner, "driver_rounds", 0)
        report = self.coordinator.run_cycle(self.runner, start, end)
        if report:
            where = ""
            if getattr(self.runner, "driver_rounds", 0) > driver_rounds:
                bridged = getattr(self.runner, "bridging", False)
                where = " (in the driver while Spark starts)" if bridged else " (tasks in the driver)"
            log.info("Cycle %d: %d records%s, rows %s, %.1fs", self.coordinator.cycle_number,
                     report.records_read, where, report.rows_written, report.seconds)
        return report

    def _expect_cycle(self) -> None:
        """Tell the runner the size of the cycle about to run: a Spark session started on demand
        (``icefloe run``) starts now if the cycle is too large for the driver, and the cycle runs
        in the driver while it starts (``icefloe.driver.while-spark-starts``)."""
        expect = getattr(self.runner, "expect_cycle", None)
        if expect is not None:
            expect(self._cycle_records, self.config.icefloe)
