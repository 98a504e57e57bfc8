"""TimestampConverter$Value on typed values: the per-record values and schemas, or a decline."""

from __future__ import annotations

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from connector.api.logical import Date, Time, Timestamp
from connector.api.schema import Schema, SchemaBuilder
from tests.smt_batch.typed_harness import NULLS, check

MIN_MILLIS, MAX_MILLIS = -62_135_596_800_000, 253_402_300_799_999
TARGETS = ["string", "unix", "Date", "Time", "Timestamp"]
PRECISIONS = ["milliseconds", "seconds", "microseconds", "nanoseconds"]
FORMATS = ["yyyy-MM-dd HH:mm:ss.SSS", "yyyy-MM-dd'T'HH:mm:ssXXX", "dd/MM/yy", "EEE, d MMM yyyy HH:mm z", "HH:mm"]
SOURCES = {
    "ts": (Timestamp.builder().optional().build(), st.integers(MIN_MILLIS, MAX_MILLIS)),
    "day": (Date.builder().optional().build(), st.integers(-719_162, 2_932_896)),
    "tod": (Time.builder().optional().build(), st.integers(0, 86_399_999)),
    "unix": (Schema.OPTIONAL_INT64_SCHEMA, st.integers(-(2**63), 2**63 - 1) | st.integers(-(10**13), 10**13)),
    "text": (Schema.OPTIONAL_STRING_SCHEMA, st.sampled_from(
        ["2024-02-29 13:14:15.123", "1969-12-31 23:59:59.999", "0001-01-01 00:00:00.000", "2024-13-01 00:00:00.000",
         "2024-01-01T00:00:00+02:00", "31/12/69", "Mon, 1 Jan 2024 10:00 UTC", "23:59", "nope"])),
    "n": (Schema.OPTIONAL_INT32_SCHEMA, st.integers(0, 9)),
}
SCHEMA = SchemaBuilder.struct().name("Row")
for _name, (_schema, _) in SOURCES.items():
    SCHEMA.field(_name, _schema)
SCHEMA = SCHEMA.build()
rows = st.fixed_dictionaries({name: st.none() | values for name, (_, values) in SOURCES.items()})
configs = st.fixed_dictionaries({"target.type": st.sampled_from(TARGETS), "format": st.sampled_from(FORMATS),
                                 "unix.precision": st.sampled_from(PRECISIONS)})


@settings(max_examples=400, deadline=None)
@given(config=configs, field=st.sampled_from(list(SOURCES) + ["absent"]),
       values=st.lists(NULLS | rows, min_size=1, max_size=6))
def test_field_conversions_equal_per_record(config, field, values):
    event(check("TimestampConverter$Value", {**config, "field": field}, SCHEMA, values))


@settings(max_examples=300, deadline=None)
@given(data=st.data(), config=configs, source=st.sampled_from(list(SOURCES)))
def test_whole_value_conversions_equal_per_record(data, config, source):
    schema, values = SOURCES[source]
    event(check("TimestampConverter$Value", config, schema, data.draw(st.lists(NULLS | values, min_size=1,
                                                                                max_size=6))))


@pytest.mark.parametrize("millis", [MIN_MILLIS, -86_400_001, -86_400_000, -1, 0, 86_399_999, 1_700_000_000_123])
@pytest.mark.parametrize("target", TARGETS)
def test_timestamps_before_1970(millis, target):
    config = {"field": "ts", "target.type": target, "format": "yyyy-MM-dd HH:mm:ss.SSS", "unix.precision": "seconds"}
    assert check("TimestampConverter$Value", config, SCHEMA, [{**dict.fromkeys(SOURCES), "ts": millis}]) == "ok"


def test_a_date_from_a_timestamp_rounds_down_before_1970():
    config = {"target.type": "Date"}
    assert check("TimestampConverter$Value", config, Timestamp.SCHEMA, [-1, -86_400_000, -86_400_001, 5]) == "ok"


@pytest.mark.parametrize("pattern,text", [
    ("yyyy-MM-dd", "2024-02-30"), ("yyyy-MM-dd HH:mm", "2024-01-01 25:61"), ("yyMMdd", "240101"),
    ("yyyy-MM-dd'T'HH:mm:ss.SSSZ", "2024-01-01T00:00:00.000-0130")])
def test_strings_parse_as_simple_date_format_does(pattern, text):
    config = {"field": "text", "target.type": "Timestamp", "format": pattern}
    outcome = check("TimestampConverter$Value", config, SCHEMA, [{**dict.fromkeys(SOURCES), "text": text}])
    assert outcome == "ok"


def test_a_string_that_does_not_match_declines():
    config = {"field": "text", "target.type": "unix", "format": "yyyy-MM-dd"}
    outcome = check("TimestampConverter$Value", config, SCHEMA, [{**dict.fromkeys(SOURCES), "text": "nope"}])
    assert outcome == "declined: string timestamp does not match the format"


def test_a_field_that_is_no_timestamp_declines():
    config = {"field": "n", "target.type": "unix"}
    outcome = check("TimestampConverter$Value", config, SCHEMA, [dict.fromkeys(SOURCES)])
    assert outcome == "declined: TimestampConverter of a INT32 fails"
