"""A sink task: the work of one Spark partition.

``run_task`` reads its offset ranges from Kafka, decodes and transforms the
records, and hands them to a :class:`SinkWriter`. It returns a
:class:`TaskResult` (the commit message) and never commits anything itself:
committing is the coordinator's job on the driver.

Two paths produce the same rows: the per-record path (converters → SMT chain
→ router → record converter), and a columnar path used when the value is
schemaless JSON, there are no SMTs and every record goes to every table, where
whole Arrow columns are decoded at once.
"""

from __future__ import annotations

import itertools
import logging

import pyarrow.compute as pc

from connector.api.errors import ConnectException
from connector.channel.messages import TaskAssignment, TaskResult
from connector.config.sink_config import SinkConfig
from connector.data.catalog import load_catalog
from connector.data.sink_writer import SchemaNeeds, SinkWriter
from connector.kafka.client_config import consumer_config
from connector.kafka.offsets import OffsetRange
from connector.kafka.range_reader import read_range
from connector.records import RecordDecoder
from smt.chain import TransformationChain

log = logging.getLogger(__name__)

READ_BATCH_SIZE = 50_000


class TaskPipeline:
    """Decode → transform → route → convert → buffer, for raw Arrow batches of one task.

    Shared by :class:`SinkTask` (``icefloe run``) and the Spark Data Source
    writer: whoever feeds it batches decides what to do when a batch reports
    :class:`SchemaNeeds` (stop and ask the coordinator, or apply them inline).
    """

    def __init__(self, config: SinkConfig, task_id: str):
        self.config = config
        self.decoder = RecordDecoder.from_config(config)
        self.chain = TransformationChain.from_config(config.props)
        self.catalog = load_catalog(config.props)
        self.writer = SinkWriter(config, self.catalog, task_id)
        self.columnar = (
            self.decoder.schemaless_json_value
            and not config.connect.raw.get("transforms", "").strip()
            and self.writer.router.routes_everything_everywhere
        )

    def process(self, batch) -> SchemaNeeds:
        """Convert and buffer one raw batch; nothing is buffered if the batch needs a schema change."""
        if self.columnar:
            return self.writer.write_json_values(batch)
        records = []
        for record in self.decoder.decode_batch(batch):
            transformed = self.chain.apply(record)
            if transformed is not None:
                records.append(transformed)
        return self.writer.write_records(records)

    def forget_tables(self, names) -> None:
        """Reload these tables on next use (after their schema changed)."""
        for name in names:
            self.writer.tables.pop(name, None)

    def close(self):
        """Flush buffers: (data files per table, rows written per table)."""
        return self.writer.close()


class SinkTask:
    """Runs one assignment: read its ranges and feed the pipeline, stopping at a schema need."""

    def __init__(self, assignment: TaskAssignment):
        self.assignment = assignment
        config = SinkConfig.parse(assignment.props, assignment.worker)
        self.pipeline = TaskPipeline(config, assignment.task_id)
        self.client_conf = consumer_config(config.worker, config.props, connector_name=config.name)
        self.result = TaskResult(task_id=assignment.task_id)

    def run(self) -> TaskResult:
        ranges = list(self.assignment.ranges)
        for index, rng in enumerate(ranges):
            resume_at = self._read(rng)
            if resume_at is not None:
                self.result.unfinished = [OffsetRange(rng.topic, rng.partition, resume_at, rng.end)]
                self.result.unfinished += ranges[index + 1:]
                break
        files, rows = self.pipeline.close()
        self.result.data_files, self.result.records_written = files, rows
        return self.result

    def _read(self, rng: OffsetRange) -> int | None:
        """Process one range; the offset to resume from if a schema change is needed first."""
        tp = (rng.topic, rng.partition)
        for batch in read_range(self.client_conf, rng, batch_size=READ_BATCH_SIZE):
            if batch.num_rows == 0:
                continue
            first_offset = batch.column("offset")[0].as_py()
            needs = self.pipeline.process(batch)
            if needs:
                self._record_needs(needs)
                self.result.next_offsets[tp] = first_offset
                return first_offset
            self._track(tp, batch)
        self.result.next_offsets[tp] = rng.end
        return None

    def _track(self, tp, batch) -> None:
        self.result.records_read += batch.num_rows
        timestamps = batch.column("timestamp")
        newest = pc.max(timestamps).as_py()
        if timestamps.null_count or newest is None:
            self.result.max_timestamps[tp] = None
        elif self.result.max_timestamps.get(tp, 0) is not None:
            self.result.max_timestamps[tp] = max(self.result.max_timestamps.get(tp, newest), newest)

    def _record_needs(self, needs: SchemaNeeds) -> None:
        self.result.create_requests.update(needs.create)
        for table, updates in needs.updates.items():
            current = self.result.schema_updates.get(table)
            self.result.schema_updates[table] = updates if current is None else current.merge(updates)


def run_task(assignment: TaskAssignment) -> TaskResult:
    """Entry point on the executor. Connect errors come back in the result, not as a crash."""
    try:
        return SinkTask(assignment).run()
    except ConnectException as exc:
        log.error("Task %s failed: %s", assignment.task_id, exc)
        return TaskResult(task_id=assignment.task_id, error=f"{type(exc).__name__}: {exc}")


def run_tasks_locally(assignments) -> list[TaskResult]:
    """Run assignments in this process (tests and tiny jobs); same results as on Spark."""
    return [run_task(a) for a in itertools.chain(assignments)]
