"""HeaderFrom: copy or move fields of the key/value into headers (``HeaderFrom$Key`` / ``$Value``)."""

from __future__ import annotations

from typing import Any

from connector.api.config_def import ConfigDef, ConfigType, non_empty_list, valid_string
from connector.api.errors import ConfigException, DataException
from connector.api.lru import LRUCache
from connector.api.record import SinkRecord
from connector.api.schema import Schema, SchemaBuilder
from connector.api.struct import Struct
from smt.base import (
    KeySide,
    SidedTransformation,
    ValueSide,
    checked_header,
    copy_schema_basics,
    field_value,
    replace_null_with_default,
    require_map,
    require_struct,
)

FIELDS_FIELD = "fields"
HEADERS_FIELD = "headers"
OPERATION_FIELD = "operation"
MOVE_OPERATION = "move"
COPY_OPERATION = "copy"
REPLACE_NULL_WITH_DEFAULT_FIELD = "replace.null.with.default"


class HeaderFrom(SidedTransformation):
    """Moves or copies fields in the key/value of a record into that record's headers.

    Corresponding elements of ``fields`` and ``headers`` together identify a
    field and the header it should be moved or copied to.
    """

    CONFIG_DEF = replace_null_with_default(
        ConfigDef()
        .define(FIELDS_FIELD, ConfigType.LIST, validator=non_empty_list, importance="high",
                doc="Field names in the record whose values are to be copied or moved to headers.")
        .define(HEADERS_FIELD, ConfigType.LIST, validator=non_empty_list, importance="high",
                doc="Header names, in the same order as the field names listed in the fields configuration "
                    "property.")
        .define(OPERATION_FIELD, ConfigType.STRING, validator=valid_string(MOVE_OPERATION, COPY_OPERATION),
                importance="high",
                doc="Either <code>move</code> if the fields are to be moved to the headers (removed from the "
                    "key/value), or <code>copy</code> if the fields are to be copied to the headers "
                    "(retained in the key/value).")
    )

    fields: list[str] = []
    headers: list[str] = []
    operation: str = COPY_OPERATION
    replace_null_with_default: bool = True

    def _configure(self, config: dict[str, Any]) -> None:
        self.fields = list(config[FIELDS_FIELD])
        self.headers = list(config[HEADERS_FIELD])
        if len(self.headers) != len(self.fields):
            raise ConfigException(
                f"'{FIELDS_FIELD}' config must have the same number of elements as '{HEADERS_FIELD}' config."
            )
        self.operation = config[OPERATION_FIELD]
        self.replace_null_with_default = config[REPLACE_NULL_WITH_DEFAULT_FIELD]
        self._move_schema_cache: LRUCache[Schema, Schema] = LRUCache()

    def apply(self, record: SinkRecord) -> SinkRecord:
        schema = self.operating_schema(record)
        if schema is None:
            return self.apply_schemaless(record)
        return self.apply_with_schema(record, schema)

    def apply_with_schema(self, record: SinkRecord, schema: Schema) -> SinkRecord:
        headers = list(record.headers)
        value = require_struct(self.operating_value(record), f"header {self.operation}")
        if self.operation == MOVE_OPERATION:
            updated_schema = self.move_schema(schema)
            updated_value = Struct(updated_schema)
            for field in updated_schema.fields():
                updated_value.put(field, field_value(value, field.name, self.replace_null_with_default))
        else:
            updated_schema, updated_value = schema, value
        for field_name, header_name in zip(self.fields, self.headers):
            value_field = value.schema.field(field_name)
            field_val = (None if value_field is None
                         else field_value(value, value_field, self.replace_null_with_default))
            schema_field = schema.field(field_name)
            if schema_field is None:
                # Kafka fails here with a NullPointerException.
                raise DataException(f"Field does not exist: {field_name}")
            headers.append(checked_header(header_name, field_val, schema_field.schema))
        return self.new_record(record, updated_schema, updated_value, headers)

    def move_schema(self, schema: Schema) -> Schema:
        return self._move_schema_cache.get_or_compute(schema, self._build_move_schema)

    def _build_move_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields():
            if field.name not in self.fields:
                builder.field(field.name, field.schema)
        return builder.build()

    def apply_schemaless(self, record: SinkRecord) -> SinkRecord:
        headers = list(record.headers)
        value = require_map(self.operating_value(record), f"header {self.operation}")
        updated = dict(value)
        for field_name, header_name in zip(self.fields, self.headers):
            field_val = value.get(field_name)
            if self.operation == MOVE_OPERATION:
                updated.pop(field_name, None)
            headers.append(checked_header(header_name, field_val, None))
        return self.new_record(record, None, updated, headers)


class Key(KeySide, HeaderFrom):
    """``org.apache.kafka.connect.transforms.HeaderFrom$Key``."""


class Value(ValueSide, HeaderFrom):
    """``org.apache.kafka.connect.transforms.HeaderFrom$Value``."""
