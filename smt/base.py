"""What Kafka's ``connect/transforms`` leans on, for the SMTs and predicates.

* ``Transformation`` / ``Predicate`` bases (their config handling is
  ``Configurable``) and the ``KeySide`` / ``ValueSide`` mixins that the
  ``$Key`` / ``$Value`` variants use to choose a side;
* ``StructOrMapTransformation``: the choice between the form for a value with a
  schema and the schemaless one, as Kafka's SMTs make it;
* ``SchemaUtil.copySchemaBasics``, the ``Requirements`` helpers, header schema
  checks (``ConnectHeaders``), ``replace.null.with.default``, a schemaless
  value's type (``ConnectSchema.schemaType``) and a temporal value's
  ``java.util.Date`` millis.

Config declaration is ``connector.api.config_def``; field paths are
``smt.field_path``; Java text, date formats and regexes are ``connector.api.java``.
Nothing here imports Spark or Arrow.
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar, Iterable, Mapping

from connector.api.config_def import ConfigDef, ConfigType
from connector.api.errors import DataException
from connector.api.java.strings import class_name
from connector.api.record import Header, SinkRecord
from connector.api.schema import (
    LOGICAL_TYPE_CLASSES,
    SCHEMA_TYPE_CLASSES,
    Field,
    Schema,
    SchemaBuilder,
    Type,
)
from connector.api.struct import Struct

# ======================================================================================
# Transformation and Predicate
# ======================================================================================


class Configurable:
    """What transformations and predicates share (Kafka's ``Configurable``, ``Closeable``).

    Subclasses declare ``CONFIG_DEF``; :meth:`configure` parses the config once
    against it and hands the typed values to :meth:`_configure`.
    """

    CONFIG_DEF: ConfigDef = ConfigDef()

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, config: Mapping[str, Any] | None) -> None:
        self._configure(self.config().parse(config))

    def _configure(self, config: dict[str, Any]) -> None:  # noqa: B027 - optional hook
        """Set up from the parsed config (override)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (override)."""


class Transformation(Configurable, abc.ABC):
    """A single message transform (``org.apache.kafka.connect.transforms.Transformation``).

    ``apply`` returns the transformed record, or None to drop it.
    """

    @abc.abstractmethod
    def apply(self, record: SinkRecord) -> SinkRecord | None:
        """Transform one record; None drops it."""

    def __repr__(self) -> str:
        return f"{type(self).__module__}:{type(self).__qualname__}"


class Predicate(Configurable, abc.ABC):
    """A condition on records (``org.apache.kafka.connect.transforms.predicates.Predicate``)."""

    @abc.abstractmethod
    def test(self, record: SinkRecord) -> bool:
        """Whether the record matches."""


class SidedTransformation(Transformation):
    """A transformation with ``$Key`` and ``$Value`` variants.

    The variants only choose the side: they mix :class:`KeySide` or
    :class:`ValueSide` in front of the concrete SMT class.
    """

    @abc.abstractmethod
    def operating_schema(self, record: SinkRecord) -> Schema | None:
        ...

    @abc.abstractmethod
    def operating_value(self, record: SinkRecord) -> Any:
        ...

    @abc.abstractmethod
    def new_record(self, record: SinkRecord, schema: Schema | None, value: Any,
                   headers: Iterable[Header] | None = None) -> SinkRecord:
        ...


class KeySide:
    """Operate on ``key`` / ``key_schema`` (the ``$Key`` variants)."""

    def operating_schema(self, record: SinkRecord) -> Schema | None:
        return record.key_schema

    def operating_value(self, record: SinkRecord) -> Any:
        return record.key

    def new_record(self, record: SinkRecord, schema: Schema | None, value: Any,
                   headers: Iterable[Header] | None = None) -> SinkRecord:
        return record.new_record(record.topic, record.kafka_partition, schema, value,
                                 record.value_schema, record.value, record.timestamp,
                                 None if headers is None else tuple(headers))


class ValueSide:
    """Operate on ``value`` / ``value_schema`` (the ``$Value`` variants)."""

    def operating_schema(self, record: SinkRecord) -> Schema | None:
        return record.value_schema

    def operating_value(self, record: SinkRecord) -> Any:
        return record.value

    def new_record(self, record: SinkRecord, schema: Schema | None, value: Any,
                   headers: Iterable[Header] | None = None) -> SinkRecord:
        return record.new_record(record.topic, record.kafka_partition, record.key_schema, record.key,
                                 schema, value, record.timestamp,
                                 None if headers is None else tuple(headers))


class StructOrMapTransformation(SidedTransformation):
    """A sided SMT with a form for values with a schema and one for schemaless values, chosen as Kafka's SMTs do.

    A null key/value is returned unchanged before either form looks at it; an SMT
    whose forms take a null too (MaskField, TimestampConverter) sets ``PASSES_NULL``
    to False. The Iceberg sink's transforms, which work on the value only, mix in
    :class:`ValueSide` alone.
    """

    PASSES_NULL: ClassVar[bool] = True

    def apply(self, record: SinkRecord) -> SinkRecord | None:
        if self.PASSES_NULL and self.operating_value(record) is None:
            return record
        if self.operating_schema(record) is None:
            return self.apply_schemaless(record)
        return self.apply_with_schema(record)

    @abc.abstractmethod
    def apply_schemaless(self, record: SinkRecord) -> SinkRecord | None:
        """The record whose key/value has no schema (a Map, usually); None drops it."""

    @abc.abstractmethod
    def apply_with_schema(self, record: SinkRecord) -> SinkRecord | None:
        """The record whose key/value has a schema (a Struct, usually); None drops it."""


# ======================================================================================
# SchemaUtil, Requirements, caching, headers, the types of values
# ======================================================================================


def copy_schema_basics(source: Schema, builder: SchemaBuilder | None = None) -> SchemaBuilder:
    """``SchemaUtil.copySchemaBasics``: a builder with the source's name, version, doc, parameters.

    Without a builder, one of the source's type is made (an ARRAY builder keeps
    the element schema; a MAP builder, which Kafka cannot make here, keeps its
    key and value schemas).
    """
    if builder is None:
        if source.type is Type.ARRAY:
            builder = SchemaBuilder.array(source.value_schema)
        elif source.type is Type.MAP:
            builder = SchemaBuilder.map(source.key_schema, source.value_schema)
        else:
            builder = SchemaBuilder(source.type)
    builder.name(source.name)
    builder.version(source.version)
    builder.doc(source.doc)
    if source.parameters is not None:
        builder.parameters(source.parameters)
    return builder


def struct_builder_with_fields(schema: Schema) -> SchemaBuilder:
    """A STRUCT builder with ``schema``'s basics and fields, for an SMT to add its new fields to."""
    builder = copy_schema_basics(schema, SchemaBuilder.struct())
    for field in schema.fields():
        builder.field(field.name, field.schema)
    return builder


