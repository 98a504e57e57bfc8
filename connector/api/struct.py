"""``Struct``: a value of a STRUCT schema (``org.apache.kafka.connect.data.Struct``)."""

from __future__ import annotations

from typing import Any

from connector.api.errors import DataException
from connector.api.schema import Field, Schema, StructValue, Type, validate_value


class Struct(StructValue):
    """Field values of a struct schema, validated on ``put``.

    ``get`` returns a field's schema default when its value is null (as
    Kafka's ``Struct.get`` does); ``get_without_default`` returns the raw value,
    which ``replace.null.with.default=false`` relies on.
    """

    __slots__ = ("schema", "_values")

    def __init__(self, schema: Schema):
        if schema.type is not Type.STRUCT:
            raise DataException("Not a struct schema: " + repr(schema))
        self.schema = schema
        self._values: list[Any] = [None] * len(schema.fields())

    def _lookup(self, name_or_field: "str | Field") -> Field:
        if isinstance(name_or_field, Field):
            return name_or_field
        field = self.schema.field(name_or_field)
        if field is None:
            raise DataException(f"{name_or_field} is not a valid field name")
        return field

    def get(self, name_or_field: "str | Field") -> Any:
        field = self._lookup(name_or_field)
        value = self._values[field.index]
        if value is None and field.schema.default is not None:
            return field.schema.default
        return value

    def get_without_default(self, name_or_field: "str | Field") -> Any:
        return self._values[self._lookup(name_or_field).index]

    def put(self, name_or_field: "str | Field", value: Any) -> "Struct":
        field = self._lookup(name_or_field)
        validate_value(field.schema, value, field.name)
        self._values[field.index] = value
        return self

    def validate(self) -> None:
        """Raise :class:`DataException` if a required field is missing or a value is invalid."""
        for field in self.schema.fields():
            value = self._values[field.index]
            if value is None and field.schema.default is not None:
                value = field.schema.default
            validate_value(field.schema, value, field.name)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Struct)
            and self.schema == other.schema
            and self._values == other._values
        )

    def __hash__(self) -> int:
        return hash((self.schema, tuple(repr(v) for v in self._values)))

    def __repr__(self) -> str:
        parts = ",".join(
            f"{f.name}={self._values[f.index]!r}" for f in self.schema.fields()
        )
        return f"Struct{{{parts}}}"
