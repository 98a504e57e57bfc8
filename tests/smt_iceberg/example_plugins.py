"""Example user plugins: a transformation, a predicate and a converter in plain Python.

They are what docs/plugins.md walks through. A connector config names them by
``module:Class``::

    "transforms": "upper",
    "transforms.upper.type": "tests.smt_iceberg.example_plugins:UppercaseField",
    "transforms.upper.field": "name",
    "transforms.upper.predicate": "isOrders",
    "predicates": "isOrders",
    "predicates.isOrders.type": "tests.smt_iceberg.example_plugins:TopicSuffix",
    "predicates.isOrders.suffix": ".orders",
    "value.converter": "tests.smt_iceberg.example_plugins:KeyValueTextConverter"

Nothing here imports Spark; only the Connect data API (``connector``).
"""

from __future__ import annotations

from connector import ConfigException, DataException, Schema, SchemaAndValue, SchemaBuilder, SinkRecord, Struct


class UppercaseField:
    """Upper-case one string field of the value (a Struct, or a Map when schemaless).

    Config: ``field`` (required). Records whose value is null pass through.
    """

    def __init__(self) -> None:
        self.field: str | None = None

    def configure(self, config: dict) -> None:
        field = (config or {}).get("field")
        if not field:
            raise ConfigException('Missing required configuration "field" which has no default value.')
        self.field = str(field).strip()

    def apply(self, record: SinkRecord) -> SinkRecord | None:
        value = record.value
        if value is None:
            return record
        if isinstance(value, Struct):
            new_value = Struct(value.schema)
            for f in value.schema.fields():
                new_value.put(f, value.get(f))
            current = value.get(self.field)
            if current is not None:
                new_value.put(self.field, str(current).upper())
        elif isinstance(value, dict):
            new_value = dict(value)
            if new_value.get(self.field) is not None:
                new_value[self.field] = str(new_value[self.field]).upper()
        else:
            raise DataException(f"UppercaseField needs a Struct or Map value, got {type(value).__name__}")
        return record.new_record(
            record.topic, record.kafka_partition, record.key_schema, record.key,
            record.value_schema, new_value, record.timestamp,
        )

    def close(self) -> None:
        pass


class TopicSuffix:
    """True for records whose topic ends with ``suffix`` (required)."""

    def __init__(self) -> None:
        self.suffix = ""

    def configure(self, config: dict) -> None:
        suffix = (config or {}).get("suffix")
        if suffix is None:
            raise ConfigException('Missing required configuration "suffix" which has no default value.')
        self.suffix = str(suffix)

    def test(self, record: SinkRecord) -> bool:
        return record.topic.endswith(self.suffix)

    def close(self) -> None:
        pass


class KeyValueTextConverter:
    """``a=1;b=x`` text <-> a map<string,string> (schema'd) value.

    Config: ``separator`` (default ``;``). ``is_key`` says whether it converts keys.
    """

    SCHEMA = SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA).optional().build()

    def __init__(self) -> None:
        self.separator = ";"
        self.is_key = False

    def configure(self, config: dict, is_key: bool) -> None:
        self.separator = (config or {}).get("separator", ";")
        self.is_key = is_key

    def to_connect_data(self, topic: str, data: bytes | None, headers=None) -> SchemaAndValue:
        if data is None:
            return SchemaAndValue(self.SCHEMA, None)
        pairs = {}
        for item in bytes(data).decode("utf-8").split(self.separator):
            if item:
                key, _, text = item.partition("=")
                pairs[key] = text
        return SchemaAndValue(self.SCHEMA, pairs)

    def from_connect_data(self, topic: str, schema: Schema | None, value, headers=None) -> bytes | None:
        if value is None:
            return None
        if not isinstance(value, dict):
            raise DataException(f"KeyValueTextConverter needs a Map, got {type(value).__name__}")
        return self.separator.join(f"{k}={'' if v is None else v}" for k, v in value.items()).encode("utf-8")
