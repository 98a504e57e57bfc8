"""``icefloe dlq replay``: re-drive the dead-letter queue through the connector's current config, exactly once.

After the cause of the bad records is fixed (an SMT, a converter setting, a
column type), the DLQ records are run through the connector's **current**
converters, SMTs and routing, with their **original** topic, partition and
offset (from Connect's ``__connect.errors.*`` context headers: without them the
origin is unknown and the replay refuses), into the tables. It runs in the CLI
process (no Spark): a DLQ is small.

Exactly once:

* each table records, in the snapshot summary of the commit that adds the
  replayed rows, the DLQ position replayed through
  (``icefloe.dlq.replayed.<dlq-topic>.<group-id> = {"<partition>": <next>}``);
  a re-run starts from the smallest position of the connector's tables and a
  table drops the records before its own position (as it drops source offsets
  it already holds), so a crash between two tables' commits replays nothing twice;
* records that fail again are re-sent to the DLQ **before** the tables commit,
  with Connect's context headers of the new failure and two headers of icefloe's:
  ``icefloe.dlq.replays`` (how many replays the record failed) and
  ``icefloe.dlq.replayed.from`` (``<dlq-partition>:<offset>`` of the copy it
  replaces); the position then moves past the old copies. A copy re-sent by a
  replay that crashed before its commit names a DLQ offset at or after the
  position: a re-run skips it (its origin is replayed again instead), so the
  DLQ records after the position are each bad record once.

Records of another connector (``__connect.errors.connector.name``) are left
alone. The source offsets the tables record are not changed.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import pyarrow as pa
from confluent_kafka import KafkaError, Producer

from connector.api.errors import ConnectException
from connector.config.iceberg_config import existing_tables
from connector.config.sink_config import SinkConfig
from connector.faults import fault_point
from connector.kafka.client_config import consumer_config
from connector.kafka.offsets import OffsetRange, earliest_offsets, end_offsets
from connector.tolerance.dead_letters import (
    ERROR_HEADER_CONNECTOR_NAME,
    ERROR_HEADER_OFFSET,
    ERROR_HEADER_PARTITION,
    ERROR_HEADER_TOPIC,
    FLUSH_TIMEOUT_SECONDS,
    HEADER_PREFIX,
    DeadLetterQueue,
    _partitions,
    _summaries,
    producer_config,
)
from connector.tolerance.errant import ErrantRecord, ErrorSettings

log = logging.getLogger(__name__)

REPLAYED_PREFIX = "icefloe.dlq.replayed."
REPLAYS_HEADER = "icefloe.dlq.replays"
REPLAYED_FROM_HEADER = "icefloe.dlq.replayed.from"
ICEFLOE_DLQ_HEADER_PREFIX = "icefloe.dlq."
MAX_SCHEMA_ROUNDS = 20
MAX_LISTED = 100  # failures listed in the report (all are counted)
#: a committed-offsets value that drops every row: how a table skips records before its replay position
_EVERYTHING = 2 ** 62


class ReplayRefused(ConnectException):
    """The DLQ cannot be replayed as asked (no context headers, no DLQ configured, dynamic routing)."""


def replayed_key(dlq_topic: str, group_id: str) -> str:
    return f"{REPLAYED_PREFIX}{dlq_topic}.{group_id}"


@dataclass
class ReplayReport:
    connector: str
    dlq: str
    replayed: dict[str, int] = field(default_factory=dict)  # table → rows
    records: int = 0  # DLQ records re-driven
    failed_again: int = 0  # re-sent to the DLQ
    skipped: dict[str, int] = field(default_factory=dict)  # reason → count
    position: dict[str, int] = field(default_factory=dict)  # DLQ partition → replayed through
    snapshots: dict[str, int] = field(default_factory=dict)
    failures: list[dict[str, Any]] = field(default_factory=list)  # the first MAX_LISTED that failed again

    def as_dict(self) -> dict[str, Any]:
        return {"connector": self.connector, "dlq": self.dlq, "records": self.records,
                "replayed": self.replayed, "failed_again": self.failed_again, "skipped": self.skipped,
                "position": self.position, "failures": self.failures}


@dataclass
class _DlqRecord:
    partition: int  # in the DLQ
    offset: int  # in the DLQ
    timestamp: int | None
    timestamp_type: int
    key: bytes | None
    value: bytes | None
    headers: list[tuple[str, bytes | None]]

    def header(self, name: str) -> bytes | None:
        for k, v in self.headers:
            if k == name:
                return v
        return None

    def text(self, name: str) -> str | None:
        value = self.header(name)
        return None if value is None else value.decode("utf-8", "replace")

    @property
    def replays(self) -> int:
        text = self.text(REPLAYS_HEADER)
        return int(text) if text and text.isdigit() else 0

    @property
    def origin(self) -> tuple[str, int, int] | None:
        topic, partition, offset = (self.text(h) for h in (ERROR_HEADER_TOPIC, ERROR_HEADER_PARTITION,
                                                           ERROR_HEADER_OFFSET))
        if topic is None or partition is None or offset is None:
            return None
        try:
            return topic, int(partition), int(offset)
        except ValueError:
            return None

    @property
    def replaced(self) -> tuple[int, int] | None:
        """(DLQ partition, offset) of the copy this record re-sent, when a replay sent it."""
        text = self.text(REPLAYED_FROM_HEADER)
        if not text or ":" not in text:
            return None
        partition, _, offset = text.partition(":")
        try:
            return int(partition), int(offset)
        except ValueError:
            return None

    def original_headers(self) -> list[tuple[str, bytes | None]]:
        return [(k, v) for k, v in self.headers
                if not k.startswith(HEADER_PREFIX) and not k.startswith(ICEFLOE_DLQ_HEADER_PREFIX)]


def replay_config(config: SinkConfig) -> SinkConfig:
    """The connector's config with tolerance on (failures are collected, not fatal) and context headers."""
    props = dict(config.props)
    props["errors.tolerance"] = "all"
    props["errors.deadletterqueue.context.headers.enable"] = "true"
    return SinkConfig.parse(props, config.worker)


