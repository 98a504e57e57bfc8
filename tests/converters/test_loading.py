"""converters.load / load_header_converter: class names, aliases, user plugins, config passthrough."""

from __future__ import annotations

from typing import Any, Mapping

import pytest

import converters
from connector.api import ConfigException, Schema, SchemaAndValue
from converters.base import Converter, HeaderConverter
from converters.bytearray import ByteArrayConverter
from converters.json import JsonConverter
from converters.numbers import (
    BooleanConverter,
    DoubleConverter,
    FloatConverter,
    IntegerConverter,
    LongConverter,
    ShortConverter,
)
from converters.simple_header import SimpleHeaderConverter
from converters.string import StringConverter

TOPIC = "topic"


class RecordingConverter(Converter, HeaderConverter):
    """A user's converter, loaded as ``tests.converters.test_loading:RecordingConverter``."""

    def configure(self, config: Mapping[str, Any], is_key: bool | None = None) -> None:
        self.config, self.is_key = dict(config), is_key

    def to_connect_data(self, topic, data, headers=None):
        return SchemaAndValue(Schema.OPTIONAL_BYTES_SCHEMA, data)

    def from_connect_data(self, topic, schema, value, headers=None):
        return value

    def to_connect_header(self, topic, header_key, value):
        return SchemaAndValue(Schema.OPTIONAL_BYTES_SCHEMA, value)

    def from_connect_header(self, topic, header_key, schema, value):
        return value


class NotAConverter:
    pass


class BrokenConverter(RecordingConverter):
    def __init__(self) -> None:
        raise RuntimeError("no way")


@pytest.mark.parametrize("names, cls", [
    (["org.apache.kafka.connect.json.JsonConverter", "JsonConverter", "Json"], JsonConverter),
    (["org.apache.kafka.connect.storage.StringConverter", "StringConverter", "String"], StringConverter),
    (["org.apache.kafka.connect.converters.ByteArrayConverter", "ByteArrayConverter", "ByteArray"],
     ByteArrayConverter),
    (["org.apache.kafka.connect.converters.BooleanConverter", "Boolean"], BooleanConverter),
    (["org.apache.kafka.connect.converters.ShortConverter", "Short"], ShortConverter),
    (["org.apache.kafka.connect.converters.IntegerConverter", "Integer"], IntegerConverter),
    (["org.apache.kafka.connect.converters.LongConverter", "Long"], LongConverter),
    (["org.apache.kafka.connect.converters.FloatConverter", "Float"], FloatConverter),
    (["org.apache.kafka.connect.converters.DoubleConverter", "Double"], DoubleConverter),
])
def test_load_by_class_name_and_aliases(names, cls):
    for name in names:
        converter = converters.load(name, {})
        assert type(converter) is cls


@pytest.mark.parametrize("name", ["org.apache.kafka.connect.storage.SimpleHeaderConverter",
                                  "SimpleHeaderConverter", "SimpleHeader"])
def test_load_header_converter_by_class_name_and_aliases(name):
    assert type(converters.load_header_converter(name, {})) is SimpleHeaderConverter


def test_confluent_converters_are_registered():
    assert converters.CONVERTERS["io.confluent.connect.avro.AvroConverter"] == \
        "converters.confluent.avro:AvroConverter"
    assert converters.CONVERTERS["io.confluent.connect.json.JsonSchemaConverter"] == \
        "converters.confluent.json_schema:JsonSchemaConverter"
    assert converters.CONVERTERS["io.confluent.connect.protobuf.ProtobufConverter"] == \
        "converters.confluent.protobuf:ProtobufConverter"


def test_converter_config_passthrough():
    # The caller strips "value.converter."; the converter sees the bare keys, as strings.
    value = converters.load("org.apache.kafka.connect.json.JsonConverter",
                            {"schemas.enable": "false", "decimal.format": "NUMERIC"})
    assert value.to_connect_data(TOPIC, b'{"a": 1}') == SchemaAndValue(None, {"a": 1})
    assert value.config.converter_type.value == "value"
    key = converters.load("JsonConverter", {"schemas.enable": False}, is_key=True)
    assert key.config.converter_type.value == "key" and not key.config.schemas_enable


def test_user_converter_by_module_and_class():
    converter = converters.load("tests.converters.test_loading:RecordingConverter", {"x": "1"}, is_key=True)
    assert isinstance(converter, RecordingConverter)
    assert converter.config == {"x": "1"} and converter.is_key is True


def test_header_converter_gets_converter_type_header():
    converter = converters.load_header_converter("tests.converters.test_loading:RecordingConverter", {"x": "1"})
    assert converter.config == {"x": "1", "converter.type": "header"} and converter.is_key is None
    json_headers = converters.load_header_converter("JsonConverter", {"schemas.enable": "false"})
    assert json_headers.config.converter_type.value == "header"
    assert json_headers.from_connect_header(TOPIC, "h", Schema.INT32_SCHEMA, 3) == b"3"


def test_unknown_class_names_the_class_and_key():
    with pytest.raises(ConfigException) as info:
        converters.load("com.example.NoSuchConverter", {})
    assert str(info.value).startswith(
        "Invalid value com.example.NoSuchConverter for configuration value.converter: "
        "Class com.example.NoSuchConverter could not be found."
    )
    with pytest.raises(ConfigException, match="configuration key.converter"):
        converters.load("Nope", {}, is_key=True)
    with pytest.raises(ConfigException, match="configuration header.converter"):
        converters.load_header_converter("Nope", {})
    with pytest.raises(ConfigException, match="no_such_module"):
        converters.load("no_such_module:Converter", {})
    with pytest.raises(ConfigException, match="NotThere"):
        converters.load("tests.converters.test_loading:NotThere", {})


def test_class_that_is_not_a_converter():
    with pytest.raises(ConfigException, match="is not a Converter"):
        converters.load("tests.converters.test_loading:NotAConverter", {})
    with pytest.raises(ConfigException, match="is not a HeaderConverter"):
        converters.load_header_converter("tests.converters.test_loading:NotAConverter", {})
    with pytest.raises(ConfigException, match="Could not instantiate .*no way"):
        converters.load("tests.converters.test_loading:BrokenConverter", {})


def test_invalid_converter_settings_are_config_exceptions():
    with pytest.raises(ConfigException, match="^Invalid value yes for configuration schemas.enable"):
        converters.load("JsonConverter", {"schemas.enable": "yes"})
    with pytest.raises(ConfigException, match="converter.encoding"):
        converters.load("StringConverter", {"converter.encoding": "no-such-charset"})
