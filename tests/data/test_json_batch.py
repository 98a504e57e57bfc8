"""JsonBatchConverter gives exactly what json.loads + RecordConverter give (tables, updates, errors)."""

from __future__ import annotations

import base64
import json
import logging
import uuid
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyiceberg.schema import Schema
from pyiceberg.table.name_mapping import MappedField, NameMapping
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

from connector.api.declined import STRICT_ENV, UNEXPECTED, Declined
from connector.data.convert import json_rows as json_batch
from connector.data.convert.json_rows import (
    JsonBatchConverter,
    decode_json_values,
    parse_json_objects,
)
from connector.data.convert.record_converter import RecordConversionError, RecordConverter


def per_record(schema: Schema, values: list[bytes], **options: Any):
    """The specification: json.loads each value, then RecordConverter."""
    converter = RecordConverter(schema, **options)
    return outcome(lambda: converter.convert(decode_json_values(values)))


def outcome(run) -> tuple:
    try:
        result = run()
    except RecordConversionError as e:
        return ("error", e.index, type(e.cause).__name__, str(e.cause))
    return ("ok", result.table, list(result.updates))


def assert_same(schema: Schema, values: list[bytes], **options: Any) -> JsonBatchConverter:
    fast = JsonBatchConverter(schema, **options)
    expected = per_record(schema, values, **options)
    for _ in range(2):  # the second call runs with the guesses the first one settled
        got = outcome(lambda: fast.convert(values))
        if got[0] == "ok" and expected[0] == "ok":
            assert got[2] == expected[2]
            assert (got[1] is None) == (expected[1] is None)
            if got[1] is not None:
                assert got[1].schema.equals(expected[1].schema, check_metadata=True)
                assert got[1].equals(expected[1])
        else:
            assert got == expected
    assert "unexpected error" not in fast.declines
    return fast


def encode(objects: list[Any]) -> list[bytes]:
    return [json.dumps(o, separators=(",", ":")).encode() for o in objects]


SMALL = Schema(
    NestedField(1, "id", LongType(), required=True),
    NestedField(2, "name", StringType()),
    NestedField(3, "ts", TimestamptzType()),
    NestedField(4, "amount", DoubleType()),
    NestedField(5, "active", BooleanType()),
)
RECORD = {"id": 123, "name": "abcdefghijkl", "ts": 1700000000000, "amount": 12.5, "active": True}


# --- deterministic cases ---------------------------------------------------------------------


def test_typical_batch_takes_the_fast_path() -> None:
    values = encode([{**RECORD, "id": i} for i in range(1000)])
    converter = assert_same(SMALL, values, evolve=True)
    assert converter.fast_batches == 2 and converter.slow_batches == 0


def test_iso_timestamps_flip_the_guess_once() -> None:
    values = encode([{**RECORD, "ts": f"2023-05-18 11:22:{i % 60:02d}+01:00"} for i in range(100)])
    converter = assert_same(SMALL, values, evolve=False)
    assert converter.fast_batches == 2
    assert converter._columns[2].guess == "string"


@pytest.mark.parametrize(
    "values",
    [
        [b'{"id": 1}', b"[1]"],
        [b'{"id": 1}', b"null"],
        [b'{"id": 1}', b"not json"],
        [b'{"id": 1}', b""],
        [b'{"id": 1} {"id": 2}', b'{"id": 3}'],
        [b'{"id": 1, "id": 2}'],
        [b'{"id": 1,\n "name": "x"}'],
        [b'{"id": 1,\r "name": "x"}'],
        [b'{"id": 1, "name": "\xff"}'],
        [b'{"id": 1, "name": "\xc3"}', b'\xa9"}'],
        [b'{"id": "12", "amount": "1.5", "active": "TRUE", "name": 7}'],
        [b'{"id": 1.9, "ts": 1.5e12}'],
        [b'{"id": 1}', b'{"name": "no id"}'],
        [b'{"id": 1, "ts": "2023-02-30T00:00:00Z"}'],
        [b'{"id": 1, "ts": 1}', b'{"id": 2, "ts": "2023-05-18T00:00:00Z"}'],
        [b'{"id": 92233720368547758070}'],
        [b'{"id": 1, "new": {"a": 1}}', b'{"id": 2, "new": {"b": [true]}}'],
        [b'{"id": 1, "new": null, "empty": {}, "nothing": [[]]}'],
        [b'{"ID": 1}'],
        [b'{"id": 1, "new": [null, null]}'],  # pyarrow builds a broken list<null> (found by strict mode)
        [b'{"id": 1, "new": [null, []]}'],  # ... and one it cannot repair
    ],
)
@pytest.mark.parametrize("evolve", [False, True])
def test_edge_batches(values: list[bytes], evolve: bool) -> None:
    assert_same(SMALL, values, evolve=evolve)


