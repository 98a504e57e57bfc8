"""MaskField: replace fields with their type's "empty" value or a replacement (``MaskField$Key`` / ``$Value``)."""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import re
from typing import Any, Callable

from connector.api.config_def import (
    ConfigDef,
    ConfigType,
    non_empty_list,
    non_empty_string,
)
from connector.api.errors import DataException
from connector.api.instant import OutOfRangeTimestamp
from connector.api.java.strings import class_name
from connector.api.logical import EPOCH, EPOCH_DATE
from connector.api.record import SinkRecord
from connector.api.schema import DECIMAL_LOGICAL_NAME, Schema, Type
from connector.api.struct import Struct
from smt.base import (
    KeySide,
    StructOrMapTransformation,
    ValueSide,
    field_value,
    replace_null_with_default,
    require_map,
    require_struct,
)

FIELDS_CONFIG = "fields"
REPLACEMENT_CONFIG = "replacement"
REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"
PURPOSE = "mask fields"

_JAVA_BIG_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _values(function: str) -> Callable[[str], Any]:
    def convert(text: str) -> Any:
        # Imported here: connector.api.values is the Connect ``Values`` port.
        from connector.api import values

        return getattr(values, function)(None, text)

    return convert


def _big_decimal(text: str) -> _decimal.Decimal:
    if not _JAVA_BIG_DECIMAL.fullmatch(text):
        raise ValueError(text)
    return _decimal.Decimal(text)


# Replacement parsers by the masked field's type (Kafka picks them by the value's Java class).
_REPLACEMENT_BY_TYPE: dict[Type, Callable[[str], Any]] = {
    Type.INT8: _values("convert_to_byte"),
    Type.INT16: _values("convert_to_short"),
    Type.INT32: _values("convert_to_integer"),
    Type.INT64: _values("convert_to_long"),
    Type.FLOAT32: _values("convert_to_float"),
    Type.FLOAT64: _values("convert_to_double"),
    Type.STRING: lambda text: text,
}


def masked_null_value(value: Any) -> Any:
    """The type's "empty" value: false, 0, 0.0, "", epoch, zero decimal, empty list/map."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return 0
    if isinstance(value, float):
        return 0.0
    if isinstance(value, str):
        return ""
    if isinstance(value, _decimal.Decimal):
        return _decimal.Decimal(0)
    if isinstance(value, (_dt.datetime, OutOfRangeTimestamp)):
        return EPOCH
    if isinstance(value, _dt.date):
        return EPOCH_DATE
    if isinstance(value, _dt.time):
        return _dt.time(0)
    if isinstance(value, (list, tuple)):
        return []
    if isinstance(value, dict):
        return {}
    raise DataException(f"Cannot mask value of type: {class_name(value)}")


def _replacement_parser(value: Any, schema: Schema | None) -> Callable[[str], Any] | None:
    if isinstance(value, (bool, _dt.date, _dt.time, bytes, bytearray, list, tuple, dict, Struct)):
        return None
    if isinstance(value, _decimal.Decimal):
        return _big_decimal
    if schema is not None:
        if schema.name == DECIMAL_LOGICAL_NAME:
            return _big_decimal
        return _REPLACEMENT_BY_TYPE.get(schema.type)
    if isinstance(value, int):
        return _REPLACEMENT_BY_TYPE[Type.INT64]
    if isinstance(value, float):
        return _REPLACEMENT_BY_TYPE[Type.FLOAT64]
    if isinstance(value, str):
        return _REPLACEMENT_BY_TYPE[Type.STRING]
    return None


def masked_with_replacement(value: Any, replacement: str, schema: Schema | None = None) -> Any:
    parser = _replacement_parser(value, schema)
    if parser is None:
        raise DataException(f"Cannot mask value of type {class_name(value)} with custom replacement.")
    try:
        return parser(replacement)
    except ValueError as exc:
        raise DataException(f"Unable to convert {replacement} ({class_name(replacement)}) to number") from exc


class MaskField(StructOrMapTransformation):
    """Mask specified fields with a valid null value for the field type (i.e. 0, false, empty string, and so on).

    For numeric and string fields, an optional replacement value can be
    specified that is converted to the correct type.
    """

    CONFIG_DEF = replace_null_with_default(
        ConfigDef()
        .define(FIELDS_CONFIG, ConfigType.LIST, validator=non_empty_list, importance="high",
                doc="Names of fields to mask.")
        .define(REPLACEMENT_CONFIG, ConfigType.STRING, None, non_empty_string, "low",
                "Custom value replacement, that will be applied to all 'fields' values (numeric or "
                "non-empty string values only).")
    )

    PASSES_NULL = False  # a null key/value is not passed through: both forms refuse it, as Kafka's do

    masked_fields: frozenset[str] = frozenset()
    masked_field_order: tuple[str, ...] = ()
    replacement: str | None = None
    replace_null_with_default: bool = True

    def _configure(self, config: dict[str, Any]) -> None:
        self.masked_field_order = tuple(dict.fromkeys(config[FIELDS_CONFIG]))
        self.masked_fields = frozenset(self.masked_field_order)
        self.replacement = config[REPLACEMENT_CONFIG]
        self.replace_null_with_default = config[REPLACE_NULL_WITH_DEFAULT_CONFIG]

    def masked(self, value: Any, schema: Schema | None = None) -> Any:
        """The mask of a value of a field of ``schema`` (None: schemaless; a null stays null); DataException if none."""
        if value is None:
            return None
        if self.replacement is None:
            return masked_null_value(value)
        return masked_with_replacement(value, self.replacement, schema)

    def apply_schemaless(self, record: SinkRecord) -> SinkRecord:
        value = require_map(self.operating_value(record), PURPOSE)
        updated = dict(value)
        for field in self.masked_field_order:
            updated[field] = self.masked(value.get(field))
        return self.new_record(record, self.operating_schema(record), updated)

    def apply_with_schema(self, record: SinkRecord) -> SinkRecord:
        value = require_struct(self.operating_value(record), PURPOSE)
        updated = Struct(value.schema)
        for field in value.schema.fields():
            original = field_value(value, field, self.replace_null_with_default)
            updated.put(field, self.masked(original, field.schema) if field.name in self.masked_fields
                        else original)
        return self.new_record(record, self.operating_schema(record), updated)


class Key(KeySide, MaskField):
    """``org.apache.kafka.connect.transforms.MaskField$Key``."""


class Value(ValueSide, MaskField):
    """``org.apache.kafka.connect.transforms.MaskField$Value``."""
