"""Kafka Connect converters, by their Connect class names.

``load("org.apache.kafka.connect.json.JsonConverter", {"schemas.enable": "false"})``
returns a configured converter with ``to_connect_data(topic, data, headers=None)``
and ``from_connect_data(topic, schema, value, headers=None)``;
``load_header_converter(...)`` a configured header converter with
``to_connect_header``/``from_connect_header``. Names resolve as in Connect:
the Java class name, an unambiguous alias (the simple name, or it without
``Converter``: ``JsonConverter``, ``Json``, ``StringConverter``, ``String``), or
``module:Class`` for a user's own Python converter.

The config a converter receives is the connector's ``key.converter.*`` /
``value.converter.*`` / ``header.converter.*`` settings with that prefix
already stripped, exactly as Connect hands them over.
"""

from __future__ import annotations

from typing import Any, Mapping

from connector.api.errors import ConfigException
from connector.api.plugins import resolve_class
from converters.base import CONVERTER_TYPE_CONFIG, Converter, ConverterType, HeaderConverter

__all__ = ["CONVERTERS", "load", "load_header_converter", "Converter", "HeaderConverter"]

_APACHE = "org.apache.kafka.connect"

#: Java class name -> ``module:Class`` of the Python implementation.
CONVERTERS: dict[str, str] = {
    f"{_APACHE}.json.JsonConverter": "converters.json.converter:JsonConverter",
    f"{_APACHE}.storage.StringConverter": "converters.string:StringConverter",
    f"{_APACHE}.storage.SimpleHeaderConverter": "converters.simple_header:SimpleHeaderConverter",
    f"{_APACHE}.converters.ByteArrayConverter": "converters.bytearray:ByteArrayConverter",
    f"{_APACHE}.converters.BooleanConverter": "converters.numbers:BooleanConverter",
    f"{_APACHE}.converters.ShortConverter": "converters.numbers:ShortConverter",
    f"{_APACHE}.converters.IntegerConverter": "converters.numbers:IntegerConverter",
    f"{_APACHE}.converters.LongConverter": "converters.numbers:LongConverter",
    f"{_APACHE}.converters.FloatConverter": "converters.numbers:FloatConverter",
    f"{_APACHE}.converters.DoubleConverter": "converters.numbers:DoubleConverter",
    "io.confluent.connect.avro.AvroConverter": "converters.confluent.avro:AvroConverter",
    "io.confluent.connect.json.JsonSchemaConverter": "converters.confluent.json_schema:JsonSchemaConverter",
    "io.confluent.connect.protobuf.ProtobufConverter": "converters.confluent.protobuf:ProtobufConverter",
}

_SUFFIXES = ("Converter",)


def load(class_name: str, config: Mapping[str, Any] | None, is_key: bool = False, *,
         config_key: str | None = None) -> Converter:
    """A configured key (``is_key``) or value converter.

    Raises ConfigException naming ``config_key`` (default ``key.converter`` /
    ``value.converter``) and the class when the name cannot be resolved, or the
    converter's own ConfigException when a setting is invalid.
    """
    key = config_key or ("key.converter" if is_key else "value.converter")
    converter = _instantiate(class_name, key, ("to_connect_data", "from_connect_data"), "Converter")
    converter.configure(dict(config or {}), is_key)
    return converter


def load_header_converter(class_name: str, config: Mapping[str, Any] | None, *,
                          config_key: str = "header.converter") -> HeaderConverter:
    """A configured header converter; like Connect, its config gets ``converter.type=header``."""
    converter = _instantiate(class_name, config_key, ("to_connect_header", "from_connect_header"),
                             "HeaderConverter")
    settings = dict(config or {})
    settings[CONVERTER_TYPE_CONFIG] = ConverterType.HEADER.value
    converter.configure(settings)
    return converter


def _instantiate(class_name: str, config_key: str, methods: tuple[str, ...], kind: str) -> Any:
    cls = resolve_class(class_name, CONVERTERS, kind="converter", suffixes=_SUFFIXES, config_key=config_key)
    try:
        instance = cls()
    except Exception as exc:
        raise ConfigException(config_key, class_name, f"Could not instantiate {class_name}: {exc}") from exc
    missing = [name for name in methods if not callable(getattr(instance, name, None))]
    if missing:
        raise ConfigException(
            config_key, class_name, f"{class_name} is not a {kind} (it has no {', '.join(missing)})"
        )
    return instance