def test_case_insensitive_keys() -> None:
    assert_same(SMALL, [b'{"ID": 1, "Name": "x"}'], evolve=False, case_insensitive=True)
    converter = assert_same(SMALL, [b'{"id": 1, "name": "x"}'], evolve=False, case_insensitive=True)
    assert converter.fast_batches == 2


def test_name_mapping_uses_the_per_record_path() -> None:
    mapping = NameMapping([MappedField(field_id=1, names=["renamed_id"])])
    converter = assert_same(SMALL, [b'{"renamed_id": 1}'], evolve=False, name_mapping=mapping)
    assert converter.fast_batches == 0


def test_nested_types_and_extra_nested_keys() -> None:
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "st", StructType(NestedField(3, "x", IntegerType(), required=True),
                                        NestedField(4, "y", StringType()))),
        NestedField(5, "li", ListType(6, FloatType(), element_required=False)),
        NestedField(7, "ls", ListType(8, StructType(NestedField(9, "a", LongType())), element_required=True)),
        NestedField(10, "m", MapType(11, StringType(), 12, LongType())),
    )
    values = encode([
        {"id": 1, "st": {"x": 1, "y": "a", "z": 5}, "li": [1, 2.5, None], "ls": [{"a": 1, "b": 2}], "m": None},
        {"id": 2, "st": None, "li": [], "ls": []},
        {"id": 3, "st": {"x": 2}},
    ])
    assert assert_same(schema, values, evolve=False).fast_batches == 2
    assert assert_same(schema, values, evolve=True).fast_batches == 0  # st.z and ls.element.b are new
    assert_same(schema, encode([{"id": 1, "st": {"y": "missing x"}}]), evolve=False)
    assert_same(schema, encode([{"id": 1, "m": {"k": 1}}]), evolve=False)
    assert_same(schema, encode([{"id": 1, "ls": [None]}]), evolve=False)


def test_temporal_decimal_and_binary_columns() -> None:
    schema = Schema(
        NestedField(1, "d", DateType()), NestedField(2, "t", TimeType()), NestedField(3, "ts", TimestampType()),
        NestedField(4, "dec", DecimalType(10, 2)), NestedField(5, "u", UUIDType()), NestedField(6, "b", BinaryType()),
        NestedField(7, "f", FixedType(3)),
    )
    u = str(uuid.uuid4())
    numbers = encode([{"d": 19000, "t": 3_600_000, "ts": 1_700_000_000_000, "dec": 1.005, "u": u,
                       "b": "AQID", "f": "AQID"}])
    strings = encode([{"d": "2023-05-18", "t": "07:51:30.888", "ts": "2023-05-18t11:22:33.123456789-08:00",
                       "dec": "-12.345", "u": u, "b": "AQI", "f": "AQID"}])
    assert assert_same(schema, numbers, evolve=False).fast_batches == 2
    assert assert_same(schema, strings, evolve=False).fast_batches == 2
    assert_same(schema, encode([{"dec": 2**60}]), evolve=False)
    assert_same(schema, encode([{"t": 86_400_000}]), evolve=False)
    assert_same(schema, encode([{"f": "AQIDBA=="}]), evolve=False)


# --- property: same result on random schemas and records ------------------------------------------

_NAMES = ["a", "b", "c", "A", "ts", "n"]
_PRIMITIVES = [
    BooleanType(), IntegerType(), LongType(), FloatType(), DoubleType(), StringType(), DateType(), TimeType(),
    TimestampType(), TimestamptzType(), DecimalType(9, 2), UUIDType(), BinaryType(),
]


