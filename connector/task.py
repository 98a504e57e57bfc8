"""A sink task: the work of one Spark partition.

``run_task`` reads its offset ranges from Kafka, decodes and transforms the
records, and hands them to a :class:`SinkWriter`. It returns a
:class:`TaskResult` (the commit message) and never commits anything itself:
committing is the coordinator's job on the driver.

Two paths produce the same rows: the per-record path (converters → SMT chain
→ router → record converter), and a columnar path used when the value is
schemaless JSON, where whole Arrow columns are decoded at once. Without
transforms, when every record goes to every table, that is
``SinkWriter.write_json_values``; otherwise, when every transform has a batch
form (``smt.batch``; see docs/smt.md, "Batch path"), the batch is parsed to
one Arrow struct column, transformed, routed and converted column-wise here.
A batch the columnar path cannot convert exactly as the per-record path would
goes through the per-record path instead.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections import Counter

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from connector.api.errors import ConnectException
from connector.channel.messages import TaskAssignment, TaskResult
from connector.config.sink_config import SinkConfig
from connector.data.catalog import load_catalog
from connector.data.json_batch import parse_json_objects
from connector.data.sink_writer import SchemaNeeds, SinkWriter
from connector.kafka.client_config import consumer_config
from connector.kafka.offsets import OffsetRange
from connector.kafka.range_reader import RangeReader, read_range
from connector.records import RecordDecoder
from smt.batch import BatchTransformationChain, Declined, RecordBatchView, Values
from smt.batch.kernels import map_distinct
from smt.chain import TransformationChain

log = logging.getLogger(__name__)

READ_BATCH_SIZE = 50_000
#: Set to "false" to run every batch through the per-record path (an escape hatch, and for comparisons).
COLUMNAR_ENV = "ICEFLOE_COLUMNAR"


class TaskPipeline:
    """Decode → transform → route → convert → buffer, for raw Arrow batches of one task.

    Shared by :class:`SinkTask` (``icefloe run``) and the Spark Data Source
    writer: whoever feeds it batches decides what to do when a batch reports
    :class:`SchemaNeeds` (stop and ask the coordinator, or apply them inline).
    """

    def __init__(self, config: SinkConfig, task_id: str, *, columnar: bool | None = None):
        """``columnar=False`` (or ``ICEFLOE_COLUMNAR=false``) forces the per-record path."""
        if columnar is None:
            columnar = os.environ.get(COLUMNAR_ENV, "true").strip().lower() != "false"
        self.config = config
        self.task_id = task_id
        self.decoder = RecordDecoder.from_config(config)
        self.chain = TransformationChain.from_config(config.props)
        self.catalog = load_catalog(config.props)
        self.writer = SinkWriter(config, self.catalog, task_id)
        self.columnar = columnar and (
            self.decoder.schemaless_json_value
            and not config.connect.raw.get("transforms", "").strip()
            and self.writer.router.routes_everything_everywhere
        )
        self.batch_chain: BatchTransformationChain | None = None
        self.path = "columnar" if self.columnar else "per-record"
        if columnar and not self.columnar:
            self.batch_chain, reason = self._batch_chain()
            if self.batch_chain is not None:
                self.path = "columnar with batch SMTs"
            log.info("Task %s: %s path (%s)", task_id, self.path, reason)
        elif self.columnar:
            log.info("Task %s: columnar path (schemaless JSON, no SMTs)", task_id)
        self.batches: Counter = Counter()  # batches per path taken, and per reason for declining
        self._forgotten: list = []  # table states dropped by forget_tables, with their files

    def process(self, batch) -> SchemaNeeds:
        """Convert and buffer one raw batch; nothing is buffered if the batch needs a schema change."""
        if self.columnar or self.batch_chain is not None:
            self.decoder.check_keys_and_headers(batch)
        if self.columnar:
            return self.writer.write_json_values(batch)
        if self.batch_chain is not None:
            needs = self._process_columnar(batch)
            if needs is not None:
                self.batches["columnar"] += 1
                return needs
        self.batches["per-record"] += 1
        return self._process_per_record(batch)

    # --- columnar path with batch SMTs ---------------------------------------------------

    def _batch_chain(self) -> tuple[BatchTransformationChain | None, str]:
        """The chain's batch form and why (not), for a log line."""
        if not self.decoder.schemaless_json_value:
            return None, "values are not schemaless JSON"
        batch_chain = BatchTransformationChain.from_chain(self.chain)
        if batch_chain is None:
            return None, BatchTransformationChain.why_not(self.chain) or "no batch form"
        routing = "" if self.writer.router.routes_everything_everywhere else ", routed column-wise"
        if len(self.chain) == 0:
            return batch_chain, "no transforms" + routing
        return batch_chain, "transforms: " + ", ".join(s.type_name for s in self.chain.stages) + routing

    def _declined(self, reason: str) -> None:
        self.batches[f"declined: {reason}"] += 1
        log.debug("Task %s: batch declined by the columnar path (%s); converting record by record",
                  self.task_id, reason)

    def _process_columnar(self, batch) -> SchemaNeeds | None:
        """Parse, transform and convert column-wise; None if the per-record path must run instead.

        Everything that could make the result differ from the per-record path's
        (including every error, and any table creation or schema change)
        declines, so errors and schema needs always come from the per-record path.
        """
        try:
            converted = self._convert_columnar(batch)
        except Declined as reason:
            return self._declined(str(reason))
        except Exception:  # a bug here must not fail a batch the per-record path handles
            log.warning("Task %s: columnar path failed; converting record by record", self.task_id,
                        exc_info=True)
            return self._declined("error")
        self.writer.buffer_converted(converted)
        return SchemaNeeds()

    def _convert_columnar(self, batch) -> dict[str, pa.Table]:
        """The batch's rows per destination table, converted; Declined when unsure."""
        parsed = parse_json_objects(batch.column("value"))
        if parsed is None:
            raise Declined("values")
        try:
            view = self.batch_chain.apply(RecordBatchView.from_raw(batch, Values.from_json(parsed.array,
                                                                                            parsed.loose)))
        except Declined as reason:
            raise Declined(f"transforms ({reason})") from reason
        values = view.value.array
        written = values.is_valid()  # null values (tombstones) are skipped, as per record
        if not pc.any(written).as_py():
            return {}
        if not pa.types.is_struct(values.type):
            raise Declined("values are not maps after the transforms")
        destinations = _destinations(self.writer.router, view, written)
        if destinations is None:
            raise Declined("routing")
        converted = {}
        for table_name, routed in destinations.items():
            state = self.writer.existing_table(table_name)
            if state is None:
                raise Declined("table to create")
            keep = pc.and_(routed, _not_committed(view, state.offsets))
            chosen = values.filter(keep)
            if len(chosen) == 0:
                continue
            table = state.json_converter.convert_struct(chosen)
            if table is None:
                raise Declined("conversion")
            converted[table_name] = table
        return converted

    def _process_per_record(self, batch) -> SchemaNeeds:
        records = []
        for record in self.decoder.decode_batch(batch):
            transformed = self.chain.apply(record)
            if transformed is not None:
                records.append(transformed)
        return self.writer.write_records(records)

    def forget_tables(self, names) -> None:
        """Reload these tables on next use (after their schema changed).

        Rows already buffered for such a table are written first, against the
        schema they were converted with, and their files are kept for :meth:`close`.
        """
        for name in names:
            state = self.writer.tables.pop(name, None)
            if state is not None:
                self.writer._flush(state)
                self._forgotten.append(state)

    def close(self):
        """Flush buffers: (data files per table, rows written per table)."""
        if self.batch_chain is not None and self.batches:
            log.info("Task %s: batches by path: %s", self.task_id,
                     ", ".join(f"{k}: {v}" for k, v in sorted(self.batches.items())))
        files, rows = self.writer.close()
        for state in self._forgotten:
            if state.files:
                files[state.name] = state.files + files.get(state.name, [])
                rows[state.name] = state.rows_written + rows.get(state.name, 0)
        return files, rows


