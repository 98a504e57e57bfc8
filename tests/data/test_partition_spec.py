"""partition-by parsing and specs (reference §3.6, §6.3 #1–#2)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyiceberg.schema import Schema
from pyiceberg.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    TruncateTransform,
    YearTransform,
)
from pyiceberg.types import IntegerType, ListType, LongType, NestedField, StringType, StructType, TimestamptzType

from connector.api import ConfigException
from connector.config.iceberg_config import split_partition_by
from connector.data.write.partition_spec import partition_spec_for, table_partition_by_key

SCHEMA = Schema(
    NestedField(1, "i", IntegerType(), required=True),
    NestedField(2, "s", StringType(), required=True),
    NestedField(3, "ts1", TimestamptzType(), required=True),
    NestedField(4, "ts2", TimestamptzType(), required=True),
    NestedField(5, "ts3", TimestamptzType(), required=True),
    NestedField(6, "ts4", TimestamptzType(), required=True),
    NestedField(7, "payload", StructType(NestedField(8, "ts", TimestamptzType()), NestedField(9, "id", LongType()))),
    NestedField(10, "tags", ListType(11, StringType())),
)


def test_string_to_list_keeps_commas_in_parentheses() -> None:
    assert split_partition_by("bucket(id, 4), type") == ["bucket(id, 4)", "type"]
    assert split_partition_by(None) == []
    assert split_partition_by("") == []
    assert split_partition_by("one ") == ["one"]
    assert split_partition_by(" a ,, b ,") == ["a", "b"]
    assert split_partition_by("truncate(s, 10),bucket(i, 4),days(ts)") == [
        "truncate(s, 10)",
        "bucket(i, 4)",
        "days(ts)",
    ]


def test_plain_comma_split_would_break_transforms() -> None:
    # what the Java test contrasts: a plain "," split cuts bucket(id, 4) in two
    assert "bucket(id, 4)".split(",") == ["bucket(id", " 4)"]
    assert split_partition_by("bucket(id, 4)") == ["bucket(id, 4)"]


def test_create_partition_spec() -> None:
    spec = partition_spec_for(
        SCHEMA, ["year(ts1)", "month(ts2)", "day(ts3)", "hour(ts4)", "bucket(i, 4)", "truncate(s, 10)", "s"]
    )
    transforms = [f.transform for f in spec.fields]
    assert transforms == [
        YearTransform(), MonthTransform(), DayTransform(), HourTransform(),
        BucketTransform(4), TruncateTransform(10), IdentityTransform(),
    ]
    assert [f.name for f in spec.fields] == ["ts1_year", "ts2_month", "ts3_day", "ts4_hour", "i_bucket", "s_trunc", "s"]
    assert [f.source_id for f in spec.fields] == [3, 4, 5, 6, 1, 2, 2]
    assert [f.field_id for f in spec.fields] == list(range(1000, 1007))


def test_plural_transform_names_and_nested_columns() -> None:
    spec = partition_spec_for(SCHEMA, ["years(ts1)", "months(ts2)", "days(payload.ts)", "hours(ts4)", "payload.id"])
    assert [f.source_id for f in spec.fields] == [3, 4, 8, 6, 9]
    assert spec.fields[2].name == "payload.ts_day"


def test_unpartitioned() -> None:
    assert partition_spec_for(SCHEMA, []).is_unpartitioned()


@pytest.mark.parametrize(
    "term, problem",
    [
        ("foo(ts1)", "unsupported transform 'foo'"),
        ("missing", "no column 'missing'"),
        ("days(missing)", "no column 'missing'"),
        ("day(s)", "cannot be applied"),
        ("bucket(i)", "should have 2 parts"),
        ("bucket(i, x)", "not a positive integer"),
        ("truncate(s, 0)", "not a positive integer"),
        ("payload", "not a primitive"),
        ("tags.element", "inside a list or map"),
    ],
)
def test_invalid_terms_fail_loudly(term: str, problem: str) -> None:
    with pytest.raises(ConfigException) as info:
        partition_spec_for(SCHEMA, [term])
    message = str(info.value)
    assert "iceberg.tables.default-partition-by" in message and term in message and problem in message


def test_error_names_the_per_table_key() -> None:
    key = table_partition_by_key("db.events")
    with pytest.raises(ConfigException, match=re.escape("iceberg.table.db.events.partition-by")):
        partition_spec_for(SCHEMA, ["nope"], config_key=key)


def test_duplicate_partition_names_rejected() -> None:
    with pytest.raises(ConfigException, match="more than once"):
        partition_spec_for(SCHEMA, ["s", "s"])


# --- properties ---------------------------------------------------------------------------

_COLUMNS = ["i", "s", "ts1", "ts2", "ts3", "ts4"]
_TERMS = st.one_of(
    st.sampled_from(["year(ts1)", "months(ts2)", "day(ts3)", "hours(ts4)"]),
    st.integers(1, 64).map(lambda n: f"bucket(i, {n})"),
    st.integers(1, 64).map(lambda n: f"truncate(s,{n})"),
    st.sampled_from(_COLUMNS),
)
_SPACES = st.sampled_from(["", " ", "  "])


@settings(max_examples=200, deadline=None)
@given(terms=st.lists(_TERMS, max_size=6), pads=st.lists(st.tuples(_SPACES, _SPACES), min_size=6, max_size=6))
def test_property_split_roundtrip(terms: list[str], pads: list[tuple[str, str]]) -> None:
    text = ",".join(f"{a}{term}{b}" for term, (a, b) in zip(terms, pads))
    assert split_partition_by(text) == terms


@settings(max_examples=200, deadline=None)
@given(terms=st.lists(_TERMS, max_size=6))
def test_property_spec_has_one_field_per_term(terms: list[str]) -> None:
    names = set()
    try:
        spec = partition_spec_for(SCHEMA, split_partition_by(", ".join(terms)))
    except ConfigException as e:
        assert "more than once" in str(e)
        return
    assert len(spec.fields) == len(terms)
    for field, term in zip(spec.fields, terms):
        source = SCHEMA.find_column_name(field.source_id)
        assert source in term
        names.add(field.name)
    assert len(names) == len(terms)
