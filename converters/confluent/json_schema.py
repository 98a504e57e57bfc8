"""``io.confluent.connect.json.JsonSchemaConverter``: JSON Schema with Confluent Schema Registry.

The payload after the Confluent header is UTF-8 JSON text; its schema (and the
schemas it references by name) comes from the registry and is mapped to Connect
by :class:`~converters.confluent.json_schema_data.JsonSchemaData`, once per
(schema id, topic): the same Connect schema object is returned for every value
written with that id. The top-level Connect schema gets ``connect.version``
or, like Confluent's converter, the schema's version in its subject.

Format keys (besides the common ones of
:class:`~converters.confluent.registry_client.RegistryConverter`):
``use.optional.for.nonrequired`` (false), ``object.additional.properties``
(true), ``decimal.format`` (``BASE64`` | ``NUMERIC``), ``flatten.singleton.unions``
(true), ``generalized.sum.type.support`` (false), ``ignore.default.for.nullables``
(false), ``json.fail.invalid.schema`` (false: when true, payloads are validated
against their schema with the ``jsonschema`` package). Accepted and ignored:
``ignore.modern.dialects``, ``json.oneof.for.nullables``, ``json.write.dates.iso8601``,
``json.schema.spec.version``, ``latest.compatibility.strict``, ...
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

from connector.api.config_def import ConfigType
from connector.api.errors import ConfigException, DataException
from connector.api.lru import LRUCache
from connector.api.record import SchemaAndValue
from connector.api.schema import Schema
from converters.confluent import wire_format
from converters.confluent.json_schema_data import (
    JSON_SCHEMA_DATA_CONFIG,
    JsonSchemaData,
    JsonSchemaDocument,
    decimals_as_floats,
    dumps_json,
    loads_json,
)
from converters.confluent.registry_client import RegisteredSchema, RegistryConverter
from converters.confluent.serde_config import SERDE_CONFIG


@dataclass
class _Parsed:
    registered: RegisteredSchema
    raw: Any
    references: dict
    document: JsonSchemaDocument
    record_name: str | None
    validator: Any = None


@dataclass
class _Entry:
    parsed: _Parsed
    subject: str | None
    version: int | None
    connect_schema: Schema | None
    read_as: Any = None  # the id of the latest version, when values are read as that (use.latest.version)


@dataclass(frozen=True)
class ColumnarPlan:
    """Values written with one registry schema, read column-wise exactly as record by record.

    ``connect_schema``: the schema :meth:`JsonSchemaConverter.to_connect_data` gives those values.
    """

    schema_id: wire_format.SchemaId
    connect_schema: Schema


class JsonSchemaConverter(RegistryConverter):
    """Kafka Connect converter for Confluent's JSON Schema wire format."""

    SCHEMA_TYPE = "JSON"
    CONFIG_DEF = SERDE_CONFIG.merged(JSON_SCHEMA_DATA_CONFIG).define(
        "json.fail.invalid.schema", ConfigType.BOOLEAN, False, importance="medium",
        doc="validate each payload against its schema (`jsonschema` package)")

    def _configure_format(self, values: Mapping[str, Any]) -> None:
        self.json_data = JsonSchemaData.from_config(values)
        self.validate = values["json.fail.invalid.schema"]
        if self.validate:
            try:
                import jsonschema  # noqa: F401
            except ImportError:
                raise ConfigException("json.fail.invalid.schema", "true",
                                      "validating payloads needs the 'jsonschema' package") from None
        self._entries: LRUCache[Any, Any] = LRUCache(self.cache_size)
        self._writers: LRUCache[Any, Any] = LRUCache(self.cache_size)

    # -- reading --

    def _parse_registered(self, registered: RegisteredSchema) -> _Parsed:
        try:
            raw = json.loads(registered.schema)
            refs = {name: json.loads(dep.schema)
                    for name, dep in self.client.resolve_references(registered).items()}
        except ValueError as exc:
            raise DataException(f"Schema {registered.id or registered.guid} from the registry is not "
                                f"valid JSON: {exc}") from exc
        document = JsonSchemaDocument(raw, refs)
        title = raw.get("title") if isinstance(raw, dict) else None
        validator = None
        if self.validate:
            import jsonschema
            from referencing import Registry, Resource

            registry = Registry().with_resources(
                (name, Resource.from_contents(doc, default_specification=_spec()))
                for name, doc in refs.items())
            cls = jsonschema.validators.validator_for(raw, default=jsonschema.Draft7Validator)
            validator = cls(raw, registry=registry)
        return _Parsed(registered, raw, refs, document, title if isinstance(title, str) else None,
                       validator)

    def _entry(self, topic: str | None, schema_id: wire_format.SchemaId) -> _Entry:
        key = (schema_id.key, topic)
        entry = self._entries.get(key)
        if entry is not None:
            return entry
        parsed: _Parsed = self._parsed_for(schema_id, self._parse_registered)
        subject = self._subject(topic, parsed.record_name)
        document = parsed.document
        read_as = None
        if self.use_latest_version and subject is not None:
            latest = self.client.get_latest_version(subject)
            version = latest.version
            if latest.id != parsed.registered.id:
                document = self._parse_registered(latest).document
                read_as = latest.id
        else:
            version = self._schema_version(subject, parsed.registered)
        connect_schema = self.json_data.to_connect_schema(document, version)
        entry = _Entry(parsed, subject, version, connect_schema, read_as)
        self._entries.put(key, entry)
        return entry

    def columnar_plan(self, topic: str | None, data: bytes) -> ColumnarPlan:
        """The plan for values framed like ``data`` (a value of ``topic``).

        Raises :class:`DataException` when a column-wise reader cannot give what
        :meth:`to_connect_data` gives: values read as another schema
        (``use.latest.version`` with a newer version), or validated against
        their schema (``json.fail.invalid.schema``).
        """
        schema_id, _ = wire_format.parse(data, is_key=self.is_key)
        entry = self._entry(topic, schema_id)
        if entry.read_as is not None:
            raise DataException(f"values of schema {schema_id} are read as schema {entry.read_as}")
        if entry.parsed.validator is not None:
            raise DataException(f"values of schema {schema_id} are validated against it")
        assert entry.connect_schema is not None  # a registered schema always has a Connect schema
        return ColumnarPlan(schema_id, entry.connect_schema)

    def _decode(self, entry: _Entry, schema_id: wire_format.SchemaId, payload: memoryview) -> Any:
        """The payload's JSON value, validated against its schema with ``json.fail.invalid.schema``."""
        try:
            value = loads_json(bytes(payload).decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise DataException(f"JSON Schema payload ({len(payload)} bytes, schema {schema_id}) "
                                f"is not UTF-8 JSON text: {exc}") from exc
        if value is not None and entry.parsed.validator is not None:
            # floats for decimals: validators do not know decimal.Decimal
            error = next(iter(entry.parsed.validator.iter_errors(decimals_as_floats(value))), None)
            if error is not None:
                raise DataException(f"JSON payload does not match schema {schema_id}: "
                                    f"{error.message}")
        return value

    def _to_connect(self, entry: _Entry, value: Any) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue(None, None)  # a JSON null
        return SchemaAndValue(entry.connect_schema, self.json_data.to_connect_value(entry.connect_schema, value))

    def _unconvertible(self, entry: _Entry, schema_id: wire_format.SchemaId) -> str:
        return f"JSON value written with schema {schema_id} does not match it"

    # -- writing --

    def from_connect_data(self, topic: str | None, schema: Schema | None, value: Any,
                          headers: Any = None) -> bytes | None:
        """Encode a Connect value as Confluent-framed JSON (None for a null schema and value)."""
        if schema is None and value is None:
            return None
        key = (schema, topic)
        cached = self._writers.get(key)
        if cached is None:
            json_schema = self.json_data.from_connect_schema(schema)
            title = json_schema.get("title") if isinstance(json_schema, dict) else None
            subject = self._subject(topic, title)
            if subject is None:
                raise DataException("Cannot register a JSON schema without a topic "
                                    "(TopicNameStrategy)")
            schema_id = self._register_or_lookup(subject, json.dumps(json_schema,
                                                                     separators=(",", ":")))
            cached = schema_id
            self._writers.put(key, cached)
        payload = dumps_json(self.json_data.to_json_value(schema, value))
        self.last_schema_id = cached
        return wire_format.frame(cached, payload)


def _spec() -> Any:
    from referencing.jsonschema import DRAFT7

    return DRAFT7
