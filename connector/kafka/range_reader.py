"""Read one partition's offset range into Arrow record batches (runs on executors).

This is the hot path of every job, so records go from librdkafka messages
to Arrow columns with no per-record objects or Python frames of our own:
each field is read by one ``map`` of ``Message``'s accessor over a batch, and
the Python lists that come out become Arrow arrays in C.

The reader assigns the partition directly at ``rng.start`` (no consumer
group) and stops as soon as every offset below ``rng.end`` has been
accounted for. It never waits for records that cannot come:

* it asks ``consume()`` for at most the number of offsets left in the
  range, because asking for more makes librdkafka wait out the timeout;
* offsets below ``end`` that hold no record (compacted away, or
  transaction control markers) are recognised from the partition-EOF
  event, whose offset is the fetch position past them, or from records
  beyond ``end`` arriving;
* a partition that ends (high watermark) before ``rng.end`` is an error,
  reported as soon as the fetch response shows it.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Iterator, Mapping, Sequence
from itertools import chain
from typing import Any, Optional

import numpy as np
import pyarrow as pa
from confluent_kafka import Consumer, KafkaError, Message
from confluent_kafka import TopicPartition as KafkaTopicPartition

from connector.api.errors import ConnectException, RetriableException
from connector.kafka.client_config import reader_config
from connector.kafka.offsets import OffsetRange

#: Connect's ``TimestampType`` as stored in ``timestamp_type`` (librdkafka's
#: numbering): 0 = ``NO_TIMESTAMP_TYPE``, 1 = ``CREATE_TIME``,
#: 2 = ``LOG_APPEND_TIME``.
NO_TIMESTAMP_TYPE, CREATE_TIME, LOG_APPEND_TIME = 0, 1, 2

HEADER_TYPE = pa.struct([pa.field("key", pa.string(), nullable=False), pa.field("value", pa.binary())])
# "element" and a non-null item are what Spark's ArrayType(..., containsNull=False)
# converts to, so batches match a Spark schema derived from this one exactly.
HEADERS_TYPE = pa.list_(pa.field("element", HEADER_TYPE, nullable=False))

#: Schema of the batches :func:`read_range` yields: one row per Kafka record.
#:
#: - ``timestamp``: epoch milliseconds, null when the record has none
#:   (``timestamp_type`` 0) -- as Connect's ``SinkRecord.timestamp()``.
#: - ``timestamp_type``: see :data:`NO_TIMESTAMP_TYPE` and friends.
#: - ``key`` / ``value``: raw bytes; a null ``value`` is a tombstone.
#: - ``headers``: in record order; empty list when there are none.
_EMPTY_HEADERS = pa.StructArray.from_arrays(
    [pa.array([], pa.string()), pa.array([], pa.binary())], fields=list(HEADER_TYPE)
)

RAW_SCHEMA = pa.schema(
    [
        pa.field("topic", pa.string(), nullable=False),
        pa.field("partition", pa.int32(), nullable=False),
        pa.field("offset", pa.int64(), nullable=False),
        pa.field("timestamp", pa.int64(), nullable=True),
        pa.field("timestamp_type", pa.int8(), nullable=False),
        pa.field("key", pa.binary(), nullable=True),
        pa.field("value", pa.binary(), nullable=True),
        pa.field("headers", HEADERS_TYPE, nullable=False),
    ]
)

_message_error = Message.error
_message_offset, _message_key, _message_value = Message.offset, Message.key, Message.value
_message_timestamp, _message_headers = Message.timestamp, Message.headers

# Seconds a partition may look shorter than the range before that is an error.
_EARLY_END_GRACE = 2.0

_READER_SETTINGS = {
    "enable.partition.eof": True,  # tells us when the range's tail holds no records
    "auto.offset.reset": "error",  # a start below the log start must fail, not skip
    "enable.auto.commit": False,
    "enable.auto.offset.store": False,
}


class RangeReadError(ConnectException):
    """Reading an offset range failed; the message names topic, partition and offset."""


class RangeStalledError(RangeReadError, RetriableException):
    """No record came for the stall timeout: the broker is unreachable or slow; a later attempt may succeed."""


class OffsetOutOfRangeError(RangeReadError):
    """The range starts before the partition's log start (records deleted by retention)."""


def read_range(
    client_conf: Mapping[str, object],
    rng: OffsetRange,
    *,
    batch_size: int = 50_000,
    poll_timeout: float = 0.02,
    stall_timeout: float = 60.0,
) -> Iterator[pa.RecordBatch]:
    """Yield :data:`RAW_SCHEMA` batches holding every record with offset in ``rng``.

    A one-range :class:`RangeReader`; see there for the parameters. A task
    reading several ranges should use one :class:`RangeReader` for all.
    """
    if rng.start >= rng.end:
        return
    with RangeReader(
        client_conf, batch_size=batch_size, poll_timeout=poll_timeout, stall_timeout=stall_timeout
    ) as reader:
        yield from reader.read(rng)


