"""The job loop: run commit cycles once (``--until-caught-up``) or continuously until stopped.

Continuous mode starts a cycle every ``iceberg.control.commit.interval-ms``;
each cycle reads whatever the partitions hold at its start. SIGTERM or Ctrl-C
asks the loop to stop: a cycle in flight finishes and commits first, a second
Ctrl-C aborts at once (nothing uncommitted is ever visible, so an abort loses
no data either: the next run resumes from the tables).
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from dataclasses import dataclass, field

from connector.channel.coordinator import Coordinator, CycleReport, TaskRunner
from connector.channel.worker import probe_schema_needs
from connector.config.sink_config import SinkConfig
from connector.data.catalog import load_catalog
from connector.kafka.client_config import consumer_config
from connector.kafka.offsets import end_offsets
from connector.kafka.topics import resolve_partitions

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

    def __init__(self, config: SinkConfig, runner: TaskRunner, *, default_parallelism: int = 1,
                 until_caught_up: bool = False, stop: StopSignal | None = None):
        self.config = config
        self.runner = runner
        self.until_caught_up = until_caught_up
        self.stop = stop or StopSignal()
        self.client_conf = consumer_config(config.worker, config.props, connector_name=config.name)
        max_tasks = config.connect.tasks_max
        if until_caught_up:  # a backfill is not capped by tasks.max nor by the partition count
            max_tasks = max(max_tasks, default_parallelism)
        self.coordinator = Coordinator(config, load_catalog(config.props), self.client_conf,
                                       max_tasks=max_tasks, split_large=until_caught_up,
                                       probe=probe_schema_needs)

    def run(self) -> JobSummary:
        summary = JobSummary()
        if self.until_caught_up:
            report = self.cycle()
            if report:
                summary.cycles.append(report)
            return summary
        interval = self.config.iceberg.commit_interval_ms / 1000
        while not self.stop.requested:
            began = time.monotonic()
            report = self.cycle()
            if report:
                summary.cycles.append(report)
            self.stop.event.wait(max(0.0, interval - (time.monotonic() - began)))
        return summary

    def cycle(self) -> CycleReport | None:
        partitions = resolve_partitions(self.client_conf, list(self.config.connect.topics),
                                        self.config.connect.topics_regex)
        end = end_offsets(self.client_conf, partitions)
        start = self.coordinator.start_offsets(partitions)
        report = self.coordinator.run_cycle(self.runner, start, end)
        if report:
            log.info("Cycle %d: %d records, rows %s, %.1fs", self.coordinator.cycle_number,
                     report.records_read, report.rows_written, report.seconds)
        return report
