"""Tokens Kafka's JsonConverter (Jackson) refuses or reads differently, anywhere in a batch: every
column-wise JSON path gives the per-record strategy's tables, errors and dead-letter decisions.

Arrow's JSON reader takes ``NaN``, ``Infinity`` and their kin, which Jackson refuses; it refuses
leading zeros, which Kafka's mapper takes (``007`` is 7); and it reads ``-0.0``, tiny and huge
numbers as doubles where Jackson keeps exact decimals or wraps a long. Each token goes into a
column the table has, a nested list or struct, or a key the table lacks, in any record of any
batch (also the first, whose first good record the table is created from).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.smt_batch.harness import KAFKA, per_record_and_columnar, raw_batch, sink_props
from tests.smt_batch.test_pipeline import assert_same_tables

TOKENS = ["NaN", "-NaN", "Infinity", "-Infinity", "Inf", "007", "-01.5", "00", "1e-400", "-1e-400", "-0.0", "-0",
          "12345678901234567890123", "-9223372036854775809", "9223372036854775808", "1E+2", "1e400",
          "0.1000000000000000055511151231257827", "9" * 1001]
MARK = "@poison@"
SLOTS = ["x", "n", "tags", "place", "unknown", "unknown list"]
SPACES = st.sampled_from(["", " ", "\t"])


def _record(i: int, slot: str | None) -> dict[str, Any]:
    """A record with the mark (a string, replaced by the token in the text) in ``slot``."""
    record: dict[str, Any] = {"id": i, "x": 1.5 + i, "n": i, "s": f"s{i}", "tags": [0.5, 2.0], "place": {"z": 0.25}}
    if slot in ("x", "n"):
        record[slot] = MARK
    elif slot == "tags":
        record["tags"] = [0.5, MARK]
    elif slot == "place":
        record["place"] = {"z": MARK}
    elif slot == "unknown":
        record["u"] = MARK
    elif slot == "unknown list":
        record["u"] = [1, MARK]
    return record


@st.composite
def poisoned_batches(draw) -> tuple[list[list[dict]], list[tuple[int, str, str]]]:
    """Records in 2-4 batches (the first creates the table), and the (id, slot, token) of each poisoned one."""
    batches, poisoned, next_id = [], [], 0
    for _ in range(draw(st.integers(2, 4))):
        size = draw(st.integers(1, 6))
        batch = []
        for _ in range(size):
            slot = draw(st.sampled_from(SLOTS)) if draw(st.integers(0, 2)) == 0 else None
            if slot is not None:
                poisoned.append((next_id, slot, draw(st.sampled_from(TOKENS))))
            batch.append((next_id, slot))
            next_id += 1
        batches.append(batch)
    return batches, poisoned


def _encode(record: dict[str, Any], token: str | None, space: str) -> bytes:
    text = json.dumps(record, separators=(",", ":" + space))
    return (text if token is None else text.replace(json.dumps(MARK), token)).encode()


def _raw_batches(data, wrap=lambda text: text):
    batches, poisoned = data.draw(poisoned_batches())
    tokens = {record_id: token for record_id, _, token in poisoned}
    space = data.draw(SPACES)
    raw, offset = [], 0
    for batch in batches:
        values = [wrap(_encode(_record(i, slot), tokens.get(i), space)) for i, slot in batch]
        raw.append(raw_batch(values, first_offset=offset))
        offset += len(values)
    for _, slot, token in poisoned:
        event(f"{token if len(token) < 30 else 'long number'} in {slot}")
    return raw


def _same_rows(expected, got) -> None:
    """With error tolerance, bad records go per record (and to the DLQ): the same rows, in any order."""
    assert got[0] == expected[0] == "ok", (expected, got)
    assert [name for name, _ in got[1]] == [name for name, _ in expected[1]]
    for (_, want), (_, have) in zip(expected[1], got[1]):
        assert have.schema.equals(want.schema)
        assert sorted(map(repr, have.to_pylist())) == sorted(map(repr, want.to_pylist()))


def _check(props_at, raw, tolerant: bool) -> None:
    extra = {"errors.tolerance": "all"} if tolerant else {}
    (expected, _), (got, pipeline) = per_record_and_columnar(lambda root: {**props_at(root), **extra}, raw)
    if tolerant:
        _same_rows(expected, got)
    else:
        assert_same_tables(expected, got)
    event(f"outcome: {expected[0]}")
    if pipeline is not None:
        event(f"columnar batches: {pipeline.batches['columnar']}")


SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(data=st.data(), tolerant=st.booleans())
def test_schemaless_values_read_column_wise_as_json_converter_reads_them(data, tolerant):
    _check(sink_props, _raw_batches(data), tolerant)


INSERT = {"transforms": "insert", "transforms.insert.type": f"{KAFKA}.InsertField$Value",
          "transforms.insert.static.field": "source", "transforms.insert.static.value": "t"}


@SETTINGS
@given(data=st.data(), tolerant=st.booleans())
def test_schemaless_values_through_batch_smts_as_json_converter_reads_them(data, tolerant):
    _check(lambda root: sink_props(root, transforms=INSERT), _raw_batches(data), tolerant)


def _field(label: str, kind: str, **extra: Any) -> dict[str, Any]:
    return {"type": kind, "optional": True, **extra, "field": label}


SCHEMA = {"type": "struct", "optional": False, "fields": [
    {"type": "int64", "optional": False, "field": "id"}, _field("x", "double"), _field("n", "int64"),
    _field("s", "string"), _field("tags", "array", items={"type": "double", "optional": True}),
    _field("place", "struct", fields=[_field("z", "double")]),
]}
ENVELOPE_HEAD = b'{"schema":' + json.dumps(SCHEMA, separators=(",", ":")).encode() + b',"payload":'


@SETTINGS
@given(data=st.data(), tolerant=st.booleans())
def test_envelopes_read_column_wise_as_json_converter_reads_them(data, tolerant):
    raw = _raw_batches(data, wrap=lambda payload: ENVELOPE_HEAD + payload + b"}")
    _check(lambda root: {**sink_props(root), "value.converter.schemas.enable": "true"}, raw, tolerant)
