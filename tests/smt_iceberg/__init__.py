"""Tests of the Iceberg sink's SMTs (smt/iceberg) and of user plugin loading."""

from __future__ import annotations

from typing import Any

from connector.api.record import SinkRecord, TimestampType


def sink_record(
    value_schema: Any = None,
    value: Any = None,
    key_schema: Any = None,
    key: Any = None,
    *,
    topic: str = "topic",
    partition: int = 0,
    offset: int = 0,
    timestamp: int | None = None,
    timestamp_type: TimestampType = TimestampType.NO_TIMESTAMP_TYPE,
    headers: tuple = (),
) -> SinkRecord:
    """A SinkRecord with Kafka's constructor defaults (topic ``topic``, partition 0, offset 0)."""
    return SinkRecord(
        topic=topic, kafka_partition=partition, key_schema=key_schema, key=key,
        value_schema=value_schema, value=value, kafka_offset=offset, timestamp=timestamp,
        timestamp_type=timestamp_type, headers=headers,
    )

