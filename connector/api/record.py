"""Records as Connect sinks see them: ``SinkRecord``, ``Header``, ``SchemaAndValue``."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

from connector.api.schema import Schema

#: Where a record comes from: (topic, partition), as Kafka's ``TopicPartition``. Offsets, ranges and
#: progress are kept per TopicPartition on every layer.
TopicPartition = tuple[str, int]


class SchemaAndValue(NamedTuple):
    """A converter's result: a schema (None when schemaless) and a value."""

    schema: Schema | None
    value: Any


SchemaAndValue.NULL = SchemaAndValue(None, None)  # type: ignore[attr-defined]


class TimestampType(enum.IntEnum):
    """Kafka's record timestamp types; the integer is what the raw Arrow batches carry."""

    NO_TIMESTAMP_TYPE = 0
    CREATE_TIME = 1
    LOG_APPEND_TIME = 2

    @property
    def display_name(self) -> str:
        return {0: "NoTimestampType", 1: "CreateTime", 2: "LogAppendTime"}[self.value]


@dataclass(frozen=True)
class Header:
    """One record header; a record may carry several headers with the same key."""

    key: str
    value: Any
    schema: Schema | None = None


@dataclass(frozen=True)
class SinkRecord:
    """A record read from Kafka, as converters produce it and SMTs transform it.

    ``original_*`` keep where the record was read from, whatever SMTs later do to
    ``topic``/``kafka_partition`` (RegexRouter, ...): offsets are tracked, and
    committed, against the original topic-partition.
    """

    topic: str
    kafka_partition: int | None
    key_schema: Schema | None
    key: Any
    value_schema: Schema | None
    value: Any
    kafka_offset: int
    timestamp: int | None = None
    timestamp_type: TimestampType = TimestampType.NO_TIMESTAMP_TYPE
    headers: tuple[Header, ...] = field(default_factory=tuple)
    original_topic: str | None = None
    original_kafka_partition: int | None = None
    original_kafka_offset: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.headers, tuple):
            object.__setattr__(self, "headers", tuple(self.headers or ()))
        if self.original_topic is None:
            object.__setattr__(self, "original_topic", self.topic)
        if self.original_kafka_partition is None:
            object.__setattr__(self, "original_kafka_partition", self.kafka_partition)
        if self.original_kafka_offset is None:
            object.__setattr__(self, "original_kafka_offset", self.kafka_offset)

    def new_record(
        self,
        topic: str,
        kafka_partition: int | None,
        key_schema: Schema | None,
        key: Any,
        value_schema: Schema | None,
        value: Any,
        timestamp: int | None,
        headers: "tuple[Header, ...] | list[Header] | None" = None,
    ) -> "SinkRecord":
        """A copy with new routing/key/value, keeping offset, timestamp type and origin.

        Like Kafka's ``ConnectRecord.newRecord``: when ``headers`` is None the
        current headers are kept.
        """
        return replace(
            self,
            topic=topic,
            kafka_partition=kafka_partition,
            key_schema=key_schema,
            key=key,
            value_schema=value_schema,
            value=value,
            timestamp=timestamp,
            headers=tuple(self.headers if headers is None else headers),
        )

    def with_headers(self, headers: "tuple[Header, ...] | list[Header]") -> "SinkRecord":
        return replace(self, headers=tuple(headers))

    def describe(self) -> str:
        """Where the record came from, for error messages."""
        return (
            f"topic: {self.original_topic}, partition: {self.original_kafka_partition}, "
            f"offset: {self.original_kafka_offset}"
        )
