"""Subject name strategies, by their Java class names."""

from __future__ import annotations

import pytest

from connector.api.errors import ConfigException, DataException
from converters.confluent.subject_naming import (
    RecordNameStrategy,
    TopicNameStrategy,
    TopicRecordNameStrategy,
    load_strategy,
)

PKG = "io.confluent.kafka.serializers.subject."


def test_topic_name_strategy():
    s = load_strategy(PKG + "TopicNameStrategy")
    assert isinstance(s, TopicNameStrategy) and not s.uses_schema
    assert s.subject_name("orders", False, "com.acme.Order") == "orders-value"
    assert s.subject_name("orders", True, None) == "orders-key"
    assert s.subject_name(None, False, "x") is None


def test_record_name_strategies():
    record = load_strategy(PKG + "RecordNameStrategy")
    assert isinstance(record, RecordNameStrategy) and record.uses_schema
    assert record.subject_name("orders", False, "com.acme.Order") == "com.acme.Order"
    topic_record = load_strategy(PKG + "TopicRecordNameStrategy", "key.subject.name.strategy")
    assert isinstance(topic_record, TopicRecordNameStrategy)
    assert topic_record.subject_name("orders", True, "com.acme.Key") == "orders-com.acme.Key"
    with pytest.raises(DataException, match="key.subject.name.strategy = .*TopicRecordNameStrategy, "
                                            "the message key must only be a record schema"):
        topic_record.subject_name("orders", True, None)
    with pytest.raises(DataException, match="the message value must only be a record schema"):
        record.subject_name("orders", False, "")


def test_names_aliases_and_defaults():
    assert isinstance(load_strategy(None), TopicNameStrategy)
    assert isinstance(load_strategy(""), TopicNameStrategy)
    assert isinstance(load_strategy("RecordNameStrategy"), RecordNameStrategy)
    assert isinstance(load_strategy(PKG + "strategy.TopicRecordNameStrategy"), TopicRecordNameStrategy)
    assert isinstance(load_strategy("converters.confluent.subject_naming:RecordNameStrategy"),
                      RecordNameStrategy)
    with pytest.raises(ConfigException, match="value.subject.name.strategy"):
        load_strategy("com.example.Nope")