def _destinations(router, view: RecordBatchView, written: pa.Array) -> dict[str, pa.Array] | None:
    """The rows (mask) each table gets, as ``RecordRouter.route`` decides per record; None if unsure."""
    if router.routes_everything_everywhere:
        return {table: written for table in router.static_tables}
    route = _route_values(view.value.array, router.route_field)
    if route is None:
        return None
    route = pc.if_else(written, route, pa.scalar(None, route.type))
    if route.null_count == len(route):
        return {}
    if router.config.dynamic_enabled:  # the table is str(value).lower()
        names = map_distinct(route, str.lower, pa.string())
        return {name: pc.fill_null(pc.equal(names, name), False) for name in pc.unique(names.drop_null()).to_pylist()}
    destinations = {}
    for table, regex in router.regexes:
        if regex is not None:
            matches = pc.fill_null(map_distinct(route, lambda text, r=regex: r.fullmatch(text) is not None,
                                                pa.bool_()), False)
            if pc.any(matches).as_py():
                destinations[table] = matches
    return destinations


def _route_values(values: pa.Array, path: str) -> pa.Array | None:
    """``str(extract_path(value, path))`` per row (null where the path gives None); None if unsure.

    Only strings and integers are taken (``str`` of other kinds is Python's, not Java's).
    """
    current = values
    for part in path.split("."):
        if not pa.types.is_struct(current.type):
            return pa.nulls(len(values), pa.string())  # a step into a non-map gives None
        names = [current.type.field(i).name for i in range(current.type.num_fields)]
        if part not in names:
            return pa.nulls(len(values), pa.string())
        current = current.flatten()[names.index(part)]
    if current.null_count == len(current):
        return pa.nulls(len(values), pa.string())
    if pa.types.is_string(current.type) or pa.types.is_large_string(current.type):
        return current.cast(pa.string())
    if pa.types.is_integer(current.type):
        return current.cast(pa.string())
    return None