def recorded_positions(catalog: Any, config: SinkConfig, dlq_topic: str) -> dict[str, dict[int, int] | None]:
    """Per existing static table, the DLQ position it replayed through (None: never replayed)."""
    key = replayed_key(dlq_topic, config.group_id)
    found: dict[str, dict[int, int] | None] = {}
    for table_name, table, branch in existing_tables(catalog, config.iceberg):
        found[table_name] = None
        for summary in _summaries(table, branch):
            if key in summary:
                found[table_name] = {int(p): int(o) for p, o in json.loads(summary[key]).items()}
                break
    return found


class DlqReplay:
    """One replay of a connector's DLQ: read it from the tables' position to its end now, re-drive, commit."""

    def __init__(self, config: SinkConfig, catalog: Any = None):
        from connector.data.catalog import load_catalog

        settings = ErrorSettings.of(config.props)
        if not settings.dlq_topic:
            raise ReplayRefused(f"Connector {config.name} has no dead letter queue "
                                "(errors.deadletterqueue.topic.name): nothing to replay")
        if not config.iceberg.tables:
            raise ReplayRefused("dlq replay needs static tables (iceberg.tables) to record its position in; "
                                "dynamic routing is not supported yet")
        self.original = config
        self.config = replay_config(config)
        self.dlq = settings.dlq_topic
        self.catalog = catalog if catalog is not None else load_catalog(config.props)
        self.client_conf = consumer_config(config.worker, config.props, connector_name=config.name)
        self.task_id = f"{config.name}-replay-{uuid.uuid4().hex[:8]}-0"
        self._changes: dict[str, list[Any]] = {}  # upsert tables: change segments, in replay order

    def run(self) -> ReplayReport:
        report = ReplayReport(self.original.name, self.dlq)
        partitions = _partitions(self.client_conf, self.dlq)
        if not partitions:
            log.info("The DLQ %s does not exist: nothing to replay", self.dlq)
            return report
        keys = [(self.dlq, p) for p in partitions]
        ends = end_offsets(self.client_conf, keys)
        earliest = earliest_offsets(self.client_conf, keys)
        positions = recorded_positions(self.catalog, self.config, self.dlq)
        start = {p: max(earliest[(self.dlq, p)],
                        min([(pos or {}).get(p, 0) for pos in positions.values()] or [0])) for p in partitions}
        end = {p: ends[(self.dlq, p)] for p in partitions}
        report.position = {str(p): end[p] for p in partitions}
        records = {p: self._read(p, start[p], end[p]) for p in partitions}
        mine = {p: self._select(rs, start[p], report) for p, rs in records.items()}
        total = sum(len(rs) for rs in mine.values())
        log.info("Replaying %d record(s) of the DLQ %s from %s to %s", total, self.dlq, start, end)
        files: dict[str, list[Any]] = {}
        errant: list[tuple[ErrantRecord, _DlqRecord]] = []
        for p in partitions:
            for accepting, segment in self._segments(mine[p], p, start[p], positions):
                self._drive(segment, accepting, files, report, errant)
        report.records = total
        self._resend(errant, report)
        fault_point("replay.after-dlq-writes")
        self._commit(files, positions, end, report)
        return report

    # --- reading ----------------------------------------------------------------------------

    def _read(self, partition: int, start: int, end: int) -> list[_DlqRecord]:
        from connector.kafka.range_reader import read_range

        found: list[_DlqRecord] = []
        if end <= start:
            return found
        for batch in read_range(self.client_conf, OffsetRange(self.dlq, partition, start, end)):
            for row in batch.to_pylist():
                found.append(_DlqRecord(partition, row["offset"], row["timestamp"], row["timestamp_type"],
                                        row["key"], row["value"],
                                        [(h["key"], h["value"]) for h in row["headers"] or ()]))
        return found

    def _select(self, records: list[_DlqRecord], start: int, report: ReplayReport) -> list[_DlqRecord]:
        """This connector's records, minus stale copies; refuses records without context headers."""
        kept = []
        skipped: Counter = Counter()
        for record in records:
            name = record.text(ERROR_HEADER_CONNECTOR_NAME)
            if record.origin is None or name is None:
                raise ReplayRefused(
                    f"The DLQ record at {self.dlq}[{record.partition}] offset {record.offset} has no "
                    f"__connect.errors.* context headers: its original topic, partition and offset are unknown, "
                    f"so it cannot be replayed. Set errors.deadletterqueue.context.headers.enable=true for the "
                    f"records sent from now on; records without them must be re-produced by hand.")
            if name != self.original.name:
                skipped["other connector"] += 1
                continue
            replaced = record.replaced
            if replaced is not None and replaced[0] == record.partition and replaced[1] >= start:
                skipped["copy from an unfinished replay"] += 1  # its origin is replayed again
                continue
            kept.append(record)
        report.skipped.update({k: report.skipped.get(k, 0) + v for k, v in skipped.items()})
        return kept

    @staticmethod
    def _segments(records: list[_DlqRecord], partition: int, start: int,
                  positions: Mapping[str, dict[int, int] | None]
                  ) -> Iterable[tuple[set[str], list[_DlqRecord]]]:
        """Runs of records that the same tables accept (a table accepts what is at or after its position)."""
        position = {t: (pos or {}).get(partition, 0) for t, pos in positions.items()}
        bounds = sorted({start, *(o for o in position.values() if o > start)})
        for i, low in enumerate(bounds):
            high = bounds[i + 1] if i + 1 < len(bounds) else None
            segment = [r for r in records if r.offset >= low and (high is None or r.offset < high)]
            if segment:
                yield {t for t, o in position.items() if o <= low}, segment

    # --- re-driving -------------------------------------------------------------------------

    def _drive(self, records: list[_DlqRecord], accepting: set[str], files: dict[str, list[Any]],
               report: ReplayReport, errant: list[tuple[ErrantRecord, _DlqRecord]]) -> None:
        from connector.commit.schema_changes import apply_schema_needs
        from connector.data.pipeline import TaskPipeline

        static = set(self.config.iceberg.tables)

        def lookup(table_name: str, table: Any) -> dict:
            if table_name not in static or table_name in accepting or \
                    table_name not in self._existing_at_start:
                return {}
            return {(r.origin[0], r.origin[1]): _EVERYTHING for r in records if r.origin is not None}

        pipeline = TaskPipeline(self.config, self.task_id, committed_offsets=lookup, catalog=self.catalog,
                                dead_letters=None)
        by_origin: dict[tuple[str, int, int], _DlqRecord] = {}
        for batch, group in self._batches(records):
            for record in group:
                assert record.origin is not None
                by_origin[record.origin] = record
            for _ in range(MAX_SCHEMA_ROUNDS):
                needs = pipeline.process(batch)
                if not needs:
                    break
                apply_schema_needs(self.catalog, self.config, needs.create, needs.updates)
                pipeline.forget_tables(needs.tables)
            else:
                raise ConnectException(f"Gave up after {MAX_SCHEMA_ROUNDS} rounds of schema changes")
        written = pipeline.close()
        for table, table_files in written.data_files.items():
            files.setdefault(table, []).extend(table_files)
        for table, segments in written.changes.items():  # upsert tables: the keys their commit deletes
            self._changes.setdefault(table, []).extend(segments)
        for table, count in written.records_written.items():
            report.replayed[table] = report.replayed.get(table, 0) + count
        errant.extend((e, by_origin[e.coordinates]) for e in pipeline.take_errant())

    @property
    def _existing_at_start(self) -> set[str]:
        if not hasattr(self, "_existing"):
            self._existing = {t for t in self.config.iceberg.tables if self.catalog.table_exists(t)}
        return self._existing

    @staticmethod
    def _batches(records: list[_DlqRecord]) -> Iterable[tuple[pa.RecordBatch, list[_DlqRecord]]]:
        """Raw batches (``RAW_SCHEMA``) with the original coordinates: one per run of one source partition."""
        from connector.kafka.range_reader import RAW_SCHEMA

        runs: list[list[_DlqRecord]] = []
        for record in records:
            if runs and runs[-1][0].origin[:2] == record.origin[:2]:  # type: ignore[index]
                runs[-1].append(record)
            else:
                runs.append([record])
        for run in runs:
            rows = []
            for r in run:
                assert r.origin is not None
                topic, partition, offset = r.origin
                rows.append({"topic": topic, "partition": partition, "offset": offset, "timestamp": r.timestamp,
                             "timestamp_type": r.timestamp_type, "key": r.key, "value": r.value,
                             "headers": [{"key": k, "value": v} for k, v in r.original_headers()]})
            yield pa.RecordBatch.from_pylist(rows, schema=RAW_SCHEMA), run

    # --- what failed again, and the commit ------------------------------------------------

    def _resend(self, errant: list[tuple[ErrantRecord, _DlqRecord]], report: ReplayReport) -> None:
        if not errant:
            return
        dlq = DeadLetterQueue(self.config, self.task_id, self.catalog)
        producer = Producer(producer_config(self.config, self.task_id))
        errors: list[str] = []

        def delivered(error: KafkaError | None, message: Any) -> None:
            if error is not None:
                errors.append(str(error))

        for failure, record in errant:
            headers = dlq.headers(failure) + [
                (REPLAYS_HEADER, str(record.replays + 1).encode()),
                (REPLAYED_FROM_HEADER, f"{record.partition}:{record.offset}".encode()),
            ]
            kwargs: dict[str, Any] = {"headers": headers}
            if record.timestamp is not None and record.timestamp >= 0:
                kwargs["timestamp"] = record.timestamp
            while True:
                try:
                    producer.produce(self.dlq, key=record.key, value=record.value, on_delivery=delivered, **kwargs)
                    break
                except BufferError:
                    producer.poll(0.1)
            producer.poll(0)
            report.failed_again += 1
            if len(report.failures) < MAX_LISTED:
                report.failures.append({"topic": failure.topic, "partition": failure.partition,
                                        "offset": failure.offset, "stage": failure.stage,
                                        "error": f"{failure.exception_class}: {failure.message}"})
        remaining = producer.flush(FLUSH_TIMEOUT_SECONDS)
        if remaining:
            errors.append(f"{remaining} record(s) not delivered after {FLUSH_TIMEOUT_SECONDS:.0f} s")
        if errors:
            raise ConnectException(f"Could not write to the dead letter queue {self.dlq}: {errors[0]}")
        log.info("%d record(s) failed again and were re-sent to the DLQ %s", report.failed_again, self.dlq)

    def _commit(self, files: dict[str, list[Any]], positions: Mapping[str, dict[int, int] | None],
                end: dict[int, int], report: ReplayReport) -> None:
        from connector.commit.commit import commit_tables

        value = json.dumps({str(p): o for p, o in sorted(end.items())}, separators=(",", ":"))
        properties = {replayed_key(self.dlq, self.config.group_id): value}

        def recorded(table_name: str) -> bool:
            """A table the replay wrote to, or whose replay position moves (not one that does not exist)."""
            if files.get(table_name) or table_name in self._changes:
                return True
            return table_name in positions and positions[table_name] != end

        report.snapshots.update(commit_tables(
            self.catalog, self.config, [t for t in self.config.iceberg.tables if recorded(t)], files, {},
            properties, changes=self._changes,
            after_each=lambda _table, _files: fault_point("replay.after-table-commit")))

