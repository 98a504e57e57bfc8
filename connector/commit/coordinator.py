"""The coordinator: plans a commit cycle, applies schema changes, commits every table atomically.

It runs on the driver. A cycle is: decide where each source partition resumes
(from the tables' snapshot summaries — the source of truth — then the
connector's consumer group for a migration from Kafka Connect, then
``auto.offset.reset``), run the tasks over the ranges up to the end offsets, create or evolve
tables the tasks asked for and re-run what they left unfinished, then make one
Iceberg commit per table carrying the data files of all tasks and the next
offsets, and finally mirror those offsets to the ``connect-<name>`` group.

Tasks stop reading ``iceberg.control.commit.timeout-ms`` after the cycle
started; the cycle then commits as far as they reached (a partial commit, as
the Java coordinator commits what its workers finished in time), and the next
cycle starts there.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from pyiceberg.exceptions import NoSuchTableError

from connector.api.errors import ConnectException, RetriableException
from connector.api.record import TopicPartition
from connector.commit.commit import CommitBatch, commit_tables, schema_rounds
from connector.commit.fencing import Fence, capture
from connector.commit.group_mirror import GroupMirror
from connector.commit.messages import TaskAssignment, TaskResult
from connector.commit.resume_groups import resume_groups
from connector.commit.resume_log import log_resume_points
from connector.commit.schema_changes import apply_schema_needs
from connector.config.sink_config import SinkConfig
from connector.data.write.table_writer import SchemaNeeds
from connector.faults import fault_point
from connector.iceberg.snapshot_offsets import committed_offsets, java_keys
from connector.kafka.group_offsets import read_group_offsets
from connector.kafka.offset_reset import reset_offsets
from connector.kafka.offsets import MIN_SPLIT_RECORDS, OffsetRange, plan_ranges
from connector.tolerance.dead_letters import position_properties

log = logging.getLogger(__name__)

TaskRunner = Callable[[Sequence[TaskAssignment]], list[TaskResult]]
SchemaProbe = Callable[[SinkConfig, OffsetRange], Any]  # → SchemaNeeds of the range's first records


@dataclass
class CycleReport:
    """What one commit cycle did, for logs and the CLI's summary."""

    records_read: int = 0
    bytes_read: dict[str, int] = field(default_factory=dict)  # topic → key and value bytes
    rows_written: dict[str, int] = field(default_factory=dict)
    files_written: dict[str, int] = field(default_factory=dict)
    snapshots: dict[str, int] = field(default_factory=dict)
    next_offsets: dict[TopicPartition, int] = field(default_factory=dict)
    schema_rounds: int = 0
    seconds: float = 0.0
    failed_tasks: dict[int, str] = field(default_factory=dict)  # Connect task id → trace (isolating runs only)
    # for metrics
    records_by_task: dict[str, int] = field(default_factory=dict)  # task number (of its round) → records
    bytes_written: dict[str, int] = field(default_factory=dict)  # table → data file bytes
    schema_changes: dict[str, dict[str, int]] = field(default_factory=dict)  # table → {"create"/"update": n}
    dlq_records: dict[str, int] = field(default_factory=dict)  # source topic → records sent to the DLQ
    group_mirror_lag: int = 0  # records the consumer group's offsets are off the tables' (its mirror failed)

    def count_results(self, results: Iterable[TaskResult]) -> None:
        """Per task records read and per table bytes written, from the tasks' results."""
        for result in results:
            task = result.task_id.rsplit("-", 1)[-1]  # "<connector>-<cycle>-<round>-<task>"
            self.records_by_task[task] = self.records_by_task.get(task, 0) + result.records_read
            for table, files in result.data_files.items():
                size = sum(getattr(f, "file_size_in_bytes", 0) or 0 for f in files)
                self.bytes_written[table] = self.bytes_written.get(table, 0) + size

    def count_schema_changes(self, needs: SchemaNeeds) -> None:
        for kind, tables in (("create", needs.create), ("update", needs.updates)):
            for table in tables:
                changes = self.schema_changes.setdefault(table, {})
                changes[kind] = changes.get(kind, 0) + 1


def deal_partitions(partitions: Iterable[TopicPartition], tasks: int) -> dict[TopicPartition, int]:
    """The Connect task id of each partition: partitions sorted, dealt round-robin over ``tasks``.

    Stable while the partitions stay the same, so a failed task keeps the same partitions.
    """
    return {tp: index % max(1, tasks) for index, tp in enumerate(sorted(set(partitions)))}


