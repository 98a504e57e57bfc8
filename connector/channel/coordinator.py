"""The coordinator: plans a commit cycle, applies schema changes, commits every table atomically.

It runs on the driver. A cycle is: decide where each source partition resumes
(from the tables' snapshot summaries — the source of truth — then the
connector's consumer group for a migration from Kafka Connect, then the log
start), run the tasks over the ranges up to the end offsets, create or evolve
tables the tasks asked for and re-run what they left unfinished, then make one
Iceberg commit per table carrying the data files of all tasks and the next
offsets, and finally mirror those offsets to the ``connect-<name>`` group.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from pyiceberg.exceptions import NoSuchTableError

from connector.api.errors import ConnectException
from connector.channel.messages import TaskAssignment, TaskResult
from connector.channel.offsets import committed_offsets, summary_properties
from connector.config.sink_config import SinkConfig
from connector.channel.schema_changes import apply_schema_needs
from connector.kafka.group_offsets import commit_group_offsets, read_group_offsets
from connector.kafka.offsets import OffsetRange, earliest_offsets, plan_ranges

log = logging.getLogger(__name__)

TopicPartition = tuple[str, int]
TaskRunner = Callable[[Sequence[TaskAssignment]], list[TaskResult]]
SchemaProbe = Callable[[SinkConfig, OffsetRange], Any]  # → SchemaNeeds of the range's first records
MAX_SCHEMA_ROUNDS = 20
MIN_SPLIT_RECORDS = 50_000  # a backfill splits one partition's range only into tasks at least this big


@dataclass
class CycleReport:
    """What one commit cycle did, for logs and the CLI's summary."""

    records_read: int = 0
    rows_written: dict[str, int] = field(default_factory=dict)
    files_written: dict[str, int] = field(default_factory=dict)
    snapshots: dict[str, int] = field(default_factory=dict)
    next_offsets: dict[TopicPartition, int] = field(default_factory=dict)
    schema_rounds: int = 0
    seconds: float = 0.0


