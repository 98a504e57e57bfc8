"""InsertField: add record metadata or a static value as fields (``InsertField$Key`` / ``$Value``).

Each ``*.field`` name may end in ``!`` (required field) or ``?`` (optional,
the default when there is no suffix).
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, NamedTuple

from connector.api.config_def import ConfigDef, ConfigType
from connector.api.errors import ConfigException
from connector.api.logical import EPOCH, Timestamp
from connector.api.lru import LRUCache
from connector.api.record import SinkRecord
from connector.api.schema import Schema
from smt.base import (
    KeySide,
    StructOrMapTransformation,
    ValueSide,
    replace_null_with_default,
    require_map,
    require_sink_record,
    require_struct,
    struct_builder_with_fields,
    struct_with_fields_of,
)

TOPIC_FIELD = "topic.field"
PARTITION_FIELD = "partition.field"
OFFSET_FIELD = "offset.field"
TIMESTAMP_FIELD = "timestamp.field"
STATIC_FIELD = "static.field"
STATIC_VALUE = "static.value"
REPLACE_NULL_WITH_DEFAULT = "replace.null.with.default"
PURPOSE = "field insertion"

_OPTIONALITY_DOC = ("Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it "
                    "optional (the default).")
OPTIONAL_TIMESTAMP_SCHEMA = Timestamp.builder().optional().build()


class InsertionSpec(NamedTuple):
    name: str
    optional: bool

    @staticmethod
    def parse(spec: str | None) -> "InsertionSpec | None":
        if spec is None:
            return None
        if spec.endswith("?"):
            return InsertionSpec(spec[:-1], True)
        if spec.endswith("!"):
            return InsertionSpec(spec[:-1], False)
        return InsertionSpec(spec, True)


class InsertField(StructOrMapTransformation):
    """Insert field(s) using attributes from the record metadata or a configured static value."""

    CONFIG_DEF = replace_null_with_default(
        ConfigDef()
        .define(TOPIC_FIELD, ConfigType.STRING, None, doc="Field name for Kafka topic. " + _OPTIONALITY_DOC)
        .define(PARTITION_FIELD, ConfigType.STRING, None,
                doc="Field name for Kafka partition. " + _OPTIONALITY_DOC)
        .define(OFFSET_FIELD, ConfigType.STRING, None,
                doc="Field name for Kafka offset - only applicable to sink connectors.<br/>" + _OPTIONALITY_DOC)
        .define(TIMESTAMP_FIELD, ConfigType.STRING, None,
                doc="Field name for record timestamp. " + _OPTIONALITY_DOC)
        .define(STATIC_FIELD, ConfigType.STRING, None, doc="Field name for static data field. " + _OPTIONALITY_DOC)
        .define(STATIC_VALUE, ConfigType.STRING, None, doc="Static field value, if field name configured.")
    )

    topic_field: InsertionSpec | None = None
    partition_field: InsertionSpec | None = None
    offset_field: InsertionSpec | None = None
    timestamp_field: InsertionSpec | None = None
    static_field: InsertionSpec | None = None
    static_value: str | None = None
    replace_null_with_default: bool = True

    def _configure(self, config: dict[str, Any]) -> None:
        self.topic_field = InsertionSpec.parse(config[TOPIC_FIELD])
        self.partition_field = InsertionSpec.parse(config[PARTITION_FIELD])
        self.offset_field = InsertionSpec.parse(config[OFFSET_FIELD])
        self.timestamp_field = InsertionSpec.parse(config[TIMESTAMP_FIELD])
        self.static_field = InsertionSpec.parse(config[STATIC_FIELD])
        self.static_value = config[STATIC_VALUE]
        self.replace_null_with_default = config[REPLACE_NULL_WITH_DEFAULT]
        if not any((self.topic_field, self.partition_field, self.offset_field, self.timestamp_field,
                    self.static_field)):
            raise ConfigException("No field insertion configured")
        if self.static_field is not None and self.static_value is None:
            raise ConfigException(STATIC_VALUE, None,
                                  f"No value specified for static field: {self.static_field.name}")
        self._schema_cache: LRUCache[Schema, Schema] = LRUCache()

    def apply_schemaless(self, record: SinkRecord) -> SinkRecord:
        value = require_map(self.operating_value(record), PURPOSE)
        updated = dict(value)
        if self.topic_field is not None:
            updated[self.topic_field.name] = record.topic
        if self.partition_field is not None and record.kafka_partition is not None:
            updated[self.partition_field.name] = record.kafka_partition
        if self.offset_field is not None:
            updated[self.offset_field.name] = require_sink_record(record, PURPOSE).kafka_offset
        if self.timestamp_field is not None and record.timestamp is not None:
            updated[self.timestamp_field.name] = record.timestamp
        if self.static_field is not None and self.static_value is not None:
            updated[self.static_field.name] = self.static_value
        return self.new_record(record, None, updated)

    def apply_with_schema(self, record: SinkRecord) -> SinkRecord:
        value = require_struct(self.operating_value(record), PURPOSE)
        updated_schema = self.updated_schema(value.schema)
        updated = struct_with_fields_of(value, updated_schema, self.replace_null_with_default)
        if self.topic_field is not None:
            updated.put(self.topic_field.name, record.topic)
        if self.partition_field is not None and record.kafka_partition is not None:
            updated.put(self.partition_field.name, record.kafka_partition)
        if self.offset_field is not None:
            updated.put(self.offset_field.name, require_sink_record(record, PURPOSE).kafka_offset)
        if self.timestamp_field is not None and record.timestamp is not None:
            updated.put(self.timestamp_field.name, EPOCH + _dt.timedelta(milliseconds=record.timestamp))
        if self.static_field is not None and self.static_value is not None:
            updated.put(self.static_field.name, self.static_value)
        return self.new_record(record, updated_schema, updated)

    def updated_schema(self, schema: Schema) -> Schema:
        return self._schema_cache.get_or_compute(schema, self._build_schema)

    def _build_schema(self, schema: Schema) -> Schema:
        builder = struct_builder_with_fields(schema)
        if self.topic_field is not None:
            builder.field(self.topic_field.name,
                          Schema.OPTIONAL_STRING_SCHEMA if self.topic_field.optional else Schema.STRING_SCHEMA)
        if self.partition_field is not None:
            builder.field(self.partition_field.name,
                          Schema.OPTIONAL_INT32_SCHEMA if self.partition_field.optional else Schema.INT32_SCHEMA)
        if self.offset_field is not None:
            builder.field(self.offset_field.name,
                          Schema.OPTIONAL_INT64_SCHEMA if self.offset_field.optional else Schema.INT64_SCHEMA)
        if self.timestamp_field is not None:
            builder.field(self.timestamp_field.name,
                          OPTIONAL_TIMESTAMP_SCHEMA if self.timestamp_field.optional else Timestamp.SCHEMA)
        if self.static_field is not None:
            builder.field(self.static_field.name,
                          Schema.OPTIONAL_STRING_SCHEMA if self.static_field.optional else Schema.STRING_SCHEMA)
        return builder.build()


class Key(KeySide, InsertField):
    """``org.apache.kafka.connect.transforms.InsertField$Key``."""


class Value(ValueSide, InsertField):
    """``org.apache.kafka.connect.transforms.InsertField$Value``."""
