"""SetSchemaMetadata: set the key/value schema's name and/or version (``SetSchemaMetadata$Key`` / ``$Value``)."""

from __future__ import annotations

from typing import Any

from connector.api.config_def import ConfigDef, ConfigType
from connector.api.errors import ConfigException
from connector.api.record import SinkRecord
from connector.api.schema import Schema, Type
from connector.api.struct import Struct
from smt.base import (
    KeySide,
    SidedTransformation,
    ValueSide,
    field_value,
    replace_null_with_default,
    require_schema,
)

SCHEMA_NAME = "schema.name"
SCHEMA_VERSION = "schema.version"
PURPOSE = "updating schema metadata"
REPLACE_NULL_WITH_DEFAULT = "replace.null.with.default"


class SetSchemaMetadata(SidedTransformation):
    """Set the schema name, version or both on the record's key or value schema."""

    CONFIG_DEF = replace_null_with_default(
        ConfigDef()
        .define(SCHEMA_NAME, ConfigType.STRING, None, importance="high", doc="Schema name to set.")
        .define(SCHEMA_VERSION, ConfigType.INT, None, importance="high", doc="Schema version to set.")
    )

    schema_name: str | None = None
    schema_version: int | None = None
    replace_null_with_default: bool = True

    def _configure(self, config: dict[str, Any]) -> None:
        self.schema_name = config[SCHEMA_NAME]
        self.schema_version = config[SCHEMA_VERSION]
        self.replace_null_with_default = config[REPLACE_NULL_WITH_DEFAULT]
        if self.schema_name is None and self.schema_version is None:
            raise ConfigException("Neither schema name nor version configured")

    def apply(self, record: SinkRecord) -> SinkRecord:
        value = self.operating_value(record)
        schema = self.operating_schema(record)
        if value is None and schema is None:
            return record
        updated_schema = self.updated_schema(require_schema(schema, PURPOSE))
        return self.new_record(record, updated_schema, self.update_schema_in(value, updated_schema))

    def updated_schema(self, schema: Schema) -> Schema:
        """``schema`` with the configured name and/or version."""
        is_map = schema.type is Type.MAP
        is_array = schema.type is Type.ARRAY
        updated = Schema(
            schema.type,
            optional=schema.optional,
            name=self.schema_name if self.schema_name is not None else schema.name,
            version=self.schema_version if self.schema_version is not None else schema.version,
            doc=schema.doc,
            parameters=schema.parameters,
            fields=schema.fields() if schema.type is Type.STRUCT else None,
            key_schema=schema.key_schema if is_map else None,
            value_schema=schema.value_schema if (is_map or is_array) else None,
        )
        # Like Kafka's ConnectSchema constructor, keep the default without validating it
        # against the renamed schema (a struct default still refers to the old one).
        updated.default = schema.default
        return updated

    def update_schema_in(self, key_or_value: Any, updated_schema: Schema) -> Any:
        """A copy of a Struct that refers to ``updated_schema``; other values are returned as they are."""
        if isinstance(key_or_value, Struct):
            updated = Struct(updated_schema)
            for field in updated_schema.fields():
                updated.put(field, field_value(key_or_value, field, self.replace_null_with_default))
            return updated
        return key_or_value


class Key(KeySide, SetSchemaMetadata):
    """``org.apache.kafka.connect.transforms.SetSchemaMetadata$Key``."""


class Value(ValueSide, SetSchemaMetadata):
    """``org.apache.kafka.connect.transforms.SetSchemaMetadata$Value``."""