@st.composite
def iceberg_types(draw, depth: int = 0):
    kind = draw(st.sampled_from(["primitive"] * 4 + (["list", "struct", "map"] if depth < 2 else [])))
    if kind == "primitive":
        return draw(st.sampled_from(_PRIMITIVES))
    if kind == "list":
        return ListType(1, draw(iceberg_types(depth + 1)), element_required=draw(st.booleans()))
    if kind == "map":
        return MapType(1, StringType(), 2, draw(iceberg_types(depth + 1)), value_required=False)
    names = draw(st.lists(st.sampled_from(_NAMES), min_size=1, max_size=3, unique=True))
    return StructType(*[NestedField(i + 1, n, draw(iceberg_types(depth + 1)), required=draw(st.booleans()))
                        for i, n in enumerate(names)])


@st.composite
def table_schemas(draw):
    from pyiceberg.schema import assign_fresh_schema_ids

    names = draw(st.lists(st.sampled_from(_NAMES), min_size=1, max_size=5, unique=True))
    fields = [NestedField(i + 1, n, draw(iceberg_types()), required=draw(st.booleans()))
              for i, n in enumerate(names)]
    return assign_fresh_schema_ids(Schema(*fields))


_TIMESTAMP_TEXT = st.builds(
    lambda d, sep, t, frac, off: f"{d}{sep}{t}{frac}{off}",
    st.sampled_from(["2023-05-18", "1969-12-31", "2023-02-30", "0001-01-01"]),
    st.sampled_from(["T", " ", "t"]),
    st.sampled_from(["11:22:33", "00:00", "23:59:59", "24:00:00"]),
    st.sampled_from(["", ".1", ".123456", ".123456789", "."]),
    st.sampled_from(["", "Z", "+00", "-08:00", "+0530", "+19", "z"]),
)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, 1, -1, 86_399_999, 86_400_000, 2**31, 2**53 + 1, 1_700_000_000_000]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([1.005, 123.0, -0.0, 1e39, 2.5]),
    st.text(max_size=6),
    st.sampled_from(["123", "1.5", "TRUE", "false", "2023-05-18", "07:51:30.888", "AQID", "AQI", "-12.345",
                     str(uuid.UUID(int=7)), "NaN", " 1 "]),
    _TIMESTAMP_TEXT,
)
_JSON = st.recursive(
    _SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.sampled_from(_NAMES + ["x"]), children, max_size=3),
    ),
    max_leaves=6,
)
_OBJECTS = st.dictionaries(st.sampled_from(_NAMES + ["x", "B"]), _JSON, max_size=5)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    schema=table_schemas(),
    objects=st.lists(_OBJECTS, min_size=1, max_size=8),
    evolve=st.booleans(),
    case_insensitive=st.booleans(),
)
def test_property_same_as_per_record_path(schema, objects, evolve, case_insensitive) -> None:
    assert_same(schema, encode(objects), evolve=evolve, case_insensitive=case_insensitive)


def _typed_value(iceberg_type, draw):
    """A JSON value that converts cleanly to ``iceberg_type`` (so the fast path gets exercised)."""
    if isinstance(iceberg_type, BooleanType):
        return draw(st.booleans())
    if isinstance(iceberg_type, (IntegerType, DateType)):
        return draw(st.integers(-(2**31), 2**31 - 1))
    if isinstance(iceberg_type, (LongType, TimestampType, TimestamptzType)):
        return draw(st.integers(-(2**50), 2**50))
    if isinstance(iceberg_type, TimeType):
        return draw(st.one_of(st.integers(0, 86_399_999), st.sampled_from(["07:51:30.888", "23:59"])))
    if isinstance(iceberg_type, (FloatType, DoubleType)):
        return draw(st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-(2**60), 2**60)))
    if isinstance(iceberg_type, DecimalType):
        return draw(st.one_of(st.floats(-1e6, 1e6), st.integers(-(10**6), 10**6)))
    if isinstance(iceberg_type, UUIDType):
        return str(uuid.UUID(int=draw(st.integers(0, 2**128 - 1))))
    if isinstance(iceberg_type, BinaryType):
        return base64.b64encode(draw(st.binary(max_size=5))).decode()
    if isinstance(iceberg_type, ListType):
        return [_typed_value(iceberg_type.element_type, draw) for _ in range(draw(st.integers(0, 2)))]
    if isinstance(iceberg_type, MapType):
        return {"k": _typed_value(iceberg_type.value_type, draw)}
    if isinstance(iceberg_type, StructType):
        return {f.name: _typed_value(f.field_type, draw) for f in iceberg_type.fields
                if f.required or draw(st.booleans())}
    return draw(st.text(max_size=5))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), schema=table_schemas(), evolve=st.booleans())
