"""Raw Kafka batches → ``SinkRecord``s, through the connector's key, value and header converters.

This is the per-record compatibility path (converters see exactly what Connect
would hand them). The task uses a columnar fast path instead when the
configuration allows it; see :meth:`RecordDecoder.is_schemaless_json_value`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

import converters
from connector.api.errors import ConnectException, DataException
from connector.api.record import Header, SinkRecord, TimestampType

if TYPE_CHECKING:
    import pyarrow as pa

    from connector.config.sink_config import SinkConfig

JSON_CONVERTER_NAMES = ("org.apache.kafka.connect.json.JsonConverter", "JsonConverter", "Json")


class RecordConversionFailed(DataException):
    """A converter rejected a record; the message names the record's coordinates."""


class RecordDecoder:
    """Applies the key, value and header converters to raw records."""

    def __init__(self, key_converter, value_converter, header_converter, *, schemaless_json_value: bool):
        self.key_converter = key_converter
        self.value_converter = value_converter
        self.header_converter = header_converter
        self.schemaless_json_value = schemaless_json_value

    @staticmethod
    def from_config(config: "SinkConfig") -> "RecordDecoder":
        connect = config.connect
        value_config = connect.value_converter_config
        schemaless_json = (
            connect.value_converter in JSON_CONVERTER_NAMES
            and value_config.get("schemas.enable", "true").strip().lower() == "false"
        )
        return RecordDecoder(
            converters.load(connect.key_converter, connect.key_converter_config, is_key=True),
            converters.load(connect.value_converter, value_config, is_key=False),
            converters.load_header_converter(connect.header_converter, connect.header_converter_config),
            schemaless_json_value=schemaless_json,
        )

    def decode_batch(self, batch: "pa.RecordBatch") -> Iterator[SinkRecord]:
        """Yield one SinkRecord per raw record, in offset order."""
        columns = {name: batch.column(name).to_pylist() for name in batch.schema.names}
        for i in range(batch.num_rows):
            yield self.decode(
                columns["topic"][i], columns["partition"][i], columns["offset"][i],
                columns["timestamp"][i], columns["timestamp_type"][i],
                columns["key"][i], columns["value"][i], columns["headers"][i],
            )

    def decode(self, topic: str, partition: int, offset: int, timestamp: int | None,
               timestamp_type: int, key: bytes | None, value: bytes | None,
               raw_headers: list[dict[str, Any]] | None) -> SinkRecord:
        where = f"topic: {topic}, partition: {partition}, offset: {offset}"
        headers = self._headers(topic, raw_headers or (), where)
        key_sv = self._convert(self.key_converter, topic, key, headers, "key", where)
        value_sv = self._convert(self.value_converter, topic, value, headers, "value", where)
        return SinkRecord(
            topic=topic, kafka_partition=partition,
            key_schema=key_sv.schema, key=key_sv.value,
            value_schema=value_sv.schema, value=value_sv.value,
            kafka_offset=offset, timestamp=timestamp,
            timestamp_type=TimestampType(timestamp_type), headers=headers,
        )

    @staticmethod
    def _convert(converter, topic, data, headers, side, where):
        try:
            return converter.to_connect_data(topic, data, headers)
        except ConnectException as exc:
            raise RecordConversionFailed(
                f"Converting the record {side} failed ({type(converter).__name__}), {where}: {exc}"
            ) from exc
        except Exception as exc:  # a converter bug or a user plugin: still name the record
            raise RecordConversionFailed(
                f"Converting the record {side} failed ({type(converter).__name__}), {where}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc

    def _headers(self, topic: str, raw_headers, where: str) -> tuple[Header, ...]:
        headers = []
        for raw in raw_headers:
            try:
                schema_and_value = self.header_converter.to_connect_header(topic, raw["key"], raw["value"])
            except Exception as exc:
                raise RecordConversionFailed(
                    f"Converting header '{raw['key']}' failed, {where}: {exc}"
                ) from exc
            headers.append(Header(raw["key"], schema_and_value.value, schema_and_value.schema))
        return tuple(headers)
