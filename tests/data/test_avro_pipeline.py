"""The columnar Avro strategy gives the per-record strategy's tables (Confluent Avro through a real registry)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from converters.batch.avro import _bodies, _long
from tests.confluent import confluent_client, serialization_context, unique
from tests.smt_batch.harness import per_record_and_columnar, raw_batch, sink_props
from tests.smt_batch.test_pipeline import assert_same_tables

AVRO = "io.confluent.connect.avro.AvroConverter"

EVENT = {"type": "record", "name": "Event", "namespace": "bench", "fields": [
    {"name": "id", "type": "long"},
    {"name": "name", "type": "string"},
    {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "amount", "type": "double"},
    {"name": "score", "type": "float"},
    {"name": "count", "type": "int"},
    {"name": "active", "type": "boolean"},
    {"name": "note", "type": ["null", "string"], "default": None},
    {"name": "day", "type": {"type": "int", "logicalType": "date"}},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "blob", "type": "bytes"},
    {"name": "where", "type": ["null", {"type": "record", "name": "Place", "fields": [
        {"name": "city", "type": "string"}, {"name": "zip", "type": ["null", "int"], "default": None}]}],
     "default": None},
    {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B", "C"]}},
]}
# fields a later version adds: the table evolves (per record), then the columnar path takes over again
EVENT_V2 = {**EVENT, "fields": EVENT["fields"] + [{"name": "extra", "type": ["null", "long"], "default": None}]}
UNSUPPORTED = {"type": "record", "name": "WithMap", "fields": [
    {"name": "id", "type": "long"}, {"name": "attrs", "type": {"type": "map", "values": "string"}}]}

ints = st.integers(-(2**31), 2**31 - 1)
events = st.fixed_dictionaries({
    "id": st.integers(-(2**63), 2**63 - 1), "name": st.text(max_size=8),
    "ts": st.datetimes(dt.datetime(1970, 1, 1), dt.datetime(2200, 1, 1)).map(
        lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000, tzinfo=dt.timezone.utc)),
    "amount": st.floats(allow_nan=False), "score": st.floats(width=32, allow_nan=False),
    "count": ints, "active": st.booleans(), "note": st.none() | st.text(max_size=4),
    "day": st.dates(dt.date(1900, 1, 1), dt.date(2300, 1, 1)), "tags": st.lists(st.text(max_size=3), max_size=3),
    "blob": st.binary(max_size=6),
    "where": st.none() | st.fixed_dictionaries({"city": st.text(max_size=4), "zip": st.none() | ints}),
    "kind": st.sampled_from(["A", "B", "C"]),
})


def _serializer(url: str, schema: dict):
    from confluent_kafka.schema_registry.avro import AvroSerializer

    return AvroSerializer(confluent_client(url), json.dumps(schema))


def _props(root: Path, url: str, **extra: str) -> dict[str, str]:
    return {**sink_props(root, **extra), "value.converter": AVRO, "value.converter.schema.registry.url": url}


def _both(url: str, batches, **extra: str):
    """(per-record outcome, columnar outcome and pipeline), each on its own catalog."""
    return per_record_and_columnar(lambda root: _props(root, url, **extra), batches)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(values=st.lists(st.one_of(events, st.none()), min_size=1, max_size=12), evolve=st.booleans())
def test_columnar_avro_equals_per_record(schema_registry, values, evolve):
    topic = unique("avro-cols")
    first, later = _serializer(schema_registry.url, EVENT), _serializer(schema_registry.url, EVENT_V2)
    context = serialization_context(topic)
    v1 = [None if v is None else first(v, context) for v in values]
    v2 = [None if v is None else later({**v, "extra": 7}, context) for v in values]
    batches = [raw_batch(v1, topic=topic), raw_batch(v1, topic=topic, first_offset=len(v1)),
               raw_batch(v2, topic=topic, first_offset=2 * len(v1))]
    extra = {"iceberg.tables.evolve-schema-enabled": "true"} if evolve else {}
    (expected, _), (got, pipeline) = _both(schema_registry.url, batches, **extra)
    assert_same_tables(expected, got)
    if pipeline is not None:
        assert pipeline.path == "columnar Avro"
        event(f"columnar batches: {pipeline.batches['columnar']}")


def test_a_batch_of_one_schema_is_read_column_wise_after_the_table_exists(schema_registry):
    topic = unique("avro-batch")
    serialize = _serializer(schema_registry.url, EVENT)
    value = {"id": 1, "name": "a", "ts": dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc), "amount": 1.5,
             "score": 0.5, "count": 3, "active": True, "note": None, "day": dt.date(2024, 1, 2), "tags": ["x"],
             "blob": b"\x00", "where": {"city": "Oslo", "zip": None}, "kind": "B"}
    values = [serialize({**value, "id": i}, serialization_context(topic)) for i in range(200)]
    (expected, _), (got, pipeline) = _both(schema_registry.url, [raw_batch(values[:100], topic=topic),
                                                                raw_batch(values[100:], topic=topic,
                                                                          first_offset=100)])
    assert_same_tables(expected, got)
    # the first attempt asks for the table (per record); the rest is columnar
    assert pipeline.batches == {"declined: table to create": 1, "per-record": 1, "columnar": 2}


def test_schemas_the_columnar_reader_cannot_promise_decline_with_a_reason(schema_registry):
    topic = unique("avro-map")
    serialize = _serializer(schema_registry.url, UNSUPPORTED)
    values = [serialize({"id": i, "attrs": {"k": "v"}}, serialization_context(topic)) for i in range(3)]
    (expected, _), (got, pipeline) = _both(schema_registry.url, [raw_batch(values, topic=topic)] * 2)
    assert_same_tables(expected, got)
    assert pipeline.batches[f"declined: schema {_schema_id(values[0])} has a map field attrs"] == 3, pipeline.batches


def test_mixed_schema_ids_in_one_batch_decline(schema_registry):
    topic = unique("avro-mixed")
    context = serialization_context(topic)
    base = {"id": 1, "name": "a", "ts": dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc), "amount": 1.0,
            "score": 1.0, "count": 1, "active": False, "note": "n", "day": dt.date(2024, 1, 1), "tags": [],
            "blob": b"", "where": None, "kind": "A"}
    values = [_serializer(schema_registry.url, EVENT)(base, context),
              _serializer(schema_registry.url, EVENT_V2)({**base, "extra": 1}, context)]
    (expected, _), (got, pipeline) = _both(schema_registry.url, [raw_batch(values, topic=topic)] * 2,
                                           **{"iceberg.tables.evolve-schema-enabled": "true"})
    assert_same_tables(expected, got)
    assert pipeline.batches["declined: several schema ids in one batch"] >= 1


def _schema_id(value: bytes) -> int:
    return int.from_bytes(value[1:5], "big")


@pytest.mark.parametrize("value", [0, 1, 63, 64, 8191, 8192, 2**40, -1, -(2**40)])
def test_block_counts_are_avro_longs(value):
    import fastavro

    parsed = fastavro.parse_schema("long")
    import io

    out = io.BytesIO()
    fastavro.schemaless_writer(out, parsed, value)
    assert _long(value) == out.getvalue()


def test_bodies_drop_each_frame():
    import pyarrow as pa

    values = pa.array([b"\x00\x00\x00\x00\x01abc", b"\x00\x00\x00\x00\x01", b"\x00\x00\x00\x00\x01xy"])
    assert _bodies(values) == b"abcxy"
    assert _bodies(values.slice(1)) == b"xy"


def test_a_value_with_trailing_bytes_declines_instead_of_shifting_the_next_records(schema_registry):
    topic = unique("avro-trailing")
    serialize = _serializer(schema_registry.url, EVENT)
    base = {"id": 1, "name": "a", "ts": dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc), "amount": 1.0,
            "score": 1.0, "count": 1, "active": False, "note": "n", "day": dt.date(2024, 1, 1), "tags": ["t"],
            "blob": b"", "where": None, "kind": "A"}
    values = [serialize({**base, "id": i}, serialization_context(topic)) for i in range(4)]
    values[1] += b"\x02\x04"  # fastavro reads one record and ignores what follows; back to back it would not
    (expected, _), (got, pipeline) = _both(schema_registry.url, [raw_batch(values, topic=topic)] * 2)
    assert_same_tables(expected, got)
    assert pipeline.batches["declined: values whose bytes are not exactly one record each"] >= 2


@given(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=50))
def test_zigzag_sizes_are_the_lengths_of_avro_longs(values):
    import numpy as np

    from converters.batch.avro_sizes import zigzag_sizes

    assert zigzag_sizes(np.array(values, dtype=np.int64)).tolist() == [len(_long(v)) for v in values]


def test_with_tolerance_bad_values_are_screened_out_and_the_good_ones_read_column_wise(schema_registry):
    topic = unique("avro-tolerant")
    serialize = _serializer(schema_registry.url, EVENT)
    value = {"id": 1, "name": "a", "ts": dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc), "amount": 1.5,
             "score": 0.5, "count": 3, "active": True, "note": None, "day": dt.date(2024, 1, 2), "tags": ["x"],
             "blob": b"\x00", "where": None, "kind": "B"}
    values = [serialize({**value, "id": i}, serialization_context(topic)) for i in range(600)]
    values[310] = b"\x07" + values[310][1:]  # wrong magic byte
    values[320] = b"\x00\x00"  # shorter than the frame
    values[330] = b"\x00" + (987_654).to_bytes(4, "big") + values[330][5:]  # unknown schema id
    batches = [raw_batch(values[:300], topic=topic), raw_batch(values[300:], topic=topic, first_offset=300)]
    (expected, per_record), (got, pipeline) = _both(schema_registry.url, batches, **{"errors.tolerance": "all"})
    assert_same_tables(expected, got)
    assert [(r.offset, r.stage) for r in pipeline.take_errant()] == \
        [(r.offset, r.stage) for r in per_record.take_errant()] == \
        [(310, "VALUE_CONVERTER"), (320, "VALUE_CONVERTER"), (330, "VALUE_CONVERTER")]
    assert pipeline.batches["columnar"] == 2, pipeline.batches  # the second batch's good rows too
    assert any(k.startswith(("screened", "split")) for k in pipeline.batches), pipeline.batches
