"""Raw Kafka records → ``SinkRecord``s, through the connector's key, value and header converters.

The per-record decode strategy of the task pipeline (converters see exactly
what Connect would hand them), and the checks the columnar strategies still
need: keys and headers that their converters reject fail the record, naming it.
Registry schema ids seen while decoding go to the pipeline's
:class:`~connector.data.schema_ids.RegistrySchemaIds`.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Iterator

import converters
from connector.api.errors import ConnectException, DataException
from connector.api.record import Header, SinkRecord, TimestampType
from connector.data.schema_ids import RegistrySchemaIds
from connector.tolerance.errant import (
    HEADER_CONVERTER,
    KEY_CONVERTER,
    VALUE_CONVERTER,
    RetryPolicy,
    java_class_name,
    mark,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    import pyarrow as pa

    from connector.config.sink_config import SinkConfig

JSON_CONVERTER_NAMES = ("org.apache.kafka.connect.json.JsonConverter", "JsonConverter", "Json")


def _lenient_converters() -> tuple[type, ...]:
    from converters.bytearray import ByteArrayConverter
    from converters.simple_header import SimpleHeaderConverter
    from converters.string import StringConverter

    return StringConverter, ByteArrayConverter, SimpleHeaderConverter


class RecordConversionFailed(DataException):
    """A converter rejected a record; the message names the record's coordinates."""


class RecordDecoder:
    """Applies the key, value and header converters to raw records."""

    def __init__(self, key_converter, value_converter, header_converter, *, schemaless_json_value: bool,
                 schema_ids: RegistrySchemaIds | None = None, retry: RetryPolicy | None = None):
        self.key_converter = key_converter
        self.value_converter = value_converter
        self.header_converter = header_converter
        self.schemaless_json_value = schemaless_json_value
        self.schema_ids = RegistrySchemaIds() if schema_ids is None else schema_ids
        self._schema_id_of = getattr(value_converter, "schema_id_of", None)
        self.retry = retry if retry is not None else RetryPolicy()
        self.class_names = {id(c): java_class_name(c, converters.CONVERTERS)
                            for c in (key_converter, value_converter, header_converter)}

    @staticmethod
    def from_config(config: "SinkConfig", schema_ids: RegistrySchemaIds | None = None) -> "RecordDecoder":
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
            schemaless_json_value=schemaless_json, schema_ids=schema_ids, retry=RetryPolicy.of(config.props),
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
        if self._schema_id_of is None:
            value_sv = self._convert(self.value_converter, topic, value, headers, "value", where)
        else:
            schema_id = self.value_schema_id(value, headers)
            value_where = where if schema_id is None else f"{where}, value schema id: {schema_id}"
            value_sv = self._convert(self.value_converter, topic, value, headers, "value", value_where)
            self.schema_ids.record(topic, partition, offset, schema_id, value_sv.schema)
        return SinkRecord(
            topic=topic, kafka_partition=partition,
            key_schema=key_sv.schema, key=key_sv.value,
            value_schema=value_sv.schema, value=value_sv.value,
            kafka_offset=offset, timestamp=timestamp,
            timestamp_type=TimestampType(timestamp_type), headers=headers,
        )

    @property
    def tracks_schema_ids(self) -> bool:
        """Whether the value converter tells registry schema ids (``schema_id_of``)."""
        return self._schema_id_of is not None

    def value_schema_id(self, value: bytes | None, headers: Any = None) -> int | None:
        """The registry schema id a raw value was written with.

        None when the value converter has no ``schema_id_of``, for a null value,
        a GUID-only id, or bytes that are not in the registry's wire format.
        """
        if self._schema_id_of is None or value is None:
            return None
        try:
            return self._schema_id_of(value, headers)
        except Exception:  # noqa: BLE001 - a bad header: the converter itself will say what is wrong
            return None

    def check_keys_and_headers(self, batch: "pa.RecordBatch",
                               on_error: "Callable[[Exception, tuple[str, int, int]], None] | None" = None
                               ) -> list[int]:
        """Run the key and header converters over a batch whose values take the columnar path.

        The columnar path never builds SinkRecords, but a key or header that its
        converter rejects must still fail the task, naming the record, as in
        Connect. Converters that accept any bytes are skipped. With ``on_error``
        (error tolerance), each failure goes there instead (which may raise) and
        the rows that failed are returned.
        """
        check_keys = not isinstance(self.key_converter, _LENIENT_CONVERTERS)
        check_headers = not isinstance(self.header_converter, _LENIENT_CONVERTERS)
        if not (check_keys or check_headers):
            return []
        topics, partitions, offsets = (batch.column(n).to_pylist() for n in ("topic", "partition", "offset"))
        keys = batch.column("key").to_pylist() if check_keys else []
        headers = batch.column("headers").to_pylist() if check_headers else []
        failed = []
        for i, offset in enumerate(offsets):
            where = f"topic: {topics[i]}, partition: {partitions[i]}, offset: {offset}"
            try:
                if check_headers and headers[i]:
                    self._headers(topics[i], headers[i], where)
                if check_keys and keys[i] is not None:
                    self._convert(self.key_converter, topics[i], keys[i], (), "key", where)
            except RecordConversionFailed as exc:
                if on_error is None:
                    raise
                on_error(exc, (topics[i], partitions[i], offset))
                failed.append(i)
        return failed

    def _convert(self, converter, topic, data, headers, side, where):
        stage = KEY_CONVERTER if side == "key" else VALUE_CONVERTER
        try:
            return self.retry.run(lambda: converter.to_connect_data(topic, data, headers))
        except ConnectException as exc:
            raise mark(RecordConversionFailed(
                f"Converting the record {side} failed ({type(converter).__name__}), {where}: {exc}"
            ), stage, self._class_name(converter), exc) from exc
        except Exception as exc:  # a converter bug or a user plugin: still name the record
            raise mark(RecordConversionFailed(
                f"Converting the record {side} failed ({type(converter).__name__}), {where}: "
                f"{type(exc).__name__}: {exc}"
            ), stage, self._class_name(converter), exc) from exc

    def _class_name(self, converter) -> str:
        name = self.class_names.get(id(converter))
        return name if name is not None else java_class_name(converter, converters.CONVERTERS)

    def _headers(self, topic: str, raw_headers, where: str) -> tuple[Header, ...]:
        headers = []
        for raw in raw_headers:
            try:
                schema_and_value = self.retry.run(
                    functools.partial(self.header_converter.to_connect_header, topic, raw["key"], raw["value"]))
            except Exception as exc:
                raise mark(RecordConversionFailed(
                    f"Converting header '{raw['key']}' failed, {where}: {exc}"
                ), HEADER_CONVERTER, self._class_name(self.header_converter), exc) from exc
            headers.append(Header(raw["key"], schema_and_value.value, schema_and_value.schema))
        return tuple(headers)


_LENIENT_CONVERTERS = _lenient_converters()  # accept any bytes, so never fail a record
