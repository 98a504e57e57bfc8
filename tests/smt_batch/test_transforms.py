"""Each batch SMT and predicate against its per-record SMT, on hand-picked cases (incl. where it must decline)."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from smt.batch import BatchTransformationChain
from tests.smt_batch.harness import (
    KAFKA,
    assert_batch_equals_per_record,
    batched,
    chain_of,
    encode,
    raw_batch,
)


def config_of(*stages: dict[str, str], predicates: dict[str, dict[str, str]] | None = None) -> dict[str, str]:
    config = {"transforms": ",".join(f"s{i}" for i in range(len(stages)))}
    for i, stage in enumerate(stages):
        config.update({f"transforms.s{i}.{k}": v for k, v in stage.items()})
    for name, predicate in (predicates or {}).items():
        config.update({f"predicates.{name}.{k}": v for k, v in predicate.items()})
    if predicates:
        config["predicates"] = ",".join(predicates)
    return config


def check(stage_or_config: dict[str, str], values: list, *, expect: str = "ok", **batch_options):
    """Batch == per record (or declined); ``expect`` the outcome; the batch's values when ok."""
    config = stage_or_config if "transforms" in stage_or_config else config_of(stage_or_config)
    batch = raw_batch([v if isinstance(v, bytes) or v is None else encode(v) for v in values], **batch_options)
    assert assert_batch_equals_per_record(config, batch) == expect
    result = batched(chain_of(config), batch)
    return [value for _, _, value in result[1]] if result[0] == "ok" else None


def smt(name: str, **config: str) -> dict[str, str]:
    return {"type": f"{KAFKA}.{name}", **{k.replace("_", "."): v for k, v in config.items()}}


# --- InsertField -------------------------------------------------------------------------------------


def test_insert_field_static_and_metadata():
    stage = smt("InsertField$Value", topic_field="t", partition_field="p!", offset_field="o?",
                timestamp_field="ts", static_field="s", static_value="v")
    out = check(stage, [{"a": 1}, None, {"s": "old", "t": 5}], partition=2, first_offset=7,
                timestamps=[10, 11, None])
    assert out == [{"a": 1, "t": "orders", "p": 2, "o": 7, "ts": 10, "s": "v"}, None,
                   {"s": "v", "t": "orders", "p": 2, "o": 9}]


def test_insert_field_keeps_existing_value_where_timestamp_is_null():
    stage = smt("InsertField$Value", timestamp_field="ts")
    assert check(stage, [{"ts": 5}, {"ts": 6}], timestamps=[None, 100]) == [{"ts": 5}, {"ts": 100}]
    check(stage, [{"ts": "x"}, {"ts": "y"}], timestamps=[None, 100], expect="declined")


def test_insert_field_on_non_maps_declines():
    check(smt("InsertField$Value", static_field="s", static_value="v"), [[1, 2]], expect="declined")


# --- ReplaceField ------------------------------------------------------------------------------------


def test_replace_field_include_exclude_renames():
    stage = smt("ReplaceField$Value", include="a,b,c", exclude="c", renames="a:x,b:y")
    assert check(stage, [{"a": 1, "b": {"q": 2}, "c": 3, "d": 4}, {"b": None}]) == [{"x": 1, "y": {"q": 2}}, {}]


def test_replace_field_rename_onto_an_existing_key_declines():
    check(smt("ReplaceField$Value", renames="a:b"), [{"a": 1}, {"b": 2}], expect="declined")


# --- MaskField ---------------------------------------------------------------------------------------


def test_mask_field_zero_by_type():
    stage = smt("MaskField$Value", fields="b,i,f,s,l,m,n,missing")
    out = check(stage, [{"b": True, "i": 5, "f": 1.5, "s": "x", "l": [1], "m": {"k": 1}, "n": None}])
    assert out == [{"b": False, "i": 0, "f": 0.0, "s": "", "l": [], "m": {}}]


