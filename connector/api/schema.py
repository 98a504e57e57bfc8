"""Connect schemas: ``Schema``, ``Field``, ``SchemaBuilder`` and schema validation.

A Python rendering of ``org.apache.kafka.connect.data`` (``Schema``,
``ConnectSchema``, ``SchemaBuilder``, ``Field``). Schemas are immutable values:
two schemas with the same type, optionality, default, name, version, doc,
parameters and children are equal and hash alike, which is what lets SMTs and
converters cache derived schemas per input schema.

Python value representation of each type:

=========  =============================================================
INT8..64   ``int`` (range checked on validation)
FLOAT32/64 ``float``
BOOLEAN    ``bool``
STRING     ``str``
BYTES      ``bytes`` (``bytearray``/``memoryview`` accepted on input)
ARRAY      ``list``
MAP        ``dict``
STRUCT     :class:`connector.api.struct.Struct`
Decimal    ``decimal.Decimal`` (logical, on BYTES)
Date       ``datetime.date`` (logical, on INT32)
Time       ``datetime.time`` (logical, on INT32)
Timestamp  ``datetime.datetime``, UTC-aware (logical, on INT64)
=========  =============================================================
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import enum
from typing import Any, Callable, Iterable, Mapping

from connector.api.errors import DataException, SchemaBuilderException
from connector.api.instant import OutOfRangeTimestamp


class Type(enum.Enum):
    """Schema types, with Kafka's names (``Schema.Type``)."""

    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT32 = "float32"
    FLOAT64 = "float64"
    BOOLEAN = "boolean"
    STRING = "string"
    BYTES = "bytes"
    ARRAY = "array"
    MAP = "map"
    STRUCT = "struct"

    @property
    def is_primitive(self) -> bool:
        return self not in (Type.ARRAY, Type.MAP, Type.STRUCT)

    def get_name(self) -> str:
        return self.value


_INT_RANGES = {
    Type.INT8: (-(2**7), 2**7 - 1),
    Type.INT16: (-(2**15), 2**15 - 1),
    Type.INT32: (-(2**31), 2**31 - 1),
    Type.INT64: (-(2**63), 2**63 - 1),
}

# Logical type names, declared here (not in logical.py) because validation needs them.
DECIMAL_LOGICAL_NAME = "org.apache.kafka.connect.data.Decimal"
DATE_LOGICAL_NAME = "org.apache.kafka.connect.data.Date"
TIME_LOGICAL_NAME = "org.apache.kafka.connect.data.Time"
TIMESTAMP_LOGICAL_NAME = "org.apache.kafka.connect.data.Timestamp"

#: The classes a value of each logical type may have (ConnectSchema.LOGICAL_TYPE_CLASSES).
LOGICAL_TYPE_CLASSES: dict[str, tuple[type, ...]] = {
    DECIMAL_LOGICAL_NAME: (_decimal.Decimal,),
    DATE_LOGICAL_NAME: (_dt.date,),
    TIME_LOGICAL_NAME: (_dt.time,),
    TIMESTAMP_LOGICAL_NAME: (_dt.datetime, OutOfRangeTimestamp),
}


class Field:
    """A named, positioned member of a struct schema."""

    __slots__ = ("name", "index", "schema")

    def __init__(self, name: str, index: int, schema: "Schema"):
        self.name = name
        self.index = index
        self.schema = schema

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Field)
            and self.name == other.name
            and self.index == other.index
            and self.schema == other.schema
        )

    def __hash__(self) -> int:
        return hash((self.name, self.index, self.schema))

    def __repr__(self) -> str:
        return f"Field{{name={self.name}, index={self.index}, schema={self.schema!r}}}"


