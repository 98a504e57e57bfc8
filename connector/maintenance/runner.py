"""Maintenance rounds: every table the connector writes, step by step, within a time budget.

A round goes over the tables (the static ones and those the job committed
to), and for each runs four steps: compaction, manifest rewrite, expiry
(snapshots, the files only they referenced, old metadata files), orphan cleanup. No step starts once
the budget is spent, and a compaction stops between groups; the next round
starts at the table and step where this one stopped, so every table gets its
turn even when one round cannot do everything. In continuous mode the job asks
for a round between commit cycles, at most every ``icefloe.maintenance.interval-ms``;
``--until-caught-up`` and ``icefloe maintain`` run one round without a budget.

Maintenance never fails the job: a step that fails is logged and the round
goes on with the next table (the table is left as it was, or with the
maintenance commit done).
"""

from __future__ import annotations

import logging
import time
from typing import Callable, Collection, Iterable, Mapping, Protocol

from pyiceberg.exceptions import NoSuchTableError
from pyiceberg.table.snapshots import TOTAL_DATA_FILES, TOTAL_FILE_SIZE

from connector.config.sink_config import SinkConfig
from connector.maintenance.compaction import compact
from connector.maintenance.expiry import expire
from connector.maintenance.manifests import rewrite_manifests
from connector.maintenance.orphans import delete_orphans
from connector.maintenance.policy import table_policy
from connector.maintenance.status import MaintenanceReport, MaintenanceStatus, StepFailure, TableMaintenance
from connector.tolerance.transient import transient

log = logging.getLogger(__name__)


class RoundObserver(Protocol):
    """Told what each round did (the job's metrics: ``connector.metrics.JobMetrics``)."""

    def maintenance_done(self, report: MaintenanceReport) -> None: ...


STEPS = ("compact", "manifests", "expire", "orphans")


