"""ExtractField: replace the key/value with one of its fields (``ExtractField$Key`` / ``$Value``).

With ``field.syntax.version=V2`` the field is a dotted path into nested
structs or maps (backticks quote names that contain dots).
"""

from __future__ import annotations

from typing import Any

from connector.api.config_def import ConfigDef, ConfigType
from connector.api.record import SinkRecord
from smt.base import (
    KeySide,
    SidedTransformation,
    ValueSide,
    replace_null_with_default,
    require_map_or_null,
    require_struct_or_null,
)
from smt.field_path import FieldSyntaxVersion, SingleFieldPath

FIELD_CONFIG = "field"
REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"
PURPOSE = "field extraction"


class ExtractField(SidedTransformation):
    """Extract the specified field from a Struct when schema present, or a Map in the case of schemaless data.

    Any null values are passed through unmodified.
    """

    CONFIG_DEF = FieldSyntaxVersion.append_config_to(replace_null_with_default(ConfigDef().define(
        FIELD_CONFIG, ConfigType.STRING, importance="medium", doc="Field name to extract.",
    )))

    field_path: SingleFieldPath
    original_path: str
    replace_null_with_default: bool = True

    def _configure(self, config: dict[str, Any]) -> None:
        self.original_path = config[FIELD_CONFIG]
        self.field_path = SingleFieldPath(self.original_path, FieldSyntaxVersion.from_config(config))
        self.replace_null_with_default = config[REPLACE_NULL_WITH_DEFAULT_CONFIG]

    def apply(self, record: SinkRecord) -> SinkRecord:
        schema = self.operating_schema(record)
        if schema is None:
            map_value = require_map_or_null(self.operating_value(record), PURPOSE)
            return self.new_record(
                record, None, None if map_value is None else self.field_path.value_from_map(map_value))
        struct_value = require_struct_or_null(self.operating_value(record), PURPOSE)
        field = self.field_path.field_from(schema)
        if field is None:
            raise ValueError(f"Unknown field: {self.original_path}")
        extracted = None if struct_value is None else self.field_path.value_from_struct(
            struct_value, self.replace_null_with_default)
        return self.new_record(record, field.schema, extracted)


class Key(KeySide, ExtractField):
    """``org.apache.kafka.connect.transforms.ExtractField$Key``."""


class Value(ValueSide, ExtractField):
    """``org.apache.kafka.connect.transforms.ExtractField$Value``."""
