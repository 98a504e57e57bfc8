"""Filter: drops every record (Kafka has no FilterTest; the chain tests use it with predicates)."""

from __future__ import annotations

import smt
from smt.transforms.filter import Filter
from tests.smt import record


def test_drops_every_record():
    xform = Filter()
    xform.configure({})
    assert xform.apply(record(value="v")) is None
    assert xform.apply(record()) is None


def test_ignores_any_config_and_loads_by_alias():
    xform = smt.load("Filter", {"anything": "goes"})
    assert isinstance(xform, Filter)
    assert smt.load("org.apache.kafka.connect.transforms.Filter").apply(record()) is None
