"""ExtractField: ported from Kafka's ExtractFieldTest, plus its field-path tests
(FieldPathNotationTest, FieldSyntaxVersionTest, SingleFieldPathTest)."""

from __future__ import annotations

import pytest

from connector.api import ConfigException, DataException, Schema, SchemaBuilder, Struct
from connector.api.config_def import ConfigDef
from smt.field_path import FieldSyntaxVersion, SingleFieldPath
from smt.transforms.extract_field import Key, Value
from tests.smt import record


def configured(cls=Key, **config):
    xform = cls()
    xform.configure(config)
    return xform


def test_schemaless():
    transformed = configured(field="magic").apply(record(None, {"magic": 42}))
    assert transformed.key_schema is None
    assert transformed.key == 42


def test_schemaless_and_nested_path():
    xform = configured(**{"field.syntax.version": "V2", "field": "magic.foo"})
    transformed = xform.apply(record(None, {"magic": {"foo": 42}}))
    assert transformed.key_schema is None
    assert transformed.key == 42


def test_null_schemaless():
    transformed = configured(field="magic").apply(record(None, None))
    assert transformed.key_schema is None
    assert transformed.key is None


def test_with_schema():
    key_schema = SchemaBuilder.struct().field("magic", Schema.INT32_SCHEMA).build()
    transformed = configured(field="magic").apply(record(key_schema, Struct(key_schema).put("magic", 42)))
    assert transformed.key_schema == Schema.INT32_SCHEMA
    assert transformed.key == 42


def test_with_schema_and_nested_path():
    xform = configured(**{"field.syntax.version": "V2", "field": "magic.foo"})
    foo_schema = SchemaBuilder.struct().field("foo", Schema.INT32_SCHEMA).build()
    key_schema = SchemaBuilder.struct().field("magic", foo_schema).build()
    key = Struct(key_schema).put("magic", Struct(foo_schema).put("foo", 42))
    transformed = xform.apply(record(key_schema, key))
    assert transformed.key_schema == Schema.INT32_SCHEMA
    assert transformed.key == 42


def test_null_with_schema():
    key_schema = SchemaBuilder.struct().field("magic", Schema.INT32_SCHEMA).optional().build()
    transformed = configured(field="magic").apply(record(key_schema, None))
    assert transformed.key_schema == Schema.INT32_SCHEMA
    assert transformed.key is None


def test_non_existent_field_schemaless_should_return_null():
    transformed = configured(field="nonexistent").apply(record(None, {"magic": 42}))
    assert transformed.key_schema is None
    assert transformed.key is None


def test_non_existent_nested_field_schemaless_should_return_null():
    xform = configured(**{"field.syntax.version": "V2", "field": "magic.nonexistent"})
    transformed = xform.apply(record(None, {"magic": {"foo": 42}}))
    assert transformed.key_schema is None
    assert transformed.key is None


def test_non_existent_field_with_schema_should_fail():
    key_schema = SchemaBuilder.struct().field("magic", Schema.INT32_SCHEMA).build()
    with pytest.raises(ValueError) as raised:  # Kafka: IllegalArgumentException
        configured(field="nonexistent").apply(record(key_schema, Struct(key_schema).put("magic", 42)))
    assert str(raised.value) == "Unknown field: nonexistent"


def test_non_existent_nested_field_with_schema_should_fail():
    xform = configured(**{"field.syntax.version": "V2", "field": "magic.nonexistent"})
    foo_schema = SchemaBuilder.struct().field("foo", Schema.INT32_SCHEMA).build()
    key_schema = SchemaBuilder.struct().field("magic", foo_schema).build()
    key = Struct(key_schema).put("magic", Struct(foo_schema).put("foo", 42))
    with pytest.raises(ValueError) as raised:
        xform.apply(record(key_schema, key))
    assert str(raised.value) == "Unknown field: magic.nonexistent"


@pytest.mark.parametrize("replace_null_with_default, expected", [(False, None), (True, 42)])
def test_unset_optional_key(replace_null_with_default, expected):
    xform = configured(field="optional_with_default", **{"replace.null.with.default": replace_null_with_default})
    key_schema = SchemaBuilder.struct().field(
        "optional_with_default", SchemaBuilder.int32().optional().default_value(42).build()).build()
    transformed = xform.apply(record(key_schema, Struct(key_schema).put("optional_with_default", None)))
    assert transformed.key == expected