class Maintainer:
    """Runs maintenance rounds for one connector's tables."""

    def __init__(self, config: SinkConfig, catalog, *, metrics: RoundObserver | None = None,
                 status: MaintenanceStatus | None = None, clock: Callable[[], float] = time.monotonic):
        self.config = config
        self.keys = config.icefloe.maintenance
        self.catalog = catalog
        self.metrics = metrics
        self.clock = clock
        self.tables: list[str] = list(config.iceberg.tables)
        self.cursor = (0, 0)  # (table index, step index) where the next round starts
        self.last_round: float | None = None
        self.state = "idle"
        self.last_report: MaintenanceReport | None = None
        self._cycles_seen = 0
        self.failures: list[StepFailure] = []  # steps that failed in the last round
        self.status: MaintenanceStatus | None = None
        if status is not None:
            self.watch(status)

    def watch(self, status: MaintenanceStatus) -> None:
        """Keep ``status`` (the REST worker's view of this connector's maintenance) up to date."""
        self.status = status
        status.attach(self.enabled, self.tables)

    @property
    def enabled(self) -> bool:
        return self.keys.enabled

    def note_tables(self, tables: Iterable[str]) -> None:
        for table in tables:
            if table not in self.tables:
                self.tables.append(table)

    def between_cycles(self, cycles: list, *, stop: Callable[[], bool] = lambda: False) -> MaintenanceReport | None:
        """A round within the budget if one is due (``cycles``: the job's cycle reports so far)."""
        for report in cycles[self._cycles_seen:]:
            self.note_tables(report.snapshots)
        self._cycles_seen = len(cycles)
        if not self.enabled:
            return None
        now = self.clock()
        if self.last_round is not None and now - self.last_round < self.keys.interval_ms / 1000:
            return None
        return self.run_round(budget_seconds=self.keys.budget_ms / 1000, stop=stop)

    def after_backfill(self, cycles: list, *, stop: Callable[[], bool] = lambda: False) -> MaintenanceReport | None:
        """The round at the end of ``--until-caught-up``: without a budget (no commit is waiting).

        The files the backfill's cycles just wrote at a backfill task's size are kept as written
        (:mod:`.compaction`): the user would wait at exit for the whole backfill to be written again.
        """
        self.note_tables(table for report in cycles for table in report.snapshots)
        if not self.enabled or stop():
            return None
        written: dict[str, set[int]] = {}
        for report in cycles:
            for table, snapshot in report.snapshots.items():
                written.setdefault(table, set()).add(snapshot)
        report = self.run_round(stop=stop, backfill_snapshots=written)
        log.info("Maintenance after the backfill: %.1fs", report.seconds)  # apart from the cycles' times
        return report

    def run_round(self, budget_seconds: float | None = None, *, stop: Callable[[], bool] = lambda: False,
                  on_step: Callable[[str, str], None] | None = None,
                  backfill_snapshots: Mapping[str, Collection[int]] | None = None) -> MaintenanceReport:
        """One round from the cursor over every table; ``budget_seconds`` None: until done.

        ``backfill_snapshots``: per table, the data commits of a backfill that just ended (:meth:`after_backfill`).
        """
        began = self.clock()
        self.last_round = began
        deadline = float("inf") if budget_seconds is None else began + budget_seconds
        report = MaintenanceReport()
        self.failures = []
        self.state = "running"
        if self.status is not None:
            self.status.round_started(self.tables)
        stopped_at: str | None = None  # the table where the budget or a stop cut the round short
        try:
            stopped_at = self._steps(deadline, report, stop, on_step, backfill_snapshots or {})
            for table_name, done in report.tables.items():
                self._describe(table_name, done)
        finally:  # also when describing raised: the status must not show a round running forever
            self.state = "idle"
            report.seconds = self.clock() - began
            if self.status is not None:
                self.status.round_done(report, list(self.failures), stopped_at)
        self.last_report = report
        if self.metrics is not None:
            self.metrics.maintenance_done(report)
        return report

    def _steps(self, deadline: float, report: MaintenanceReport, stop: Callable[[], bool],
               on_step: Callable[[str, str], None] | None, backfill: Mapping[str, Collection[int]]) -> str | None:
        """The round's steps from the cursor; the table where it stopped short, None when it went round."""
        steps = [(t, s) for t in range(len(self.tables)) for s in range(len(STEPS))]
        start = steps.index(self.cursor) if self.cursor in steps else 0
        for table_index, step_index in steps[start:] + steps[:start]:
            table_name = self.tables[table_index]
            if stop() or self.clock() >= deadline:
                self.cursor = (table_index, step_index)
                report.finished = False
                return table_name
            if on_step is not None:
                on_step(table_name, STEPS[step_index])
            if self.status is not None:
                self.status.step_started(table_name, STEPS[step_index])
            if self._step(table_name, STEPS[step_index], deadline, report, backfill.get(table_name, ())):
                # a compaction the budget cut short: the next round starts there
                self.cursor = (table_index, step_index)
                report.finished = False
                return table_name
        self.cursor = (0, 0)
        return None

    def _step(self, table_name: str, step: str, deadline: float, report: MaintenanceReport,
              backfill_snapshots: Collection[int] = ()) -> bool:
        """Run one step on one table; whether it left work for the next round."""
        try:
            table = self.catalog.load_table(table_name)
        except NoSuchTableError:
            return False
        except Exception as exc:  # noqa: BLE001 - maintenance must never fail the job (the catalog unreachable)
            log.exception("Maintenance of %s skipped: the table could not be loaded", table_name)
            self.failures.append(StepFailure.of(table_name, step, exc))
            return False
        policy = table_policy(table.properties, self.keys)
        if not policy.enabled:
            return False
        done = report.tables.setdefault(table_name, TableMaintenance())
        try:
            if step == "compact":
                done.compaction = compact(self.catalog, self.config, table_name, policy, deadline,
                                          clock=self.clock, backfill_snapshots=backfill_snapshots)
                return done.compaction.pending > 0
            if step == "manifests":
                done.manifests = rewrite_manifests(self.catalog, self.config, table_name, policy)
            elif step == "expire":
                done.expiry = expire(self.catalog, table_name, policy, self.config.group_id)
            else:
                done.orphans_deleted = delete_orphans(self.catalog, table_name, policy.orphan_min_age_ms)
        except Exception as exc:  # noqa: BLE001 - maintenance must never fail the job
            log.exception("Maintenance step %s of %s failed; the table is left as it is", step, table_name)
            self.failures.append(StepFailure.of(table_name, step, exc))
        return False

    def _describe(self, table_name: str, done: TableMaintenance) -> None:
        try:
            table = self.catalog.load_table(table_name)
        except Exception as exc:
            if not isinstance(exc, NoSuchTableError) and not transient(exc):
                raise
            log.info("No maintenance figures for %s: %s", table_name, exc)
            return
        snapshot = table.current_snapshot()
        summary = snapshot.summary if snapshot is not None and snapshot.summary else None
        done.data_files = int(summary.get(TOTAL_DATA_FILES) or 0) if summary else 0
        done.total_file_size = int(summary.get(TOTAL_FILE_SIZE) or 0) if summary else 0
        done.snapshots = len(table.metadata.snapshots)
        rewritten = done.compaction.bytes_rewritten if done.compaction else 0
        log.info("Maintenance of %s: %d data file(s), %.0f bytes on average, %d snapshot(s), "
                 "%d byte(s) rewritten, %d snapshot(s) expired, %d orphan file(s) deleted", table_name,
                 done.data_files, done.average_file_size, done.snapshots, rewritten,
                 done.expiry.expired if done.expiry else 0, done.orphans_deleted)