def test_property_same_on_well_typed_records(data, schema, evolve) -> None:
    objects = [
        {f.name: _typed_value(f.field_type, data.draw) for f in schema.fields
         if f.required or data.draw(st.booleans(), "present")}
        for _ in range(data.draw(st.integers(1, 6), "rows"))
    ]
    assert_same(schema, encode(objects), evolve=evolve)


# --- why a batch declines ----------------------------------------------------------------------------

TYPES = Schema(
    NestedField(1, "i", IntegerType()), NestedField(2, "ts", TimestamptzType()), NestedField(3, "f", FixedType(3)),
)


@pytest.mark.parametrize("schema,objects,evolve,reason", [
    (TYPES, [{"i": 1}, {"i": 2**31}], False, "value out of range"),
    (TYPES, [{"ts": 10**17}], False, "value out of range"),
    (SMALL, [{"id": "12"}], False, "a value of another JSON kind than its column's"),
    (SMALL, [{"id": 1, "ts": "2023-05-18 11:22:33 PST"}], False, "strings need the scalar parser"),
    (TYPES, [{"f": "AQIDBA=="}], False, "a value the per-record coercion rejects"),
    (SMALL, [{"id": 1, "new": 5}], True, "a key the table lacks (a new column)"),
    (SMALL, [{"name": "no id"}], False, "required column id is null"),
])
def test_declines_name_their_reason(schema, objects, evolve, reason) -> None:
    converter = assert_same(schema, encode(objects), evolve=evolve)
    assert converter.declines == {reason: 2}
    assert converter.last_decline_reason == reason
    assert converter.fast_batches == 0


def test_declines_of_batches_that_are_not_single_line_objects_and_of_name_mappings() -> None:
    assert assert_same(SMALL, [b'{"id": 1}', b"[1]"], evolve=False).last_decline_reason == \
        "not one single-line JSON object per value"
    mapping = NameMapping([MappedField(field_id=1, names=["renamed_id"])])
    assert assert_same(SMALL, [b'{"renamed_id": 1}'], evolve=False, name_mapping=mapping).declines == \
        {"the table has a name mapping": 2}


def test_convert_fast_reads_a_slice_of_a_batch_as_the_same_values_copied() -> None:
    values = pa.array(encode([{**RECORD, "id": i, "name": f"n{i}"} for i in range(10)]), pa.binary())
    converter = JsonBatchConverter(SMALL, evolve=False)
    sliced = converter.convert_fast(values.slice(3, 4))
    assert sliced.equals(converter.convert_fast(pa.array(values.slice(3, 4).to_pylist(), pa.binary())))
    assert sliced.column("id").to_pylist() == [3, 4, 5, 6]


def test_convert_fast_declines_null_and_empty_values() -> None:
    converter = JsonBatchConverter(SMALL, evolve=False)
    with pytest.raises(Declined, match="^a null value$"):
        converter.convert_fast(pa.array([b'{"id": 1}', None], pa.binary()))
    with pytest.raises(Declined, match="^empty value$"):
        converter.convert_fast(pa.array([b'{"id": 1}', b""], pa.binary()))


def test_convert_fast_and_convert_struct_raise_the_reason() -> None:
    converter = JsonBatchConverter(TYPES, evolve=False)
    with pytest.raises(Declined, match="^value out of range$"):
        converter.convert_fast(pa.array(encode([{"i": 2**31}]), pa.binary()))
    with pytest.raises(Declined, match="^value out of range$"):
        converter.convert_struct(pa.array([{"i": 2**31}]))
    with pytest.raises(Declined, match="^values are not maps$"):
        converter.convert_struct(pa.array([1, 2]))
    assert converter.convert_struct(pa.array([{"i": 7}])).column("i").to_pylist() == [7]
    assert converter.declines == {}  # only convert() counts: it is the one that falls back