def test_mask_field_replacement():
    stage = smt("MaskField$Value", fields="i,f,s", replacement="12")
    assert check(stage, [{"i": 5, "f": 1.5, "s": "x"}]) == [{"i": 12, "f": 12.0, "s": "12"}]
    # a column mixing 1 and 1.5 has per-record ints and floats: "1.5" is 1 for one, 1.5 for the other
    check(smt("MaskField$Value", fields="f", replacement="1.5"), [{"f": 1}, {"f": 2.5}], expect="declined")
    check(smt("MaskField$Value", fields="f", replacement="12"), [{"f": 1}, {"f": 2.5}])
    check(smt("MaskField$Value", fields="b", replacement="12"), [{"b": True}], expect="declined")


def test_mask_field_on_a_tombstone_declines():
    check(smt("MaskField$Value", fields="a"), [{"a": 1}, None], expect="declined")


# --- Cast --------------------------------------------------------------------------------------------


def test_cast_numbers_wrap_and_saturate_like_java():
    stage = smt("Cast$Value", spec="a:int8,b:int16,c:int32,d:int64,e:float32,f:boolean,g:boolean")
    out = check(stage, [{"a": 300, "b": 1e10, "c": -2.9, "d": "-42", "e": 16777217, "f": 0.4, "g": "TRUE"},
                        {"a": -129, "b": -1e10, "c": 3.7, "d": "7", "e": 1, "f": -1.5, "g": "no"}])
    assert out == [{"a": 44, "b": -1, "c": -2, "d": -42, "e": 16777216.0, "f": False, "g": True},
                   {"a": 127, "b": 0, "c": 3, "d": 7, "e": 1.0, "f": True, "g": False}]
    # doubles that may stand for JSON integers: int16 of 1e10 would wrap, of 10000000000 saturate
    check(smt("Cast$Value", spec="b:int16"), [{"b": 1e10}, {"b": 5}], expect="declined")


def test_cast_to_string():
    stage = smt("Cast$Value", spec="i:string,f:string,b:string,s:string")
    out = check(stage, [{"i": 7, "f": 1e7, "b": True, "s": "x"}, {"f": 0.001}])
    assert out == [{"i": "7", "f": "1.0E7", "b": "true", "s": "x"}, {"f": "0.001"}]
    # a column mixing 1 and 1.5: "1" or "1.0" depends on the per-record kind
    check(smt("Cast$Value", spec="f:string"), [{"f": 1}, {"f": 1.5}], expect="declined")


def test_cast_failures_decline():
    check(smt("Cast$Value", spec="s:int32"), [{"s": "12x"}], expect="declined")
    check(smt("Cast$Value", spec="l:int32"), [{"l": [1]}], expect="declined")
    check(smt("Cast$Value", spec="int32"), [{"l": [1]}], expect="declined")
    check(smt("Cast$Value", spec="int32"), [None, None])


# --- TimestampConverter ------------------------------------------------------------------------------


@pytest.mark.parametrize("target,expected", [
    ("string", "2023-11-14 22:13"),
    ("unix", 1700000000123),
    ("Date", dt.date(2023, 11, 14)),
    ("Time", dt.time(22, 13, 20, 123000)),
    ("Timestamp", dt.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=dt.timezone.utc)),
])
def test_timestamp_converter_from_unix(target, expected):
    stage = smt("TimestampConverter$Value", field="ts", target_type=target, format="yyyy-MM-dd HH:mm")
    assert check(stage, [{"ts": 1700000000123}, {"x": 1}]) == [{"ts": expected}, {"x": 1}]


def test_timestamp_converter_precisions_and_strings():
    stage = smt("TimestampConverter$Value", field="ts", target_type="unix", unix_precision="microseconds")
    assert check(stage, [{"ts": -1500}, {"ts": 1999}]) == [{"ts": -1000}, {"ts": 1000}]
    stage = smt("TimestampConverter$Value", field="ts", target_type="unix", format="yyyy-MM-dd")
    assert check(stage, [{"ts": "2024-01-02"}, {"ts": "1969-12-31"}]) == [{"ts": 1704153600000}, {"ts": -86400000}]
    check(stage, [{"ts": "not a date"}], expect="declined")
    check(stage, [{"ts": 1.5}], expect="declined")


def test_timestamp_converter_chain_into_cast_and_mask():
    config = config_of(smt("TimestampConverter$Value", field="ts", target_type="Timestamp"),
                       smt("MaskField$Value", fields="ts"))
    assert check(config, [{"ts": 5}]) == [{"ts": dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)}]


