"""``org.apache.kafka.connect.storage.SimpleHeaderConverter``: Connect's default header converter.

Header values are written as text (:func:`connector.api.values.convert_to_string`)
and read back by inferring the type from the text
(:func:`connector.api.values.parse_string`): ``42`` is an INT8, ``true`` a
BOOLEAN, ``[1,2]`` an ARRAY, anything unrecognised a STRING. Should parsing
fail unexpectedly, the raw bytes are kept as BYTES, as Kafka does.
"""

from __future__ import annotations

import logging
from typing import Any, Mapping

from connector.api.record import SchemaAndValue
from connector.api.schema import Schema
from connector.api.values import convert_to_string, parse_string
from converters.base import HeaderConverter

__all__ = ["SimpleHeaderConverter"]

_LOG = logging.getLogger(__name__)


class SimpleHeaderConverter(HeaderConverter):
    """Header values as UTF-8 text, typed by parsing."""

    def configure(self, config: Mapping[str, Any]) -> None:
        """Nothing to configure."""

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue(None, None)
        try:
            return parse_string(bytes(value).decode("utf-8", "replace"))
        except Exception:  # noqa: BLE001 - as Kafka (catch Throwable): keep the bytes rather than fail the record
            _LOG.warning("Failed to deserialize value for header '%s' on topic '%s', so using byte array",
                         header_key, topic, exc_info=True)
            return SchemaAndValue(Schema.BYTES_SCHEMA, bytes(value))

    def from_connect_header(self, topic: str, header_key: str, schema: Schema | None,
                            value: Any) -> bytes | None:
        if value is None:
            return None
        return convert_to_string(schema, value).encode("utf-8", "replace")  # type: ignore[union-attr]
