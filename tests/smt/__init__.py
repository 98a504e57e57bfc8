"""Tests of the SMTs and predicates, ported from Kafka's own unit tests plus property tests.

Helpers shared by the test modules live here.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Iterable

from connector.api import Header, Schema, SinkRecord

UTC = _dt.timezone.utc


def record(key_schema: Schema | None = None, key: Any = None, value_schema: Schema | None = None,
           value: Any = None, *, topic: str = "topic", partition: int | None = 0, offset: int = 0,
           timestamp: int | None = None, headers: Iterable[Header] = ()) -> SinkRecord:
    """A SinkRecord, arguments in Kafka's ``new SinkRecord(topic, partition, keySchema, key, ...)`` spirit."""
    return SinkRecord(topic, partition, key_schema, key, value_schema, value, offset, timestamp,
                      headers=tuple(headers))


def value_record(value_schema: Schema | None, value: Any, **kwargs: Any) -> SinkRecord:
    """Kafka's ``new SourceRecord(null, null, "topic", 0, valueSchema, value)``."""
    return record(None, None, value_schema, value, **kwargs)


def millis(ms: int) -> _dt.datetime:
    """``new java.util.Date(ms)`` as a Connect Timestamp value."""
    return _dt.datetime(1970, 1, 1, tzinfo=UTC) + _dt.timedelta(milliseconds=ms)


def string_header(key: str, value: str | None) -> Header:
    """``ConnectHeaders.addString``."""
    return Header(key, value, Schema.STRING_SCHEMA if value is not None else Schema.OPTIONAL_STRING_SCHEMA)
