"""BSON documents -> Connect schemas and Structs (Debezium's ``MongoDataConverter``).

Every field is optional. BSON types map to Connect as follows:

====================================  =============================================
NULL, STRING, JAVASCRIPT, OBJECT_ID,  STRING (an ObjectId as its hex text, a
DECIMAL128                            Decimal128 as its decimal text)
DOUBLE                                FLOAT64
INT32 / INT64                         INT32 / INT64
BOOLEAN                               BOOLEAN
BINARY                                BYTES
DATE_TIME, TIMESTAMP                  Timestamp (a BSON timestamp's seconds)
DOCUMENT                              STRUCT named ``<parent>.<key>``
REGULAR_EXPRESSION                    STRUCT ``io.debezium.mongodb.regex`` {regex, options}
JAVASCRIPT_WITH_SCOPE                 STRUCT ``<parent>.<key>`` {code, scope}
ARRAY, ``array`` encoding             ARRAY of the first element's type; elements
                                      must share one type (documents: one type per
                                      key, null allowed) -- an empty array is
                                      ``array<string>``
ARRAY, ``document`` encoding          STRUCT ``<parent>.<key>`` with fields ``_0``,
                                      ``_1``, ... one per element
UNDEFINED, SYMBOL, MIN_KEY, MAX_KEY,  left out
DB_POINTER
====================================  =============================================

A nested struct's name is its parent's name, a dot and its key; like the Java
converter, an unnamed parent reads as ``null`` (``null.address``).
"""

from __future__ import annotations

import enum
from typing import Any

from connector.api.errors import DataException
from connector.api.logical import Timestamp
from connector.api.schema import Schema, SchemaBuilder
from connector.api.struct import Struct
from smt.iceberg._bson import BsonType, BsonValue, datetime_of

SCHEMA_NAME_REGEX = "io.debezium.mongodb.regex"

OPTIONAL_TIMESTAMP = Timestamp.builder().optional().build()

_STRING_TYPES = (BsonType.NULL, BsonType.STRING, BsonType.JAVASCRIPT, BsonType.OBJECT_ID, BsonType.DECIMAL128)

_SCALAR_SCHEMAS: dict[BsonType, Schema] = {
    **{t: Schema.OPTIONAL_STRING_SCHEMA for t in _STRING_TYPES},
    BsonType.DOUBLE: Schema.OPTIONAL_FLOAT64_SCHEMA,
    BsonType.BINARY: Schema.OPTIONAL_BYTES_SCHEMA,
    BsonType.INT32: Schema.OPTIONAL_INT32_SCHEMA,
    BsonType.INT64: Schema.OPTIONAL_INT64_SCHEMA,
    BsonType.DATE_TIME: OPTIONAL_TIMESTAMP,
    BsonType.TIMESTAMP: OPTIONAL_TIMESTAMP,
    BsonType.BOOLEAN: Schema.OPTIONAL_BOOLEAN_SCHEMA,
}


class ArrayEncoding(enum.Enum):
    ARRAY = "array"
    DOCUMENT = "document"

    @classmethod
    def parse(cls, value: str | None, default: str | None = None) -> "ArrayEncoding | None":
        """The encoding named by ``value`` (case-insensitive), else by ``default``, else None."""
        for candidate in (value, default):
            if candidate is None:
                continue
            for option in cls:
                if option.value == candidate.strip().lower():
                    return option
        return None


def _child_name(parent: str | None, key: str) -> str:
    return f"{'null' if parent is None else parent}.{key}"


def element_name(index: int) -> str:
    """Field name of the ``index``-th element under the ``document`` array encoding."""
    return f"_{index}"


def scalar_value(value: BsonValue) -> Any:
    """The Connect value of a non-container BSON value (None for the types left out)."""
    t, v = value.type, value.value
    if t in (BsonType.STRING, BsonType.JAVASCRIPT, BsonType.OBJECT_ID, BsonType.DECIMAL128):
        return v
    if t in (BsonType.DOUBLE, BsonType.INT32, BsonType.INT64, BsonType.BOOLEAN):
        return v
    if t is BsonType.BINARY:
        return v[1]
    if t is BsonType.DATE_TIME:
        return datetime_of(v)
    if t is BsonType.TIMESTAMP:
        return datetime_of(v[0] * 1000)
    return None


