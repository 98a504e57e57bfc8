"""The dead-letter queue: Connect's ``DeadLetterQueueReporter``, sent exactly once across re-runs.

A DLQ record (``errors.deadletterqueue.topic.name``) holds the **original raw**
key, value and headers of a record skipped by ``errors.tolerance=all``, with
its original timestamp and no partition (the producer's partitioner decides).
With ``errors.deadletterqueue.context.headers.enable=true`` Connect's
``__connect.errors.*`` headers are appended as UTF-8 strings. The topic is
created when missing with one partition and
``errors.deadletterqueue.topic.replication.factor`` (capped by the number of
brokers, with a log line saying so). The producer takes the worker's
``producer.*`` keys and the connector's ``producer.override.*`` keys, with
client id ``connector-dlq-producer-<name>-<task>``.

Exactly once (see docs/operations.md, "Error tolerance and the dead-letter queue"):

* a task sends its DLQ records only when it finishes (``TaskPipeline.close``)
  and flushes them, checking every delivery, before it returns its result; so
  a cycle's DLQ records are all written before the coordinator commits;
* each commit records, in every table's snapshot summary next to the source
  offsets, the DLQ's end offsets at that moment
  (``icefloe.dlq.offsets.<dlq-topic>.<group-id> = {"<partition>": <end>}``):
  every DLQ record written after that position belongs to a cycle that had not
  committed yet;
* a task about to send reads the DLQ from the position recorded by the tables
  (the smallest over the connector's tables; the log start when a table has no
  position) to its end, and does not send a record that is already there:
  identified by ``__connect.errors.connector.name`` + ``topic`` /
  ``partition`` / ``offset`` when context headers are on, else by its content
  (key, value, headers), counted.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from typing import Any, Iterable, Mapping

from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from connector.api.errors import ConnectException
from connector.config.iceberg_config import existing_tables
from connector.faults import fault_point
from connector.kafka.client_config import (
    _LIBRDKAFKA_GLOBAL_KEYS,
    _merged_java_properties,
    admin_config_from,
    consumer_config,
    translate_client_properties,
)
from connector.kafka.offsets import OffsetRange, earliest_offsets, end_offsets
from connector.tolerance.errant import ErrantRecord, ErrorSettings, task_number

log = logging.getLogger(__name__)

HEADER_PREFIX = "__connect.errors."
ERROR_HEADER_TOPIC = HEADER_PREFIX + "topic"
ERROR_HEADER_PARTITION = HEADER_PREFIX + "partition"
ERROR_HEADER_OFFSET = HEADER_PREFIX + "offset"
ERROR_HEADER_CONNECTOR_NAME = HEADER_PREFIX + "connector.name"
ERROR_HEADER_TASK_ID = HEADER_PREFIX + "task.id"
ERROR_HEADER_STAGE = HEADER_PREFIX + "stage"
ERROR_HEADER_EXECUTING_CLASS = HEADER_PREFIX + "class.name"
ERROR_HEADER_EXCEPTION = HEADER_PREFIX + "exception.class.name"
ERROR_HEADER_EXCEPTION_MESSAGE = HEADER_PREFIX + "exception.message"
ERROR_HEADER_EXCEPTION_STACK_TRACE = HEADER_PREFIX + "exception.stacktrace"

#: Snapshot summary key prefix of the DLQ position recorded with each commit.
POSITION_PREFIX = "icefloe.dlq.offsets."
FLUSH_TIMEOUT_SECONDS = 60.0

_PRODUCER_KEYS = _LIBRDKAFKA_GLOBAL_KEYS | frozenset("""
    acks request.required.acks linger.ms queue.buffering.max.ms batch.size batch.num.messages
    compression.type compression.codec compression.level enable.idempotence message.timeout.ms
    delivery.timeout.ms retries message.send.max.retries retry.backoff.ms retry.backoff.max.ms
    max.in.flight.requests.per.connection max.in.flight queue.buffering.max.messages
    queue.buffering.max.kbytes request.timeout.ms partitioner sticky.partitioning.linger.ms
