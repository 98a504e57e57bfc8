"""The converter interfaces, and the ``converter.type`` setting they share.

``Converter`` and ``HeaderConverter`` mirror Kafka Connect's
``org.apache.kafka.connect.storage`` interfaces: bytes from Kafka become a
:class:`SchemaAndValue` and back. A plugin may implement both (as
``JsonConverter`` does, through :class:`DataAndHeaderConverter`); its
``configure`` then takes ``is_key=None`` for the header role, where the
config carries ``converter.type=header``.

Each converter declares the keys it reads in ``CONFIG_DEF`` (what Kafka's
``Converter.config()`` returns) and parses its config with it, so values are
read as everywhere else in icefloe (:mod:`connector.api.config_def`).
"""

from __future__ import annotations

import abc
import enum
from typing import Any, ClassVar, Iterable, Mapping

from connector.api.config_def import ConfigDef, ConfigType, valid_string
from connector.api.record import Header, SchemaAndValue
from connector.api.schema import Schema

__all__ = [
    "Converter", "HeaderConverter", "DataAndHeaderConverter", "Headers", "ConverterType",
    "CONVERTER_TYPE_CONFIG", "CONVERTER_CONFIG", "with_converter_type",
]

CONVERTER_TYPE_CONFIG = "converter.type"

#: The record headers a converter may consult (Connect passes them; most converters ignore them).
Headers = Iterable[Header] | None


class Converter(abc.ABC):
    """Converts record keys or values between Kafka bytes and Connect data."""

    #: The keys ``configure`` reads (Kafka's ``Converter.config()``).
    CONFIG_DEF: ClassVar[ConfigDef] = ConfigDef()

    def configure(self, config: Mapping[str, Any], is_key: bool = False) -> None:  # noqa: B027 - optional hook
        """Apply the converter's settings (``value.converter.`` prefix already stripped)."""

    @abc.abstractmethod
    def to_connect_data(self, topic: str, data: bytes | None, headers: Headers = None) -> SchemaAndValue:
        """The schema and value encoded in ``data`` (None is a tombstone)."""

    @abc.abstractmethod
    def from_connect_data(self, topic: str, schema: Schema | None, value: Any,
                          headers: Headers = None) -> bytes | None:
        """``value`` (of ``schema``) encoded as bytes; None for a tombstone."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources; the converter is not used afterwards."""


class HeaderConverter(abc.ABC):
    """Converts record header values between Kafka bytes and Connect data."""

    #: The keys ``configure`` reads (Kafka's ``HeaderConverter.config()``).
    CONFIG_DEF: ClassVar[ConfigDef] = ConfigDef()

    def configure(self, config: Mapping[str, Any]) -> None:  # noqa: B027 - optional hook
        """Apply the converter's settings (``header.converter.`` prefix already stripped)."""

    @abc.abstractmethod
    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        """The schema and value of one header's bytes."""

    @abc.abstractmethod
    def from_connect_header(self, topic: str, header_key: str, schema: Schema | None,
                            value: Any) -> bytes | None:
        """One header's value encoded as bytes."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources; the converter is not used afterwards."""


class DataAndHeaderConverter(Converter, HeaderConverter):
    """A converter that also serves as a header converter: a header's value is encoded as a key or value is.

    Usable as a value converter before ``configure``. Subclasses apply their
    settings in :meth:`_apply`, whose config names the role in ``converter.type``.
    """

    def __init__(self) -> None:
        self.configure({}, is_key=False)

    def configure(self, config: Mapping[str, Any], is_key: bool | None = None) -> None:
        """Apply settings; ``is_key`` None means the header role (``converter.type`` in ``config``)."""
        self._apply(config if is_key is None else with_converter_type(config, is_key))

    def _apply(self, config: Mapping[str, Any]) -> None:  # noqa: B027 - optional hook
        """Apply ``config`` (its ``converter.type`` set)."""

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        return self.to_connect_data(topic, value)

    def from_connect_header(self, topic: str, header_key: str, schema: Schema | None,
                            value: Any) -> bytes | None:
        return self.from_connect_data(topic, schema, value)


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


#: Kafka's ``ConverterConfig``: the role, which Connect (and icefloe) set; converters extend it.
CONVERTER_CONFIG = ConfigDef().define(
    CONVERTER_TYPE_CONFIG, ConfigType.STRING, validator=valid_string(*(t.value for t in ConverterType)),
    importance="low", doc="the role; set by icefloe, as by Connect",
    group="Converter role")
