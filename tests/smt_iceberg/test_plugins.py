"""User plugins named ``module:Class`` (transformation, predicate, converter): see docs/plugins.md."""

from __future__ import annotations

import importlib

import pytest

from connector.api.errors import ConfigException, DataException
from connector.api.plugins import resolve_class
from connector.api.schema import Schema, SchemaBuilder
from connector.api.struct import Struct
from tests.smt_iceberg import sink_record
from tests.smt_iceberg.example_plugins import KeyValueTextConverter, TopicSuffix, UppercaseField

MODULE = "tests.smt_iceberg.example_plugins"


def test_resolve_class_by_module_path():
    assert resolve_class(f"{MODULE}:UppercaseField", {}, kind="transformation") is UppercaseField
    assert resolve_class(f"{MODULE}:TopicSuffix", {}, kind="predicate") is TopicSuffix
    assert resolve_class(f"{MODULE}:KeyValueTextConverter", {}, kind="converter") is KeyValueTextConverter


def test_resolve_class_errors():
    with pytest.raises(ConfigException, match="Cannot import module"):
        resolve_class("no_such_module_xyz:Thing", {}, kind="transformation")
    with pytest.raises(ConfigException, match="has no attribute"):
        resolve_class(f"{MODULE}:Missing", {}, kind="transformation")


def test_example_transform_struct_and_map():
    smt = UppercaseField()
    smt.configure({"field": "name"})
    schema = SchemaBuilder.struct().field("name", Schema.OPTIONAL_STRING_SCHEMA).field("n", Schema.INT32_SCHEMA).build()
    result = smt.apply(sink_record(schema, Struct(schema).put("name", "ada").put("n", 1)))
    assert (result.value.get("name"), result.value.get("n"), result.value_schema) == ("ADA", 1, schema)
    assert smt.apply(sink_record(None, {"name": "bob"})).value == {"name": "BOB"}
    assert smt.apply(sink_record(None, {"other": 1})).value == {"other": 1}
    tombstone = sink_record()
    assert smt.apply(tombstone) is tombstone
    with pytest.raises(DataException):
        smt.apply(sink_record(None, "text"))
    with pytest.raises(ConfigException):
        UppercaseField().configure({})


def test_example_predicate():
    predicate = TopicSuffix()
    predicate.configure({"suffix": ".orders"})
    assert predicate.test(sink_record(topic="shop.orders"))
    assert not predicate.test(sink_record(topic="shop.users"))


def test_example_converter_round_trip():
    converter = KeyValueTextConverter()
    converter.configure({"separator": "&"}, False)
    schema_and_value = converter.to_connect_data("t", b"a=1&b=x")
    assert schema_and_value.value == {"a": "1", "b": "x"}
    assert schema_and_value.schema.type.value == "map"
    assert converter.from_connect_data("t", schema_and_value.schema, schema_and_value.value) == b"a=1&b=x"
    assert converter.to_connect_data("t", None).value is None
    assert converter.from_connect_data("t", None, None) is None


def test_smt_load_user_transform_and_predicate():
    import smt

    transform = smt.load(f"{MODULE}:UppercaseField", {"field": "name"})
    assert transform.apply(sink_record(None, {"name": "ada"})).value == {"name": "ADA"}
    predicate = smt.load_predicate(f"{MODULE}:TopicSuffix", {"suffix": ".orders"})
    assert predicate.test(sink_record(topic="a.orders"))
    with pytest.raises(ConfigException):
        smt.load("no_such_module_xyz:Thing", {})


def test_converters_load_user_converter():
    converters = importlib.import_module("converters")
    converter = converters.load(f"{MODULE}:KeyValueTextConverter", {"separator": ";"}, is_key=True)
    assert converter.to_connect_data("t", b"k=v").value == {"k": "v"}