@pytest.mark.parametrize("replace_null_with_default, expected", [(False, None), (True, 42)])
def test_unset_optional_field(replace_null_with_default, expected):
    xform = configured(Value, field="optional_with_default",
                       **{"replace.null.with.default": replace_null_with_default})
    value_schema = SchemaBuilder.struct().field(
        "optional_with_default", SchemaBuilder.int32().optional().default_value(42).build()).build()
    transformed = xform.apply(record(value_schema=value_schema,
                                     value=Struct(value_schema).put("optional_with_default", None)))
    assert transformed.value == expected


# --- beyond Kafka's tests --------------------------------------------------------------------


def test_v1_takes_dotted_name_literally():
    transformed = configured(Value, field="a.b").apply(record(value={"a.b": 1, "a": {"b": 2}}))
    assert transformed.value == 1


def test_schemaless_requires_a_map():
    with pytest.raises(DataException, match=r"^Only Map objects supported in absence of schema for "
                                            r"\[field extraction\], found: int$"):
        configured(field="a").apply(record(None, 42))


def test_with_schema_requires_a_struct():
    with pytest.raises(DataException, match=r"^Only Struct objects supported for \[field extraction\], found: str$"):
        configured(field="a").apply(record(SchemaBuilder.struct().field("a", Schema.STRING_SCHEMA).build(), "x"))


def test_nested_path_through_non_map_fails():
    xform = configured(Value, **{"field.syntax.version": "v2", "field": "a.b"})
    with pytest.raises(DataException, match=r"\[nested field access\]"):
        xform.apply(record(value={"a": 5}))


def test_missing_field_config():
    with pytest.raises(ConfigException, match='^Missing required configuration "field" which has no default value.$'):
        Key().configure({})


# --- FieldPathNotationTest ---------------------------------------------------------------------


def path_v1(text):
    return SingleFieldPath(text, FieldSyntaxVersion.V1).path()


def path_v2(text):
    return SingleFieldPath(text, FieldSyntaxVersion.V2).path()


def test_should_build_v1_with_dots_and_backtick_pair():
    for text in ("foo.bar.baz", "foo`bar`", "foo.`bar.baz`"):
        assert path_v1(text) == [text]


def test_should_include_empty_field_names():
    assert path_v2("..") == ["", "", ""]
    assert path_v2("foo..") == ["foo", "", ""]
    assert path_v2(".bar.") == ["", "bar", ""]
    assert path_v2("..baz") == ["", "", "baz"]


def test_should_build_v2_with_empty_path():
    assert path_v2("") == []


def test_should_build_v2_without_dots():
    assert path_v2("foobarbaz") == ["foobarbaz"]


def test_should_build_v2_when_includes_dots():
    assert path_v2("foo.bar.baz") == ["foo", "bar", "baz"]


def test_should_build_v2_without_wrapping_backticks():
    assert path_v2("foo`bar`baz") == ["foo`bar`baz"]


def test_should_build_v2_when_includes_dots_and_backtick_pair():
    assert path_v2("`foo.bar.baz`") == ["foo.bar.baz"]
    assert path_v2("foo.`bar.baz`") == ["foo", "bar.baz"]
    assert path_v2("`foo.bar`.baz") == ["foo.bar", "baz"]
    assert path_v2("foo.`bar`.baz") == ["foo", "bar", "baz"]


def test_should_build_v2_and_ignore_backticks_that_are_not_wrapping():
    assert path_v2("foo.``bar.baz`") == ["foo", "`bar.baz"]
    assert path_v2("foo.`bar.baz``") == ["foo", "bar.baz`"]
    assert path_v2("foo.`ba`r.baz`") == ["foo", "ba`r.baz"]
    assert path_v2("foo.ba`r.baz") == ["foo", "ba`r", "baz"]
    assert path_v2("foo.``bar``.baz") == ["foo", "`bar`", "baz"]
    assert path_v2("``foo.bar.baz``") == ["`foo.bar.baz`"]


def test_should_build_v2_and_escape_backticks():
    assert path_v2("foo.`bar\\`.baz`") == ["foo", "bar`.baz"]
    assert path_v2("foo.`bar.`baz`") == ["foo", "bar.`baz"]
    assert path_v2("foo.`bar\\`.`baz`") == ["foo", "bar`.`baz"]
    assert path_v2("foo.`bar\\\\`.\\`baz`") == ["foo", "bar\\`.\\`baz"]