# --- Flatten, HoistField, ExtractField ---------------------------------------------------------------


def test_flatten_nested_maps():
    stage = smt("Flatten$Value", delimiter="_")
    out = check(stage, [{"a": {"b": {"c": 1}, "d": [1, 2]}, "e": None}, {"a": None}, {"a": {}}])
    assert out == [{"a_b_c": 1, "a_d": [1, 2]}, {}, {}]


def test_flatten_collision_declines():
    check(smt("Flatten$Value"), [{"a.b": 1, "a": {"b": 2}}], expect="declined")


def test_flatten_null_map_onto_a_flattened_value_declines():
    # Per record, the null map "a.b" (written after the top-level "a.b") overwrites 0 with None;
    # the batch keeps no key order, so it cannot tell which one wins. (Found by hypothesis.)
    config = config_of(smt("Flatten$Value", delimiter="."),
                       smt("InsertField$Value", static_field="a", static_value="v", predicate="p0"),
                       predicates={"p0": {"type": f"{KAFKA}.predicates.TopicNameMatches", "pattern": "orders.*"}})
    values = [None, {"a.b": 0, "a": {"p": None, "b": None}}, {"a": {"b": {}}}]
    check(config, values, expect="declined")
    check(smt("Flatten$Value"), [{"a.b": 0, "a": {"b": None}}, {"a": {"b": {}}}], expect="declined")
    check(smt("Flatten$Value"), [{"a": {"b": None}, "a.b": 0}, {"a": {"b": {"c": 1}}}], expect="declined")


def test_flatten_null_map_sharing_a_name_with_null_values_only():
    # Where the colliding value is null wherever the map is null, the result does not depend on order.
    out = check(smt("Flatten$Value"), [{"a.b": 0, "a": {"b": {"c": 1}}}, {"a": {"b": None}}])
    assert out == [{"a.b": 0, "a.b.c": 1}, {}]


def test_null_valued_keys_from_mask_and_flatten_are_seen_by_renames():
    # MaskField adds absent keys with null values, Flatten a null map's name; a rename onto such a
    # key collides per record (the later key wins), so the batch must decline. (Found by hypothesis.)
    predicates = {"p0": {"type": f"{KAFKA}.predicates.TopicNameMatches", "pattern": "orders.*"}}
    config = config_of(smt("MaskField$Value", fields="a,b"),
                       smt("InsertField$Value", static_field="a", static_value="v", predicate="p0"),
                       smt("ReplaceField$Value", renames="a:b"), predicates=predicates)
    check(config, [{}], expect="declined")
    config = config_of(smt("Flatten$Value"), smt("ReplaceField$Value", renames="x:a"))
    check(config, [{"x": 1, "a": None}, {"a": {"b": 2}}], expect="declined")


def test_hoist_field_wraps_tombstones_too():
    assert check(smt("HoistField$Value", field="v"), [{"a": 1}, None]) == [{"v": {"a": 1}}, {}]


def test_extract_field_v1_and_v2():
    assert check(smt("ExtractField$Value", field="a"), [{"a": {"b": 1}}, {"a": None}, None]) == \
        [{"b": 1}, None, None]
    stage = smt("ExtractField$Value", field="a.b", field_syntax_version="V2")
    assert check(stage, [{"a": {"b": 1}}, {"a": None}, {"c": 1}]) == [1, None, None]
    check(stage, [{"a": 5}], expect="declined")  # a step through a non-map fails per record


# --- Filter, predicates, routers -------------------------------------------------------------------


@pytest.mark.parametrize("predicate,negate,kept", [
    ({"type": f"{KAFKA}.predicates.TopicNameMatches", "pattern": "orders-.*"}, "false", [0, 2, 3]),
    ({"type": f"{KAFKA}.predicates.TopicNameMatches", "pattern": "orders-.*"}, "true", [1]),
    ({"type": f"{KAFKA}.predicates.HasHeaderKey", "name": "h1"}, "false", [2, 3]),
    ({"type": f"{KAFKA}.predicates.RecordIsTombstone"}, "false", [0, 1, 2]),
    ({"type": f"{KAFKA}.predicates.RecordIsTombstone"}, "true", [3]),
])
def test_filter_with_predicates(predicate, negate, kept):
    config = config_of(dict(smt("Filter"), predicate="p", negate=negate), predicates={"p": predicate})
    batch = raw_batch([encode({"i": 0}), encode({"i": 1}), encode({"i": 2}), None],
                      topics=["orders", "orders-eu", "audit", "x"],
                      headers=[[("h1", b"v")], [("h2", None), ("h1", None)], [], []])
    assert assert_batch_equals_per_record(config, batch) == "ok"
    result = batched(chain_of(config), batch)
    assert [offset for offset, _, _ in result[1]] == kept


