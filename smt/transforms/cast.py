"""Cast: fields, or the whole key/value, to another primitive type (``Cast$Key`` / ``Cast$Value``).

``spec`` is either ``field:type,field:type`` or a single ``type`` for the whole
value; targets are int8, int16, int32, int64, float32, float64, boolean and
string. Inputs may be any of those or bytes (bytes only to string, as
base64). Numbers narrow like Java's primitive conversions (integers wrap,
floating point saturates), numbers become booleans by ``longValue() != 0``,
strings are parsed like ``Byte.parseByte``/``Double.parseDouble``/
``Boolean.parseBoolean``, and Date/Time/Timestamp go through their integer
encoding (days, ms of day, epoch ms), except to string, where Kafka's ISO
formats are used.
"""

from __future__ import annotations

import base64
import decimal as _decimal
from typing import Any

from connector.api.config_def import ConfigDef, ConfigType, lambda_validator
from connector.api.errors import ConfigException, DataException
from connector.api.java.dateformat import JavaDateFormat
from connector.api.java.numbers import (
    NumberFormatError,
    double_to_int,
    double_to_long,
    double_to_string,
    exact_to_float32,
    float_to_string,
    int_to_double,
    parse_double,
    parse_integer,
    to_float32,
    wrap_int,
)
from connector.api.java.strings import class_name, java_split
from connector.api.logical import (
    LOGICAL_TYPES,
    MILLIS_PER_DAY,
    Date,
    Time,
    Timestamp,
    java_date_millis,
    logical_type_of,
)
from connector.api.lru import LRUCache
from connector.api.record import SinkRecord
from connector.api.schema import Schema, SchemaBuilder, Type
from connector.api.struct import Struct
from smt.base import (
    KeySide,
    StructOrMapTransformation,
    ValueSide,
    copy_schema_basics,
    field_value,
    infer_type,
    replace_null_with_default,
    require_map,
    require_schema,
    require_struct,
)

SPEC_CONFIG = "spec"
REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"
PURPOSE = "cast types"

SUPPORTED_CAST_INPUT_TYPES = tuple(t for t in Type if t.is_primitive)
SUPPORTED_CAST_OUTPUT_TYPES = tuple(t for t in SUPPORTED_CAST_INPUT_TYPES if t is not Type.BYTES)
# The whole-value cast is kept under a key no field can have (Kafka uses null).
WHOLE_VALUE_CAST = None


def _type_list(types: tuple[Type, ...]) -> str:
    return "[" + ", ".join(t.name for t in types) + "]"


def _valid_cast_type(type: Type, output: bool) -> Type:
    if output:
        if type not in SUPPORTED_CAST_OUTPUT_TYPES:
            raise ConfigException(
                f"Cast transformation does not support casting to {type.name}; supported types are "
                f"{_type_list(SUPPORTED_CAST_OUTPUT_TYPES)}"
            )
    elif type not in SUPPORTED_CAST_INPUT_TYPES:
        raise DataException(
            f"Cast transformation does not support casting from {type.name}; supported types are "
            f"{_type_list(SUPPORTED_CAST_INPUT_TYPES)}"
        )
    return type


def _type_named(text: str) -> Type:
    try:
        return Type[text.strip().upper()]
    except KeyError:
        raise ConfigException(f"Invalid type found in casting spec: {text.strip()}") from None


def parse_field_types(mappings: list[str]) -> dict[str | None, Type]:
    """``spec`` entries as {field: target type}; the whole-value cast under ``None``."""
    casts: dict[str | None, Type] = {}
    whole_value = False
    for mapping in mappings:
        parts = java_split(mapping, ":")
        if len(parts) > 2:
            # Kafka reports this under ReplaceField's key name; kept for fidelity.
            raise ConfigException("renames", mappings, f"Invalid rename mapping: {mapping}")
        if len(parts) <= 1:
            casts[WHOLE_VALUE_CAST] = _valid_cast_type(_type_named(parts[0] if parts else ""), True)
            whole_value = True
        else:
            casts[parts[0].strip()] = _valid_cast_type(_type_named(parts[1]), True)
    if whole_value and len(mappings) > 1:
        raise ConfigException(
            "Cast transformations that specify a type to cast the entire value to may only specify a "
            "single cast in their spec"
        )
    return casts


def _validate_spec(name: str, value: Any) -> None:
    if value is None or len(value) == 0:
        raise ConfigException("Must specify at least one field to cast.")
    parse_field_types(value)