class Schema:
    """An immutable Connect schema (``ConnectSchema``).

    Build composite schemas with :class:`SchemaBuilder`; the primitive
    constants (``Schema.INT32_SCHEMA``, ``Schema.OPTIONAL_STRING_SCHEMA``, ...)
    are defined after the class.
    """

    # Populated below the class body.
    INT8_SCHEMA: "Schema"
    INT16_SCHEMA: "Schema"
    INT32_SCHEMA: "Schema"
    INT64_SCHEMA: "Schema"
    FLOAT32_SCHEMA: "Schema"
    FLOAT64_SCHEMA: "Schema"
    BOOLEAN_SCHEMA: "Schema"
    STRING_SCHEMA: "Schema"
    BYTES_SCHEMA: "Schema"
    OPTIONAL_INT8_SCHEMA: "Schema"
    OPTIONAL_INT16_SCHEMA: "Schema"
    OPTIONAL_INT32_SCHEMA: "Schema"
    OPTIONAL_INT64_SCHEMA: "Schema"
    OPTIONAL_FLOAT32_SCHEMA: "Schema"
    OPTIONAL_FLOAT64_SCHEMA: "Schema"
    OPTIONAL_BOOLEAN_SCHEMA: "Schema"
    OPTIONAL_STRING_SCHEMA: "Schema"
    OPTIONAL_BYTES_SCHEMA: "Schema"

    __slots__ = (
        "type", "optional", "default", "name", "version", "doc", "parameters",
        "_fields", "_fields_by_name", "key_schema", "value_schema", "_hash",
    )

    def __init__(
        self,
        type: Type,
        optional: bool = False,
        default: Any = None,
        name: str | None = None,
        version: int | None = None,
        doc: str | None = None,
        parameters: Mapping[str, str] | None = None,
        fields: Iterable[Field] | None = None,
        key_schema: "Schema | None" = None,
        value_schema: "Schema | None" = None,
    ):
        self.type = type
        self.optional = optional
        self.name = name
        self.version = version
        self.doc = doc
        self.parameters = dict(parameters) if parameters else None
        self._fields = tuple(fields or ()) if type is Type.STRUCT else None
        self._fields_by_name = {f.name: f for f in self._fields} if self._fields is not None else None
        self.key_schema = key_schema
        self.value_schema = value_schema
        self._hash: int | None = None
        self.default = None
        if default is not None:
            validate_value(self, default)
        self.default = default

    # --- accessors mirroring Kafka's Schema interface -----------------------------

    def is_optional(self) -> bool:
        return self.optional

    def default_value(self) -> Any:
        return self.default

    def fields(self) -> list[Field]:
        if self._fields is None:
            raise DataException("Cannot list fields on non-struct type")
        return list(self._fields)

    def field(self, name: str) -> Field | None:
        if self._fields_by_name is None:
            raise DataException("Cannot look up fields on non-struct type")
        return self._fields_by_name.get(name)

    def schema(self) -> "Schema":
        return self

    # --- value semantics ----------------------------------------------------------

    def _key(self) -> tuple:
        params = tuple(sorted(self.parameters.items())) if self.parameters else None
        return (
            self.type, self.optional, _hashable(self.default), self.name, self.version,
            self.doc, params, self._fields, self.key_schema, self.value_schema,
        )

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Schema):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self._key())
        return self._hash

    def __repr__(self) -> str:
        label = f"Schema{{{self.name + ':' if self.name else ''}{self.type.name}}}"
        return label if not self.optional else label[:-1] + "?}"


def _hashable(value: Any) -> Any:
    """A hashable stand-in for a default value (lists and dicts are not hashable)."""
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted(((repr(k), _hashable(v)) for k, v in value.items())))
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    return value


def _primitive(type: Type, optional: bool) -> Schema:
    return Schema(type, optional=optional)


for _t in (Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64,
           Type.BOOLEAN, Type.STRING, Type.BYTES):
    setattr(Schema, f"{_t.name}_SCHEMA", _primitive(_t, False))
    setattr(Schema, f"OPTIONAL_{_t.name}_SCHEMA", _primitive(_t, True))


