"""ReplaceField: ported from Kafka's ReplaceFieldTest (3.9, with the deprecated aliases), plus property tests."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from connector.api import ConfigException, DataException, Schema, SchemaBuilder, Struct
from smt.transforms.replace_field import Key, Value
from tests.smt import record


def configured(cls=Value, **config):
    xform = cls()
    xform.configure(config)
    return xform


def sink(value_schema=None, value=None):
    return record(None, None, value_schema, value, topic="test")


def four_field_schema():
    return (SchemaBuilder.struct().field("dont", Schema.STRING_SCHEMA).field("abc", Schema.INT32_SCHEMA)
            .field("foo", Schema.BOOLEAN_SCHEMA).field("etc", Schema.STRING_SCHEMA).build())


def test_tombstone_schemaless():
    transformed = configured(include="abc,foo", renames="abc:xyz,foo:bar").apply(sink())
    assert transformed.value is None
    assert transformed.value_schema is None


def test_tombstone_with_schema():
    schema = four_field_schema()
    transformed = configured(include="abc,foo", renames="abc:xyz,foo:bar").apply(sink(schema, None))
    assert transformed.value is None
    assert transformed.value_schema == schema


def test_schemaless():
    xform = configured(exclude="dont", renames="abc:xyz,foo:bar")
    value = {"dont": "whatever", "abc": 42, "foo": True, "etc": "etc"}
    assert xform.apply(sink(None, value)).value == {"xyz": 42, "bar": True, "etc": "etc"}


def test_with_schema():
    xform = configured(include="abc,foo", renames="abc:xyz,foo:bar")
    schema = four_field_schema()
    value = Struct(schema).put("dont", "whatever").put("abc", 42).put("foo", True).put("etc", "etc")
    updated = xform.apply(sink(schema, value)).value
    assert len(updated.schema.fields()) == 2
    assert updated.get("xyz") == 42
    assert updated.get("bar") is True


def test_include_backwards_compatibility():
    transformed = configured(whitelist="abc,foo", renames="abc:xyz,foo:bar").apply(sink())
    assert transformed.value is None
    assert transformed.value_schema is None


def test_exclude_backwards_compatibility():
    xform = configured(blacklist="dont", renames="abc:xyz,foo:bar")
    value = {"dont": "whatever", "abc": 42, "foo": True, "etc": "etc"}
    assert xform.apply(sink(None, value)).value == {"xyz": 42, "bar": True, "etc": "etc"}


@pytest.mark.parametrize("replace_null_with_default, expected", [(False, None), (True, 42)])
def test_replace_null_with_default_config_on_value(replace_null_with_default, expected):
    xform = configured(include="abc", renames="abc:optional_with_default",
                       **{"replace.null.with.default": str(replace_null_with_default).lower()})
    schema = SchemaBuilder.struct().field("abc", SchemaBuilder.int32().optional().default_value(42).build()).build()
    updated = xform.apply(sink(schema, Struct(schema).put("abc", None))).value
    assert len(updated.schema.fields()) == 1
    assert updated.get_without_default("optional_with_default") == expected


@pytest.mark.parametrize("replace_null_with_default, expected", [(False, None), (True, 42)])
def test_replace_null_with_default_config_on_key(replace_null_with_default, expected):
    xform = configured(Key, include="abc", renames="abc:optional_with_default",
                       **{"replace.null.with.default": str(replace_null_with_default).lower()})
    schema = SchemaBuilder.struct().field("abc", SchemaBuilder.int32().optional().default_value(42).build()).build()
    updated = xform.apply(record(schema, Struct(schema).put("abc", None), topic="test")).key
    assert len(updated.schema.fields()) == 1
    assert updated.get_without_default("optional_with_default") == expected


# --- beyond Kafka's tests --------------------------------------------------------------------


def test_new_key_wins_over_deprecated_alias():
    xform = configured(include="a", whitelist="b", exclude="", blacklist="a")
    assert xform.apply(sink(None, {"a": 1, "b": 2})).value == {"a": 1}


def test_exclude_wins_over_include():
    assert configured(include="a,b", exclude="b").apply(sink(None, {"a": 1, "b": 2, "c": 3})).value == {"a": 1}


@pytest.mark.parametrize("renames", ["abc", "a:b:c", "a:b,c"])
def test_invalid_rename_mapping(renames):
    bad = [m for m in renames.split(",") if len([p for p in m.split(":")]) != 2][0]
    listed = "[" + ", ".join(renames.split(",")) + "]"
    with pytest.raises(ConfigException) as raised:
        configured(renames=renames)
    assert str(raised.value) == f"Invalid value {listed} for configuration renames: Invalid rename mapping: {bad}"


def test_schema_metadata_and_field_order_kept():
    schema = (SchemaBuilder.struct().name("n").version(2).doc("d").field("b", Schema.INT32_SCHEMA)
              .field("a", Schema.INT32_SCHEMA).build())
    xform = configured(renames="a:z")
    out = xform.apply(sink(schema, Struct(schema).put("a", 1).put("b", 2)))
    assert [f.name for f in out.value_schema.fields()] == ["b", "z"]
    assert (out.value_schema.name, out.value_schema.version, out.value_schema.doc) == ("n", 2, "d")
    assert xform.apply(sink(schema, Struct(schema).put("a", 3).put("b", 4))).value_schema is out.value_schema


def test_rename_onto_existing_field_with_schema_fails():
    schema = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).field("b", Schema.INT32_SCHEMA).build()
    with pytest.raises(DataException, match="duplication b"):
        configured(renames="a:b").apply(sink(schema, Struct(schema).put("a", 1).put("b", 2)))


def test_requires_map_or_struct():
    with pytest.raises(DataException, match=r"\[field replacement\], found: int$"):
        configured(exclude="a").apply(sink(None, 5))
    with pytest.raises(DataException, match=r"^Only Struct objects supported for \[field replacement\]"):
        configured(exclude="a").apply(sink(Schema.INT32_SCHEMA, 5))


# --- property tests ----------------------------------------------------------------------------

NAMES = st.sampled_from(["a", "b", "c", "d", "e", "f"])


@st.composite
def configs(draw):
    include = draw(st.lists(NAMES, unique=True, max_size=4))
    exclude = draw(st.lists(NAMES, unique=True, max_size=3))
    sources = draw(st.lists(NAMES, unique=True, max_size=3))
    targets = draw(st.lists(st.sampled_from(["x", "y", "z", "w"]), unique=True, min_size=len(sources),
                            max_size=len(sources)))
    return include, exclude, dict(zip(sources, targets))


def _make(include, exclude, renames, cls=Value):
    return configured(cls, include=",".join(include), exclude=",".join(exclude),
                      renames=",".join(f"{k}:{v}" for k, v in renames.items()))


def _expected(value_items, include, exclude, renames):
    return {renames.get(k, k): v for k, v in value_items
            if k not in exclude and (not include or k in include)}


@settings(max_examples=200, deadline=None)
@given(configs(), st.dictionaries(NAMES, st.integers(), max_size=6))
def test_schemaless_include_exclude_rename(config, value):
    include, exclude, renames = config
    out = _make(include, exclude, renames).apply(sink(None, value)).value
    assert out == _expected(value.items(), include, exclude, renames)


@settings(max_examples=200, deadline=None)
@given(configs(), st.lists(NAMES, unique=True, max_size=6), st.data())
def test_struct_include_exclude_rename_matches_schemaless(config, names, data):
    include, exclude, renames = config
    builder = SchemaBuilder.struct()
    for name in names:
        builder.field(name, Schema.OPTIONAL_INT32_SCHEMA)
    schema = builder.build()
    values = {name: data.draw(st.one_of(st.none(), st.integers(-100, 100))) for name in names}
    struct = Struct(schema)
    for name, val in values.items():
        struct.put(name, val)
    out = _make(include, exclude, renames, Key).apply(record(schema, struct)).key
    expected = _expected(values.items(), include, exclude, renames)
    assert [f.name for f in out.schema.fields()] == list(expected)
    assert {f.name: out.get(f.name) for f in out.schema.fields()} == expected
