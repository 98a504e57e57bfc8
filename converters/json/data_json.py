"""Connect values ⇄ JSON trees: the payload half of the JsonConverter.

:func:`to_json` and :func:`to_connect` follow ``JsonConverter.convertToJson``
and ``convertToConnect``, including their error texts and Jackson's
leniency when reading a payload against a schema (a string read as an INT32
is 0, a number read as a STRING is null). Logical types are recognised by
schema name, as Kafka does.
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any, Callable

from connector.api.errors import DataException
from connector.api.instant import OutOfRangeTimestamp
from connector.api.java import jackson
from connector.api.java.numbers import to_float32, wrap_int
from connector.api.logical import Date, Decimal, Time, Timestamp
from connector.api.schema import Schema, Type
from connector.api.struct import Struct
from connector.api.values import encode_temporal
from converters.json.config import DecimalFormat, JsonConverterConfig

__all__ = ["to_json", "to_connect"]


# ======================================================================================
# Connect → JSON
# ======================================================================================


def to_json(schema: Schema | None, value: Any, config: JsonConverterConfig) -> Any:
    """The JSON tree for ``value`` of ``schema`` (None when schemaless)."""
    if value is None:
        return _null_to_json(schema, config)
    if schema is not None and schema.name is not None:
        logical = _LOGICAL_TO_JSON.get(schema.name)
        if logical is not None:
            return logical(schema, value, config)
    schema_type = schema.type if schema is not None else _schema_type_of(value)
    return _TO_JSON[schema_type](schema, value, config)


def _null_to_json(schema: Schema | None, config: JsonConverterConfig) -> Any:
    if schema is None:
        return None
    if schema.default is not None and config.replace_null_with_default:
        return to_json(schema, schema.default, config)
    if schema.optional:
        return None
    raise DataException("Conversion error: null value for field that is required and has no default value")


def _schema_type_of(value: Any) -> Type:
    """``ConnectSchema.schemaType``: the type a schemaless value is written as."""
    for python_types, schema_type in _SCHEMALESS_TYPES:
        if isinstance(value, python_types):
            return schema_type
    raise DataException(f"Python type {type(value).__name__} does not have corresponding schema type.")


_SCHEMALESS_TYPES: tuple[tuple[type | tuple[type, ...], Type], ...] = (
    (bool, Type.BOOLEAN),
    (int, Type.INT64),
    (float, Type.FLOAT64),
    (str, Type.STRING),
    ((bytes, bytearray, memoryview), Type.BYTES),
    ((list, tuple), Type.ARRAY),
    (dict, Type.MAP),
    (Struct, Type.STRUCT),
)


def _invalid_type(schema: Schema | None, value: Any) -> DataException:
    where = schema.type.name if schema is not None else "unknown schema"
    return DataException(f"Invalid type for {where}: {type(value).__name__}")


def _integer_writer(schema_type: Type, bits: int) -> Callable[[Schema | None, Any, JsonConverterConfig], int]:
    def write(schema: Schema | None, value: Any, config: JsonConverterConfig) -> int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise _invalid_type(schema, value)
        if wrap_int(value, bits) != value:
            raise DataException(f"Value {value} out of range for schema type {schema_type.name}")
        return value
    return write


def _typed_writer(python_types: type | tuple[type, ...], convert: Callable[[Any], Any]):
    def write(schema: Schema | None, value: Any, config: JsonConverterConfig) -> Any:
        if not isinstance(value, python_types):
            raise _invalid_type(schema, value)
        return convert(value)
    return write


def _array_to_json(schema: Schema | None, value: Any, config: JsonConverterConfig) -> list:
    if not isinstance(value, (list, tuple)):
        raise _invalid_type(schema, value)
    element_schema = schema.value_schema if schema is not None else None
    return [to_json(element_schema, element, config) for element in value]


def _as_text(node: Any) -> str:
    """``JsonNode.asText()`` of a converted map key."""
    if isinstance(node, str):
        return node
    return "null" if node is None else jackson.write_text(node).strip('"')


def _map_to_json(schema: Schema | None, value: Any, config: JsonConverterConfig) -> Any:
    if not isinstance(value, dict):
        raise _invalid_type(schema, value)
    key_schema = schema.key_schema if schema is not None else None
    value_schema = schema.value_schema if schema is not None else None
    if key_schema is None:
        object_mode = all(isinstance(key, str) for key in value)
    else:
        object_mode = key_schema.type is Type.STRING
    if object_mode:
        return {
            _as_text(to_json(key_schema, key, config)): to_json(value_schema, val, config)
            for key, val in value.items()
        }
    # Keys other than strings cannot be JSON member names: write [key, value] pairs.
    return [[to_json(key_schema, key, config), to_json(value_schema, val, config)] for key, val in value.items()]


def _without_default(schema: Schema) -> Schema:
    return Schema(
        schema.type, optional=schema.optional, name=schema.name, version=schema.version,
        doc=schema.doc, parameters=schema.parameters, fields=schema.fields(),
    )


def _struct_to_json(schema: Schema | None, value: Any, config: JsonConverterConfig) -> dict:
    if not isinstance(value, Struct):
        raise _invalid_type(schema, value)
    # A struct schema's own default is a Struct of the schema without that default.
    if schema is None or (value.schema != schema and value.schema != _without_default(schema)):
        raise DataException("Mismatching schema.")
    return {
        field.name: to_json(field.schema, value.get_without_default(field), config)
        for field in schema.fields()
    }


_TO_JSON: dict[Type, Callable[[Schema | None, Any, JsonConverterConfig], Any]] = {
    Type.INT8: _integer_writer(Type.INT8, 8),
    Type.INT16: _integer_writer(Type.INT16, 16),
    Type.INT32: _integer_writer(Type.INT32, 32),
    Type.INT64: _integer_writer(Type.INT64, 64),
    Type.FLOAT32: _typed_writer(float, lambda v: jackson.Float32(to_float32(v))),
    Type.FLOAT64: _typed_writer(float, float),
    Type.BOOLEAN: _typed_writer(bool, bool),
    Type.STRING: _typed_writer(str, str),
    Type.BYTES: _typed_writer((bytes, bytearray, memoryview), bytes),
    Type.ARRAY: _array_to_json,
    Type.MAP: _map_to_json,
    Type.STRUCT: _struct_to_json,
}


def _decimal_to_json(schema: Schema, value: Any, config: JsonConverterConfig) -> Any:
    if not isinstance(value, decimal.Decimal):
        raise DataException(f"Invalid type for Decimal, expected Decimal but was {type(value).__name__}")
    if config.decimal_format is DecimalFormat.NUMERIC:
        if not value.is_finite():
            raise DataException(f"Decimal value {value} is not a finite number")
        return value
    return Decimal.from_logical(schema, value)


def _temporal_to_json(label: str, logical_name: str):
    def write(schema: Schema, value: Any, config: JsonConverterConfig) -> int:
        if not isinstance(value, (dt.date, dt.time, OutOfRangeTimestamp)):
            raise DataException(
                f"Invalid type for {label}, expected {label} but was {type(value).__name__}"
            )
        return encode_temporal(logical_name, value)  # type: ignore[return-value]
    return write


_LOGICAL_TO_JSON = {
    Decimal.LOGICAL_NAME: _decimal_to_json,
    Date.LOGICAL_NAME: _temporal_to_json("Date", Date.LOGICAL_NAME),
    Time.LOGICAL_NAME: _temporal_to_json("Time", Time.LOGICAL_NAME),
    Timestamp.LOGICAL_NAME: _temporal_to_json("Timestamp", Timestamp.LOGICAL_NAME),
}


# ======================================================================================
# JSON → Connect
# ======================================================================================


def to_connect(schema: Schema | None, node: Any, config: JsonConverterConfig) -> Any:
    """The Connect value of the JSON ``node`` read against ``schema`` (None: schemaless).

    With a schema, null (or absent) gives the schema's default when
    ``replace.null.with.default`` is on, else null if optional, else an error.
    Without one, integers read as INT64 and other numbers as FLOAT64.
    """
    if schema is not None:
        if node is None or node is jackson.MISSING:
            return _null_to_connect(schema, config)
        schema_type = schema.type
    else:
        inferred = _schemaless_type(node)
        if inferred is None:
            return None
        schema_type = inferred
    if schema is not None and schema.name is not None:
        logical = _LOGICAL_TO_CONNECT.get(schema.name)
        if logical is not None:
            return logical(schema, node)
    return _TO_CONNECT[schema_type](schema, node, config)


def _null_to_connect(schema: Schema, config: JsonConverterConfig) -> Any:
    if schema.default is not None and config.replace_null_with_default:
        return schema.default
    if schema.optional:
        return None
    raise DataException(f"Invalid null value for required {schema.type.name} field")


def _schemaless_type(node: Any) -> Type | None:
    kind = jackson.node_type(node)
    if kind in ("NULL", "MISSING"):
        return None
    if kind == "NUMBER":
        return Type.INT64 if jackson.is_integral(node) else Type.FLOAT64
    schema_type = {"BOOLEAN": Type.BOOLEAN, "ARRAY": Type.ARRAY, "OBJECT": Type.MAP,
                   "STRING": Type.STRING}.get(kind)
    if schema_type is None:
        raise DataException("Unknown schema type: null")
    return schema_type


def _bytes_to_connect(schema: Schema | None, node: Any, config: JsonConverterConfig) -> bytes | None:
    try:
        return jackson.binary_value(node)
    except ValueError as exc:
        raise DataException(f"Invalid bytes field: {exc}") from exc


def _elements(node: Any) -> list:
    """What iterating a JsonNode yields: array elements, object values, else nothing."""
    if isinstance(node, list):
        return node
    if isinstance(node, dict):
        return list(node.values())
    return []


def _array_to_connect(schema: Schema | None, node: Any, config: JsonConverterConfig) -> list:
    element_schema = schema.value_schema if schema is not None else None
    return [to_connect(element_schema, element, config) for element in _elements(node)]


def _put(result: dict, key: Any, value: Any) -> None:
    try:
        result[key] = value
    except TypeError as exc:
        raise DataException(f"Map key {key!r} cannot be used as a Python dict key") from exc


def _map_to_connect(schema: Schema | None, node: Any, config: JsonConverterConfig) -> dict:
    key_schema = schema.key_schema if schema is not None else None
    value_schema = schema.value_schema if schema is not None else None
    result: dict = {}
    if key_schema is None or key_schema.type is Type.STRING:
        if not isinstance(node, dict):
            raise DataException(
                f"Maps with string fields should be encoded as JSON objects, but found {jackson.node_type(node)}"
            )
        for key, value in node.items():
            result[key] = to_connect(value_schema, value, config)
        return result
    if not isinstance(node, list):
        raise DataException(
            "Maps with non-string fields should be encoded as JSON array of tuples, "
            f"but found {jackson.node_type(node)}"
        )
    for entry in node:
        if not isinstance(entry, list):
            raise DataException(f"Found invalid map entry instead of array tuple: {jackson.node_type(entry)}")
        if len(entry) != 2:
            raise DataException(f"Found invalid map entry, expected length 2 but found :{len(entry)}")
        _put(result, to_connect(key_schema, entry[0], config), to_connect(value_schema, entry[1], config))
    return result


def _struct_to_connect(schema: Schema | None, node: Any, config: JsonConverterConfig) -> Struct:
    if not isinstance(node, dict):
        raise DataException(f"Structs should be encoded as JSON objects, but found {jackson.node_type(node)}")
    result = Struct(schema)  # type: ignore[arg-type]
    for field in schema.fields():  # type: ignore[union-attr]
        result.put(field, to_connect(field.schema, node.get(field.name), config))
    return result


def _reader(read: Callable[[Any], Any]):
    return lambda schema, node, config: read(node)


_TO_CONNECT: dict[Type, Callable[[Schema | None, Any, JsonConverterConfig], Any]] = {
    Type.BOOLEAN: _reader(jackson.boolean_value),
    # Jackson narrows like Java casts: (byte) intValue(), (short) intValue().
    Type.INT8: _reader(lambda node: wrap_int(jackson.int_value(node), 8)),
    Type.INT16: _reader(lambda node: wrap_int(jackson.int_value(node), 16)),
    Type.INT32: _reader(jackson.int_value),
    Type.INT64: _reader(jackson.long_value),
    Type.FLOAT32: _reader(jackson.float_value),
    Type.FLOAT64: _reader(jackson.double_value),
    Type.BYTES: _bytes_to_connect,
    Type.STRING: _reader(jackson.text_value),
    Type.ARRAY: _array_to_connect,
    Type.MAP: _map_to_connect,
    Type.STRUCT: _struct_to_connect,
}


def _decimal_to_connect(schema: Schema, node: Any) -> decimal.Decimal:
    if jackson.is_number(node):
        return jackson.decimal_value(node)
    if isinstance(node, (str, bytes, bytearray)):
        try:
            return Decimal.to_logical(schema, jackson.binary_value(node))  # type: ignore[arg-type]
        except Exception as exc:
            raise DataException(f"Invalid bytes for Decimal field: {exc}") from exc
    raise DataException(
        "Invalid type for Decimal, underlying representation should be numeric or bytes but was "
        + jackson.node_type(node)
    )


def _in_python_range(convert: Callable[[Any, int], Any], schema: Schema, number: int, label: str) -> Any:
    try:
        return convert(schema, number)
    except (OverflowError, ValueError) as exc:
        raise DataException(f"{label} value {number} is outside the range Python supports") from exc


def _date_to_connect(schema: Schema, node: Any) -> dt.date:
    if not jackson.is_int(node):
        raise DataException(
            f"Invalid type for Date, underlying representation should be integer but was {jackson.node_type(node)}"
        )
    return _in_python_range(Date.to_logical, schema, node, "Date")


def _time_to_connect(schema: Schema, node: Any) -> dt.time:
    if not jackson.is_int(node):
        raise DataException(
            f"Invalid type for Time, underlying representation should be integer but was {jackson.node_type(node)}"
        )
    return Time.to_logical(schema, node)


def _timestamp_to_connect(schema: Schema, node: Any) -> dt.datetime:
    if not jackson.is_integral(node):
        raise DataException(
            "Invalid type for Timestamp, underlying representation should be integral but was "
            + jackson.node_type(node)
        )
    return _in_python_range(Timestamp.to_logical, schema, jackson.long_value(node), "Timestamp")


_LOGICAL_TO_CONNECT: dict[str, Callable[[Schema, Any], Any]] = {
    Decimal.LOGICAL_NAME: _decimal_to_connect,
    Date.LOGICAL_NAME: _date_to_connect,
    Time.LOGICAL_NAME: _time_to_connect,
    Timestamp.LOGICAL_NAME: _timestamp_to_connect,
}
