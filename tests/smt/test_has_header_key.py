"""HasHeaderKey: ported from Kafka's HasHeaderKeyTest."""

from __future__ import annotations

import pytest

from connector.api import ConfigException, Header
from smt.predicates.has_header_key import HasHeaderKey
from tests.smt import record


def record_with_headers(*keys):
    return record(topic=None, partition=None, headers=[Header(key, None, None) for key in keys])


def test_name_required_in_config():
    with pytest.raises(ConfigException) as raised:
        HasHeaderKey().config().parse({})
    assert 'Missing required configuration "name"' in str(raised.value)


def test_name_may_not_be_empty_in_config():
    with pytest.raises(ConfigException) as raised:
        HasHeaderKey().config().parse({"name": ""})
    assert "String must be non-empty" in str(raised.value)


def test_config():
    assert HasHeaderKey().config().validate({"name": "foo"}) == {"name": []}
    errors = HasHeaderKey().config().validate({"name": ""})
    assert errors["name"] == ["Invalid value  for configuration name: String must be non-empty"]


def test_test():
    predicate = HasHeaderKey()
    predicate.configure({"name": "foo"})
    assert predicate.test(record_with_headers("foo"))
    assert predicate.test(record_with_headers("foo", "bar"))
    assert predicate.test(record_with_headers("bar", "foo", "bar", "foo"))
    assert not predicate.test(record_with_headers("bar"))
    assert not predicate.test(record_with_headers("bar", "bar"))
    assert not predicate.test(record_with_headers())
    assert not predicate.test(record(topic=None, partition=None))


def test_repr():
    predicate = HasHeaderKey()
    predicate.configure({"name": "foo"})
    assert repr(predicate) == "HasHeaderKey{name='foo'}"
