"""Cast$Value on typed values (Connect Structs held column-wise): the per-record values and schemas, or a decline."""

from __future__ import annotations

import math

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from connector.api.logical import Date, Time, Timestamp
from connector.api.schema import Schema, SchemaBuilder
from tests.smt_batch.typed_harness import NULLS, check

TARGETS = ["int8", "int16", "int32", "int64", "float32", "float64", "boolean", "string"]
SOURCES = {
    "i8": (Schema.OPTIONAL_INT8_SCHEMA, st.integers(-128, 127)),
    "i16": (Schema.OPTIONAL_INT16_SCHEMA, st.integers(-(2**15), 2**15 - 1)),
    "i32": (Schema.OPTIONAL_INT32_SCHEMA, st.integers(-(2**31), 2**31 - 1)),
    "i64": (Schema.OPTIONAL_INT64_SCHEMA, st.integers(-(2**63), 2**63 - 1)),
    "f32": (Schema.OPTIONAL_FLOAT32_SCHEMA, st.floats(width=32)),
    "f64": (Schema.OPTIONAL_FLOAT64_SCHEMA, st.floats()),
    "b": (Schema.OPTIONAL_BOOLEAN_SCHEMA, st.booleans()),
    "s": (Schema.OPTIONAL_STRING_SCHEMA, st.sampled_from(["12", "-7", "1e3", "2.5", "true", "TRUE", "x", "",
                                                          "9223372036854775808", "NaN", "-0.0", " 3"])),
    "bytes": (Schema.OPTIONAL_BYTES_SCHEMA, st.binary(max_size=4)),
    "day": (Date.builder().optional().build(), st.integers(-719_162, 2_932_896)),
    "tod": (Time.builder().optional().build(), st.integers(0, 86_399_999)),
    "ts": (Timestamp.builder().optional().build(), st.integers(-62_135_596_800_000, 253_402_300_799_999)),
}
SCHEMA = SchemaBuilder.struct().name("Row").version(3)
for _name, (_schema, _) in SOURCES.items():
    SCHEMA.field(_name, _schema)
SCHEMA = SCHEMA.build()
rows = st.fixed_dictionaries({name: st.none() | values for name, (_, values) in SOURCES.items()})


@settings(max_examples=300, deadline=None)
@given(spec=st.dictionaries(st.sampled_from(list(SOURCES) + ["absent"]), st.sampled_from(TARGETS), min_size=1,
                            max_size=4),
       values=st.lists(NULLS | rows, min_size=1, max_size=6))
def test_field_casts_equal_per_record(spec, values):
    outcome = check("Cast$Value", {"spec": ",".join(f"{k}:{v}" for k, v in spec.items())}, SCHEMA, values)
    event(outcome)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), source=st.sampled_from(list(SOURCES)), target=st.sampled_from(TARGETS))
def test_whole_value_casts_equal_per_record(data, source, target):
    schema, values = SOURCES[source]
    outcome = check("Cast$Value", {"spec": target}, schema, data.draw(st.lists(NULLS | values, min_size=1,
                                                                                max_size=6)))
    event(outcome)


@pytest.mark.parametrize("value", [1.1, 0.1, 1e7, 1.0e-3, 9.999999e-4, 1e10, 123456789.0, -0.0, math.nan, math.inf,
                                   4.9e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 100.0, 0.5])
@pytest.mark.parametrize("schema", [Schema.FLOAT32_SCHEMA, Schema.FLOAT64_SCHEMA], ids=["float32", "float64"])
def test_floats_render_as_java_does(schema, value):
    assert check("Cast$Value", {"spec": "string"}, schema, [value]) == "ok"


@pytest.mark.parametrize("days", [-719162, -1, 0, 1, 19000, 2932896])
@pytest.mark.parametrize("target", TARGETS)
def test_dates_before_and_after_1970(days, target):
    assert check("Cast$Value", {"spec": target}, Date.SCHEMA, [days]) == "ok"


@pytest.mark.parametrize("millis", [-62135596800000, -86400001, -86400000, -1, 0, 1, 86399999, 86400000,
                                    1700000000123, 253402300799999])
@pytest.mark.parametrize("target", TARGETS)
def test_timestamps_before_and_after_1970(millis, target):
    assert check("Cast$Value", {"spec": target}, Timestamp.SCHEMA, [millis]) == "ok"


@pytest.mark.parametrize("value", ["x", "128", "1.5", ""])
def test_a_string_that_does_not_parse_declines(value):
    assert check("Cast$Value", {"spec": "int8"}, Schema.STRING_SCHEMA, ["1", value]).startswith("declined")


def test_a_struct_or_bytes_cast_to_a_number_declines():
    inner = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).build()
    schema = SchemaBuilder.struct().field("s", inner).field("b", Schema.BYTES_SCHEMA).build()
    row = {"s": {"a": 1}, "b": b"\x01"}
    assert check("Cast$Value", {"spec": "s:string"}, schema, [row]).startswith("declined")
    assert check("Cast$Value", {"spec": "b:int32"}, schema, [row]).startswith("declined")
    assert check("Cast$Value", {"spec": "b:string"}, schema, [row]) == "ok"
    assert check("Cast$Value", {"spec": "string"}, schema, [row]).startswith("declined")


@pytest.mark.parametrize("replace", ["true", "false"])
def test_a_null_in_a_field_with_a_default(replace):
    schema = SchemaBuilder.struct().field("a", SchemaBuilder.int32().optional().default_value(5).build()) \
        .field("b", Schema.OPTIONAL_STRING_SCHEMA).build()
    rows = [{"a": None, "b": "1"}, {"a": 2, "b": None}]
    config = {"spec": "a:string,b:int64", "replace.null.with.default": replace}
    outcome = check("Cast$Value", config, schema, rows)
    assert outcome == ("ok" if replace == "false" else "declined: a null where field a has a default")


def test_the_schema_keeps_its_name_version_and_casts_defaults():
    schema = SchemaBuilder.struct().name("R").version(2).doc("d").field(
        "a", SchemaBuilder.int64().default_value(12).build()).build()
    assert check("Cast$Value", {"spec": "a:string"}, schema, [{"a": 3}, None]) == "ok"
