"""Values with a schema (Confluent Avro, JSON with schemas) through an SMT chain column-wise give the
per-record strategy's tables."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from tests.confluent import serialization_context, unique
from tests.data import test_json_envelope_pipeline as envelope
from tests.data.test_avro_pipeline import EVENT, _serializer, events
from tests.smt_batch.harness import KAFKA, per_record_and_columnar, raw_batch, sink_props
from tests.smt_batch.strategies import chains
from tests.smt_batch.test_pipeline import assert_same_tables

AVRO = "io.confluent.connect.avro.AvroConverter"
FIELDS = [f["name"] for f in EVENT["fields"]]
SMT3 = {
    "transforms": "insert,rename,mask",
    "transforms.insert.type": f"{KAFKA}.InsertField$Value",
    "transforms.insert.static.field": "source", "transforms.insert.static.value": "bench",
    "transforms.rename.type": f"{KAFKA}.ReplaceField$Value", "transforms.rename.renames": "name:customer",
    "transforms.mask.type": f"{KAFKA}.MaskField$Value", "transforms.mask.fields": "amount",
}
VALUE = {"id": 1, "name": "a", "ts": dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc), "amount": 1.5,
         "score": 0.5, "count": 3, "active": True, "note": None, "day": dt.date(2024, 1, 2), "tags": ["x"],
         "blob": b"\x00", "where": {"city": "Oslo", "zip": None}, "kind": "B"}

def _mostly(common: st.SearchStrategy, rare: st.SearchStrategy) -> st.SearchStrategy:
    return st.integers(0, 9).flatmap(lambda i: rare if i == 0 else common)


names = st.sampled_from(FIELDS + ["place", "ids", "source", "customer", "wrapped"])
suffix = st.sampled_from(["", "?", "!"])


def _insert(draw) -> dict[str, str]:
    stage = {"type": f"{KAFKA}.InsertField$Value"}
    for key in draw(st.sets(st.sampled_from(["topic", "partition", "offset", "timestamp", "static"]), min_size=1)):
        stage[f"{key}.field"] = draw(st.sampled_from(["source", "meta", key, "name"])) + draw(suffix)
    if "static.field" in stage:
        stage["static.value"] = draw(st.sampled_from(["bench", "x"]))
    return stage


def _replace(draw) -> dict[str, str]:
    stage = {"type": f"{KAFKA}.ReplaceField$Value"}
    renames = draw(st.lists(st.tuples(names, names), max_size=2, unique_by=lambda p: p[0]))
    if renames:
        stage["renames"] = ",".join(f"{a}:{b}" for a, b in renames)
    if draw(st.booleans()):
        stage["exclude"] = ",".join(draw(st.sets(names, min_size=1, max_size=2)))
    if draw(st.integers(0, 3)) == 0:
        stage["include"] = ",".join(draw(st.sets(names, min_size=1, max_size=4)))
    return stage


def _mask(draw) -> dict[str, str]:
    stage = {"type": f"{KAFKA}.MaskField$Value", "fields": ",".join(draw(st.sets(names, min_size=1, max_size=3)))}
    replacement = draw(st.sampled_from([None, "7", "x", "1.5", "-0.0"]))
    if replacement is not None:
        stage["replacement"] = replacement
    return stage


def _hoist(draw) -> dict[str, str]:
    return {"type": f"{KAFKA}.HoistField$Value", "field": "wrapped"}


def _extract(draw) -> dict[str, str]:
    return {"type": f"{KAFKA}.ExtractField$Value", "field": draw(st.sampled_from(["where", "place", "name", "nope"]))}


def _filter(draw) -> dict[str, str]:
    return {"type": f"{KAFKA}.Filter"}


CAST_TARGETS = ["int8", "int16", "int32", "int64", "float32", "float64", "boolean", "string"]
# mostly fields every value casts (the rest fail per record, or are absent)
CAST_FIELDS = _mostly(st.sampled_from(["id", "ts", "amount", "score", "count", "active", "note", "day"]),
                      st.sampled_from(["blob", "kind", "place", "nope"]))
TIME_FIELDS = _mostly(st.sampled_from(["ts", "day"]), st.sampled_from(["id", "name", "count", "nope"]))


def _cast(draw) -> dict[str, str]:
    if draw(st.integers(0, 9)) == 0:  # the whole value: fails for a Struct, works after ExtractField
        return {"type": f"{KAFKA}.Cast$Value", "spec": draw(st.sampled_from(CAST_TARGETS))}
    casts = draw(st.dictionaries(CAST_FIELDS, st.sampled_from(CAST_TARGETS), min_size=1, max_size=3))
    stage = {"type": f"{KAFKA}.Cast$Value", "spec": ",".join(f"{k}:{v}" for k, v in casts.items())}
    if draw(st.booleans()):
        stage["replace.null.with.default"] = "false"
    return stage


def _timestamp(draw) -> dict[str, str]:
    stage = {"type": f"{KAFKA}.TimestampConverter$Value",
             "target.type": draw(st.sampled_from(["string", "unix", "Date", "Time", "Timestamp"])),
             "format": draw(st.sampled_from(["yyyy-MM-dd HH:mm:ss.SSS", "yyyy-MM-dd", "EEE d MMM yy"])),
             "unix.precision": draw(st.sampled_from(["milliseconds", "seconds", "microseconds", "nanoseconds"]))}
    if draw(st.integers(0, 4)):
        stage["field"] = draw(TIME_FIELDS)
    return stage


def _flatten(draw) -> dict[str, str]:
    return {"type": f"{KAFKA}.Flatten$Value", "delimiter": draw(st.sampled_from([".", "_"]))}


def _set_metadata(draw) -> dict[str, str]:
    return {"type": f"{KAFKA}.SetSchemaMetadata$Value", "schema.name": draw(st.sampled_from(["renamed", "Event"])),
            "schema.version": draw(st.sampled_from(["1", "7"]))}


# Found by hypothesis: a null Struct taken out of a record still carries its schema, which is no timestamp
# type, so TimestampConverter fails for it per record (whatever the value), and so must the batch form.
NULL_WHERE_TO_TIMESTAMP = {
    "transforms": "s0,s1", "predicates": "p0",
    "predicates.p0.type": f"{KAFKA}.predicates.TopicNameMatches", "predicates.p0.pattern": "orders.*",
    "transforms.s0.type": f"{KAFKA}.ExtractField$Value", "transforms.s0.field": "where",
    "transforms.s1.type": f"{KAFKA}.TimestampConverter$Value", "transforms.s1.target.type": "string",
    "transforms.s1.format": "yyyy-MM-dd", "transforms.s1.unix.precision": "milliseconds",
    "transforms.s1.predicate": "p0",
}

STAGES = [_insert, _replace, _mask, _hoist, _extract, _filter, _cast, _timestamp, _flatten, _set_metadata]


def typed_chains() -> st.SearchStrategy[dict[str, str]]:
    """A connector config fragment: 1-3 stages with typed batch forms, some with predicates (TopicNameMatches,
    RecordIsTombstone: the ones a typed chain takes column-wise)."""
    return chains(stages=STAGES, predicate_choices=(0, 2))


def _stages_event(transforms: dict[str, str], pipeline) -> None:
    """Which SMTs the batches that went column-wise ran (so that every typed form is seen to take part)."""
    if pipeline.batches["columnar"]:
        for key, value in transforms.items():
            if key.startswith("transforms.") and key.count(".") == 2 and key.endswith(".type"):
                event(f"column-wise through {value.rsplit('.', 1)[-1]}")


def _props(root: Path, url: str, transforms: dict[str, str]) -> dict[str, str]:
    return {**sink_props(root, transforms=transforms), "value.converter": AVRO,
            "value.converter.schema.registry.url": url}


def _both(url: str, transforms: dict[str, str], batches):
    return per_record_and_columnar(lambda root: _props(root, url, transforms), batches)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(transforms=typed_chains(), values=st.lists(_mostly(events, st.none()), min_size=1, max_size=8),
       topic=st.sampled_from(["orders", "audit"]))
@example(transforms=NULL_WHERE_TO_TIMESTAMP, values=[{**VALUE, "where": None}], topic="orders")
@example(transforms=NULL_WHERE_TO_TIMESTAMP, values=[None, {**VALUE, "where": None}, None], topic="orders")
@example(transforms=NULL_WHERE_TO_TIMESTAMP, values=[None, None], topic="orders")
def test_columnar_avro_with_smts_equals_per_record(schema_registry, transforms, values, topic):
    serialize = _serializer(schema_registry.url, EVENT)
    context = serialization_context(topic)
    encoded = [None if v is None else serialize(v, context) for v in values]
    batches = [raw_batch(encoded, topic=topic), raw_batch(encoded, topic=topic, first_offset=len(encoded))]
    (expected, _), (got, pipeline) = _both(schema_registry.url, transforms, batches)
    assert_same_tables(expected, got)
    event(f"outcome: {expected[0]}")
    if pipeline is not None:
        assert pipeline.path == "columnar Avro with batch SMTs"
        event(f"columnar batches: {pipeline.batches['columnar']}")
        _stages_event(transforms, pipeline)
        for reason in pipeline.batches:
            if reason.startswith("declined"):
                event(reason)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), transforms=typed_chains())
def test_columnar_envelopes_with_smts_equal_per_record(data, transforms):
    encode = data.draw(envelope.envelopes())
    payload = envelope.payloads(False, ("id", "name"))
    rows = data.draw(st.lists(_mostly(payload, st.none()), min_size=1, max_size=8))
    values = [None if p is None else encode(envelope.V1, p) for p in rows]
    batches = [raw_batch(values), raw_batch(values, first_offset=len(values))]
    (expected, _), (got, pipeline) = per_record_and_columnar(
        lambda root: {**sink_props(root, transforms=transforms), "value.converter.schemas.enable": "true"}, batches)
    assert_same_tables(expected, got)
    event(f"outcome: {expected[0]}")
    if pipeline is not None:
        assert pipeline.path == "columnar JSON with schemas with batch SMTs"
        event(f"columnar batches: {pipeline.batches['columnar']}")
        _stages_event(transforms, pipeline)
        for reason in pipeline.batches:
            if reason.startswith("declined"):
                event(reason)


def test_the_bench_chain_runs_column_wise_after_the_table_exists(schema_registry):
    topic = unique("avro-smt3")
    serialize = _serializer(schema_registry.url, EVENT)
    values = [serialize({**VALUE, "id": i}, serialization_context(topic)) for i in range(200)]
    batches = [raw_batch(values[:100], topic=topic), raw_batch(values[100:], topic=topic, first_offset=100)]
    (expected, _), (got, pipeline) = _both(schema_registry.url, SMT3, batches)
    assert_same_tables(expected, got)
    table = dict(got[1])["db.t"]
    assert "customer" in table.column_names and "name" not in table.column_names
    assert set(table.column("source").to_pylist()) == {"bench"}
    assert set(table.column("amount").to_pylist()) == {0.0}
    # the first attempt asks for the table (per record); the rest is columnar
    assert pipeline.batches == {"declined: table to create": 1, "per-record": 1, "columnar": 2}


def test_a_chain_with_a_stage_without_typed_form_runs_per_record_and_says_why(schema_registry, caplog):
    transforms = {"transforms": "copy", "transforms.copy.type": "org.apache.iceberg.connect.transforms.CopyValue",
                  "transforms.copy.source.field": "name", "transforms.copy.target.field": "copied"}
    topic = unique("avro-copy")
    value = _serializer(schema_registry.url, EVENT)(VALUE, serialization_context(topic))
    with caplog.at_level("INFO"):
        (expected, _), (got, pipeline) = _both(schema_registry.url, transforms, [raw_batch([value], topic=topic)])
    assert_same_tables(expected, got)
    assert pipeline.path == "per-record"
    assert "has no batch form for values with a schema" in caplog.text


def test_a_field_name_inserted_twice_fails_like_per_record(schema_registry):
    transforms = {"transforms": "insert", "transforms.insert.type": f"{KAFKA}.InsertField$Value",
                  "transforms.insert.static.field": "name", "transforms.insert.static.value": "x"}
    topic = unique("avro-dup")
    value = _serializer(schema_registry.url, EVENT)(VALUE, serialization_context(topic))
    (expected, _), (got, _) = _both(schema_registry.url, transforms, [raw_batch([value], topic=topic)] * 2)
    assert expected == got and expected[0] == "error"