def _not_committed(view: RecordBatchView, committed: dict) -> pa.Array:
    """Rows at or after their source partition's committed offset (the rest were written before)."""
    keep = pa.array(np.ones(view.num_rows, dtype=bool))
    if not committed:
        return keep
    for topic in pc.unique(view.original_topic).to_pylist():
        for partition in pc.unique(view.original_partition).to_pylist():
            start = committed.get((topic, partition))
            if start is None:
                continue
            here = pc.and_(pc.equal(view.original_topic, topic), pc.equal(view.original_partition, partition))
            before = pc.and_(here, pc.less(view.offset, start))
            keep = pc.and_(keep, pc.invert(before))
    return keep


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
        with RangeReader(self.client_conf, batch_size=READ_BATCH_SIZE) as reader:  # one consumer for all ranges
            for index, rng in enumerate(ranges):
                resume_at = self._read(reader, rng)
                if resume_at is not None:
                    self.result.unfinished = [OffsetRange(rng.topic, rng.partition, resume_at, rng.end)]
                    self.result.unfinished += ranges[index + 1:]
                    break
        files, rows = self.pipeline.close()
        self.result.data_files, self.result.records_written = files, rows
        return self.result

    def _read(self, reader: RangeReader, rng: OffsetRange) -> int | None:
        """Process one range; the offset to resume from if a schema change is needed first."""
        tp = (rng.topic, rng.partition)
        for batch in reader.read(rng):
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


PROBE_RECORDS = 1_000


def probe_schema_needs(config: SinkConfig, rng: OffsetRange) -> SchemaNeeds:
    """Run the pipeline over the first records of ``rng`` on the driver, writing nothing.

    Lets the coordinator create a missing table before the tasks start, so that
    no task has to stop at its first batch and be re-run just for that.
    """
    pipeline = TaskPipeline(config, "probe")
    client_conf = consumer_config(config.worker, config.props, connector_name=config.name)
    sample = OffsetRange(rng.topic, rng.partition, rng.start, min(rng.end, rng.start + PROBE_RECORDS))
    for batch in read_range(client_conf, sample, batch_size=PROBE_RECORDS):
        needs = pipeline.process(batch)
        if needs:
            return needs
    return SchemaNeeds()