# ---------------------------------------------------------------------------------------
# Java number semantics
# ---------------------------------------------------------------------------------------

def _number_kind(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, _decimal.Decimal):
        return "decimal"
    return None


def _integral(value: Any, bits: int) -> int:
    """``Number.byteValue()`` ... ``longValue()``.

    Integers (and BigDecimal's integer part) keep their low bits; a double
    converts to int (or long) saturating, and byte/short then wrap that int.
    """
    kind = _number_kind(value)
    if kind in ("int", "decimal"):
        return wrap_int(int(value), bits)
    if bits == 64:
        return double_to_long(value)
    return wrap_int(double_to_int(value), bits)


_BITS = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}


def _cast_to_integer(value: Any, bits: int) -> int:
    if _number_kind(value) is not None:
        return _integral(value, bits)
    if isinstance(value, bool):
        return 1 if value else 0
    if isinstance(value, str):
        return parse_integer(value, bits)
    raise DataException(f"Unexpected type in Cast transformation: {class_name(value)}")


def _cast_to_float(value: Any, float32: bool) -> float:
    kind = _number_kind(value)
    if kind == "int":
        # (float) long rounds once; a detour through double could round twice.
        return exact_to_float32(value) if float32 else int_to_double(value)
    if kind in ("float", "decimal"):
        return to_float32(float(value)) if float32 else float(value)
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, str):
        parsed = parse_double(value)
        return to_float32(parsed) if float32 else parsed
    raise DataException(f"Unexpected type in Cast transformation: {class_name(value)}")


def _cast_to_boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if _number_kind(value) is not None:
        return _integral(value, 64) != 0
    if isinstance(value, str):
        return value.lower() == "true"
    raise DataException(f"Unexpected type in Cast transformation: {class_name(value)}")


def date_format_for(millis: int) -> JavaDateFormat:
    """``Values.dateFormatFor``: time-of-day, date or timestamp ISO format, chosen by the value."""
    if millis < MILLIS_PER_DAY:
        return _TIME_FORMAT
    if millis % MILLIS_PER_DAY == 0:
        return _DATE_FORMAT
    return _TIMESTAMP_FORMAT


_DATE_FORMAT = JavaDateFormat("yyyy-MM-dd")
_TIME_FORMAT = JavaDateFormat("HH:mm:ss.SSS'Z'")
_TIMESTAMP_FORMAT = JavaDateFormat("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'")


def _cast_to_string(value: Any, source_type: Type | None) -> str:
    millis = java_date_millis(value)
    if millis is not None:  # Date, Time, Timestamp: Kafka's ISO format for the value
        return date_format_for(millis).format_millis(millis)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return float_to_string(value) if source_type is Type.FLOAT32 else double_to_string(value)
    return str(value)


def _encode_logical(schema: Schema, value: Any) -> Any:
    """A Date, Time or Timestamp value (so named by its schema) as its number; any other value as it is."""
    logical = LOGICAL_TYPES.get(schema.name or "")
    return logical.from_logical(schema, value) if logical in (Date, Time, Timestamp) else value


def cast_value_to_type(schema: Schema | None, value: Any, target: Type) -> Any:
    """Cast one value (of ``schema``, or schemaless) to ``target`` (``Cast.castValueToType``)."""
    if value is None:
        return None
    try:
        inferred = infer_type(value) if schema is None else schema.type
        if inferred is None:
            raise DataException(
                f"Cast transformation was passed a value of type {class_name(value)} which is not "
                f"supported by Connect's data API"
            )
        _valid_cast_type(inferred, output=False)
        if schema is not None and schema.name is not None and target is not Type.STRING:
            value = _encode_logical(schema, value)
        if target in _BITS:
            return _cast_to_integer(value, _BITS[target])
        if target is Type.FLOAT32:
            return _cast_to_float(value, True)
        if target is Type.FLOAT64:
            return _cast_to_float(value, False)
        if target is Type.BOOLEAN:
            return _cast_to_boolean(value)
        if target is Type.STRING:
            return _cast_to_string(value, inferred)
        raise DataException(f"{target.name} is not supported in the Cast transformation.")
    except NumberFormatError as exc:
        raise DataException(f"Value ({value}) was out of range for requested data type") from exc


