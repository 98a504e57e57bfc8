"""``io.confluent.connect.avro.AvroConverter``: Avro with Confluent Schema Registry.

Reading: the value's schema id (wire format) -> the writer schema from the
registry (references resolved, parsed and compiled once per id) -> fastavro
decodes the payload -> :class:`~converters.confluent.avro_data.AvroData` maps
it to Connect. The Connect schema is computed once per (schema id, topic) and
the same object is returned for every value written with that id; its version
is the ``connect.version`` property or the schema's version in its subject
(looked up in the registry as Confluent's deserializer does).

Writing (``from_connect_data``): the Connect schema is turned into the Avro
schema Confluent's converter would produce, registered (``auto.register.schemas``,
default true) or looked up under the subject of the configured strategy, and
the value is encoded with fastavro.

Format keys (besides those of :class:`~converters.confluent.registry_client.RegistryConverter`):
``connect.meta.data`` (true), ``enhanced.avro.schema.support`` (false),
``generalized.sum.type.support`` (false), ``scrub.invalid.names`` (false),
``ignore.default.for.nullables`` (false), ``flatten.singleton.unions`` (true),
``allow.optional.map.keys`` (false), ``use.latest.version`` (false; values are
then read into the latest schema of the subject by Avro schema resolution),
``latest.cache.ttl.sec`` (-1: never refresh). Accepted and ignored:
``discard.type.doc.default``, ``avro.reflection.allow.null``,
``avro.use.logical.type.converters``, ``specific.avro.reader``,
``latest.compatibility.strict``, ``use.schema.id``, ``id.compatibility.strict``,
``context.name.strategy``, ``schema.reflection``, ``key.deserializer.*``...
"""

from __future__ import annotations

import io
import json
import time
from dataclasses import dataclass
from typing import Any, Mapping

import fastavro

from connector.api.config_def import ConfigType
from connector.api.errors import DataException
from connector.api.lru import LRUCache
from connector.api.record import SchemaAndValue
from connector.api.schema import Schema
from converters.confluent import wire_format
from converters.confluent.avro_data import (
    AVRO_DATA_CONFIG,
    AvroData,
    AvroSchema,
    Branch,
    CompiledSchema,
    compile_schema,
    is_connect_union,
    parse_schema,
    resolve_datum,
)
from converters.confluent.registry_client import RegisteredSchema, RegistryConverter, SchemaRegistryException
from converters.confluent.serde_config import SERDE_CONFIG


@dataclass
class _Parsed:
    registered: RegisteredSchema
    node: AvroSchema
    compiled: CompiledSchema
    record_name: str | None


@dataclass(frozen=True)
class ColumnarPlan:
    """How values written with one registry schema can be read column-wise, exactly as record by record.

    ``writer``: the writer schema in fastavro's parsed form (self-contained: referenced
    schemas inlined), for a native Avro reader; ``connect_schema``: the schema
    :meth:`AvroConverter.to_connect_data` gives those values.
    """

    schema_id: wire_format.SchemaId
    writer: Any
    connect_schema: Schema


@dataclass
class _ReadEntry:
    parsed: _Parsed
    subject: str | None
    version: int | None
    connect_schema: Schema | None
    reader: _Parsed | None = None          # use.latest.version: the latest schema
    latest_checked: float = 0.0


@dataclass
class _WriteEntry:
    node: AvroSchema
    compiled: CompiledSchema
    schema_id: int
    target: _Parsed | None = None          # use.latest.version: the schema written with


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


