"""Raw Kafka batches → ``SinkRecord``s, through the connector's key, value and header converters.

This is the per-record compatibility path (converters see exactly what Connect
would hand them). The task uses a columnar fast path instead when the
configuration allows it; see :meth:`RecordDecoder.is_schemaless_json_value`.

Schema Registry ids. When the value converter can tell which registry schema
a value was written with (``schema_id_of``: the Confluent Avro, JSON Schema and
Protobuf converters), the decoder remembers it in :class:`RegistrySchemaIds`,
outside the ``SinkRecord`` (whose fields stay Connect's):

* by the record's Kafka coordinates — :func:`value_schema_id` gives the id of
  any record decoded in this process, whatever SMTs did to it since;
* by the Connect value schema — these converters return one cached Connect
  schema object per registry schema id, so :func:`registry_schema_of` tells
  which (topic, schema id) produced a schema that reaches the sink unchanged
  (an SMT that rewrites the value schema makes a new one, unknown here).

Schema evolution uses the second to record, on the table, which registry
schemas created and evolved it, and errors use the first to name the id of a
failing record (docs/schema-evolution.md).
"""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Any, Iterator

import converters
from connector.api.errors import ConnectException, DataException
from connector.api.lru import LRUCache
from connector.api.record import Header, SinkRecord, TimestampType

if TYPE_CHECKING:
    import pyarrow as pa

    from connector.api.schema import Schema
    from connector.config.sink_config import SinkConfig

JSON_CONVERTER_NAMES = ("org.apache.kafka.connect.json.JsonConverter", "JsonConverter", "Json")


def _lenient_converters() -> tuple[type, ...]:
    from converters.bytearray import ByteArrayConverter
    from converters.simple_header import SimpleHeaderConverter
    from converters.string import StringConverter

    return StringConverter, ByteArrayConverter, SimpleHeaderConverter


class RecordConversionFailed(DataException):
    """A converter rejected a record; the message names the record's coordinates."""


class _Runs:
    """One partition's schema ids as runs: ``starts[i]`` is the first offset written with ``ids[i]``."""

    __slots__ = ("starts", "ids", "last")

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ids: list[int | None] = []
        self.last = -1


class RegistrySchemaIds:
    """Which Schema Registry schema the values decoded in this process were written with.

    Per partition the ids are kept as runs of offsets (a new run only where the
    id changes), so memory follows the number of schema switches, not records.
    Re-reading a partition from an earlier offset (a re-run after a schema
    change) replaces what was recorded from there on.
    """

    MAX_RUNS = 10_000     # per partition; the oldest half is dropped beyond this
    MAX_SCHEMAS = 1_000   # Connect schemas remembered (least recently seen dropped)

    def __init__(self) -> None:
        self._runs: dict[tuple[str, int], _Runs] = {}
        self._schemas: LRUCache[Schema, tuple[str, int]] = LRUCache(self.MAX_SCHEMAS)
        self._last_schema: Schema | None = None

    def record(self, topic: str, partition: int, offset: int, schema_id: int | None,
               schema: "Schema | None" = None) -> None:
        """The value at ``topic``/``partition``/``offset`` was written with ``schema_id`` and decoded to ``schema``."""
        runs = self._runs.get((topic, partition))
        if runs is None:
            runs = self._runs[(topic, partition)] = _Runs()
        if offset <= runs.last:  # read again from an earlier offset
            while runs.starts and runs.starts[-1] >= offset:
                runs.starts.pop()
                runs.ids.pop()
        if not runs.ids or runs.ids[-1] != schema_id:
            runs.starts.append(offset)
            runs.ids.append(schema_id)
            if len(runs.starts) > self.MAX_RUNS:
                del runs.starts[: self.MAX_RUNS // 2], runs.ids[: self.MAX_RUNS // 2]
        runs.last = offset
        if schema is not None and schema_id is not None and schema is not self._last_schema:
            self._last_schema = schema
            self._schemas.put(schema, (topic, schema_id))

    def get(self, topic: str | None, partition: int | None, offset: int | None) -> int | None:
        """The schema id recorded for a value, or None (not recorded, null, or not registry-framed)."""
        runs = self._runs.get((topic, partition))  # type: ignore[arg-type]
        if runs is None or offset is None or offset > runs.last:
            return None
        index = bisect.bisect_right(runs.starts, offset) - 1
        return runs.ids[index] if index >= 0 else None

    def of_record(self, record: SinkRecord) -> int | None:
        """The value schema id of a decoded record (by its original coordinates, so SMTs don't matter)."""
        return self.get(record.original_topic, record.original_kafka_partition, record.original_kafka_offset)

    def of_schema(self, schema: "Schema | None") -> tuple[str, int] | None:
        """(topic, schema id) of a Connect value schema a registry converter returned, else None."""
        if schema is None:
            return None
        return self._schemas.get(schema)

    def clear(self) -> None:
        self._runs.clear()
        self._schemas.clear()
        self._last_schema = None


#: The process-wide record of registry schema ids (filled by every :class:`RecordDecoder`).
REGISTRY_SCHEMA_IDS = RegistrySchemaIds()


def value_schema_id(record: SinkRecord) -> int | None:
    """The registry schema id ``record``'s value was written with, if it was decoded in this process."""
    return REGISTRY_SCHEMA_IDS.of_record(record)


def registry_schema_of(schema: "Schema | None") -> tuple[str, int] | None:
    """(topic, registry schema id) that produced this Connect value schema, if known."""
    return REGISTRY_SCHEMA_IDS.of_schema(schema)


class RecordDecoder:
    """Applies the key, value and header converters to raw records."""

    def __init__(self, key_converter, value_converter, header_converter, *, schemaless_json_value: bool,
                 schema_ids: RegistrySchemaIds | None = None):
        self.key_converter = key_converter
        self.value_converter = value_converter
        self.header_converter = header_converter
        self.schemaless_json_value = schemaless_json_value
        self.schema_ids = REGISTRY_SCHEMA_IDS if schema_ids is None else schema_ids
        self._schema_id_of = getattr(value_converter, "schema_id_of", None)

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

    def check_keys_and_headers(self, batch: "pa.RecordBatch") -> None:
        """Run the key and header converters over a batch whose values take the columnar path.

        The columnar path never builds SinkRecords, but a key or header that its
        converter rejects must still fail the task, naming the record, as in
        Connect. Converters that accept any bytes are skipped.
        """
        check_keys = not isinstance(self.key_converter, _LENIENT_CONVERTERS)
        check_headers = not isinstance(self.header_converter, _LENIENT_CONVERTERS)
        if not (check_keys or check_headers):
            return
        topics, partitions, offsets = (batch.column(n).to_pylist() for n in ("topic", "partition", "offset"))
        keys = batch.column("key").to_pylist() if check_keys else None
        headers = batch.column("headers").to_pylist() if check_headers else None
        for i, offset in enumerate(offsets):
            where = f"topic: {topics[i]}, partition: {partitions[i]}, offset: {offset}"
            if check_headers and headers[i]:
                self._headers(topics[i], headers[i], where)
            if check_keys and keys[i] is not None:
                self._convert(self.key_converter, topics[i], keys[i], (), "key", where)

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


_LENIENT_CONVERTERS = _lenient_converters()  # accept any bytes, so never fail a record