def struct_with_fields_of(value: Struct, schema: Schema, with_default: bool = True) -> Struct:
    """A Struct of ``schema`` (``value``'s fields and new ones) holding ``value``'s fields, to put the new ones in.

    ``with_default``: read the fields with ``Struct.get`` (a null becomes the field's default).
    """
    updated = Struct(schema)
    for field in value.schema.fields():
        updated.put(field.name, field_value(value, field, with_default))
    return updated


def require_schema(schema: Schema | None, purpose: str) -> Schema:
    if schema is None:
        raise DataException(f"Schema required for [{purpose}]")
    return schema


def require_map(value: Any, purpose: str) -> dict:
    if not isinstance(value, dict):
        raise DataException(
            f"Only Map objects supported in absence of schema for [{purpose}], found: {class_name(value)}"
        )
    return value


def require_map_or_null(value: Any, purpose: str) -> dict | None:
    return None if value is None else require_map(value, purpose)


def require_struct(value: Any, purpose: str) -> Struct:
    if not isinstance(value, Struct):
        raise DataException(f"Only Struct objects supported for [{purpose}], found: {class_name(value)}")
    return value


def require_struct_or_null(value: Any, purpose: str) -> Struct | None:
    return None if value is None else require_struct(value, purpose)


def require_sink_record(record: Any, purpose: str) -> SinkRecord:
    if not isinstance(record, SinkRecord):
        raise DataException(f"Only SinkRecord supported for [{purpose}], found: {class_name(record)}")
    return record


REPLACE_NULL_WITH_DEFAULT = "replace.null.with.default"
REPLACE_NULL_WITH_DEFAULT_DOC = (
    "Whether to replace fields that have a default value and that are null to the default value. "
    "When set to true, the default value is used, otherwise null is used."
)


def replace_null_with_default(config_def: ConfigDef) -> ConfigDef:
    """Declare ``replace.null.with.default`` (BOOLEAN, default true)."""
    return config_def.define(REPLACE_NULL_WITH_DEFAULT, ConfigType.BOOLEAN, True, None, "medium",
                             REPLACE_NULL_WITH_DEFAULT_DOC)


def field_value(struct: Struct, field: Field | str, with_default: bool) -> Any:
    """``Struct.get`` (null replaced by the field default) or ``getWithoutDefault``."""
    return struct.get(field) if with_default else struct.get_without_default(field)


def schema_text(schema: Schema) -> str:
    """``ConnectSchema.toString()``: ``Schema{INT32}``, ``Schema{name:STRUCT}``."""
    return f"Schema{{{schema.name}:{schema.type.name}}}" if schema.name else f"Schema{{{schema.type.name}}}"


def checked_header(key: str, value: Any, schema: Schema | None) -> Header:
    """A header as ``ConnectHeaders.add(key, value, schema)`` makes it, with its schema check."""
    if schema is not None:
        if value is None:
            if not schema.optional:
                raise DataException(f"A null value requires an optional schema but was {schema_text(schema)}")
        else:
            allowed = SCHEMA_TYPE_CLASSES[schema.type] + LOGICAL_TYPE_CLASSES.get(schema.name or "", ())
            ok = isinstance(value, allowed)
            if ok and isinstance(value, bool) and schema.type is not Type.BOOLEAN:
                ok = False
            if not ok:
                raise DataException(
                    f"The value {value} is not compatible with the schema {schema_text(schema)}"
                )
    return Header(key, value, schema)


#: The types ``ConnectSchema.schemaType`` answers for a class, asked in this order (a bool is an int
#: too); Python has one int and one float class, which stand for INT64 and FLOAT64.
_INFERRED_TYPES = (Type.BOOLEAN, Type.INT64, Type.FLOAT64, Type.STRING, Type.BYTES, Type.ARRAY, Type.MAP, Type.STRUCT)


def infer_type(value: Any) -> Type | None:
    """The Connect type of a schemaless value, from its class (None when Connect's data API has none for it)."""
    for value_type in _INFERRED_TYPES:
        if isinstance(value, SCHEMA_TYPE_CLASSES[value_type]):
            return value_type
    return None
