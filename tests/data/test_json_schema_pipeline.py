"""The columnar JSON Schema strategy gives the per-record strategy's tables (Confluent JSON Schema, a real registry)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from connector.api.declined import Declined
from converters.batch.json_schema import JsonSchemaBatchReader
from converters.confluent.json_schema import JsonSchemaConverter
from tests.confluent import confluent_client, converter, serialization_context, unique
from tests.smt_batch.harness import per_record_and_columnar, raw_batch, sink_props
from tests.smt_batch.test_pipeline import assert_same_tables

JSON_SCHEMA = "io.confluent.connect.json.JsonSchemaConverter"
STRATEGY = "columnar JSON Schema"


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"oneOf": [{"type": "null"}, schema]}


PLACE = {"type": "object", "properties": {
    "city": {"type": "string"}, "zip": _nullable({"type": "integer", "connect.type": "int16"})}}
EVENT = {"$schema": "http://json-schema.org/draft-07/schema#", "title": "bench.Event", "type": "object",
         "properties": {
             "id": {"type": "integer"}, "name": {"type": "string"}, "amount": {"type": "number"},
             "count": {"type": "integer", "connect.type": "int32"}, "active": {"type": "boolean"},
             "note": _nullable({"type": "string"}), "nick": {"type": ["string", "null"]},
             "tags": {"type": "array", "items": {"type": "string"}},
             "ids": {"type": "array", "items": {"type": "integer"}},
             "where": _nullable(PLACE)}}
# a later version adds an optional field: the table evolves (per record), then the columnar path takes over again
EVENT_V2 = {**EVENT, "properties": {**EVENT["properties"], "extra": _nullable({"type": "integer"})}}

ints = st.integers(-(2**31), 2**31 - 1)
events = st.fixed_dictionaries({
    "id": st.integers(-(2**63), 2**63 - 1), "name": st.text(max_size=8),
    "amount": st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**60), 2**60),
    "count": ints, "active": st.booleans(), "note": st.none() | st.text(max_size=4),
    "nick": st.none() | st.text(max_size=3), "tags": st.lists(st.text(max_size=3), max_size=3),
    "ids": st.lists(st.integers(-(2**63), 2**63 - 1), max_size=3),
    "where": st.none() | st.fixed_dictionaries({"city": st.text(max_size=4),
                                                "zip": st.none() | st.integers(-(2**15), 2**15 - 1)}),
})
# payload text the JSONSerializer would not write (or refuse), framed by hand: each must give what per record gives
TWEAKS = ["none", "compact", "negative zero int", "negative zero float", "integral float id", "string id",
          "unknown field", "missing required", "null required", "count out of range", "zip out of range",
          "key twice", "white space after", "two values", "null element", "tiny", "control character"]


def _serializer(url: str, schema: dict):
    """Serializes with ``schema``, registered under the topic's subject (any version compatible)."""
    from confluent_kafka.schema_registry.json_schema import JSONSerializer

    serializer = JSONSerializer(json.dumps(schema), confluent_client(url))
    return lambda value, topic: serializer(value, serialization_context(topic))


def _tweak(framed: bytes, tweak: str) -> bytes:
    frame, value = framed[:5], json.loads(framed[5:])
    text = json.dumps(value)
    if tweak == "compact":
        text = json.dumps(value, separators=(",", ":"))
    elif tweak.startswith("negative zero"):
        text = json.dumps({**value, "amount": 0}).replace('"amount": 0', '"amount": ' + (
            "-0" if tweak.endswith("int") else "-0.0"))
    elif tweak == "integral float id":
        text = json.dumps({**value, "id": 3}).replace('"id": 3', '"id": 3.0')
    elif tweak == "string id":
        text = json.dumps({**value, "id": "3"})
    elif tweak == "unknown field":
        text = json.dumps({**value, "other": [1, {"x": None}]})
    elif tweak == "missing required":
        text = json.dumps({k: v for k, v in value.items() if k != "name"})
    elif tweak == "null required":
        text = json.dumps({**value, "active": None})
    elif tweak == "count out of range":
        text = json.dumps({**value, "count": 2**31})
    elif tweak == "zip out of range":
        text = json.dumps({**value, "where": {"city": "c", "zip": 2**15}})
    elif tweak == "key twice":
        text = text[:-1] + ', "count": 1}'
    elif tweak == "white space after":
        text += " "
    elif tweak == "two values":
        text += "{}"
    elif tweak == "null element":
        text = json.dumps({**value, "ids": [1, None]})
    elif tweak == "tiny":
        text = json.dumps({**value, "amount": 0}).replace('"amount": 0', '"amount": -1e-400')
    elif tweak == "control character":
        text = json.dumps({**value, "name": "a~b"}).replace("a~b", "a\tb")  # a raw tab in a string
    return frame + text.encode()


