"""TopicNameMatches: ported from Kafka's TopicNameMatchesTest."""

from __future__ import annotations

import pytest

from connector.api import ConfigException
from smt.predicates.topic_name_matches import TopicNameMatches
from tests.smt import record


def parse(props):
    return TopicNameMatches().config().parse(props)


def record_with_topic(topic):
    return record(topic=topic, partition=None)


def test_pattern_required_in_config():
    with pytest.raises(ConfigException) as raised:
        parse({})
    assert 'Missing required configuration "pattern"' in str(raised.value)


def test_pattern_may_not_be_empty_in_config():
    with pytest.raises(ConfigException) as raised:
        parse({"pattern": ""})
    assert "String must be non-empty" in str(raised.value)


def test_pattern_is_valid_regex_in_config():
    with pytest.raises(ConfigException) as raised:
        parse({"pattern": "["})
    assert "Invalid regex" in str(raised.value)


def test_config():
    assert TopicNameMatches().config().validate({"pattern": "my-prefix-.*"}) == {"pattern": []}
    errors = TopicNameMatches().config().validate({"pattern": "*"})["pattern"]
    assert len(errors) == 1
    assert "Invalid regex" in errors[0]


def test_test():
    predicate = TopicNameMatches()
    predicate.configure({"pattern": "my-prefix-.*"})
    assert predicate.test(record_with_topic("my-prefix-"))
    assert predicate.test(record_with_topic("my-prefix-foo"))
    assert not predicate.test(record_with_topic("x-my-prefix-"))
    assert not predicate.test(record_with_topic("x-my-prefix-foo"))
    assert not predicate.test(record_with_topic("your-prefix-"))
    assert not predicate.test(record_with_topic("your-prefix-foo"))
    assert not predicate.test(record_with_topic(None))


# --- beyond Kafka's tests --------------------------------------------------------------------


def test_configure_rejects_invalid_regex_and_repr():
    with pytest.raises(ConfigException, match=r"^Invalid value \( for configuration pattern: Invalid regex: "):
        TopicNameMatches().configure({"pattern": "("})
    predicate = TopicNameMatches()
    predicate.configure({"pattern": "a|b"})
    assert repr(predicate) == "TopicNameMatches{pattern=a|b}"
    assert predicate.test(record_with_topic("b")) and not predicate.test(record_with_topic("ab"))
