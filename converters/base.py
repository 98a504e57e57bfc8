"""The converter interfaces, and parsing of their Connect-style typed configs.

``Converter`` and ``HeaderConverter`` mirror Kafka Connect's
``org.apache.kafka.connect.storage`` interfaces: bytes from Kafka become a
:class:`SchemaAndValue` and back. A plugin may implement both (as
``JsonConverter`` does); its ``configure`` then takes ``is_key=None`` for
the header role, where the config carries ``converter.type=header``.

Config values arrive as Connect would pass them: usually strings from a JSON
connector config (``"false"``, ``"1000"``), sometimes already typed. The
``config_*`` helpers parse them the way Kafka's ``ConfigDef`` does, with its
error texts (``Invalid value X for configuration K: reason``).
"""

from __future__ import annotations

import abc
import enum
import re
from typing import Any, Iterable, Mapping

from connector.api.errors import ConfigException
from connector.api.record import Header, SchemaAndValue
from connector.api.schema import Schema

__all__ = [
    "Converter", "HeaderConverter", "Headers", "ConverterType", "CONVERTER_TYPE_CONFIG",
    "config_bool", "config_int", "config_str", "config_choice", "converter_type",
    "with_converter_type",
]

CONVERTER_TYPE_CONFIG = "converter.type"

#: The record headers a converter may consult (Connect passes them; most converters ignore them).
Headers = Iterable[Header] | None


class Converter(abc.ABC):
    """Converts record keys or values between Kafka bytes and Connect data."""

    def configure(self, config: Mapping[str, Any], is_key: bool = False) -> None:
        """Apply the converter's settings (``value.converter.`` prefix already stripped)."""

    @abc.abstractmethod
    def to_connect_data(self, topic: str, data: bytes | None, headers: Headers = None) -> SchemaAndValue:
        """The schema and value encoded in ``data`` (None is a tombstone)."""

    @abc.abstractmethod
    def from_connect_data(self, topic: str, schema: Schema | None, value: Any,
                          headers: Headers = None) -> bytes | None:
        """``value`` (of ``schema``) encoded as bytes; None for a tombstone."""

    def close(self) -> None:
        """Release resources; the converter is not used afterwards."""


class HeaderConverter(abc.ABC):
    """Converts record header values between Kafka bytes and Connect data."""

    def configure(self, config: Mapping[str, Any]) -> None:
        """Apply the converter's settings (``header.converter.`` prefix already stripped)."""

    @abc.abstractmethod
    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        """The schema and value of one header's bytes."""

    @abc.abstractmethod
    def from_connect_header(self, topic: str, header_key: str, schema: Schema | None,
                            value: Any) -> bytes | None:
        """One header's value encoded as bytes."""

    def close(self) -> None:
        """Release resources; the converter is not used afterwards."""


class ConverterType(enum.Enum):
    """The role a converter plays (``converter.type``)."""

    KEY = "key"
    VALUE = "value"
    HEADER = "header"


def with_converter_type(config: Mapping[str, Any], is_key: bool) -> dict[str, Any]:
    """A copy of ``config`` with ``converter.type`` set as Connect sets it for keys and values."""
    result = dict(config)
    result[CONVERTER_TYPE_CONFIG] = (ConverterType.KEY if is_key else ConverterType.VALUE).value
    return result


def converter_type(config: Mapping[str, Any]) -> ConverterType:
    """The required ``converter.type`` setting (``key``, ``value`` or ``header``)."""
    value = config_str(config, CONVERTER_TYPE_CONFIG, None)
    if value is None:
        raise ConfigException(
            f'Missing required configuration "{CONVERTER_TYPE_CONFIG}" which has no default value.'
        )
    names = [t.value for t in ConverterType]
    if value not in names:
        raise ConfigException(CONVERTER_TYPE_CONFIG, value, "String must be one of: " + ", ".join(names))
    return ConverterType(value)


def config_bool(config: Mapping[str, Any], key: str, default: bool) -> bool:
    """A BOOLEAN setting: a bool, or ``true``/``false`` in any case."""
    value = config.get(key)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("true", "false"):
            return text == "true"
    raise ConfigException(key, value, "Expected value to be either true or false")


_INT_TEXT = re.compile(r"[+-]?[0-9]+")
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


def config_int(config: Mapping[str, Any], key: str, default: int) -> int:
    """An INT setting: a 32-bit int, or its decimal text."""
    value = config.get(key)
    if value is None:
        return default
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str):
        text = value.strip()
        if not _INT_TEXT.fullmatch(text):
            raise ConfigException(key, value, "Not a number of type INT")
        number = int(text)
    else:
        raise ConfigException(
            key, value, f"Expected value to be a 32-bit integer, but it was a {type(value).__name__}"
        )
    if not _INT_MIN <= number <= _INT_MAX:
        raise ConfigException(key, value, "Not a number of type INT")
    return number


def config_str(config: Mapping[str, Any], key: str, default: str | None) -> str | None:
    """A STRING setting, trimmed."""
    value = config.get(key)
    if value is None:
        return default
    if not isinstance(value, str):
        raise ConfigException(
            key, value, f"Expected value to be a string, but it was a {type(value).__name__}"
        )
    return value.strip()


def config_choice(config: Mapping[str, Any], key: str, default: str, choices: Iterable[str]) -> str:
    """A STRING setting that must be one of ``choices``, in any case; returned upper-cased."""
    allowed = [c.upper() for c in choices]
    value = config_str(config, key, default)
    if value is None or value.upper() not in allowed:
        raise ConfigException(
            key, value, "String must be one of (case insensitive): " + ", ".join(allowed)
        )
    return value.upper()