class RangeReader:
    """Reads offset ranges one after another through one consumer.

    Reusing the consumer across a task's ranges saves, per range, a broker
    connection (with its TLS/SASL handshake), a metadata round trip and the
    consumer's shutdown.

    ``batch_size`` bounds the rows per batch. ``poll_timeout`` is the
    longest a single ``consume()`` call waits; it is short because a range
    whose last offsets hold no records (transaction markers) costs one such
    wait. ``stall_timeout`` is how long to wait for the broker when no record
    arrives before giving up with a :class:`RangeReadError`.
    """

    def __init__(
        self,
        client_conf: Mapping[str, object],
        *,
        batch_size: int = 50_000,
        poll_timeout: float = 0.02,
        stall_timeout: float = 60.0,
    ) -> None:
        self._conf = reader_config(client_conf, _READER_SETTINGS)
        self._batch_size = batch_size
        self._poll_timeout = poll_timeout
        self._stall_timeout = stall_timeout
        self._consumer: Optional[Consumer] = None
        self._partitions: dict[str, frozenset[int]] = {}  # metadata, per topic seen

    def read(self, rng: OffsetRange) -> Iterator[pa.RecordBatch]:
        """Yield :data:`RAW_SCHEMA` batches holding every record with offset in ``rng``."""
        if rng.start >= rng.end:
            return
        consumer = self._open()
        self._require_partition(consumer, rng)
        consumer.assign([KafkaTopicPartition(rng.topic, rng.partition, rng.start)])
        try:
            cursor = _RangeCursor(consumer, rng, self._poll_timeout, self._stall_timeout)
            while not cursor.done:
                messages = cursor.next_chunk(self._batch_size)
                if messages:
                    yield messages_to_batch(rng.topic, rng.partition, messages)
        finally:
            consumer.unassign()  # stop prefetching past the range

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None

    def __enter__(self) -> "RangeReader":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _open(self) -> Consumer:
        if self._consumer is None:
            self._consumer = Consumer(self._conf)
        return self._consumer

    def _require_partition(self, consumer: Consumer, rng: OffsetRange) -> None:
        """Fail fast for a partition the cluster does not have.

        librdkafka would wait for it silently. The metadata also tells the
        consumer the partition's leader, so the first fetch goes out at once.
        """
        if rng.partition not in self._partitions.get(rng.topic, frozenset()):
            topic = consumer.list_topics(rng.topic, timeout=self._stall_timeout).topics.get(rng.topic)
            self._partitions[rng.topic] = frozenset(topic.partitions if topic is not None else ())
        if rng.partition not in self._partitions[rng.topic]:
            raise RangeReadError(f"{rng.topic}[{rng.partition}]: no such topic-partition on the cluster")


class _RangeCursor:
    """Tracks how far into the range the consumer has got."""

    def __init__(self, consumer: Consumer, rng: OffsetRange, poll_timeout: float, stall_timeout: float) -> None:
        self._consumer = consumer
        self._rng = rng
        self._tp = KafkaTopicPartition(rng.topic, rng.partition)
        self._poll_timeout = poll_timeout
        self._stall_timeout = stall_timeout
        self.position = rng.start  # every offset below this has been accounted for
        self._short_since: Optional[float] = None  # when the partition was first seen ending early

    @property
    def done(self) -> bool:
        return self.position >= self._rng.end

    def next_chunk(self, batch_size: int) -> list[Message]:
        """Up to ``batch_size`` records of the range, in offset order."""
        chunk: list[Message] = []
        deadline = time.monotonic() + self._stall_timeout
        while not self.done and len(chunk) < batch_size:
            want = min(batch_size - len(chunk), self._rng.end - self.position)
            messages = self._consumer.consume(want, timeout=self._poll_timeout)
            if messages:
                chunk.extend(self._accept(messages))
                deadline = time.monotonic() + self._stall_timeout
                self._short_since = None
            else:
                self._check_not_stuck(deadline)
        return chunk

    def _accept(self, messages: list[Message]) -> list[Message]:
        """Records of ``messages`` inside the range; advances :attr:`position`."""
        if any(map(_message_error, messages)):
            messages = self._drop_events(messages)
        if not messages:
            return messages
        last = messages[-1].offset()
        assert last is not None  # records (the events were dropped above) have offsets
        if last >= self._rng.end:  # gaps inside the range let later records in
            offsets = [m.offset() or 0 for m in messages]
            messages = messages[: bisect.bisect_left(offsets, self._rng.end)]
        self.position = max(self.position, last + 1)
        return messages

    def _drop_events(self, messages: list[Message]) -> list[Message]:
        """Remove error and partition-EOF events from ``messages``, acting on them."""
        records = []
        for message in messages:
            error = message.error()
            if error is None:
                records.append(message)
            elif error.code() == KafkaError._PARTITION_EOF:
                offset = message.offset()
                if offset is not None:  # always, for an EOF event
                    self.position = max(self.position, offset)
            elif not error.retriable():
                raise self._error(error)
        return records

    def _error(self, error: KafkaError) -> RangeReadError:
        where = f"{self._rng.topic}[{self._rng.partition}] at offset {self.position}"
        if error.code() in (KafkaError._AUTO_OFFSET_RESET, KafkaError.OFFSET_OUT_OF_RANGE):
            low, _ = self._consumer.get_watermark_offsets(self._tp, cached=True)
            start = f" (log start offset {low})" if low >= 0 else ""
            return OffsetOutOfRangeError(
                f"{where}: offset is not available on the broker{start}; the records were "
                f"deleted (retention) before they were read, or the topic was recreated. {error.str()}"
            )
        return RangeReadError(f"{where}: {error.str()}")

    def _check_not_stuck(self, deadline: float) -> None:
        """Fail when the partition provably ends early, or nothing came for too long."""
        _, high = self._consumer.get_watermark_offsets(self._tp, cached=True)
        # The cached high watermark comes from the latest fetch response (it is
        # -1 before the first one). Sitting at it short of the range end means
        # the range cannot be completed: the log was truncated or recreated.
        # A grace period covers a new partition leader whose high watermark
        # briefly lags the old leader's.
        now = time.monotonic()
        if 0 <= high <= self.position:
            self._short_since = self._short_since or now
            if now - self._short_since >= min(_EARLY_END_GRACE, self._stall_timeout):
                raise RangeReadError(
                    f"{self._rng.topic}[{self._rng.partition}]: the partition ends at offset {high}, "
                    f"before the end of the range {self._rng.start}..{self._rng.end} (truncated or recreated topic?)"
                )
        else:
            self._short_since = None
        if now > deadline:
            raise RangeStalledError(
                f"{self._rng.topic}[{self._rng.partition}] at offset {self.position}: no records for "
                f"{self._stall_timeout:.0f}s while reading up to offset {self._rng.end} (high watermark {high})"
            )