def _builder_for(type: Type) -> SchemaBuilder:
    if type not in SUPPORTED_CAST_OUTPUT_TYPES:
        raise DataException(f"Unexpected type in Cast transformation: {type.name}")
    return SchemaBuilder(type)


def _whole_value_builder(schema: Schema, target: Type) -> SchemaBuilder:
    """The schema builder of a whole value cast to ``target``.

    A logical value (Decimal, Date, Time, Timestamp) cast to a primitive is no
    longer that logical type: its name, version and parameters are not carried
    over, or a converter would read the string or number as the logical type and
    refuse it (JsonConverter: "Invalid type for Decimal"). Other schemas keep
    their name, version, doc and parameters (``SchemaUtil.copySchemaBasics``).
    """
    if logical_type_of(schema) is None:
        return copy_schema_basics(schema, _builder_for(target))
    return _builder_for(target).doc(schema.doc)


class Cast(StructOrMapTransformation):
    """Cast fields or the entire key or value to a specific type."""

    CONFIG_DEF = replace_null_with_default(ConfigDef().define(
        SPEC_CONFIG, ConfigType.LIST, validator=lambda_validator(
            _validate_spec, "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>"),
        importance="high",
        doc="List of fields and the type to cast them to of the form field1:type,field2:type to cast "
            "fields of Maps or Structs. A single type to cast the entire value. Valid types are int8, "
            "int16, int32, int64, float32, float64, boolean, and string. Note that binary fields can only "
            "be cast to string.",
    ))

    casts: dict[str | None, Type] = {}
    whole_value_cast_type: Type | None = None
    replace_null_with_default: bool = True

    def _configure(self, config: dict[str, Any]) -> None:
        self.casts = parse_field_types(config[SPEC_CONFIG])
        self.whole_value_cast_type = self.casts.get(WHOLE_VALUE_CAST)
        self.replace_null_with_default = config[REPLACE_NULL_WITH_DEFAULT_CONFIG]
        self._schema_cache: LRUCache[Schema, Schema] = LRUCache()

    def apply_schemaless(self, record: SinkRecord) -> SinkRecord:
        value = self.operating_value(record)
        if self.whole_value_cast_type is not None:
            return self.new_record(record, None, cast_value_to_type(None, value, self.whole_value_cast_type))
        value = require_map(value, PURPOSE)
        updated = dict(value)
        for field, target in self.casts.items():
            updated[field] = cast_value_to_type(None, value.get(field), target)
        return self.new_record(record, None, updated)

    def apply_with_schema(self, record: SinkRecord) -> SinkRecord:
        schema = require_schema(self.operating_schema(record), PURPOSE)
        updated_schema = self.updated_schema(schema)
        if self.whole_value_cast_type is not None:
            return self.new_record(
                record, updated_schema,
                cast_value_to_type(schema, self.operating_value(record), self.whole_value_cast_type),
            )
        value = require_struct(self.operating_value(record), PURPOSE)
        updated = Struct(updated_schema)
        for field in value.schema.fields():
            original = field_value(value, field, self.replace_null_with_default)
            target = self.casts.get(field.name)
            new_value = cast_value_to_type(field.schema, original, target) if target is not None else original
            updated.put(field.name, new_value)
        return self.new_record(record, updated_schema, updated)

    def updated_schema(self, schema: Schema) -> Schema:
        return self._schema_cache.get_or_compute(schema, self._build_schema)

    def _build_schema(self, schema: Schema) -> Schema:
        if self.whole_value_cast_type is not None:
            builder = _whole_value_builder(schema, self.whole_value_cast_type)
        else:
            builder = copy_schema_basics(schema, SchemaBuilder.struct())
            for field in schema.fields():
                target = self.casts.get(field.name)
                if target is not None:
                    field_builder = _builder_for(target)
                    if field.schema.optional:
                        field_builder.optional()
                    if field.schema.default is not None:
                        field_builder.default_value(
                            cast_value_to_type(field.schema, field.schema.default, field_builder.type))
                    builder.field(field.name, field_builder.build())
                else:
                    builder.field(field.name, field.schema)
        if schema.optional:
            builder.optional()
        if schema.default is not None:
            builder.default_value(cast_value_to_type(schema, schema.default, builder.type))
        return builder.build()

    def close(self) -> None:
        pass


class Key(KeySide, Cast):
    """``org.apache.kafka.connect.transforms.Cast$Key``."""


class Value(ValueSide, Cast):
    """``org.apache.kafka.connect.transforms.Cast$Value``."""
