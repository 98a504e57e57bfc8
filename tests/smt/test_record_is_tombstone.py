"""RecordIsTombstone (Kafka has no unit test for it; behaviour: ``record.value() == null``)."""

from __future__ import annotations

from connector.api import Schema
from smt.predicates.record_is_tombstone import RecordIsTombstone
from tests.smt import record


def test_test():
    predicate = RecordIsTombstone()
    predicate.configure({})
    assert predicate.test(record())
    assert predicate.test(record(value_schema=Schema.OPTIONAL_STRING_SCHEMA, value=None, key="k"))
    assert not predicate.test(record(value="v"))
    assert not predicate.test(record(value={}))
    assert not predicate.test(record(value=b""))


def test_no_config_and_repr():
    predicate = RecordIsTombstone()
    predicate.configure({"ignored": "x"})
    assert repr(predicate) == "RecordIsTombstone{}"
    assert RecordIsTombstone().config().config_keys == {}
