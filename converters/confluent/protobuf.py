"""``io.confluent.connect.protobuf.ProtobufConverter``: Protobuf with Confluent Schema Registry.

Reading: the header gives the schema id and the message indexes; the schema is
fetched with ``format=serialized`` (a base64 ``FileDescriptorProto``, as
confluent-kafka's own deserializer asks for), its references are fetched the
same way, and a ``DescriptorPool`` is built once per schema id
(:func:`~converters.confluent.protobuf_data.build_pool`). The message type at
the indexes decodes the payload with the ``protobuf`` runtime and
:class:`~converters.confluent.protobuf_data.ProtobufData` maps it to Connect.
The Connect schema is cached per (schema id, message indexes, topic) and gets
the schema's version in its subject, like Confluent's converter.

Writing: the Connect schema becomes a proto3 ``FileDescriptorProto`` as
Confluent's ``ProtobufData.fromConnectSchema`` builds it, registered as a base64
descriptor (schema type PROTOBUF, well-known imports without references).

Format keys (besides the common ones of
:class:`~converters.confluent.registry_client.RegistryConverter`):
``enhanced.protobuf.schema.support`` (false), ``scrub.invalid.names`` (false),
``int.for.enums`` (false), ``optional.for.nullables`` (false),
``optional.for.proto2`` (true), ``wrapper.for.nullables`` (false),
``wrapper.for.raw.primitives`` (true), ``generate.struct.for.nulls`` (false),
``generate.index.for.unions`` (true), ``flatten.unions`` (false),
``generalized.sum.type.support`` (false), ``ignore.default.for.nullables``
(false). Accepted and ignored: ``reference.subject.name.strategy``,
``skip.known.types``, ``latest.compatibility.strict``, ...
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any, Mapping

from connector.api.errors import DataException
from connector.api.lru import LRUCache
from connector.api.record import SchemaAndValue
from connector.api.schema import Schema
from converters.confluent import wire_format
from converters.confluent.protobuf_data import PROTOBUF_DATA_CONFIG, ProtobufData, build_pool, message_name_for_indexes
from converters.confluent.registry_client import RegisteredSchema, RegistryConverter, decode_serialized
from converters.confluent.serde_config import SERDE_CONFIG


@dataclass
class _Parsed:
    registered: RegisteredSchema
    fdp: Any
    pool: Any
    classes: dict = field(default_factory=dict)   # message indexes -> (descriptor, class)


@dataclass
class _Entry:
    parsed: _Parsed
    descriptor: Any
    message_class: Any
    subject: str | None
    version: int | None
    connect_schema: Schema
    read_as: Any = None  # the id of the latest version, when values are read as its message (use.latest.version)


@dataclass(frozen=True)
class ColumnarPlan:
    """Values framed with one schema id and message indexes, read column-wise exactly as record by record.

    ``descriptor``: the message type the payloads are; ``connect_schema``: the schema
    :meth:`ProtobufConverter.to_connect_data` gives them; ``protobuf_data``: its mapping options.
    """

    schema_id: wire_format.SchemaId
    descriptor: Any
    connect_schema: Schema
    protobuf_data: ProtobufData


class ProtobufConverter(RegistryConverter):
    """Kafka Connect converter for Confluent's Protobuf wire format."""

    SCHEMA_TYPE = "PROTOBUF"
    MESSAGE_INDEXES = True

    CONFIG_DEF = SERDE_CONFIG.merged(PROTOBUF_DATA_CONFIG)

    def _configure_format(self, values: Mapping[str, Any]) -> None:
        self.protobuf_data = ProtobufData.from_config(values)
        self._entries: LRUCache[Any, Any] = LRUCache(self.cache_size)
        self._writers: LRUCache[Any, Any] = LRUCache(self.cache_size)

    # -- reading --

    def _parse_registered(self, registered: RegisteredSchema, label: Any) -> _Parsed:
        from google.protobuf import descriptor_pb2

        def parse(text: str, what: str) -> Any:
            try:
                return descriptor_pb2.FileDescriptorProto.FromString(decode_serialized(text))
            except DataException:
                raise
            except Exception as exc:
                raise DataException(f"{what} from the registry is not a serialized "
                                    f"FileDescriptorProto: {exc}") from exc

        main = parse(registered.schema, f"Schema {label}")
        deps = {name: parse(dep.schema, f"Referenced schema '{name}'")
                for name, dep in self.client.resolve_references(registered, fmt="serialized").items()}
        pool, _ = build_pool(main, deps, f"icefloe/schema_{label}.proto")
        return _Parsed(registered, main, pool)

    def _message(self, parsed: _Parsed, indexes: tuple[int, ...]) -> tuple[Any, Any]:
        found = parsed.classes.get(indexes)
        if found is None:
            from google.protobuf import message_factory

            name = message_name_for_indexes(parsed.fdp, indexes)
            try:
                descriptor = parsed.pool.FindMessageTypeByName(name)
            except KeyError as exc:
                raise DataException(f"Message {name} not found in the schema") from exc
            found = (descriptor, message_factory.GetMessageClass(descriptor))
            parsed.classes[indexes] = found
        return found

    def _reader_message(self, parsed: _Parsed, full_name: str, indexes: tuple[int, ...]
                        ) -> tuple[Any, Any]:
        """The message named ``full_name`` in another schema (else the one at ``indexes``)."""
        from google.protobuf import message_factory

        try:
            descriptor = parsed.pool.FindMessageTypeByName(full_name)
        except KeyError:
            return self._message(parsed, indexes)
        return descriptor, message_factory.GetMessageClass(descriptor)

    def _entry(self, topic: str | None, schema_id: wire_format.SchemaId) -> _Entry:
        indexes = schema_id.message_indexes or (0,)
        key = (schema_id.key, indexes, topic)
        entry = self._entries.get(key)
        if entry is not None:
            return entry
        parsed: _Parsed = self._parsed_for(
            schema_id, lambda registered: self._parse_registered(registered, schema_id),
            fmt="serialized")
        descriptor, cls = self._message(parsed, indexes)
        subject = self._subject(topic, descriptor.full_name)
        read_as = None
        if self.use_latest_version and subject is not None:
            latest = self.client.get_latest_version(subject, fmt="serialized")
            version = latest.version
            if latest.id != parsed.registered.id:
                reader = self._parse_registered(latest, f"{latest.id}")
                descriptor, cls = self._reader_message(reader, descriptor.full_name, indexes)
                read_as = latest.id
        else:
            version = self._schema_version(subject, parsed.registered)
        connect_schema = self.protobuf_data.to_connect_schema(descriptor, version)
        entry = _Entry(parsed, descriptor, cls, subject, version, connect_schema, read_as)
        self._entries.put(key, entry)
        return entry

    def _decode(self, entry: _Entry, schema_id: wire_format.SchemaId, payload: memoryview) -> Any:
        try:
            return entry.message_class.FromString(bytes(payload))
        except Exception as exc:
            raise DataException(
                f"Protobuf payload ({len(payload)} bytes) does not match message "
                f"{entry.descriptor.full_name} of schema {schema_id}: {type(exc).__name__}: {exc}"
            ) from exc

    def _to_connect(self, entry: _Entry, message: Any) -> SchemaAndValue:
        return SchemaAndValue(entry.connect_schema, self.protobuf_data.to_connect_value(entry.connect_schema, message))

    def _unconvertible(self, entry: _Entry, schema_id: wire_format.SchemaId) -> str:
        return f"Protobuf message {entry.descriptor.full_name} (schema {schema_id}) cannot be converted to Connect data"

    def columnar_plan(self, topic: str | None, header: bytes) -> ColumnarPlan:
        """The plan for values starting with ``header`` (frame and message indexes; a value of ``topic``).

        Raises :class:`DataException` when a column-wise reader cannot give what
        :meth:`to_connect_data` gives: values read as another schema's message
        (``use.latest.version`` with a newer version).
        """
        schema_id, _ = wire_format.parse(header, protobuf=True, is_key=self.is_key)
        entry = self._entry(topic, schema_id)
        if entry.read_as is not None:
            raise DataException(f"values of schema {schema_id} are read as schema {entry.read_as}")
        return ColumnarPlan(schema_id, entry.descriptor, entry.connect_schema, self.protobuf_data)

    def connect_schema_of(self, topic: str | None, schema_id: int,
                          message_indexes: tuple[int, ...] = (0,)) -> Schema | None:
        """The (cached) Connect schema values written with registry schema ``schema_id`` get."""
        return self._entry(topic, wire_format.SchemaId(id=schema_id,
                                                       message_indexes=message_indexes)
                           ).connect_schema

    # -- writing --

    def from_connect_data(self, topic: str | None, schema: Schema | None, value: Any,
                          headers: Any = None) -> bytes | None:
        """Encode a Connect value as Confluent-framed Protobuf (None for a null value)."""
        if value is None:
            return None
        if schema is None:
            raise DataException("The ProtobufConverter needs a schema to write a value")
        key = (schema, topic)
        cached = self._writers.get(key)
        if cached is None:
            from google.protobuf import message_factory

            fdp, indexes = self.protobuf_data.from_connect_schema(schema)
            pool, _ = build_pool(fdp, {}, fdp.name)
            name = message_name_for_indexes(fdp, indexes)
            cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(name))
            subject = self._subject(topic, name)
            if subject is None:
                raise DataException("Cannot register a Protobuf schema without a topic "
                                    "(TopicNameStrategy)")
            text = base64.b64encode(fdp.SerializeToString()).decode("ascii")
            schema_id = self._register_or_lookup(subject, text)
            if self.use_latest_version:  # write with the latest schema's message type
                latest = self._parse_registered(
                    self.client.get_schema(schema_id, fmt="serialized"), schema_id)
                descriptor, cls = self._reader_message(latest, name, tuple(indexes))
                from converters.confluent.protobuf_data import message_indexes_of

                indexes = message_indexes_of(descriptor)
            cached = (schema_id, tuple(indexes), cls)
            self._writers.put(key, cached)
        schema_id, written_indexes, cls = cached
        try:
            message = self.protobuf_data.from_connect_value(schema, value, cls)
            payload = message.SerializeToString()
        except DataException:
            raise
        except Exception as exc:
            raise DataException(f"Failed to serialize Protobuf data for topic {topic}: "
                                f"{type(exc).__name__}: {exc}") from exc
        self.last_schema_id = schema_id
        return wire_format.frame(schema_id, payload, written_indexes, protobuf=True)