class Coordinator:
    """Commits all tasks' output to Iceberg, one atomic snapshot per table per cycle."""

    def __init__(self, config: SinkConfig, catalog, client_conf: dict, *, max_tasks: int, split_large: bool,
                 probe: SchemaProbe | None = None):
        self.config = config
        self.probe = probe
        self.catalog = catalog
        self.client_conf = client_conf
        self.max_tasks = max_tasks
        self.split_large = split_large
        self.cycle_number = 0
        self._last_committed: dict[TopicPartition, int] = {}

    # --- where to resume --------------------------------------------------------------

    def start_offsets(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """Resume positions: the tables' offsets first, then the consumer group, then the log start."""
        partitions = list(partitions)
        from_tables = self._table_offsets(partitions)
        missing = [tp for tp in partitions if tp not in from_tables]
        from_group = read_group_offsets(self.client_conf, self.config.group_id, missing) if missing else {}
        missing = [tp for tp in missing if tp not in from_group]
        from_log = earliest_offsets(self.client_conf, missing) if missing else {}
        start = {**from_log, **from_group, **from_tables}
        for tp, offset in self._last_committed.items():  # cycles that wrote no files still moved on
            if tp in start:
                start[tp] = max(start[tp], offset)
        return start

    def _table_offsets(self, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
        """Per partition, the smallest next offset among the static tables that recorded one."""
        wanted = set(partitions)
        lowest: dict[TopicPartition, int] = {}
        for table_name in self.config.iceberg.tables:
            try:
                table = self.catalog.load_table(table_name)
            except NoSuchTableError:
                continue
            branch = self.config.iceberg.table_config(table_name).commit_branch
            for tp, offset in committed_offsets(table, self.config.group_id, branch).items():
                if tp in wanted:
                    lowest[tp] = min(offset, lowest.get(tp, offset))
        return lowest

    # --- one cycle ----------------------------------------------------------------------

    def run_cycle(self, runner: TaskRunner, start: dict[TopicPartition, int],
                  end: dict[TopicPartition, int]) -> CycleReport | None:
        """Read ``start``..``end`` of every partition, then commit. None when there was nothing to read."""
        began = time.monotonic()
        covered = {tp: end[tp] for tp in end if tp in start and end[tp] > start[tp]}
        if not covered:
            return None
        self.cycle_number += 1
        report = CycleReport(next_offsets=dict(covered))
        self._create_missing_tables(start, covered)
        groups = plan_ranges(start, end, max_tasks=self.max_tasks, split_large=self.split_large,
                             min_split_records=MIN_SPLIT_RECORDS)
        results: list[TaskResult] = []
        while groups:
            report.schema_rounds += 1
            if report.schema_rounds > MAX_SCHEMA_ROUNDS:
                raise ConnectException(f"Gave up after {MAX_SCHEMA_ROUNDS} rounds of schema changes in one cycle")
            round_results = runner(self._assignments(groups, report.schema_rounds))
            self._raise_task_errors(round_results)
            self._apply_schema_changes(round_results)
            results.extend(round_results)
            groups = [[rng] for r in round_results for rng in r.unfinished]
        self._commit(results, covered, report)
        self._last_committed.update(covered)
        report.seconds = time.monotonic() - began
        return report

    def _create_missing_tables(self, start: dict[TopicPartition, int], covered: dict[TopicPartition, int]) -> None:
        """Probe the first records on the driver and create missing static tables up front."""
        if self.probe is None or not self.config.iceberg.auto_create:
            return
        if all(self.catalog.table_exists(t) for t in self.config.iceberg.tables):
            return
        for tp in sorted(covered):
            needs = self.probe(self.config, OffsetRange(tp[0], tp[1], start[tp], covered[tp]))
            if needs:
                apply_schema_needs(self.catalog, self.config, needs.create, needs.updates)
            if all(self.catalog.table_exists(t) for t in self.config.iceberg.tables):
                return

    def _assignments(self, groups: list[list[OffsetRange]], round_number: int) -> list[TaskAssignment]:
        prefix = f"{self.config.name}-{self.cycle_number}-{round_number}"
        return [
            TaskAssignment(f"{prefix}-{i}", tuple(group), self.config.props, self.config.worker)
            for i, group in enumerate(groups)
        ]

    @staticmethod
    def _raise_task_errors(results: list[TaskResult]) -> None:
        errors = [r.error for r in results if r.error]
        if errors:
            more = f" (and {len(errors) - 1} more task error(s))" if len(errors) > 1 else ""
            raise ConnectException(errors[0] + more)

    def _apply_schema_changes(self, results: list[TaskResult]) -> None:
        creates, updates = {}, {}
        for result in results:
            for table, schema in result.create_requests.items():
                creates.setdefault(table, schema)
            for table, update in result.schema_updates.items():
                updates[table] = update if table not in updates else updates[table].merge(update)
        apply_schema_needs(self.catalog, self.config, creates, updates)

    # --- commit ---------------------------------------------------------------------------

    def _commit(self, results: list[TaskResult], covered: dict[TopicPartition, int], report: CycleReport) -> None:
        files: dict[str, list] = {}
        for result in results:
            report.records_read += result.records_read
            for table, table_files in result.data_files.items():
                files.setdefault(table, []).extend(table_files)
            for table, rows in result.records_written.items():
                report.rows_written[table] = report.rows_written.get(table, 0) + rows
        commit_id = str(uuid.uuid4())
        valid_through = _valid_through(results, covered)
        for table_name, table_files in sorted(files.items()):
            report.snapshots[table_name] = self._commit_table(table_name, table_files, covered, commit_id,
                                                              valid_through)
            report.files_written[table_name] = len(table_files)
        self._commit_group(covered)

    def _commit_table(self, table_name: str, data_files: list, covered: dict[TopicPartition, int],
                      commit_id: str, valid_through: int | None) -> int:
        return commit_table(self.catalog, self.config, table_name, data_files, covered, commit_id, valid_through)

    def _commit_group(self, covered: dict[TopicPartition, int]) -> None:
        # The table already holds the truth; the group mirror is for lag tooling and migration.
        try:
            commit_group_offsets(self.client_conf, self.config.group_id, covered)
        except Exception as exc:  # noqa: BLE001 - a failed mirror must not fail a committed cycle
            log.warning("Could not commit offsets to consumer group %s: %s", self.config.group_id, exc)


def commit_table(catalog, config: SinkConfig, table_name: str, data_files: list,
                 covered: dict[TopicPartition, int], commit_id: str, valid_through: int | None,
                 extra_properties: dict[str, str] | None = None) -> int:
    """One fast append of ``data_files`` with the offsets in the snapshot summary; the new snapshot's id.

    Also used by the Spark sink's driver-side commit (connector/spark/iceberg_sink.py).
    """
    table = catalog.load_table(table_name)
    branch = config.iceberg.table_config(table_name).commit_branch or "main"
    previous = committed_offsets(table, config.group_id, branch)
    offsets = {**previous, **covered}
    props = summary_properties(offsets, config.group_id, commit_id, valid_through)
    props.update(extra_properties or {})
    with table.transaction() as transaction:
        with transaction.update_snapshot(snapshot_properties=props, branch=branch).fast_append() as append:
            for data_file in data_files:
                append.append_data_file(data_file)
    snapshot = table.current_snapshot() if branch == "main" else table.snapshot_by_name(branch)
    log.info("Committed %d file(s) to %s (snapshot %s)", len(data_files), table_name, snapshot.snapshot_id)
    return snapshot.snapshot_id


def _valid_through(results: list[TaskResult], covered: dict[TopicPartition, int]) -> int | None:
    """Min over partitions of the max record timestamp; None if any partition lacks timestamps."""
    newest: dict[TopicPartition, int | None] = {}
    for result in results:
        for tp, ts in result.max_timestamps.items():
            if tp in newest and (newest[tp] is None or ts is None):
                newest[tp] = None
            else:
                newest[tp] = ts if tp not in newest else max(newest[tp], ts)
    if set(newest) != set(covered) or any(ts is None for ts in newest.values()):
        return None
    return min(newest.values()) if newest else None
