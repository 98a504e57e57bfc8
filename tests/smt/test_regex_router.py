"""RegexRouter: ported from Kafka's RegexRouterTest, plus Java regex/replacement semantics."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connector.api import ConfigException
from smt.transforms.regex_router import RegexRouter
from tests.smt import record


def router(regex, replacement):
    xform = RegexRouter()
    xform.configure({"regex": regex, "replacement": replacement})
    return xform


def apply(regex, replacement, topic):
    xform = router(regex, replacement)
    routed = xform.apply(record(topic=topic)).topic
    xform.close()
    return routed


def test_static_replacement():
    assert apply("foo", "bar", "foo") == "bar"


def test_doesnt_match():
    assert apply("foo", "bar", "orig") == "orig"


def test_identity():
    assert apply("(.*)", "$1", "orig") == "orig"


def test_add_prefix():
    assert apply("(.*)", "prefix-$1", "orig") == "prefix-orig"


def test_add_suffix():
    assert apply("(.*)", "$1-suffix", "orig") == "orig-suffix"


def test_slice():
    assert apply("(.*)-(\\d\\d\\d\\d\\d\\d\\d\\d)", "$1", "index-20160117") == "index"


# --- beyond Kafka's tests: java.util.regex semantics ------------------------------------------


def test_whole_topic_must_match():
    assert apply("foo", "bar", "foobar") == "foobar"
    assert apply("foo.*", "bar", "foobar") == "bar"


def test_replace_first_uses_the_first_found_match():
    # matches() succeeds on the whole topic, but replaceFirst() replaces what find() finds first.
    assert apply("a|ab", "X", "ab") == "Xb"


def test_replacement_syntax():
    assert apply("(?<name>[a-z]+)-(\\d+)", "${name}_$2", "orders-12") == "orders_12"
    assert apply("(a)(b)?", "[$2]", "a") == "[]"  # an unmatched group is empty
    assert apply("(.*)", "\\$1-$1", "t") == "$1-t"  # backslash escapes
    assert apply("(.*)", "$10", "t") == "t0"  # $10 is group 1 then '0' when there is no group 10
    groups = "(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)"
    assert apply(groups, "$10", "abcdefghij") == "j"


@pytest.mark.parametrize("replacement, error", [
    ("$", ValueError),
    ("$x", ValueError),
    ("$2", IndexError),
    ("x\\", ValueError),
    ("${missing}", ValueError),
])
def test_bad_replacement_fails_when_a_topic_matches(replacement, error):
    xform = router("(.*)", replacement)  # Kafka accepts it at configure time
    with pytest.raises(error):
        xform.apply(record(topic="orig"))
    no_match = router("x", replacement)
    assert no_match.apply(record(topic="orig")).topic == "orig"


def test_java_regex_syntax():
    assert apply("\\Qa.b\\E(.*)", "$1", "a.bc") == "c"
    assert apply("\\p{Lower}+-(\\p{Digit}+)", "n$1", "abc-42") == "n42"
    assert apply("(?i)ORDERS-(.*)", "$1", "orders-x") == "x"
    assert apply("x(?i)Y", "z", "xy") == "z"  # inline flags mid-pattern apply to the rest
    assert apply("\\w+", "w", "café") == "café"  # \w is ASCII-only in Java


@pytest.mark.parametrize("regex", ["[", "(", "*", "a{", "{x}", "(?P<n>a)", "\\p{Unknown}", "(?<n>{x})"])
def test_invalid_regex_is_a_config_error(regex):
    # Each of these is rejected by java.util.regex.Pattern too.
    with pytest.raises(ConfigException, match=f"^Invalid value {re.escape(regex)} for configuration regex: "
                                              "Invalid regex: "):
        router(regex, "x")


def test_quantifier_with_nothing_before_it_repeats_nothing():
    # Java accepts "{1}" and "a|{2,3}": the braces repeat an empty node.
    assert apply("{1}orders", "x", "orders") == "x"
    assert apply("a|{2,3}", "x", "a") == "x"


@pytest.mark.parametrize("regex", ["[a&&[b]]", "[a[b]]", "\\G"])
def test_java_constructs_without_python_equivalent_are_config_errors(regex):
    # Java accepts these; they cannot be translated, so they are refused up front.
    with pytest.raises(ConfigException, match="Invalid regex: .*not supported"):
        router(regex, "x")


def test_required_configs():
    with pytest.raises(ConfigException, match='Missing required configuration "regex"'):
        RegexRouter().configure({"replacement": "x"})
    with pytest.raises(ConfigException, match='Missing required configuration "replacement"'):
        RegexRouter().configure({"regex": "x"})


def test_record_unchanged_when_no_match_and_origin_kept_when_routed():
    original = record(topic="orig", partition=3, offset=9)
    assert router("foo", "bar").apply(original) is original
    routed = router("(.*)", "new-$1").apply(original)
    assert (routed.topic, routed.kafka_partition, routed.kafka_offset) == ("new-orig", 3, 9)
    assert (routed.original_topic, routed.original_kafka_partition) == ("orig", 3)


# --- property tests ----------------------------------------------------------------------------

TOPICS = st.text(alphabet="abcxyz019._-", min_size=1, max_size=20)


@settings(max_examples=200, deadline=None)
@given(TOPICS)
def test_identity_for_any_topic(topic):
    assert apply("(.*)", "$1", topic) == topic


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="abc", min_size=1, max_size=4), TOPICS)
def test_prefix_strip(prefix, topic):
    routed = apply(f"\\Q{prefix}\\E(.*)", "$1", topic)
    if topic.startswith(prefix):
        assert routed == topic[len(prefix):]
    else:
        assert routed == topic


@settings(max_examples=200, deadline=None)
@given(TOPICS, st.text(alphabet="abc-", max_size=5), st.text(alphabet="xyz-", max_size=5))
def test_wrap_is_literal_prefix_and_suffix(topic, prefix, suffix):
    assert apply("(.+)", f"{prefix}$1{suffix}", topic) == f"{prefix}{topic}{suffix}"
