"""The columnar JSON-with-schemas strategy gives the per-record strategy's tables (JsonConverter envelopes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from connector.api.declined import Declined
from converters.batch.json_envelope import EnvelopeReader, envelope_prefix
from converters.json import JsonConverter
from tests.smt_batch.harness import per_record_and_columnar, raw_batch, sink_props
from tests.smt_batch.test_pipeline import assert_same_tables

STRATEGY = "columnar JSON with schemas"


def field(label: str, kind: str, optional: bool = True, **extra: Any) -> dict[str, Any]:
    return {"type": kind, "optional": optional, **extra, "field": label}


PLACE = [field("city", "string", False), field("zip", "int32")]
FIELDS = [
    field("id", "int64", False), field("count", "int32"), field("score", "float"), field("amount", "double"),
    field("active", "boolean"), field("name", "string", False),
    field("tags", "array", items={"type": "string", "optional": True}),
    field("ids", "array", items={"type": "int32", "optional": False}),
    field("place", "struct", fields=PLACE),
]
V1 = {"type": "struct", "fields": FIELDS, "optional": False}
# a later version adds an optional field: the table evolves (per record), then the columnar path takes over again
V2 = {**V1, "fields": FIELDS + [field("extra", "int64")]}
REQUIRED_PLACE = {**V1, "fields": FIELDS[:-1] + [field("place", "struct", False, fields=PLACE)]}

INT32 = st.integers(-(2**31), 2**31 - 1)
WRONG = st.one_of(st.text(max_size=3), st.booleans(), st.lists(st.integers(0, 3), max_size=2),
                  st.fixed_dictionaries({"x": st.integers(0, 3)}), st.floats(allow_nan=False, allow_infinity=False))
FLOATS = st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-(2**70), 2**70))


def _valid(dirty: bool) -> dict[str, st.SearchStrategy]:
    """Per field: its values (with, when ``dirty``, nulls in required fields, wrong kinds, wide ints)."""
    def maybe(valid: st.SearchStrategy, wide: st.SearchStrategy | None = None) -> st.SearchStrategy:
        choices = [valid, valid, valid, st.none()]
        if dirty:
            choices += [WRONG] + ([wide] if wide is not None else [])
        return st.one_of(*choices)

    place = st.fixed_dictionaries({"city": maybe(st.text(max_size=4)) if dirty else st.text(max_size=4),
                                   "zip": maybe(INT32, st.integers(-(2**40), 2**40))})
    return {
        "id": maybe(st.integers(-(2**63), 2**63 - 1), st.integers(-(2**65), 2**65)) if dirty
        else st.integers(-(2**63), 2**63 - 1),
        "count": maybe(INT32, st.integers(-(2**40), 2**40)),
        "score": maybe(FLOATS), "amount": maybe(FLOATS), "active": maybe(st.booleans()),
        "name": maybe(st.text(max_size=6)) if dirty else st.text(max_size=6),
        "tags": maybe(st.lists(st.none() | st.text(max_size=3), max_size=3)),
        "ids": maybe(st.lists(INT32 | st.none() if dirty else INT32, max_size=3)),
        "place": maybe(place),
    }


@st.composite
def payloads(draw, dirty: bool, required: tuple[str, ...]) -> dict[str, Any]:
    """A payload; unless ``dirty``, the ``required`` fields are present and not null."""
    fields = _valid(dirty)
    names = draw(st.lists(st.sampled_from(sorted(fields)), unique=True, min_size=len(fields) - 2))
    payload = {name: draw(fields[name]) for name in names}  # absent fields read as null
    for name in required:
        while not dirty and payload.get(name) is None:
            payload[name] = draw(fields[name])
    if draw(st.booleans()):
        payload["unknown"] = draw(st.one_of(st.integers(), st.text(max_size=3), st.lists(st.booleans())))
    return payload


SPACES = st.sampled_from(["", " ", "\n", "  ", "\t"])


@st.composite
def envelopes(draw):
    """(encode(schema, payload) → bytes): one envelope spelling, sometimes a second one for some records."""
    spaces = [draw(SPACES) for _ in range(3)] + [draw(st.sampled_from(["", "", " ", "\n"]))]
    separators = draw(st.sampled_from([(",", ":"), (", ", ": ")]))
    indent = draw(st.sampled_from([None, None, None, None, 1]))

    def encode(schema: dict, payload: Any) -> bytes:
        a, b, c, end = spaces  # white space at the end is in the payload
        text = json.dumps(payload, separators=separators, indent=indent)
        return (f'{{{a}"schema"{b}:{json.dumps(schema, separators=separators)},{c}"payload":{a}{text}{end}}}'
                .encode())
    return encode


def _props(root: Path, **extra: str) -> dict[str, str]:
    return {**sink_props(root, **extra), "value.converter.schemas.enable": "true"}


def _both(batches, **extra: str):
    """(per-record outcome, columnar outcome and pipeline), each on its own catalog."""
    return per_record_and_columnar(lambda root: _props(root, **extra), batches)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), dirty=st.sampled_from([False, False, True]), evolve=st.booleans(),
       required_place=st.booleans())
def test_columnar_envelopes_equal_per_record(data, dirty, evolve, required_place):
    encode, other = data.draw(envelopes()), data.draw(envelopes())
    required = ("id", "name", "place") if required_place else ("id", "name")
    payload = payloads(dirty, required)
    rows = data.draw(st.lists(st.one_of(payload, payload, payload, st.none()), min_size=1, max_size=8))
    mixed = data.draw(st.booleans()) and data.draw(st.booleans())
    v1 = REQUIRED_PLACE if required_place else V1
    first = [None if p is None else (other if mixed and i % 2 else encode)(v1, p) for i, p in enumerate(rows)]
    later = [None if p is None else encode(V2, {**p, "extra": 7}) for p in rows]
    n = len(rows)
    batches = [raw_batch(first), raw_batch(first, first_offset=n), raw_batch(later, first_offset=2 * n)]
    extra = {"iceberg.tables.evolve-schema-enabled": "true"} if evolve else {}
    (expected, _), (got, pipeline) = _both(batches, **extra)
    assert_same_tables(expected, got)
    if pipeline is not None:
        assert pipeline.path == STRATEGY
        event(f"columnar batches: {pipeline.batches['columnar']}")
        for reason in pipeline.batches:
            event(reason)


def test_a_batch_of_one_schema_is_read_column_wise_after_the_table_exists():
    values = [json.dumps({"schema": V1, "payload": {"id": i, "name": f"n{i}", "score": 0.5, "tags": ["a", None],
                                                    "ids": [i], "place": {"city": "Oslo", "zip": None}}}).encode()
              for i in range(200)]
    (expected, _), (got, pipeline) = _both([raw_batch(values[:100]), raw_batch(values[100:], first_offset=100)])
    assert_same_tables(expected, got)
    # the first attempt asks for the table (per record); the rest is columnar
    assert pipeline.batches == {"declined: table to create": 1, "per-record": 1, "columnar": 2}


def test_a_required_null_declines_and_fails_per_record_with_its_coordinates():
    good = json.dumps({"schema": V1, "payload": {"id": 1, "name": "a"}}).encode()
    bad = json.dumps({"schema": V1, "payload": {"id": 2, "name": None}}).encode()
    (expected, _), (got, _) = _both([raw_batch([good]), raw_batch([good, bad], first_offset=1)])
    assert expected == got == ("error", "RecordConversionFailed")


# --- the named reasons ------------------------------------------------------------------------------


def _decline(*values: bytes) -> str:
    with pytest.raises(Declined) as declined:
        EnvelopeReader(JsonConverter()).decode(pa.array(list(values), pa.binary()))
    return declined.value.reason


def _envelope(schema: dict, payload: Any) -> bytes:
    return json.dumps({"schema": schema, "payload": payload}, separators=(",", ":")).encode()


def _struct(*fields: dict) -> dict:
    return {"type": "struct", "fields": list(fields), "optional": False}


INT = _struct(field("n", "int32"))


@pytest.mark.parametrize("values, reason", [
    ([b'{"payload":{},"schema":null}'], 'values not shaped {"schema": ..., "payload": ...}'),
    ([_envelope(INT, {"n": 1}), _envelope(V1, {"id": 1, "name": "a"})],
     "several envelope schemas (or spellings) in one batch"),
    ([_envelope(INT, {"n": 1}), _envelope(INT, {"n": 1}).replace(b'"payload":', b'"payload" :')],
     "several envelope schemas (or spellings) in one batch"),
    ([_envelope(INT, {}).replace(b"{}}", b"}")], "a value shorter than its envelope"),
    ([_envelope(INT, [1, 2])], "a payload that is not a JSON object"),
    ([_envelope(INT, {"n": 1}) + b" "], "a value that does not end with the envelope's }"),
    ([_envelope(_struct(field("n", "int32", default=3)), {"n": 1})],
     "an envelope schema with a default value (field n)"),
    ([_envelope(_struct(field("t", "int64", name="org.apache.kafka.connect.data.Timestamp")), {"t": 1})],
     "an envelope schema with a named (logical) type org.apache.kafka.connect.data.Timestamp (field t)"),
    ([_envelope(_struct(field("m", "map", keys={"type": "string"}, values={"type": "string"})), {"m": {}})],
     "an envelope schema with a MAP (field m)"),
    ([_envelope({"type": "int32"}, {})], "an envelope schema with a INT32 value, not a STRUCT"),
    ([_envelope(INT, {"n": 2**31})], "field n: a value out of the INT32 range"),
    ([_envelope(_struct(field("n", "int8")), {"n": -129})], "field n: a value out of the INT8 range"),
    ([_envelope(INT, {"n": "1"})], "payloads the JSON reader refuses (a JSON kind the schema does not ask for, "
                                   "or JSON it does not read)"),
    ([_envelope(_struct(field("n", "int32", False)), {"n": None})], "a null in required field n"),
    ([_envelope(_struct(field("s", "struct", fields=[field("x", "boolean", False)])), {"s": {}})],
     "a null in required field s.x"),
    ([_envelope(_struct(field("a", "array", items={"type": "string"})), {"a": ["x", None]})],
     "a null element in field a"),
    ([_envelope(_struct(field("f", "float")), {"f": 16777217})], "field f: a FLOAT32 value halfway between two floats"),
    ([_envelope(INT, {"n": 1}).replace(b'{"n"', b'{\n"n"')], "a control character or line break in a payload"),
    ([_envelope(INT, {"n": 1, "x": float("nan")})], "NaN or Infinity in a payload"),
    ([_envelope(INT, {"n": 1}).replace(b"1}", b'1, "x": 1e-400}')],
     "a number with a three-digit negative exponent in a payload"),
    ([_envelope(INT, {"n": 1}).replace(b"1}", b'1, "x": -Infinity}')], "NaN or Infinity in a payload"),
    ([_envelope(INT, {"n": 1}).replace(b"1}", b'1, "x": [2E-400]}')],
     "a number with a three-digit negative exponent in a payload"),
    ([_envelope(INT, {"n": 1}).replace(b"1}", b'1} {"n":2}')], "a payload holding more than one JSON value"),
    ([_envelope(INT, {"n": 1}).replace(b"1}", b'1,"x":"\xff"}')], "invalid UTF-8 in a payload"),
    ([_envelope({**INT, "doc": "\xff"}, {"n": 1}).replace(b"\\u00ff", b"\xff")],
     "an envelope schema the converter refuses (JsonReadError)"),
])
def test_what_the_reader_cannot_promise_declines_with_a_reason(values, reason):
    assert _decline(*values) == reason


def test_the_prefix_takes_white_space_and_the_schema_as_written():
    value = b' { "schema" :\n{"type": "struct", "fields": []} , "payload" : {}}'
    assert envelope_prefix(value) == value[:-3]
