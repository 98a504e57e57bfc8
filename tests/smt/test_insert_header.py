"""InsertHeader: ported from Kafka's InsertHeaderTest (``value.literal`` is parsed with ``Values.parseString``)."""

from __future__ import annotations

import pytest

from connector.api import ConfigException, Header, Schema
from smt.transforms.insert_header import InsertHeader
from tests.smt import record, string_header


def configured(header, value_literal):
    xform = InsertHeader()
    xform.configure({"header": header, "value.literal": value_literal})
    return xform


def source_record(headers):
    return record(None, "key", None, "value", topic="topic", partition=0, timestamp=0, headers=headers)


def assert_non_headers(original, transformed):
    for attribute in ("topic", "kafka_partition", "key_schema", "key", "value_schema", "value", "timestamp"):
        assert getattr(original, attribute) == getattr(transformed, attribute)


def test_insertion_with_existing_other_header():
    headers = (string_header("existing", "existing-value"),)
    original = source_record(headers)
    transformed = configured("inserted", "inserted-value").apply(original)
    assert_non_headers(original, transformed)
    assert transformed.headers == headers + (string_header("inserted", "inserted-value"),)


def test_insertion_with_existing_same_header():
    headers = (string_header("existing", "preexisting-value"),)
    original = source_record(headers)
    transformed = configured("existing", "inserted-value").apply(original)
    assert_non_headers(original, transformed)
    assert transformed.headers == headers + (string_header("existing", "inserted-value"),)


def test_insertion_with_byte_header():
    headers = (string_header("existing", "existing-value"),)
    original = source_record(headers)
    transformed = configured("inserted", "1").apply(original)
    assert_non_headers(original, transformed)
    assert transformed.headers == headers + (Header("inserted", 1, Schema.INT8_SCHEMA),)


def test_config_rejects_null_header_key():
    with pytest.raises(ConfigException, match=r"^Invalid value null for configuration header: entry must be non null$"):
        configured(None, "1")


def test_config_rejects_null_header_value():
    with pytest.raises(ConfigException, match="value.literal"):
        configured("inserted", None)


# --- beyond Kafka's tests --------------------------------------------------------------------


def test_literal_types():
    assert configured("h", "true").apply(source_record(())).headers == (Header("h", True, Schema.BOOLEAN_SCHEMA),)
    assert configured("h", "1000").apply(source_record(())).headers == (Header("h", 1000, Schema.INT16_SCHEMA),)


def test_missing_keys_are_required():
    with pytest.raises(ConfigException, match='Missing required configuration "header"'):
        InsertHeader().configure({"value.literal": "x"})
    with pytest.raises(ConfigException, match='Missing required configuration "value.literal"'):
        InsertHeader().configure({"header": "x"})