def _props(root: Path, url: str, **extra: str) -> dict[str, str]:
    return {**sink_props(root, **extra), "value.converter": JSON_SCHEMA,
            "value.converter.schema.registry.url": url}


def _both(url: str, batches, **extra: str):
    """(per-record outcome, columnar outcome and pipeline), each on its own catalog."""
    return per_record_and_columnar(lambda root: _props(root, url, **extra), batches)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(values=st.lists(st.one_of(st.tuples(events, st.sampled_from(TWEAKS[:2]) | st.sampled_from(TWEAKS)),
                                 st.none()), min_size=1, max_size=12),
       evolve=st.booleans())
def test_columnar_json_schema_equals_per_record(schema_registry, values, evolve):
    topic = unique("json-schema-cols")
    confluent_client(schema_registry.url).set_compatibility(f"{topic}-value", "NONE")
    first, later = _serializer(schema_registry.url, EVENT), _serializer(schema_registry.url, EVENT_V2)
    v1 = [None if v is None else _tweak(first(v[0], topic), v[1]) for v in values]
    v2 = [None if v is None else _tweak(later({**v[0], "extra": 7}, topic), v[1]) for v in values]
    batches = [raw_batch(v1, topic=topic), raw_batch(v1, topic=topic, first_offset=len(v1)),
               raw_batch(v2, topic=topic, first_offset=2 * len(v1))]
    extra = {"iceberg.tables.evolve-schema-enabled": "true"} if evolve else {}
    (expected, _), (got, pipeline) = _both(schema_registry.url, batches, **extra)
    assert_same_tables(expected, got)
    if pipeline is not None:
        assert pipeline.path == STRATEGY
        event(f"columnar batches: {pipeline.batches['columnar']}")


BASE = {"id": 1, "name": "a", "amount": 1.5, "count": 3, "active": True, "note": None, "nick": "n",
        "tags": ["x"], "ids": [], "where": {"city": "Oslo", "zip": None}}


def _run(url: str, schema: dict, values: list[dict], *, tweak: str = "none", **extra: str):
    topic = unique("json-schema")
    serialize = _serializer(url, schema)
    framed = [_tweak(serialize(v, topic), tweak) for v in values]
    batches = [raw_batch(framed, topic=topic), raw_batch(framed, topic=topic, first_offset=len(framed))]
    (expected, _), (got, pipeline) = _both(url, batches, **extra)
    assert_same_tables(expected, got)
    return pipeline, framed


def test_a_batch_of_one_schema_is_read_column_wise_after_the_table_exists(schema_registry):
    pipeline, _ = _run(schema_registry.url, EVENT, [{**BASE, "id": i} for i in range(100)])
    assert pipeline.path == STRATEGY
    # the first attempt asks for the table (per record); the rest is columnar
    assert pipeline.batches == {"declined: table to create": 1, "per-record": 1, "columnar": 2}, pipeline.batches


def _schema_id(value: bytes) -> int:
    return int.from_bytes(value[1:5], "big")


def _declines(pipeline) -> set[str]:
    return {k for k in pipeline.batches if k.startswith("declined: ") and k != "declined: table to create"}


def _with(name: str, schema: dict) -> dict:
    return {**EVENT, "properties": {**EVENT["properties"], name: schema}}


