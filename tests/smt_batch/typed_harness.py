"""Typed views against per-record Structs: one SMT's typed form must give the per-record value and schema."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pyarrow as pa
from hypothesis import strategies as st

import smt
from connector.api.declined import Declined
from connector.api.logical import Date, Time, Timestamp, logical_type_of
from connector.api.record import SinkRecord
from connector.api.schema import Schema, Type
from connector.api.struct import Struct
from smt.batch import RecordBatchView, Values, typed_batch_form
from tests.smt_batch.harness import KAFKA, raw_batch

#: Arrow types of the typed representation (``converters/batch/typed.py``).
ARROW = {Type.BOOLEAN: pa.bool_(), Type.INT8: pa.int32(), Type.INT16: pa.int32(), Type.INT32: pa.int32(),
         Type.INT64: pa.int64(), Type.FLOAT32: pa.float32(), Type.FLOAT64: pa.float64(),
         Type.STRING: pa.string(), Type.BYTES: pa.binary()}


class _NullWithSchema:
    def __repr__(self) -> str:
        return "NULL_WITH_SCHEMA"


#: A row that is a null value with the schema (what ExtractField takes out of a null field), not a tombstone.
NULL_WITH_SCHEMA: Any = _NullWithSchema()
#: Null rows of both kinds, for the property tests.
NULLS = st.none() | st.just(NULL_WITH_SCHEMA)


def _value(row: Any) -> Any:
    return None if row is NULL_WITH_SCHEMA else row


def arrow_type(schema: Schema) -> pa.DataType:
    if schema.type is Type.STRUCT:
        return pa.struct([pa.field(f.name, arrow_type(f.schema)) for f in schema.fields()])
    if schema.type is Type.ARRAY:
        return pa.list_(arrow_type(schema.value_schema))
    return ARROW[schema.type]


def to_connect(schema: Schema, value: Any) -> Any:
    """A typed-representation Python value (Date as days, ...) as the per-record Connect value."""
    if value is None:
        return None
    logical = logical_type_of(schema)
    if logical in (Date, Time, Timestamp):
        return logical.to_logical(schema, value)
    if schema.type is Type.STRUCT:
        struct = Struct(schema)
        for field in schema.fields():
            struct.put(field.name, to_connect(field.schema, value[field.name]))
        return struct
    if schema.type is Type.ARRAY:
        return [to_connect(schema.value_schema, v) for v in value]
    return value


def from_connect(schema: Schema | None, value: Any) -> Any:
    """A per-record Connect value in the typed representation (``Struct.get_without_default`` inside)."""
    if value is None or schema is None:
        return value
    logical = logical_type_of(schema)
    if logical in (Date, Time, Timestamp):
        return logical.from_logical(schema, value)
    if schema.type is Type.STRUCT:
        return {f.name: from_connect(f.schema, value.get_without_default(f.name)) for f in schema.fields()}
    if schema.type is Type.ARRAY:
        return [from_connect(schema.value_schema, v) for v in value]
    return value


def per_record(transformation: Any, schema: Schema, rows: list[Any]):
    """("ok", [(value, schema)]) or ("error", "Class: message") from the per-record SMT."""
    out = []
    try:
        for offset, row in enumerate(rows):
            value = to_connect(schema, _value(row))
            record = SinkRecord("orders", 0, None, None, schema if row is not None else None, value, offset)
            result = transformation.apply(record)
            out.append((from_connect(result.value_schema, result.value), result.value_schema))
    except Exception as exc:  # noqa: BLE001 - the typed form must decline wherever any error happens
        return ("error", f"{type(exc).__name__}: {exc}")
    return ("ok", out)


def typed(transformation: Any, schema: Schema, rows: list[Any]):
    """("ok", [(value, the view's schema)]) or ("declined", reason) from the typed form."""
    form = typed_batch_form(transformation)
    assert form is not None, transformation
    array = pa.array([_value(row) for row in rows], type=arrow_type(schema))
    view = RecordBatchView.from_raw(raw_batch([b"x"] * len(rows)), Values(array, schema=schema), raw=False)
    view = replace(view, tombstone=pa.array([row is None for row in rows]))
    try:
        out = form.apply_batch(view)
    except Declined as declined:
        return ("declined", declined.reason)
    return ("ok", [(v, out.value.schema) for v in out.value.array.to_pylist()])


def check(smt_name: str, config: dict[str, Any], schema: Schema, rows: list[Any]) -> str:
    """Both paths on ``rows`` (typed representation): the same values and schemas, or a decline."""
    transformation = smt.load(f"{KAFKA}.{smt_name}", config)
    expected = per_record(transformation, schema, rows)
    got = typed(transformation, schema, rows)
    if got[0] == "declined":
        return f"declined: {got[1]}"
    assert expected[0] == "ok", f"per-record failed ({expected[1]}) but the typed form did not decline"
    # a tombstone's schema is None per record, and nothing reads the typed view's for it
    got_rows = [(v, s if row is not None else None) for (v, s), row in zip(got[1], rows)]
    assert _same(got_rows, expected[1]), (got_rows, expected[1])
    return "ok"


def _same(got: list, expected: list) -> bool:
    return len(got) == len(expected) and all(
        _equal(g[0], e[0]) and g[1] == e[1] for g, e in zip(got, expected))


def _equal(a: Any, b: Any) -> bool:
    """Equal, with NaN equal to NaN and -0.0 told from 0.0 (both matter to a cast's text)."""
    if isinstance(a, float) and isinstance(b, float):
        return repr(a) == repr(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b