""".split())

Identity = tuple[Any, ...]


def producer_config(config: Any, task_id: str) -> dict[str, str]:
    """librdkafka producer settings: worker ``producer.*`` < connector ``producer.override.*``."""
    base = {"client.id": f"connector-dlq-producer-{config.name}-{task_number(task_id)}", "acks": "all"}
    merged = _merged_java_properties(base, config.worker, config.props, "producer")
    result = translate_client_properties(merged, allowed=_PRODUCER_KEYS)
    for dropped in result.dropped:
        log.warning("Kafka producer setting %s is not passed to librdkafka: %s", dropped.key, dropped.reason)
    return result.conf


def position_key(dlq_topic: str, group_id: str) -> str:
    return f"{POSITION_PREFIX}{dlq_topic}.{group_id}"


def position_properties(config: Any, client_conf: Mapping[str, object], catalog: Any = None,
                        covered: Mapping[tuple[str, int], int] | None = None) -> dict[str, str]:
    """The snapshot summary property recording the DLQ position for a commit (empty without a DLQ).

    The position is the DLQ's end, except where a DLQ record after the position the tables
    recorded so far names (context headers) a source offset this commit does not cover: then
    it stays before the first such record, which a later cycle may still have to recognise.
    """
    settings = ErrorSettings.of(config.props)
    if not (settings.tolerance_all and settings.dlq_topic):
        return {}
    topic = settings.dlq_topic
    partitions = _partitions(client_conf, topic)
    if not partitions:
        return {position_key(topic, config.group_id): "{}"}
    ends = end_offsets(client_conf, [(topic, p) for p in partitions])
    position = {p: ends[(topic, p)] for p in partitions}
    if catalog is not None and covered is not None:
        previous = recorded_position(catalog, config, topic)
        for p in partitions:
            first = _first_uncovered(client_conf, config.name, topic, p, (previous or {}).get(p, 0),
                                     position[p], covered)
            if first is not None:
                position[p] = first
    value = {str(p): o for p, o in position.items()}
    return {position_key(topic, config.group_id): json.dumps(value, separators=(",", ":"))}


def _first_uncovered(client_conf: Mapping[str, object], connector_name: str, topic: str, partition: int,
                     start: int, end: int, covered: Mapping[tuple[str, int], int]) -> int | None:
    """Offset of the first record in ``topic``/``partition`` [start, end) of this connector whose source
    offset is at or after ``covered`` (or whose source partition is not covered); None if there is none."""
    from connector.kafka.range_reader import read_range

    start = max(start, earliest_offsets(client_conf, [(topic, partition)])[(topic, partition)])
    for batch in read_range(client_conf, OffsetRange(topic, partition, start, end)):
        columns = (batch.column(n).to_pylist() for n in ("offset", "headers", "key", "value", "timestamp"))
        for offset, headers, key, value, timestamp in zip(*columns):
            found = identity([(h["key"], h["value"]) for h in headers or ()], key, value, timestamp,
                             connector_name)
            if found[0] != "source":
                continue  # another connector's, or no context headers (see docs/operations.md)
            _, source_topic, source_partition, source_offset = found
            next_offset = covered.get((source_topic, source_partition))
            if next_offset is None or source_offset >= next_offset:
                return offset
    return None


def recorded_position(catalog: Any, config: Any, dlq_topic: str) -> dict[int, int] | None:
    """The DLQ position the connector's tables recorded: per DLQ partition, the smallest.

    None (read the DLQ from its start) when some table that holds source offsets has no
    position, or no static table has offsets at all.
    """
    key = position_key(dlq_topic, config.group_id)
    suffix = "." + config.group_id
    lowest: dict[int, int] | None = None
    for _, table, branch in existing_tables(catalog, config.iceberg):
        for summary in _summaries(table, branch):
            if key in summary:
                found = {int(p): int(o) for p, o in json.loads(summary[key]).items()}
                # a partition one table has no position for is read from its start (0) for that table
                lowest = found if lowest is None else {
                    p: min(found.get(p, 0), lowest.get(p, 0)) for p in {*found, *lowest}}
                break
            if any(k.startswith(OFFSETS_PREFIX) and k.endswith(suffix) for k in summary):
                return None  # offsets committed without a DLQ position: read the whole DLQ
    return lowest


#: The source offsets' snapshot summary prefix (``connector.iceberg.snapshot_offsets``; not imported: layers).
OFFSETS_PREFIX = "kafka.connect.offsets."


def _summaries(table: Any, branch: str | None) -> Iterable[dict[str, str]]:
    """The snapshot summaries of ``branch`` (``main`` when None), newest first."""
    from pyiceberg.table.snapshots import ancestors_of

    head = table.current_snapshot() if branch in (None, "main") else table.snapshot_by_name(branch)
    for snapshot in ancestors_of(head, table.metadata):
        yield snapshot.summary.additional_properties if snapshot.summary else {}


def _partitions(client_conf: Mapping[str, object], topic: str) -> list[int]:
    admin = AdminClient(admin_config_from(client_conf))
    metadata = admin.list_topics(timeout=30)  # all topics: asking for one may auto-create it
    described = metadata.topics.get(topic)
    if described is None or described.error is not None:
        return []
    return sorted(described.partitions)


def identity(record_headers: Iterable[tuple[str, bytes | None]], key: bytes | None, value: bytes | None,
             timestamp: int | None, connector_name: str) -> Identity:
    """How a DLQ record is recognised: its source coordinates (context headers), else its content."""
    headers = list(record_headers)
    by_key = {k: v for k, v in headers}
    name = by_key.get(ERROR_HEADER_CONNECTOR_NAME)
    topic, partition, offset = (by_key.get(h) for h in (ERROR_HEADER_TOPIC, ERROR_HEADER_PARTITION,
                                                        ERROR_HEADER_OFFSET))
    if name is not None and topic is not None and partition is not None and offset is not None:
        if name.decode("utf-8", "replace") != connector_name:
            return ("other connector",)
        try:
            return ("source", topic.decode("utf-8", "replace"), int(partition), int(offset))
        except ValueError:
            pass  # not Connect's headers after all: fall back to the content
    # The timestamp is left out: a record without one gets the producer's clock in the DLQ.
    digest = hashlib.sha256()
    for part in (key, value, *(x for kv in headers for x in (kv[0].encode(), kv[1]))):
        digest.update(b"\x00" if part is None else b"\x01" + len(part).to_bytes(8, "big") + part)
    return ("content", digest.hexdigest())


class DeadLetterQueue:
    """One task's DLQ producer: sends the errant records it is given, skipping those already sent."""

    def __init__(self, config: Any, task_id: str, catalog: Any = None):
        self.config = config
        self.task_id = task_id
        self.settings = ErrorSettings.of(config.props)
        self.topic = self.settings.dlq_topic
        self.catalog = catalog
        self.client_conf = consumer_config(config.worker, config.props, connector_name=config.name)
        self._producer: Producer | None = None
        self._already: Counter | None = None
        self._errors: list[str] = []
        self.sent = 0
        self.skipped = 0

    # --- what is already there --------------------------------------------------------------

    def already_sent(self) -> Counter:
        """Identities of the DLQ records after the position the tables recorded (read once)."""
        if self._already is None:
            self._already = self._read_tail()
        return self._already

    def _read_tail(self) -> Counter:
        from connector.kafka.range_reader import read_range

        found: Counter = Counter()
        partitions = _partitions(self.client_conf, self.topic)
        if not partitions:
            return found
        if self.catalog is None:
            raise ValueError("A dead letter queue that reads what it already sent needs the connector's catalog")
        position = recorded_position(self.catalog, self.config, self.topic) or {}
        keys = [(self.topic, p) for p in partitions]
        ends = end_offsets(self.client_conf, keys)
        starts = earliest_offsets(self.client_conf, keys)
        for p in partitions:
            start = max(position.get(p, 0), starts[(self.topic, p)])
            end = ends[(self.topic, p)]
            if end <= start:
                continue
            for batch in read_range(self.client_conf, OffsetRange(self.topic, p, start, end)):
                columns = (batch.column(n).to_pylist() for n in ("headers", "key", "value", "timestamp"))
                for headers, key, value, timestamp in zip(*columns):
                    pairs = [(h["key"], h["value"]) for h in headers or ()]
                    found[identity(pairs, key, value, timestamp, self.config.name)] += 1
        log.info("Task %s: %d record(s) in the DLQ %s after the committed position %s", self.task_id,
                 sum(found.values()), self.topic, position or "(log start)")
        return found

    # --- sending ---------------------------------------------------------------------------------

    def send(self, records: list[ErrantRecord]) -> None:
        """Produce the DLQ records of ``records`` not already in the DLQ (asynchronously)."""
        if not records:
            return
        already = self.already_sent()
        producer = self._open()
        for record in records:
            headers = self.headers(record)
            key = identity(headers, record.key, record.value, record.timestamp, self.config.name)
            if already[key] > 0:
                already[key] -= 1
                self.skipped += 1
                continue
            kwargs: dict[str, Any] = {"headers": headers}
            if record.timestamp is not None and record.timestamp >= 0:
                kwargs["timestamp"] = record.timestamp
            while True:
                try:
                    producer.produce(self.topic, value=record.value, key=record.key, on_delivery=self._delivered,
                                     **kwargs)
                    break
                except BufferError:
                    producer.poll(0.1)
            self.sent += 1
            producer.poll(0)
            fault_point("dlq.during-writes")
        if self.skipped:
            log.info("Task %s: %d DLQ record(s) were already in %s and were not sent again", self.task_id,
                     self.skipped, self.topic)

    def flush(self) -> None:
        """Wait until every record sent is acknowledged; ConnectException if any was not."""
        if self._producer is None:
            return
        remaining = self._producer.flush(FLUSH_TIMEOUT_SECONDS)
        if remaining:
            self._errors.append(f"{remaining} record(s) not delivered after {FLUSH_TIMEOUT_SECONDS:.0f} s")
        if self._errors:
            raise ConnectException(f"Could not write to the dead letter queue {self.topic}: {self._errors[0]}")
        if self.sent:
            log.info("Task %s: %d record(s) written to the DLQ %s", self.task_id, self.sent, self.topic)

    def close(self) -> None:
        """Let the producer go (after :meth:`flush`); a later :meth:`send` opens a new one."""
        self._producer = None

    def headers(self, record: ErrantRecord) -> list[tuple[str, bytes | None]]:
        """The original headers, then Connect's context headers when enabled."""
        headers = list(record.headers)
        if not self.settings.dlq_context_headers:
            return headers
        context: list[tuple[str, str | None]] = [
            (ERROR_HEADER_TOPIC, record.topic),
            (ERROR_HEADER_PARTITION, str(record.partition)),
            (ERROR_HEADER_OFFSET, str(record.offset)),
            (ERROR_HEADER_CONNECTOR_NAME, self.config.name),
            (ERROR_HEADER_TASK_ID, str(task_number(self.task_id))),
            (ERROR_HEADER_STAGE, record.stage),
            (ERROR_HEADER_EXECUTING_CLASS, record.executing_class),
            (ERROR_HEADER_EXCEPTION, record.exception_class),
            (ERROR_HEADER_EXCEPTION_MESSAGE, record.message),
            (ERROR_HEADER_EXCEPTION_STACK_TRACE, record.stacktrace),
        ]
        return headers + [(k, None if v is None else v.encode("utf-8")) for k, v in context]

    def _delivered(self, error: KafkaError | None, message: Any) -> None:
        if error is not None:
            self._errors.append(str(error))

    def _open(self) -> Producer:
        if self._producer is None:
            ensure_topic(self.client_conf, self.topic, self.settings.dlq_replication_factor)
            self._producer = Producer(producer_config(self.config, self.task_id))
        return self._producer


def ensure_topic(client_conf: Mapping[str, object], topic: str, replication_factor: int) -> None:
    """Create the DLQ topic (1 partition) when missing, as Connect does; cap the replication factor."""
    admin = AdminClient(admin_config_from(client_conf))
    metadata = admin.list_topics(timeout=30)
    if topic in metadata.topics and metadata.topics[topic].error is None:
        return
    brokers = max(1, len(metadata.brokers))
    factor = replication_factor
    if factor > brokers:
        log.warning("The DLQ topic %s is created with replication factor %d: the cluster has %d broker(s), "
                    "fewer than errors.deadletterqueue.topic.replication.factor=%d", topic, brokers, brokers,
                    replication_factor)
        factor = brokers
    futures = admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=factor)])
    try:
        futures[topic].result(timeout=30)
        log.info("Created the DLQ topic %s (1 partition, replication factor %d)", topic, factor)
    except KafkaException as exc:
        if exc.args and getattr(exc.args[0], "code", lambda: None)() == KafkaError.TOPIC_ALREADY_EXISTS:
            return
        raise ConnectException(f"Could not create the DLQ topic {topic}: {exc}") from exc