def test_schema_features_the_json_converter_rules_do_not_cover_decline_with_a_reason(schema_registry):
    url = schema_registry.url
    cases = [
        (_with("kind", {"type": "string", "enum": ["A", "B"]}), {"kind": "A"},
         "Connect parameters (an enum or connect.parameters) (field kind)"),
        (_with("ratio", {"type": "number", "connect.type": "float32"}), {"ratio": 0.5}, "a FLOAT32 (field ratio)"),
        (_with("either", {"oneOf": [{"type": "integer"}, {"type": "string"}]}), {"either": 1},
         "a union (field either)"),
        (_with("dflt", {"type": "string", "default": "x"}), {"dflt": "y"}, "a default value (field dflt)"),
        (_with("attrs", {"type": "object", "additionalProperties": {"type": "integer"}, "connect.type": "map"}),
         {"attrs": {"a": 1}}, "a MAP (field attrs)"),
        (_with("blob", {"type": "string", "connect.type": "bytes"}), {"blob": "AA=="}, "a BYTES (field blob)"),
    ]
    for schema, extra_value, reason in cases:
        pipeline, framed = _run(url, schema, [{**BASE, **extra_value}])
        assert _declines(pipeline) == {f"declined: schema {_schema_id(framed[0])} has {reason}"}, pipeline.batches


@pytest.mark.parametrize("tweak, reason", [
    ("negative zero float", "field amount: a negative zero"),
    ("negative zero int", "field amount: a negative zero"),  # -0 is 0.0 per record, but -0.0 stays negative
    ("white space after", "a payload that is not a JSON object (or has white space around it)"),
    ("two values", "a payload holding more than one JSON value"),
    ("null required", "a null in required field active"),
    ("missing required", "a null in required field name"),
    ("count out of range", "field count: a value out of the INT32 range"),
    ("zip out of range", "field where.zip: a value out of the INT16 range"),
    ("null element", "a null element in field ids"),
    ("tiny", "a number with a three-digit negative exponent in a payload"),
    ("control character", "a control character or line break in a payload"),
    ("integral float id", "payloads the JSON reader refuses"),
    ("string id", "payloads the JSON reader refuses"),
    ("key twice", "payloads the JSON reader refuses"),
])
def test_payloads_read_otherwise_per_record_decline_with_a_reason(schema_registry, tweak, reason):
    topic = unique("json-schema-payload")
    values = pa.array([_tweak(_serializer(schema_registry.url, EVENT)(BASE, topic), tweak)] * 2, pa.binary())
    reader = JsonSchemaBatchReader(converter(JsonSchemaConverter, schema_registry.url))
    with pytest.raises(Declined) as declined:
        reader.decode(topic, values, raw_batch([None], topic=topic).column("headers"))
    assert declined.value.reason.startswith(reason)
    # and the pipeline gives what per record gives (a table, or the same error)
    _run(schema_registry.url, EVENT, [BASE, BASE], tweak=tweak)


def test_values_read_as_another_schema_or_validated_decline(schema_registry):
    pipeline, _ = _run(schema_registry.url, EVENT, [BASE], **{"value.converter.json.fail.invalid.schema": "true"})
    assert _declines(pipeline) == {"declined: values need the converter (DataException)"}
    topic_schema = EVENT_V2
    url = schema_registry.url
    topic = unique("json-schema-latest")
    confluent_client(url).set_compatibility(f"{topic}-value", "NONE")
    old = _serializer(url, EVENT)(BASE, topic)
    _serializer(url, topic_schema)({**BASE, "extra": 1}, topic)  # a newer version of the subject
    (expected, _), (got, pipeline) = _both(url, [raw_batch([old], topic=topic)] * 2,
                                           **{"value.converter.use.latest.version": "true",
                                              "value.converter.auto.register.schemas": "false"})
    assert_same_tables(expected, got)
    assert _declines(pipeline) == {"declined: values need the converter (DataException)"}


def test_schema_ids_in_headers_and_mixed_ids_decline(schema_registry):
    url = schema_registry.url
    topic = unique("json-schema-mixed")
    confluent_client(url).set_compatibility(f"{topic}-value", "NONE")
    values = [_serializer(url, EVENT)(BASE, topic), _serializer(url, EVENT_V2)({**BASE, "extra": 1}, topic)]
    (expected, _), (got, pipeline) = _both(url, [raw_batch(values, topic=topic)] * 2,
                                           **{"iceberg.tables.evolve-schema-enabled": "true"})
    assert_same_tables(expected, got)
    assert "declined: several schema ids in one batch" in _declines(pipeline)
    batch = raw_batch(values[:1], topic=topic, headers=[[("__value_schema_id", b"\x01" + bytes(16))]])
    with pytest.raises(Declined, match="schema ids in record headers"):
        JsonSchemaBatchReader(None).decode(topic, batch.column("value"), batch.column("headers"))
