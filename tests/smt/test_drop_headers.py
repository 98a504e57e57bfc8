"""DropHeaders: ported from Kafka's DropHeadersTest."""

from __future__ import annotations

import pytest

from connector.api import ConfigException, Header, Schema
from smt.transforms.drop_headers import DropHeaders
from tests.smt import record, string_header


def configured(*headers):
    xform = DropHeaders()
    xform.configure({"headers": list(headers)})
    return xform


def source_record(headers):
    return record(None, "key", None, "value", topic="topic", partition=0, timestamp=0, headers=headers)


def assert_non_headers(original, transformed):
    for attribute in ("topic", "kafka_partition", "key_schema", "key", "value_schema", "value", "timestamp",
                      "kafka_offset"):
        assert getattr(original, attribute) == getattr(transformed, attribute)


def test_drop_existing_header():
    expected = (string_header("existing", "existing-value"),)
    original = source_record(expected + (string_header("to-drop", "existing-value"),))
    transformed = configured("to-drop").apply(original)
    assert_non_headers(original, transformed)
    assert transformed.headers == expected


def test_drop_existing_header_with_multiple_values():
    expected = (string_header("existing", "existing-value"),)
    original = source_record(expected + (string_header("to-drop", "existing-value"),
                                         string_header("to-drop", "existing-other-value")))
    transformed = configured("to-drop").apply(original)
    assert_non_headers(original, transformed)
    assert transformed.headers == expected


def test_drop_non_existing_header():
    expected = (string_header("existing", "existing-value"),)
    original = source_record(expected)
    transformed = configured("to-drop").apply(original)
    assert_non_headers(original, transformed)
    assert transformed.headers == expected


def test_config_rejects_empty_list():
    with pytest.raises(ConfigException, match=r"^Invalid value \[\] for configuration headers: Empty list$"):
        configured()


# --- beyond Kafka's tests --------------------------------------------------------------------


def test_headers_from_a_comma_separated_string_and_order_kept():
    xform = DropHeaders()
    xform.configure({"headers": " a , b "})
    headers = [Header("x", 1, Schema.INT32_SCHEMA), Header("a", None), Header("y", "v"), Header("b", b"")]
    assert xform.apply(source_record(headers)).headers == (headers[0], headers[2])


def test_missing_headers_config():
    with pytest.raises(ConfigException, match='^Missing required configuration "headers" which has no default value.$'):
        DropHeaders().configure({})