def messages_to_batch(topic: str, partition: int, messages: Sequence[Message]) -> pa.RecordBatch:
    """Convert records of one partition, in increasing offset order, into a :data:`RAW_SCHEMA` batch.

    This is the per-record cost of every job, so each field is read with one
    ``map`` of ``Message``'s own accessor over the batch: a C call per record
    and no Python frame (a loop reading five fields a record cost 3x as much).
    """
    columns = [
        pa.repeat(pa.scalar(topic, pa.string()), len(messages)),
        pa.repeat(pa.scalar(partition, pa.int32()), len(messages)),
        _offset_column(messages),
        *_timestamp_columns(messages),
        pa.array(list(map(_message_key, messages)), pa.binary()),
        pa.array(list(map(_message_value, messages)), pa.binary()),
        _headers_column(list(map(_message_headers, messages))),
    ]
    return pa.RecordBatch.from_arrays(columns, schema=RAW_SCHEMA)


def _offset_column(messages: Sequence[Message]) -> pa.Array:
    """Offsets. They strictly increase within a partition, so a batch whose two ends are one
    offset per record apart holds every offset between them (the usual case: no compaction or
    transaction markers inside) and is known from its ends alone."""
    if messages:
        first, last = messages[0].offset(), messages[-1].offset()
        if first is not None and last is not None and last - first + 1 == len(messages):
            return pa.array(np.arange(first, last + 1, dtype=np.int64))
    return pa.array(list(map(_message_offset, messages)), pa.int64())


def _timestamp_columns(messages: Sequence[Message]) -> tuple[pa.Array, pa.Array]:
    """``timestamp`` (epoch ms, null where the record has none: type 0 or negative) and ``timestamp_type``."""
    pairs = chain.from_iterable(map(_message_timestamp, messages))  # type, ms, type, ms, ...
    flat = np.fromiter(pairs, dtype=np.int64, count=2 * len(messages)).reshape(-1, 2)
    types, stamps = flat[:, 0], np.ascontiguousarray(flat[:, 1])
    missing = (types == NO_TIMESTAMP_TYPE) | (stamps < 0)
    timestamps = pa.array(stamps, mask=missing) if missing.any() else pa.array(stamps)
    return timestamps, pa.array(types.astype(np.int8))


def _headers_column(headers: list[Any]) -> pa.Array:
    """``list<struct<key, value>>``; records without headers get an empty list.

    ``headers``: each consumed record's ``Message.headers()``, a list of (key, value) pairs or None.
    """
    if not any(headers):  # the common case, checked in C
        return pa.ListArray.from_arrays(
            pa.array(np.zeros(len(headers) + 1, dtype=np.int32)), _EMPTY_HEADERS, type=HEADERS_TYPE
        )
    offsets = [0]
    names: list[str] = []
    payloads: list[Optional[bytes]] = []
    total = 0
    for record_headers in headers:
        if record_headers:
            for name, payload in record_headers:
                names.append(name)
                payloads.append(payload)
            total += len(record_headers)
        offsets.append(total)
    items = pa.StructArray.from_arrays(
        [pa.array(names, pa.string()), pa.array(payloads, pa.binary())], fields=list(HEADER_TYPE)
    )
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), items, type=HEADERS_TYPE)