class SchemaBuilder:
    """Fluent builder for schemas (``org.apache.kafka.connect.data.SchemaBuilder``).

    Method names follow Kafka's (``optional()``, ``name(...)``, ``version(...)``,
    ``doc(...)``, ``default_value(...)``, ``parameter(...)``, ``field(...)``).
    A builder is not a schema: call :meth:`build` where a schema is needed
    (``field()``, ``array()`` and ``map()`` accept builders and build them).
    Setting an attribute twice to different values raises
    :class:`SchemaBuilderException`, as in Kafka.
    """

    def __init__(self, type: Type):
        self.type = type
        self._optional = False
        self._default: Any = None
        self._name: str | None = None
        self._version: int | None = None
        self._doc: str | None = None
        self._parameters: dict[str, str] | None = None
        self._fields: dict[str, Field] | None = {} if type is Type.STRUCT else None
        self._key_schema: Schema | None = None
        self._value_schema: Schema | None = None
        self._set: set[str] = set()

    # --- factories ----------------------------------------------------------------

    @staticmethod
    def int8() -> "SchemaBuilder":
        return SchemaBuilder(Type.INT8)

    @staticmethod
    def int16() -> "SchemaBuilder":
        return SchemaBuilder(Type.INT16)

    @staticmethod
    def int32() -> "SchemaBuilder":
        return SchemaBuilder(Type.INT32)

    @staticmethod
    def int64() -> "SchemaBuilder":
        return SchemaBuilder(Type.INT64)

    @staticmethod
    def float32() -> "SchemaBuilder":
        return SchemaBuilder(Type.FLOAT32)

    @staticmethod
    def float64() -> "SchemaBuilder":
        return SchemaBuilder(Type.FLOAT64)

    @staticmethod
    def bool() -> "SchemaBuilder":
        return SchemaBuilder(Type.BOOLEAN)

    @staticmethod
    def string() -> "SchemaBuilder":
        return SchemaBuilder(Type.STRING)

    @staticmethod
    def bytes() -> "SchemaBuilder":
        return SchemaBuilder(Type.BYTES)

    @staticmethod
    def struct() -> "SchemaBuilder":
        return SchemaBuilder(Type.STRUCT)

    @staticmethod
    def array(value_schema: "Schema | SchemaBuilder | None") -> "SchemaBuilder":
        if value_schema is None:
            raise SchemaBuilderException("valueSchema cannot be null.")
        builder = SchemaBuilder(Type.ARRAY)
        builder._value_schema = _as_schema(value_schema)
        return builder

    @staticmethod
    def map(
        key_schema: "Schema | SchemaBuilder | None", value_schema: "Schema | SchemaBuilder | None"
    ) -> "SchemaBuilder":
        if key_schema is None:
            raise SchemaBuilderException("keySchema cannot be null.")
        if value_schema is None:
            raise SchemaBuilderException("valueSchema cannot be null.")
        builder = SchemaBuilder(Type.MAP)
        builder._key_schema = _as_schema(key_schema)
        builder._value_schema = _as_schema(value_schema)
        return builder

    @staticmethod
    def type_of(type: Type) -> "SchemaBuilder":
        return SchemaBuilder(type)

    # --- setters --------------------------------------------------------------------

    def _once(self, attr: str, value: Any) -> "SchemaBuilder":
        if attr in self._set and getattr(self, attr) != value:
            raise SchemaBuilderException(
                f"Invalid SchemaBuilder call: {attr.lstrip('_')} has already been set."
            )
        self._set.add(attr)
        setattr(self, attr, value)
        return self

    def optional(self) -> "SchemaBuilder":
        return self._once("_optional", True)

    def required(self) -> "SchemaBuilder":
        return self._once("_optional", False)

    def default_value(self, value: Any) -> "SchemaBuilder":
        if value is not None:
            validate_value(self._peek(), value)
        return self._once("_default", value)

    def name(self, name: str | None) -> "SchemaBuilder":
        return self._once("_name", name)

    def version(self, version: int | None) -> "SchemaBuilder":
        return self._once("_version", version)

    def doc(self, doc: str | None) -> "SchemaBuilder":
        return self._once("_doc", doc)

    def parameter(self, key: str, value: str) -> "SchemaBuilder":
        if self._parameters is None:
            self._parameters = {}
        self._parameters[key] = value
        return self

    def parameters(self, params: Mapping[str, str] | None) -> "SchemaBuilder":
        if params:
            if self._parameters is None:
                self._parameters = {}
            self._parameters.update(params)
        return self

    def field(self, name: str, schema: "Schema | SchemaBuilder | None") -> "SchemaBuilder":
        if self._fields is None:
            raise SchemaBuilderException("Cannot create fields on type " + self.type.name)
        if name is None or name == "":
            raise SchemaBuilderException("fieldName cannot be null.")
        if schema is None:
            raise SchemaBuilderException("fieldSchema for field " + name + " cannot be null.")
        if name in self._fields:
            raise SchemaBuilderException("Cannot create field because of field name duplication " + name)
        self._fields[name] = Field(name, len(self._fields), _as_schema(schema))
        return self

    def fields(self) -> list[Field]:
        if self._fields is None:
            raise DataException("Cannot list fields on non-struct type")
        return list(self._fields.values())

    def _peek(self) -> Schema:
        """The schema as built so far, without a default (used to validate one)."""
        return self._schema(default=None)

    def build(self) -> Schema:
        return self._schema(default=self._default)

    def _schema(self, default: Any) -> Schema:
        return Schema(
            self.type,
            optional=self._optional,
            default=default,
            name=self._name,
            version=self._version,
            doc=self._doc,
            parameters=self._parameters,
            fields=list(self._fields.values()) if self._fields is not None else None,
            key_schema=self._key_schema,
            value_schema=self._value_schema,
        )


