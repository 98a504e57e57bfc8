"""The task: read its offset ranges, feed the pipeline, report a :class:`TaskResult`.

``run_task`` runs on a Spark executor (one Spark partition per assignment). It
never commits anything: committing is the coordinator's job on the driver.
When a batch needs a table created or evolved, the task stops there and
reports the needs and the ranges it left unfinished (from that batch on); the
coordinator applies the change and runs those ranges again.

Which offsets each table already holds comes from the tables' snapshot
summaries (``connector.iceberg.snapshot_offsets``); the pipeline drops the records
below them, and the result says which offsets those were (``offsets_seen``:
the fence checks a table the cycle did not know at its start against them).
"""

from __future__ import annotations

import logging
import time
import traceback
from typing import Callable, Iterable

import pyarrow as pa

from connector.api.errors import ConnectException
from connector.commit.messages import TaskAssignment, TaskResult
from connector.config.sink_config import SinkConfig
from connector.data.pipeline import TaskPipeline
from connector.data.write.table_writer import CommittedOffsets, SchemaNeeds
from connector.faults import fault_point
from connector.iceberg.snapshot_offsets import committed_offsets, java_keys
from connector.kafka.client_config import consumer_config
from connector.kafka.offsets import OffsetRange
from connector.kafka.range_reader import RangeReader, read_range
from connector.kafka.read_ahead import ReadAhead
from connector.progress_feed import TaskProgress
from connector.tolerance.transient import transient

log = logging.getLogger(__name__)

READ_BATCH_SIZE = 50_000

#: Whether a task should stop reading now (at a batch boundary), besides its deadline
StopEarly = Callable[[], bool]
PROBE_RECORDS = 1_000


def table_offsets(config: SinkConfig) -> CommittedOffsets:
    """How the pipeline learns a table's committed offsets: its snapshot summary on the commit branch."""
    def lookup(table_name: str, table) -> dict:
        return committed_offsets(table, config.group_id, config.iceberg.table_config(table_name).commit_branch,
                                 java_keys(config))

    return lookup


def new_pipeline(config: SinkConfig, task_id: str, *, noted: Callable[[str, dict], None] | None = None,
                 **options) -> TaskPipeline:
    """A task pipeline whose tables drop what their snapshots already hold.

    ``noted(table_name, offsets)``: told the offsets each time the pipeline loads a table.
    """
    lookup = table_offsets(config)
    if noted is None:
        return TaskPipeline(config, task_id, committed_offsets=lookup, **options)

    def noting(table_name: str, table) -> dict:
        offsets = lookup(table_name, table)
        noted(table_name, offsets)
        return offsets

    return TaskPipeline(config, task_id, committed_offsets=noting, **options)


