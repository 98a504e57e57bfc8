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


class SinkTask:
    """Runs one assignment: read → decode → transform → route → convert → write."""

    def __init__(self, assignment: TaskAssignment):
        self.assignment = assignment
        self.config = SinkConfig.parse(assignment.props, assignment.worker)
        self.decoder = RecordDecoder.from_config(self.config)
        self.chain = TransformationChain.from_config(self.config.props)
        self.writer = SinkWriter(self.config, load_catalog(self.config.props), assignment.task_id)
        self.client_conf = consumer_config(self.config.worker, self.config.props, connector_name=self.config.name)
        self.columnar = (
            self.decoder.schemaless_json_value
            and not self.config.connect.raw.get("transforms", "").strip()
            and self.writer.router.routes_everything_everywhere
        )
        self.result = TaskResult(task_id=assignment.task_id)

    def run(self) -> TaskResult:
        ranges = list(self.assignment.ranges)
        for index, rng in enumerate(ranges):
            resume_at = self._read(rng)
            if resume_at is not None:
                self.result.unfinished = [OffsetRange(rng.topic, rng.partition, resume_at, rng.end)]
                self.result.unfinished += ranges[index + 1:]
                break
        files, rows = self.writer.close()
        self.result.data_files, self.result.records_written = files, rows
        return self.result

    def _read(self, rng: OffsetRange) -> int | None:
        """Process one range; the offset to resume from if a schema change is needed first."""
        tp = (rng.topic, rng.partition)
        for batch in read_range(self.client_conf, rng, batch_size=READ_BATCH_SIZE):
            if batch.num_rows == 0:
                continue
            first_offset = batch.column("offset")[0].as_py()
            needs = self._process(batch)
            if needs:
                self._record_needs(needs)
                self.result.next_offsets[tp] = first_offset
                return first_offset
            self._track(tp, batch)
        self.result.next_offsets[tp] = rng.end
        return None

    def _process(self, batch) -> SchemaNeeds:
        if self.columnar:
            return self.writer.write_json_values(batch)
        records = []
        for record in self.decoder.decode_batch(batch):
            transformed = self.chain.apply(record)
            if transformed is not None:
                records.append(transformed)
        return self.writer.write_records(records)

    def _track(self, tp, batch) -> None:
        self.result.records_read += batch.num_rows
        timestamps = batch.column("timestamp")
        import pyarrow.compute as pc

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