def _as_schema(schema: "Schema | SchemaBuilder") -> Schema:
    return schema.build() if isinstance(schema, SchemaBuilder) else schema


# --- validation (ConnectSchema.validateValue) -------------------------------------------



def _same_but_default(a: Schema, b: Schema) -> bool:
    """Equal apart from the default value.

    A struct schema's own default is a Struct of that schema as it was before
    the default was set (in Kafka, the builder itself), so validating such a
    default, or a value of a schema whose default is set, must not compare the
    defaults.
    """
    ka, kb = a._key(), b._key()
    return ka[:2] == kb[:2] and ka[3:] == kb[3:]


def _describe(value: Any) -> str:
    return type(value).__name__


class StructValue:
    """A value of a STRUCT schema: the base of :class:`connector.api.struct.Struct`.

    Declared here so that validating a value (which a schema does for its default) needs no
    import of ``Struct``, whose fields are validated through this module.
    """

    __slots__ = ()
    schema: Schema
    validate: Callable[[], None]  # checks every field against the schema (Struct.validate)


#: The classes a value of each schema type may have (ConnectSchema.SCHEMA_TYPE_CLASSES).
SCHEMA_TYPE_CLASSES: dict[Type, tuple[type[Any], ...]] = {
    Type.INT8: (int,),
    Type.INT16: (int,),
    Type.INT32: (int,),
    Type.INT64: (int,),
    Type.FLOAT32: (float,),
    Type.FLOAT64: (float,),
    Type.BOOLEAN: (bool,),
    Type.STRING: (str,),
    Type.BYTES: (bytes, bytearray, memoryview),
    Type.ARRAY: (list, tuple),
    Type.MAP: (dict,),
    Type.STRUCT: (StructValue,),
}


def validate_value(schema: "Schema | None", value: Any, field_name: str | None = None) -> None:
    """Raise :class:`DataException` unless ``value`` conforms to ``schema``.

    Mirrors ``ConnectSchema.validateValue``: a null needs an optional schema,
    logical types need their Python class, structs must carry an equal schema.
    """
    where = f" for field: \"{field_name}\"" if field_name else ""
    if schema is None:
        raise DataException(f"Schema cannot be null{where}")
    if value is None:
        if not schema.optional:
            location = "value" if field_name is None else f'field: "{field_name}"'
            raise DataException(f"Invalid value: null used for required {location}, schema type: {schema.type.name}")
        return
    logical = LOGICAL_TYPE_CLASSES.get(schema.name or "")
    if logical is not None:
        if not isinstance(value, logical) or (logical[0] is _dt.date and isinstance(value, _dt.datetime)):
            raise DataException(
                f"Invalid Java object for schema \"{schema.name}\" with type {schema.type.name}: "
                f"{_describe(value)}{where}"
            )
        return
    if schema.type is Type.STRUCT:
        if not isinstance(value, StructValue):
            raise DataException(f"Invalid Java object for schema with type STRUCT: {_describe(value)}{where}")
        if value.schema != schema and not _same_but_default(value.schema, schema):
            raise DataException(f"Struct schemas do not match{where}.")
        value.validate()
        return
    classes = SCHEMA_TYPE_CLASSES[schema.type]
    if not isinstance(value, classes) or (schema.type in _INT_RANGES and isinstance(value, bool)):
        raise DataException(
            f"Invalid Java object for schema with type {schema.type.name}: {_describe(value)}{where}"
        )
    if schema.type in _INT_RANGES:
        low, high = _INT_RANGES[schema.type]
        if not low <= value <= high:
            raise DataException(f"Value {value} out of range for schema type {schema.type.name}{where}")
    elif schema.type is Type.ARRAY:
        for element in value:
            validate_value(schema.value_schema, element, "element" if field_name is None else field_name)
    elif schema.type is Type.MAP:
        for key, val in value.items():
            validate_value(schema.key_schema, key, "key")
            validate_value(schema.value_schema, val, "value")
