"""TimestampRouter: ported from Kafka's TimestampRouterTest, plus SimpleDateFormat patterns."""

from __future__ import annotations

import pytest

from connector.api import ConfigException, DataException
from smt.transforms.timestamp_router import TimestampRouter
from tests.smt import record


def configured(**config):
    xform = TimestampRouter()
    xform.configure(config)
    return xform


def test_default_configuration():
    xform = configured()  # defaults
    assert xform.apply(record(topic="test", timestamp=1483425001864)).topic == "test-20170103"
    xform.close()


# --- beyond Kafka's tests --------------------------------------------------------------------


def test_custom_formats():
    xform = configured(**{"topic.format": "${timestamp}_${topic}_${timestamp}",
                          "timestamp.format": "yyyy-MM-dd'T'HH"})
    assert xform.apply(record(topic="t", timestamp=1483425001864)).topic == "2017-01-03T06_t_2017-01-03T06"


def test_missing_timestamp():
    with pytest.raises(DataException, match="^Timestamp missing on record: "):
        configured().apply(record(topic="t", timestamp=None))


def test_pattern_java_rejects_fails_on_first_record():
    xform = configured(**{"timestamp.format": "yyyy-bb"})  # Kafka builds the SimpleDateFormat lazily
    with pytest.raises(ValueError, match="Illegal pattern character 'b'"):
        xform.apply(record(topic="t", timestamp=0))


def test_week_based_pattern_is_refused_at_configure_time():
    with pytest.raises(ConfigException, match="timestamp.format"):
        configured(**{"timestamp.format": "YYYY-ww"})


def test_keeps_partition_offset_and_origin():
    out = configured().apply(record(topic="t", partition=4, offset=8, timestamp=0))
    assert (out.topic, out.kafka_partition, out.kafka_offset, out.original_topic) == ("t-19700101", 4, 8, "t")