class Coordinator:
    """Commits all tasks' output to Iceberg, one atomic snapshot per table per cycle."""

    def __init__(self, config: SinkConfig, catalog, client_conf: dict, *, max_tasks: int | Callable[[], int],
                 split_large: bool,
                 probe: SchemaProbe | None = None):
        self.config = config
        self.probe = probe
        self.catalog = catalog
        self.client_conf = client_conf
        self._resume_logged = False  # where each partition resumes is said once, at the start
        self._max_tasks = max_tasks  # or how to learn it once the cluster is up (its parallelism)
        self.split_large = split_large
        self.cycle_number = 0
        self._last_committed: dict[TopicPartition, int] = {}
        self._committed_tables: set[str] = set()  # noted by each cycle's fence
        self._reset_positions: dict[TopicPartition, int] = {}
        # The static tables as start_offsets() read them (None: missing), for the next cycle's fence: it
        # notes the very heads its start positions came from, without loading them again.
        self._start_heads: dict[str, Any] = {}
        self.group_mirror = GroupMirror(client_conf, config.group_id, timeout=config.offset_flush_timeout_s)
        # The REST worker isolates task failures: a failed Connect task's partitions are neither
        # committed nor read again until the task is restarted (its entry removed).
        self.isolate_tasks = False
        self.failed_tasks: dict[int, str] = {}

    def max_tasks(self) -> int:
        """How many tasks a cycle may run."""
        return self._max_tasks() if callable(self._max_tasks) else self._max_tasks

    # --- where to resume --------------------------------------------------------------

    def start_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """Resume positions: the tables' offsets first, then the consumer group(s), then ``auto.offset.reset``."""
        partitions = list(partitions)
        self._start_heads = {}
        from_tables = self.table_offsets(partitions, heads=self._start_heads)
        missing = [tp for tp in partitions if tp not in from_tables]
        from_group: dict[TopicPartition, int] = {}
        by_group: dict[str, dict[TopicPartition, int]] = {}
        for group in resume_groups(self.config):  # Tabular's cg-control-<name>, then connect-<name>
            if missing:
                by_group[group] = read_group_offsets(self.client_conf, group, missing)
                from_group.update(by_group[group])
                missing = [tp for tp in missing if tp not in from_group]
        # auto.offset.reset (earliest, latest or none), resolved once per partition, as a consumer does
        self._reset_positions.update(reset_offsets(self.client_conf,
                                                   [tp for tp in missing if tp not in self._reset_positions]))
        from_log = {tp: self._reset_positions[tp] for tp in missing}
        if not self._resume_logged:  # once per job: its start
            log_resume_points(from_tables, by_group, from_log, tables=self.config.iceberg.tables,
                              reset_policy=str(self.client_conf.get("auto.offset.reset", "earliest")))
            self._resume_logged = True
        start = {**from_log, **from_group, **from_tables}
        for tp, offset in self._last_committed.items():  # cycles that wrote no files still moved on
            if tp in start:
                start[tp] = max(start[tp], offset)
        return start

    def table_offsets(self, partitions: list[TopicPartition],
                      heads: dict[str, Any] | None = None) -> dict[TopicPartition, int]:
        """Per partition, the smallest next offset among the static tables that recorded one.

        ``heads``: filled with each static table as loaded here (None when it does not exist).
        """
        wanted = set(partitions)
        lowest: dict[TopicPartition, int] = {}
        for table_name in self.config.iceberg.tables:
            try:
                table = self.catalog.load_table(table_name)
            except NoSuchTableError:
                table = None
            if heads is not None:
                heads[table_name] = table
            if table is None:
                continue
            branch = self.config.iceberg.table_config(table_name).commit_branch
            for tp, offset in committed_offsets(table, self.config.group_id, branch, java_keys(self.config)).items():
                if tp in wanted:
                    lowest[tp] = min(offset, lowest.get(tp, offset))
        return lowest

    # --- one cycle ----------------------------------------------------------------------

    def run_cycle(self, runner: TaskRunner, start: dict[TopicPartition, int],
                  end: dict[TopicPartition, int]) -> CycleReport | None:
        """Read ``start``..``end`` of every partition, then commit. None when there was nothing to read."""
        began = time.monotonic()
        task_of = deal_partitions(end, self.config.connect.tasks_max) if self.isolate_tasks else None
        failed_before = set(self.failed_tasks)
        covered = {tp: end[tp] for tp in end if tp in start and end[tp] > start[tp]
                   and (task_of is None or task_of[tp] not in failed_before)}
        if not covered:
            self.group_mirror.retry()  # an idle cycle still catches the group up
            return None
        self.cycle_number += 1
        report = CycleReport(next_offsets=dict(covered))
        heads, self._start_heads = self._start_heads, {}  # only the cycle right after start_offsets() uses them
        fence = capture(self.catalog, self.config, set(self.config.iceberg.tables) | self._committed_tables, start,
                        loaded=heads)
        self._create_missing_tables(start, covered, report)
        if task_of is None:
            groups = plan_ranges(start, end, max_tasks=self.max_tasks(), split_large=self.split_large,
                                 min_split_records=MIN_SPLIT_RECORDS)
        else:
            groups = self._by_task([OffsetRange(tp[0], tp[1], start[tp], covered[tp]) for tp in sorted(covered)],
                                   task_of)
        deadline = self._deadline(groups)
        results: list[TaskResult] = []
        owners: dict[str, int] = {}  # assignment → Connect task id (isolating runs)

        def run_round(work: list[list[OffsetRange]]) -> tuple[SchemaNeeds, list[list[OffsetRange]] | None]:
            report.schema_rounds += 1
            fault_point("cycle.before-tasks")
            assignments = self._assignments(work, report.schema_rounds, task_of, deadline)
            round_results = runner(assignments)
            if task_of is None:
                self._raise_task_errors(round_results)
            else:
                owners.update({a.task_id: task_of[a.ranges[0].key] for a in assignments if a.ranges})
            results.extend(round_results)
            needs = SchemaNeeds()
            for result in round_results:
                needs.merge(result.needs)
            report.count_schema_changes(needs)
            left = [rng for r in round_results for rng in r.unfinished]
            unfinished = [[rng] for rng in left] if task_of is None else self._by_task(left, task_of)
            return needs, unfinished or None

        schema_rounds(self.catalog, self.config, groups, run_round)
        if task_of is not None:
            results, covered = self._without_failed_tasks(results, owners, task_of, covered, report)
        covered = self._as_far_as_reached(results, start, covered, report)
        report.count_results(results)
        fault_point("cycle.after-files")
        fence.tasks_saw(result.offsets_seen for result in results)
        self._commit(CommitBatch.of(results), covered, report, fence)
        self._last_committed.update(covered)
        report.seconds = time.monotonic() - began
        return report

    def _deadline(self, groups: list[list[OffsetRange]]) -> float | None:
        """When the cycle's tasks stop reading (``iceberg.control.commit.timeout-ms`` from now).

        None when a partition's range is split over several tasks: a slice cut short would leave
        a gap below the slices after it, whose records the commit would then hold twice once the
        gap is read again. Such a backfill cycle is bounded by ``icefloe.commit.max-records``.
        """
        keys = [rng.key for group in groups for rng in group]
        if len(keys) != len(set(keys)):
            return None
        return time.time() + self.config.iceberg.commit_timeout_ms / 1000

    @staticmethod
    def _as_far_as_reached(results: list[TaskResult], start: dict[TopicPartition, int],
                           covered: dict[TopicPartition, int], report: CycleReport) -> dict[TopicPartition, int]:
        """``covered`` with each partition a task stopped early (its deadline, or Spark up while it ran in the
        driver) ending where it stopped (a partial commit; a partition it read nothing of is left out)."""
        reached = {tp: offset for result in results for tp, offset in result.cut_short.items()}
        if not reached:
            return covered
        log.info("Cycle cut short (iceberg.control.commit.timeout-ms, or Spark came up while the driver read): "
                 "committing what its tasks read, %d partition(s) short of the cycle's end (the next cycle reads "
                 "on)", len(reached))
        partial = {tp: reached.get(tp, end) for tp, end in covered.items()}
        partial = {tp: offset for tp, offset in partial.items() if offset > start[tp]}
        report.next_offsets = dict(partial)
        return partial

    @staticmethod
    def _by_task(ranges: list[OffsetRange], task_of: dict[TopicPartition, int]) -> list[list[OffsetRange]]:
        """One group of ranges per Connect task that has work, each task keeping its own partitions."""
        by_task: dict[int, list[OffsetRange]] = {}
        for rng in ranges:
            by_task.setdefault(task_of[rng.key], []).append(rng)
        return [by_task[task] for task in sorted(by_task)]

    def _without_failed_tasks(self, results: list[TaskResult], owners: dict[str, int],
                              task_of: dict[TopicPartition, int], covered: dict[TopicPartition, int],
                              report: CycleReport) -> tuple[list[TaskResult], dict[TopicPartition, int]]:
        """Drop every result of a task that failed in this cycle and keep its partitions where they were."""
        failed = {owners[r.task_id]: r.trace or r.error or "" for r in results if r.error}
        if not failed:
            return results, covered
        for task, trace in failed.items():
            log.error("Task %s-%d failed; its partitions wait for a restart: %s", self.config.name, task,
                      trace.strip().splitlines()[-1] if trace.strip() else "")
        self.failed_tasks.update(failed)
        report.failed_tasks = dict(failed)
        kept = [r for r in results if owners[r.task_id] not in failed]
        covered = {tp: offset for tp, offset in covered.items() if task_of[tp] not in failed}
        report.next_offsets = dict(covered)
        return kept, covered

    def _create_missing_tables(self, start: dict[TopicPartition, int], covered: dict[TopicPartition, int],
                               report: CycleReport) -> None:
        """Probe the first records on the driver and create missing static tables up front."""
        if self.probe is None or not self.config.iceberg.auto_create:
            return
        if all(self.catalog.table_exists(t) for t in self.config.iceberg.tables):
            return
        for tp in sorted(covered):
            try:
                needs = self.probe(self.config, OffsetRange(tp[0], tp[1], start[tp], covered[tp]))
            except ConnectException as exc:
                if not self.isolate_tasks:
                    raise
                # a bad record is its task's failure: the task meets it too and fails alone
                log.info("Probing %s[%d] failed (%s); its task will report it", tp[0], tp[1], exc)
                continue
            if needs:
                apply_schema_needs(self.catalog, self.config, needs.create, needs.updates)
                report.count_schema_changes(needs)
            if all(self.catalog.table_exists(t) for t in self.config.iceberg.tables):
                return

    def _assignments(self, groups: list[list[OffsetRange]], round_number: int,
                     task_of: dict[TopicPartition, int] | None = None,
                     deadline: float | None = None) -> list[TaskAssignment]:
        """Named ``<connector>-<cycle>-<round>-<n>``: n is the Connect task id when tasks are isolated."""
        prefix = f"{self.config.name}-{self.cycle_number}-{round_number}"
        return [
            TaskAssignment(f"{prefix}-{task_of[group[0].key] if task_of else i}", tuple(group), self.config,
                           deadline)
            for i, group in enumerate(groups)
        ]

    @staticmethod
    def _raise_task_errors(results: list[TaskResult]) -> None:
        failed = [r for r in results if r.error]
        if failed:
            more = f" (and {len(failed) - 1} more task error(s))" if len(failed) > 1 else ""
            error = RetriableException if all(r.retriable for r in failed) else ConnectException
            raise error(f"{failed[0].error}{more}")

    # --- commit ---------------------------------------------------------------------------

    def _commit(self, batch: CommitBatch, covered: dict[TopicPartition, int], report: CycleReport,
                fence: Fence | None = None) -> None:
        report.records_read = batch.records_read
        report.bytes_read = dict(batch.bytes_read)
        report.rows_written = dict(batch.rows)
        report.dlq_records = dict(batch.dlq_records)
        # the dead letter queue's position after the tasks' DLQ writes, recorded with the offsets
        dlq_position = position_properties(self.config, self.client_conf, self.catalog, covered)

        def committed(table_name: str, table_files: list) -> None:
            self._committed_tables.add(table_name)
            report.files_written[table_name] = len(table_files)
            fault_point("cycle.between-table-commits")

        report.snapshots.update(commit_tables(self.catalog, self.config, batch.tables(), batch.files, covered,
                                              dlq_position, valid_through=batch.valid_through(covered),
                                              changes=batch.changes, fence=fence, after_each=committed))
        fault_point("cycle.before-group-mirror")
        self._commit_group(covered, report)

    def _commit_group(self, covered: dict[TopicPartition, int], report: CycleReport) -> None:
        # The table already holds the truth; the group mirror is for lag tooling and migration.
        self.group_mirror.mirror(covered)
        report.group_mirror_lag = self.group_mirror.lag