@pytest.mark.parametrize("text, position", [
    ("`foo.bar.baz", 0), ("foo.`bar.baz", 4), ("foo.bar.`baz", 8), ("foo.bar.`baz\\`", 8),
])
def test_should_fail_v2_when_incomplete_backticks(text, position):
    with pytest.raises(ConfigException) as raised:
        path_v2(text)
    assert str(raised.value) == (f"Incomplete backtick pair in path: [{text}], consider adding a backslash "
                                 f"before backtick at position {position} to escape it")


def test_incomplete_backticks_fail_at_configure_time():
    with pytest.raises(ConfigException, match="Incomplete backtick pair"):
        configured(**{"field.syntax.version": "V2", "field": "`a.b"})


# --- FieldSyntaxVersionTest ----------------------------------------------------------------------


def test_should_append_config_to_def():
    config_def = FieldSyntaxVersion.append_config_to(ConfigDef())
    assert len(config_def.config_keys) == 1
    key = config_def.config_keys["field.syntax.version"]
    assert key.name == "field.syntax.version"
    assert key.default == "V1"


def test_should_fail_when_append_config_to_def_again():
    config_def = FieldSyntaxVersion.append_config_to(ConfigDef())
    with pytest.raises(ConfigException) as raised:
        FieldSyntaxVersion.append_config_to(config_def)
    assert str(raised.value) == "Configuration field.syntax.version is defined twice."


@pytest.mark.parametrize("text, version", [("v1", "V1"), ("v2", "V2"), ("V1", "V1"), ("V2", "V2")])
def test_should_get_version_from_config(text, version):
    parsed = FieldSyntaxVersion.append_config_to(ConfigDef()).parse({"field.syntax.version": text})
    assert FieldSyntaxVersion.from_config(parsed) is FieldSyntaxVersion[version]


@pytest.mark.parametrize("text", ["v3", "V 1", "v", "V 2", "2", "1"])
def test_should_fail_when_wrong_version_is_passed(text):
    with pytest.raises(ConfigException) as raised:
        FieldSyntaxVersion.append_config_to(ConfigDef()).parse({"field.syntax.version": text})
    assert str(raised.value) == (f"Invalid value {text} for configuration field.syntax.version: "
                                 "String must be one of (case insensitive): V1, V2")


# --- SingleFieldPathTest ---------------------------------------------------------------------


def v2(text):
    return SingleFieldPath(text, FieldSyntaxVersion.V2)


def nested_schemas():
    baz_schema = SchemaBuilder.struct().field("inner", Schema.STRING_SCHEMA).optional().build()
    bar_schema = SchemaBuilder.struct().field("bar", Schema.INT32_SCHEMA).field("baz", baz_schema).build()
    schema = SchemaBuilder.struct().field("foo", bar_schema).build()
    struct = Struct(schema).put("foo", Struct(bar_schema).put("bar", 42).put("baz", None))
    return schema, struct


def test_should_find_field():
    bar_schema = SchemaBuilder.struct().field("bar", Schema.INT32_SCHEMA).build()
    schema = SchemaBuilder.struct().field("foo", bar_schema).build()
    assert v2("foo.bar").field_from(schema) == bar_schema.field("bar")
    assert v2("foo").field_from(schema) == schema.field("foo")


def test_should_return_null_field_when_field_not_found():
    bar_schema = SchemaBuilder.struct().field("bar", Schema.INT32_SCHEMA).build()
    schema = SchemaBuilder.struct().field("foo", bar_schema).build()
    assert v2("un.known").field_from(schema) is None
    assert v2("foo.unknown").field_from(schema) is None
    assert v2("unknown").field_from(schema) is None
    assert v2("test").field_from(None) is None


def test_should_find_value_in_map():
    value = {"foo": {"bar": 42, "baz": None}}
    assert v2("foo.bar").value_from_map(value) == 42
    assert v2("foo.baz").value_from_map(value) is None


def test_should_return_null_value_when_field_not_found_in_map():
    value = {"foo": {"bar": 42, "baz": None}}
    for text in ("un.known", "foo.unknown", "unknown", "foo.baz.inner"):
        assert v2(text).value_from_map(value) is None


def test_should_find_value_in_struct():
    _, struct = nested_schemas()
    assert v2("foo.bar").value_from_struct(struct) == 42
    assert v2("foo.baz").value_from_struct(struct) is None


def test_should_return_null_value_when_field_not_found_in_struct():
    _, struct = nested_schemas()
    for text in ("un.known", "foo.unknown", "unknown", "foo.baz.inner"):
        assert v2(text).value_from_struct(struct) is None