class MongoDataConverter:
    """Builds Connect schemas from BSON documents and fills Structs of them."""

    def __init__(self, array_encoding: ArrayEncoding = ArrayEncoding.ARRAY):
        self.array_encoding = array_encoding

    # --- whole documents -----------------------------------------------------------

    def document_schema(self, doc: dict[str, BsonValue], name: str | None = None, *, optional: bool = False) -> Schema:
        """A struct schema named ``name`` with one field per (supported) member of ``doc``."""
        builder = SchemaBuilder.struct()
        if name is not None:
            builder.name(name)
        if optional:
            builder.optional()
        for key, value in doc.items():
            self.add_field_schema(key, value, builder, name)
        return builder.build()

    def document_struct(self, doc: dict[str, BsonValue], schema: Schema) -> Struct:
        """A Struct of ``schema`` (from :meth:`document_schema`) holding ``doc``'s values."""
        struct = Struct(schema)
        for key, value in doc.items():
            self.convert_field(key, value, struct, schema)
        return struct

    # --- schemas -------------------------------------------------------------------

    def field_schema(self, key: str, value: BsonValue, parent_name: str | None) -> Schema | None:
        """The schema of member ``key`` of a struct named ``parent_name`` (None: left out)."""
        t = value.type
        if t in _SCALAR_SCHEMAS:
            return _SCALAR_SCHEMAS[t]
        if t is BsonType.JAVASCRIPT_WITH_SCOPE:
            name = _child_name(parent_name, key)
            scope = self.document_schema(value.value[1], name + ".scope", optional=True)
            return (
                SchemaBuilder.struct().name(name)
                .field("code", Schema.OPTIONAL_STRING_SCHEMA)
                .field("scope", scope)
                .build()
            )
        if t is BsonType.REGULAR_EXPRESSION:
            return (
                SchemaBuilder.struct().name(SCHEMA_NAME_REGEX).optional()
                .field("regex", Schema.OPTIONAL_STRING_SCHEMA)
                .field("options", Schema.OPTIONAL_STRING_SCHEMA)
                .build()
            )
        if t is BsonType.DOCUMENT:
            return self.document_schema(value.value, _child_name(parent_name, key), optional=True)
        if t is BsonType.ARRAY:
            return self._array_field_schema(key, value.value, parent_name)
        return None

    def add_field_schema(self, key: str, value: BsonValue, builder: SchemaBuilder, parent_name: str | None) -> None:
        schema = self.field_schema(key, value, parent_name)
        if schema is not None:
            builder.field(key, schema)

    def _array_field_schema(self, key: str, elements: list[BsonValue], parent_name: str | None) -> Schema:
        name = _child_name(parent_name, key)
        if self.array_encoding is ArrayEncoding.DOCUMENT:
            builder = SchemaBuilder.struct().name(name).optional()
            for index, element in enumerate(elements):
                self.add_field_schema(element_name(index), element, builder, name)
            return builder.build()
        if not elements:
            return SchemaBuilder.array(Schema.OPTIONAL_STRING_SCHEMA).optional().build()
        value_type = elements[0].type
        self._check_homogenous(key, elements, value_type, parent_name)
        return SchemaBuilder.array(self._element_schema(key, value_type, elements, parent_name)).optional().build()

    def _check_homogenous(
        self, key: str, elements: list[BsonValue], value_type: BsonType, parent_name: str | None
    ) -> None:
        if value_type is BsonType.DOCUMENT:
            union: dict[str, BsonType] = {}
            for element in elements:
                if element.type is not BsonType.DOCUMENT:
                    raise self._not_homogenous(key, parent_name)
                for member, member_value in element.value.items():
                    self._check_member_type(member, member_value.type, union, parent_name)
        elif value_type is BsonType.ARRAY:
            for element in elements:
                if element.type is not BsonType.ARRAY or not element.value:
                    raise self._not_homogenous(key, parent_name)
                self._check_homogenous(key, element.value, element.value[0].type, parent_name)
        else:
            for element in elements:
                if element.type is not value_type:
                    raise self._not_homogenous(key, parent_name)

    @staticmethod
    def _not_homogenous(key: str, parent_name: str | None) -> DataException:
        return DataException(
            f"Field {key} of schema {parent_name} is not a homogenous array.\n"
            "Check option 'struct' of parameter 'array.encoding'"
        )

    @staticmethod
    def _check_member_type(member: str, current: BsonType, union: dict[str, BsonType], parent_name: str | None) -> None:
        previous = union.setdefault(member, current)
        if previous is current:
            return
        if previous is BsonType.NULL or current is BsonType.NULL:
            if previous is BsonType.NULL:
                union[member] = current  # the non-null type is the real one
            return
        raise DataException(
            f"Field {member} of schema {parent_name} is not the same type for all documents in the array.\n"
            "Check option 'struct' of parameter 'array.encoding'"
        )

    def _element_schema(
        self, key: str, value_type: BsonType, elements: list[BsonValue], parent_name: str | None
    ) -> Schema:
        if value_type in _SCALAR_SCHEMAS:
            return _SCALAR_SCHEMAS[value_type]
        if value_type is BsonType.DOCUMENT:
            # One struct for all the documents: the union of their members, each
            # typed by its first appearance; members that are only ever empty
            # documents or arrays count only if nothing else does.
            name = _child_name(parent_name, key)
            builder = SchemaBuilder.struct().name(name).optional()
            for skip_empty in (True, False):
                seen: dict[str, BsonType] = {}
                for element in elements:
                    for member, member_value in element.value.items():
                        if (
                            skip_empty
                            and member_value.type in (BsonType.DOCUMENT, BsonType.ARRAY)
                            and not member_value.value
                        ):
                            continue
                        if member not in seen:
                            seen[member] = member_value.type
                            self.add_field_schema(member, member_value, builder, name)
                        else:
                            self._check_member_type(member, member_value.type, seen, name)
                if builder.fields():
                    break
            return builder.build()
        if value_type is BsonType.ARRAY:
            first = elements[0].value
            return SchemaBuilder.array(self._element_schema(key, first[0].type, first, parent_name)).optional().build()
        raise DataException(f"The value type '{value_type.name} is not yet supported inside for a subSchema.")

    # --- values --------------------------------------------------------------------

    def convert_field(self, key: str, value: BsonValue, struct: Struct, schema: Schema) -> None:
        """Put member ``key`` of a document into ``struct`` (of ``schema``)."""
        t = value.type
        if t is BsonType.NULL:
            struct.put(key, None)
            return
        if t in _SCALAR_SCHEMAS:
            struct.put(key, scalar_value(value))
            return
        if t not in (BsonType.DOCUMENT, BsonType.ARRAY, BsonType.JAVASCRIPT_WITH_SCOPE, BsonType.REGULAR_EXPRESSION):
            return  # UNDEFINED, SYMBOL, MIN_KEY, MAX_KEY, DB_POINTER: left out
        field = schema.field(key)
        if field is None:
            raise DataException(f"Failed to find field '{key}' in schema {schema.name}")
        field_schema = field.schema
        if t is BsonType.DOCUMENT:
            struct.put(key, self.document_struct(value.value, field_schema))
        elif t is BsonType.REGULAR_EXPRESSION:
            regex = Struct(field_schema)
            regex.put("regex", value.value[0])
            regex.put("options", value.value[1])
            struct.put(key, regex)
        elif t is BsonType.JAVASCRIPT_WITH_SCOPE:
            code, scope = value.value
            scope_field = field_schema.field("scope")
            if scope_field is None:
                raise DataException(f"Failed to find field 'scope' in schema {field_schema.name}")
            js = Struct(field_schema)
            js.put("code", code)
            js.put("scope", self.document_struct(scope, scope_field.schema))
            struct.put(key, js)
        else:  # ARRAY
            struct.put(key, self._array_value(value.value, field_schema))

    def _array_value(self, elements: list[BsonValue], schema: Schema) -> Any:
        if self.array_encoding is ArrayEncoding.DOCUMENT:
            struct = Struct(schema)
            for index, element in enumerate(elements):
                self.convert_field(element_name(index), element, struct, schema)
            return struct
        if not elements:
            return []
        return self._list(elements, elements[0].type, schema.value_schema)

    def _list(self, elements: list[BsonValue], value_type: BsonType, element_schema: Schema | None) -> list:
        # Like the Java converter: elements of another type than the first are skipped.
        out: list = []
        for element in elements:
            if element.type is value_type:
                self._append_element(element, element_schema, out)
        return out

    def _append_element(self, element: BsonValue, element_schema: Schema | None, out: list) -> None:
        t = element.type
        if t is BsonType.DOCUMENT:
            if element_schema is None:
                raise DataException("Failed to find the schema of the array's documents")
            out.append(self.document_struct(element.value, element_schema))
        elif t is BsonType.ARRAY:
            inner: list = []
            inner_schema = element_schema.value_schema if element_schema is not None else None
            for item in element.value:
                self._append_element(item, inner_schema, inner)
            out.append(inner)
        elif t in _SCALAR_SCHEMAS and t is not BsonType.NULL:
            out.append(scalar_value(element))