class SinkTask:
    """Runs one assignment: read its ranges and feed the pipeline, stopping at a schema need."""

    def __init__(self, assignment: TaskAssignment, stop_early: StopEarly | None = None):
        """``stop_early``: asked after each batch, as the deadline is (a task run in the driver while
        Spark starts stops once Spark is up: :mod:`connector.spark.runner`)."""
        self.assignment = assignment
        self.stop_early = stop_early
        config = assignment.config
        self.result = TaskResult(task_id=assignment.task_id)
        self.progress = TaskProgress(assignment.task_id)  # the bar moves as the task reads
        # which offsets the task's records were skipped below: the fence checks a table the cycle did
        # not know at its start against them
        partitions = [rng.key for rng in assignment.ranges]
        self.pipeline = new_pipeline(config, assignment.task_id,
                                     noted=lambda table_name, offsets: self.result.saw(table_name, offsets, partitions))
        self.client_conf = consumer_config(config.worker, config.props, connector_name=config.name)

    def run(self) -> TaskResult:
        ranges = list(self.assignment.ranges)
        with RangeReader(self.client_conf, batch_size=READ_BATCH_SIZE) as reader:  # one consumer for all ranges
            for index, rng in enumerate(ranges):
                resume_at = self._read(reader, rng)
                if resume_at is not None:
                    self.result.unfinished = [OffsetRange(rng.topic, rng.partition, resume_at, rng.end)]
                    self.result.unfinished += ranges[index + 1:]
                    break
        written = self.pipeline.close()
        self.result.data_files, self.result.records_written = written.data_files, written.records_written
        self.result.changes = written.changes
        if self.pipeline.dead_letters is not None:
            self.result.dlq_records = dict(self.pipeline.errant_counts)
        return self.result

    def _read(self, reader: RangeReader, rng: OffsetRange) -> int | None:
        """Process one range; the offset to resume from if a schema change is needed first.

        The next batch is read while this one is processed (:class:`ReadAhead`).
        """
        with ReadAhead(reader.read(rng), name=f"read-ahead {rng.topic}[{rng.partition}]") as batches:
            return self._process(batches, rng)

    def _process(self, batches: Iterable[pa.RecordBatch], rng: OffsetRange) -> int | None:
        """Feed ``batches`` of ``rng`` to the pipeline; the offset to resume from if a schema change is needed.

        Past the assignment's deadline (or told to stop early) the range is left after
        its first batch (or the batch in hand): every range gets some progress each
        cycle, so a partition with a large backlog cannot starve the ones after it.
        """
        for batch in batches:
            if batch.num_rows == 0:
                continue
            needs = self.pipeline.process(batch)
            if needs:
                first_offset = batch.column("offset")[0].as_py()
                self.result.needs.merge(needs)
                self.result.next_offsets[rng.key] = first_offset
                return first_offset
            self.result.track(batch)
            self.progress.sent(self.result.next_offsets, self.result.bytes_read)
            fault_point("task.mid-batch")
            if self._stop_reading():
                reached = self.result.next_offsets[rng.key]
                if reached < rng.end:
                    self.result.cut_short[rng.key] = reached
                    return None
        self.result.next_offsets[rng.key] = rng.end  # the range's end, past any gaps (compaction, markers)
        return None

    def _stop_reading(self) -> bool:
        """Past the assignment's deadline, or told to stop early."""
        deadline = self.assignment.deadline
        if deadline is not None and time.time() >= deadline:
            return True
        return self.stop_early is not None and self.stop_early()


def run_task(assignment: TaskAssignment, stop_early: StopEarly | None = None) -> TaskResult:
    """Entry point on the executor. Connect errors, and faults of a service the task uses (object
    storage, the catalog, the registry: :func:`connector.tolerance.transient.transient`), come back in the
    result, not as a crash: the coordinator fails the cycle, or runs it again when every failure was
    transient."""
    try:
        return SinkTask(assignment, stop_early).run()
    except Exception as exc:
        retriable = transient(exc)
        if not retriable and not isinstance(exc, ConnectException):
            raise
        log.error("Task %s failed: %s", assignment.task_id, exc)
        return TaskResult(task_id=assignment.task_id, error=f"{type(exc).__name__}: {exc}",
                          trace=traceback.format_exc(), retriable=retriable)


def run_task_isolated(assignment: TaskAssignment, stop_early: StopEarly | None = None) -> TaskResult:
    """``run_task`` for a worker that isolates task failures: any exception comes back in the result.

    One failing task then fails only itself, not the Spark job that runs its siblings.
    """
    try:
        return run_task(assignment, stop_early)
    except Exception as exc:  # noqa: BLE001 - reported as the task's failure, with its trace
        log.error("Task %s failed: %s", assignment.task_id, exc)
        return TaskResult(task_id=assignment.task_id, error=f"{type(exc).__name__}: {exc}",
                          trace=traceback.format_exc())


def probe_schema_needs(config: SinkConfig, rng: OffsetRange) -> SchemaNeeds:
    """Run the pipeline over the first records of ``rng`` on the driver, writing nothing.

    Lets the coordinator create a missing table before the tasks start, so that
    no task has to stop at its first batch and be re-run just for that.
    """
    pipeline = new_pipeline(config, "probe")
    client_conf = consumer_config(config.worker, config.props, connector_name=config.name)
    sample = OffsetRange(rng.topic, rng.partition, rng.start, min(rng.end, rng.start + PROBE_RECORDS))
    for batch in read_range(client_conf, sample, batch_size=PROBE_RECORDS):
        needs = pipeline.process(batch)
        if needs:
            return needs
    return SchemaNeeds()