@pytest.mark.parametrize("value, reason", [
    (b'{"id": 1, "other":\tNaN}', "NaN or Infinity in a value"),
    (b'{"id": 1, "other": [1, -Infinity]}', "NaN or Infinity in a value"),
    (b'{"id": 1, "amount": -0.0}', "-0.0 (JsonConverter reads 0.0)"),
    (b'{"id": 1, "amount": 12345678901234567890123}', "a number from 2**63 on (an integer JsonConverter wraps)"),
    (b'{"id": 1, "amount": -1e-400}', "a number with a three-digit negative exponent in a value"),
])
def test_convert_fast_declines_what_json_converter_refuses_or_reads_otherwise(value, reason) -> None:
    """Kafka's JsonConverter, not json.loads, is the reference here: the pipeline's per-record path."""
    converter = JsonBatchConverter(SMALL, evolve=False)
    with pytest.raises(Declined) as declined:
        converter.convert_fast(pa.array([b'{"id": 0, "amount": 1.5}', value], pa.binary()))
    assert declined.value.reason == reason


def test_parse_json_objects_raises_the_reason() -> None:
    with pytest.raises(Declined, match="^a key holds values of different JSON kinds$"):
        parse_json_objects(pa.array([b'{"a": 1}', b'{"a": "x"}'], pa.binary()))
    with pytest.raises(Declined, match="^-0.0"):
        parse_json_objects(pa.array([b'{"a": -0.0}'], pa.binary()))


# --- a bug in the fast path is not a reason ---------------------------------------------------------


def _injected_bug(*args: Any) -> None:
    raise TypeError("injected bug")


def test_strict_mode_raises_a_bug_in_the_fast_path(monkeypatch) -> None:
    values = encode([RECORD])
    monkeypatch.setattr(json_batch, "_check_range", _injected_bug)  # the ts column's range check
    with pytest.raises(TypeError, match="injected bug"):
        JsonBatchConverter(SMALL, evolve=False).convert(values)
    with pytest.raises(TypeError, match="injected bug"):
        JsonBatchConverter(SMALL, evolve=False).convert_struct(pa.array([RECORD]))
    monkeypatch.setattr(json_batch, "_check_doubles", _injected_bug)
    with pytest.raises(TypeError, match="injected bug"):
        parse_json_objects(pa.array(values, pa.binary()))


def test_without_strict_mode_a_bug_declines_as_unexpected_and_logs_the_trace(monkeypatch, caplog) -> None:
    monkeypatch.delenv(STRICT_ENV)
    monkeypatch.setattr(json_batch, "_check_range", _injected_bug)
    values = encode([RECORD])
    converter = JsonBatchConverter(SMALL, evolve=False)
    with caplog.at_level(logging.WARNING, logger="connector.api.declined"):
        result = converter.convert(values)
    assert result.table.equals(RecordConverter(SMALL, evolve=False).convert(decode_json_values(values)).table)
    assert converter.declines == {UNEXPECTED: 1}
    (record,) = caplog.records
    assert "JSON batch conversion" in record.getMessage()
    assert record.exc_info is not None and record.exc_info[0] is TypeError
    with pytest.raises(Declined, match=f"^{UNEXPECTED}$"):
        converter.convert_struct(pa.array([RECORD]))


# --- a large batch (speed is measured by `make bench`, not here) ----------------------------------


def test_100k_small_records_take_the_fast_path_and_equal_the_per_record_result() -> None:
    values = encode([{**RECORD, "id": i, "ts": RECORD["ts"] + i} for i in range(100_000)])
    fast = JsonBatchConverter(SMALL, evolve=True)
    slow = RecordConverter(SMALL, evolve=True)
    fast_table = fast.convert(values).table
    slow_table = slow.convert(decode_json_values(values)).table
    assert fast_table.equals(slow_table) and fast.slow_batches == 0