def test_stage_with_predicate_applies_to_matching_records_only():
    config = config_of(dict(smt("Cast$Value", spec="a:string"), predicate="p"),
                       predicates={"p": {"type": f"{KAFKA}.predicates.TopicNameMatches", "pattern": "eu"}})
    batch = raw_batch([encode({"a": 1}), encode({"a": 2}), encode({"b": 3})], topics=["eu", "us", "eu"])
    assert assert_batch_equals_per_record(config, batch) == "declined"  # "a" would be int and string
    config["transforms.s0.spec"] = "b:string"
    assert assert_batch_equals_per_record(config, batch) == "ok"


def test_regex_router_and_timestamp_router():
    config = config_of(smt("RegexRouter", regex="orders-(.*)", replacement="$1"),
                       smt("TimestampRouter", **{"topic_format": "${topic}_${timestamp}",
                                                 "timestamp_format": "yyyy-MM-dd'T'HH"}))
    batch = raw_batch([encode({"a": 1})] * 3, topics=["orders-eu", "audit", "orders-us"],
                      timestamps=[0, 3_600_000 * 25, -1])
    assert assert_batch_equals_per_record(config, batch) == "ok"
    assert batched(chain_of(config), batch)[1][0][1] == "eu_1970-01-01T00"
    null_timestamp = raw_batch([encode({"a": 1})], timestamps=[None])
    assert assert_batch_equals_per_record(config, null_timestamp) == "declined"


# --- which chains have a batch form --------------------------------------------------------------


def test_from_chain_needs_a_batch_form_for_every_stage():
    assert BatchTransformationChain.from_chain(chain_of(config_of(smt("Flatten$Value")))) is not None
    for stage in (smt("InsertField$Key", static_field="s", static_value="v"),
                  smt("InsertHeader", header="h", value_literal="v"),
                  {"type": "tests.smt_batch.test_transforms:CustomInsert", "static.field": "s",
                   "static.value": "v"}):
        assert BatchTransformationChain.from_chain(chain_of(config_of(smt("Flatten$Value"), stage))) is None


from smt.transforms.insert_field import Value as _InsertValue  # noqa: E402


class CustomInsert(_InsertValue):
    """A user's subclass: it may override apply, so it has no batch form."""


# --- parsing JSON values ------------------------------------------------------------------------------


@pytest.mark.parametrize("values,parsed", [
    ([b'{"d": "2024-01-02", "l": [null, null], "n": [null, 1.5]}'],
     [{"d": "2024-01-02", "l": [None, None], "n": [None, 1.5]}]),
    ([b'{"a": 1}', None, b'{}'], [{"a": 1}, None, {}]),
    ([None, None], [None, None]),
])
def test_parse_json_objects(values, parsed):
    from connector.data.convert.json_rows import parse_json_objects
    from smt.batch import to_python

    assert to_python(parse_json_objects(pa.array(values, pa.binary())).array) == parsed


@pytest.mark.parametrize("value", [
    b'{"a": -0.0}', b'{"a": 12345678901234567890}', b'{"a": 1e20}', b'{"a": NaN}', b'{"a": 1, "a": 2}',
    b'[1]', b'{"a": 1}\n', b'', b'{"a": 007}', b' {"a": 1}', b'{"a": "\\ud800"}',
])
def test_parse_json_objects_declines_what_it_would_read_differently(value):
    from connector.api.declined import Declined
    from connector.data.convert.json_rows import parse_json_objects

    with pytest.raises(Declined):
        parse_json_objects(pa.array([value, b'{"a": 1.5}'], pa.binary()))