class AvroConverter(RegistryConverter):
    """Kafka Connect converter for Confluent's Avro wire format."""

    SCHEMA_TYPE = "AVRO"
    CONFIG_DEF = SERDE_CONFIG.merged(AVRO_DATA_CONFIG).define(
        "latest.cache.ttl.sec", ConfigType.LONG, -1, importance="low",
        doc="how long the latest schema version is cached; `-1`: forever")

    def _configure_format(self, values: Mapping[str, Any]) -> None:
        self.avro_data = AvroData.from_config(values)
        self._entries: LRUCache[Any, Any] = LRUCache(self.cache_size)
        self._writers: LRUCache[Any, Any] = LRUCache(self.cache_size)
        self.latest_ttl = values["latest.cache.ttl.sec"]

    # ------------------------------------------------------------------------------------------
    # reading
    # ------------------------------------------------------------------------------------------

    def _parse_registered(self, registered: RegisteredSchema) -> _Parsed:
        named: dict[str, AvroSchema] = {}
        try:
            for dep in self.client.resolve_references(registered).values():
                parse_schema(dep.schema, named)
            node = parse_schema(registered.schema, named)
        except SchemaRegistryException:
            raise
        except DataException as exc:
            raise DataException(f"Schema {registered.id or registered.guid} from the registry is not "
                                f"a valid Avro schema: {exc}") from exc
        compiled = compile_schema(node, flatten_singleton_unions=self.avro_data.flatten_singleton_unions)
        return _Parsed(registered, node, compiled, node.name if node.kind == "record" else None)

    def _entry(self, topic: str | None, schema_id: wire_format.SchemaId) -> _ReadEntry:
        key = (schema_id.key, topic)
        entry = self._entries.get(key)
        if entry is not None:
            if self.use_latest_version and self._latest_expired(entry):
                self._entries.put(key, None)
            else:
                return entry
        parsed: _Parsed = self._parsed_for(schema_id, self._parse_registered)
        subject = self._subject(topic, parsed.record_name)
        reader = None
        if self.use_latest_version and subject is not None:
            latest = self.client.get_latest_version(subject)
            if latest.id is not None and latest.id != parsed.registered.id:
                reader = self._parse_registered(latest)
            version = latest.version
            connect_node = reader.node if reader is not None else parsed.node
        else:
            version = self._schema_version(subject, parsed.registered)
            connect_node = parsed.node
        connect_schema = self.avro_data.to_connect_schema(connect_node, version)
        entry = _ReadEntry(parsed, subject, version, connect_schema, reader, time.monotonic())
        self._entries.put(key, entry)
        return entry

    def columnar_plan(self, topic: str | None, data: bytes) -> ColumnarPlan:
        """The plan for values framed like ``data`` (a value of ``topic``).

        Raises :class:`DataException` when a column-wise reader cannot give what
        :meth:`to_connect_data` gives: values read as another schema
        (``use.latest.version`` with a newer version).
        """
        schema_id, _ = wire_format.parse(data, is_key=self.is_key)
        entry = self._entry(topic, schema_id)
        if entry.reader is not None:
            raise DataException(f"values of schema {schema_id} are read as schema {entry.reader.registered.id}")
        assert entry.connect_schema is not None  # a registered schema always has a Connect schema
        return ColumnarPlan(schema_id, entry.parsed.compiled.parsed, entry.connect_schema)

    def _latest_expired(self, entry: _ReadEntry) -> bool:
        return self.latest_ttl >= 0 and time.monotonic() - entry.latest_checked > self.latest_ttl

    def _decode(self, entry: _ReadEntry, schema_id: wire_format.SchemaId, payload: memoryview) -> Any:
        try:
            return fastavro.schemaless_reader(io.BytesIO(payload), entry.parsed.compiled.parsed, None,
                                              return_record_name=True,
                                              return_record_name_override=True)
        except Exception as exc:
            raise DataException(
                f"Avro payload ({len(payload)} bytes) does not match schema {schema_id}: "
                f"{type(exc).__name__}: {exc}") from exc

    def _to_connect(self, entry: _ReadEntry, datum: Any) -> SchemaAndValue:
        compiled = entry.parsed.compiled
        if entry.reader is not None:
            datum = resolve_datum(entry.parsed.node, entry.reader.node, datum,
                                  compiled.branch_of, self.avro_data.flatten_singleton_unions)
            value = self.avro_data.to_connect_value(entry.connect_schema, entry.reader.node,
                                                    datum, entry.reader.compiled)
        else:
            value = self.avro_data.to_connect_value(entry.connect_schema, entry.parsed.node,
                                                    datum, compiled)
        return SchemaAndValue(entry.connect_schema, value)

    def _unconvertible(self, entry: _ReadEntry, schema_id: wire_format.SchemaId) -> str:
        return f"Avro value written with schema {schema_id} cannot be converted to Connect data"

    # ------------------------------------------------------------------------------------------
    # writing
    # ------------------------------------------------------------------------------------------

    def _write_entry(self, topic: str | None, schema: Schema | None) -> _WriteEntry:
        key = (schema, topic)
        entry = self._writers.get(key)
        if entry is not None:
            return entry
        avro_json = self.avro_data.from_connect_schema(schema)
        node = parse_schema(avro_json)
        compiled = compile_schema(node, flatten_singleton_unions=self.avro_data.flatten_singleton_unions)
        subject = self._subject(topic, node.name if node.kind == "record" else None)
        if subject is None:
            raise DataException("Cannot register an Avro schema without a topic (TopicNameStrategy)")
        schema_id = self._register_or_lookup(subject, _dumps(avro_json))
        target = None
        if self.use_latest_version:
            registered = self.client.get_schema(schema_id)
            if _dumps(json.loads(registered.schema)) != _dumps(avro_json):
                target = self._parse_registered(registered)
        entry = _WriteEntry(node, compiled, schema_id, target)
        self._writers.put(key, entry)
        return entry

    def from_connect_data(self, topic: str | None, schema: Schema | None, value: Any,
                          headers: Any = None) -> bytes | None:
        """Encode a Connect value as Confluent-framed Avro (None for a null value)."""
        if value is None:
            if schema is not None and not schema.optional:
                raise DataException("Found null value for non-optional schema")
            return None
        entry = self._write_entry(topic, schema)
        buffer = io.BytesIO()
        try:
            datum = self.avro_data.from_connect_value(schema, entry.node, value, entry.compiled)
            compiled = entry.compiled
            if entry.target is not None:
                datum = resolve_datum(entry.node, entry.target.node, datum, compiled.branch_of,
                                      self.avro_data.flatten_singleton_unions)
                compiled = entry.target.compiled
                datum = _branches_to_wrappers(entry.target.node, datum, compiled,
                                              self.avro_data.flatten_singleton_unions)
            fastavro.schemaless_writer(buffer, compiled.parsed, datum)
        except DataException:
            raise
        except Exception as exc:
            raise DataException(f"Failed to serialize Avro data for topic {topic}: "
                                f"{type(exc).__name__}: {exc}") from exc
        self.last_schema_id = entry.schema_id
        return wire_format.frame(entry.schema_id, buffer.getvalue())


def _branches_to_wrappers(node: AvroSchema, datum: Any, compiled: CompiledSchema,
                          flatten: bool) -> Any:
    """Turn :class:`Branch` union values into fastavro's ``(wrapper name, {"v": value})``."""
    k = node.kind
    if k == "union":
        if isinstance(datum, Branch):
            member = node.branches[datum.index]
            inner = _branches_to_wrappers(member, datum.value, compiled, flatten)
            if is_connect_union(node, flatten):
                return (compiled.wrappers[id(node)][datum.index], {"v": inner})
            return inner
        if datum is None:
            return None
        member = next(b for b in node.branches if b.kind != "null")
        return _branches_to_wrappers(member, datum, compiled, flatten)
    if datum is None:
        return None
    if k == "record":
        return {f.name: _branches_to_wrappers(f.schema, datum.get(f.name), compiled, flatten)
                for f in node.fields}
    if k == "array":
        return [_branches_to_wrappers(node.items, e, compiled, flatten) for e in datum]  # type: ignore[arg-type]
    if k == "map":
        return {mk: _branches_to_wrappers(node.values, mv, compiled, flatten)  # type: ignore[arg-type]
                for mk, mv in datum.items()}
    return datum
