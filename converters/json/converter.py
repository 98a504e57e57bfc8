"""``org.apache.kafka.connect.json.JsonConverter``: JSON bytes ⇄ Connect data.

With ``schemas.enable=true`` (the default) each message is an envelope
``{"schema":{...},"payload":...}`` carrying its Connect schema; with
``false`` it is the bare JSON value, read without a schema (objects become
maps, integers INT64, other numbers FLOAT64). The converter also serves as a
header converter, with the same encoding. Output bytes match Kafka's.
"""

from __future__ import annotations

from typing import Any, Mapping

from connector.api.errors import DataException
from connector.api.java import jackson
from connector.api.record import SchemaAndValue
from connector.api.schema import Schema
from converters.base import DataAndHeaderConverter, Headers
from converters.json.config import CONFIG_DEF, JsonConverterConfig
from converters.json.data_json import to_connect, to_json
from converters.json.schema_json import SchemaTranslator

__all__ = ["JsonConverter"]

ENVELOPE_SCHEMA = "schema"
ENVELOPE_PAYLOAD = "payload"
_ENVELOPE_REQUIRED = (
    'JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain '
    "additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false "
    "in your converter configuration."
)


class JsonConverter(DataAndHeaderConverter):
    """Kafka's JsonConverter, also a header converter; configure with ``schemas.enable``, ``decimal.format``, ... ."""

    CONFIG_DEF = CONFIG_DEF

    def _apply(self, config: Mapping[str, Any]) -> None:
        self.config = JsonConverterConfig.parse(config)
        self._schemas = SchemaTranslator(self.config)

    @property
    def from_connect_schema_cache_size(self) -> int:
        return self._schemas.from_connect_cache_size

    @property
    def to_connect_schema_cache_size(self) -> int:
        return self._schemas.to_connect_cache_size

    def as_json_schema(self, schema: Schema | None) -> dict[str, Any] | None:
        """The envelope's JSON schema object for ``schema``."""
        return self._schemas.as_json_schema(schema)

    def as_connect_schema(self, node: Any) -> Schema | None:
        """The Connect schema of an envelope's JSON schema object."""
        return self._schemas.as_connect_schema(node)

    # --- bytes → Connect --------------------------------------------------------------

    def to_connect_data(self, topic: str, data: bytes | None, headers: Headers = None) -> SchemaAndValue:
        if data is None:
            return SchemaAndValue(None, None)  # a tombstone
        try:
            document = jackson.read_tree(data)
        except jackson.JsonReadError as exc:
            raise DataException(
                f"Converting byte[] to Kafka Connect data failed due to serialization error: {exc}"
            ) from exc
        if not self.config.schemas_enable:
            return SchemaAndValue(None, to_connect(None, document, self.config))
        if not _is_envelope(document):
            raise DataException(_ENVELOPE_REQUIRED)
        schema = self._schemas.as_connect_schema(document[ENVELOPE_SCHEMA])
        return SchemaAndValue(schema, to_connect(schema, document[ENVELOPE_PAYLOAD], self.config))

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue:
        return self.to_connect_data(topic, value)

    # --- Connect → bytes --------------------------------------------------------------

    def from_connect_data(self, topic: str, schema: Schema | None, value: Any,
                          headers: Headers = None) -> bytes | None:
        if schema is None and value is None:
            return None  # a tombstone stays a tombstone, envelope or not
        payload = to_json(schema, value, self.config)
        try:
            if not self.config.schemas_enable:
                return jackson.write_tree(payload)
            text = (
                f'{{"{ENVELOPE_SCHEMA}":{self._schemas.as_json_schema_text(schema)},'
                f'"{ENVELOPE_PAYLOAD}":{jackson.write_text(payload)}}}'
            )
            return text.encode("utf-8")
        except (jackson.JsonWriteError, UnicodeEncodeError) as exc:
            raise DataException(
                f"Converting Kafka Connect data to byte[] failed due to serialization error: {exc}"
            ) from exc

    def from_connect_header(self, topic: str, header_key: str, schema: Schema | None,
                            value: Any) -> bytes | None:
        return self.from_connect_data(topic, schema, value)


def _is_envelope(document: Any) -> bool:
    return (
        isinstance(document, dict)
        and len(document) == 2
        and ENVELOPE_SCHEMA in document
        and ENVELOPE_PAYLOAD in document
    )
