"""Unions and enums as Connect schemas, in a format's own names or Connect's generalized ones.

With ``generalized.sum.type.support`` a union is a struct named
``connect_union_<i>`` (parameter ``org.apache.kafka.connect.data.Union``) with
fields ``connect_union_field_<i>``, and an enum a string whose parameter
``org.apache.kafka.connect.data.Enum`` names it; without, each format uses its
own names (``io.confluent.connect.avro.Enum``, ...).
"""

from __future__ import annotations

from typing import Iterable, Mapping

from connector.api.schema import Schema
from converters.confluent.connect_names import (
    GENERALIZED_TYPE_ENUM,
    GENERALIZED_TYPE_UNION,
    GENERALIZED_TYPE_UNION_FIELD_PREFIX,
    GENERALIZED_TYPE_UNION_PREFIX,
)


def generalized_union_name(index: int) -> str:
    """The name of the ``index``-th generalized union of a schema (``connect_union_<index>``)."""
    return GENERALIZED_TYPE_UNION_PREFIX + str(index)


def generalized_union_field_name(index: int) -> str:
    """The name of a generalized union's ``index``-th member field (``connect_union_field_<index>``)."""
    return GENERALIZED_TYPE_UNION_FIELD_PREFIX + str(index)


def is_generalized_union(schema: Schema) -> bool:
    """Whether ``schema`` carries the generalized union parameter."""
    return GENERALIZED_TYPE_UNION in (schema.parameters or {})


def is_union(schema: Schema, format_union: str) -> bool:
    """Whether ``schema`` is a union struct: named as the format names its unions, or generalized."""
    return schema.name == format_union or is_generalized_union(schema)


def enum_parameter(generalized: bool, format_enum: str) -> str:
    """The parameter naming an enum and prefixing its symbols: Connect's or the format's."""
    return GENERALIZED_TYPE_ENUM if generalized else format_enum


def is_enum(parameters: Mapping[str, str], format_enum: str) -> bool:
    """Whether schema ``parameters`` mark an enum, in either naming."""
    return GENERALIZED_TYPE_ENUM in parameters or format_enum in parameters


def enum_symbols(parameters: Mapping[str, str], param: str) -> dict[str, str]:
    """The symbols of an enum (``<param>.<symbol>`` parameters), in order, to their values."""
    prefix = param + "."
    return {key[len(prefix):]: value for key, value in parameters.items()
            if key.startswith(prefix)}


class SumTypes:
    """One format's unions and enums, in its names (``format_enum``, ``format_union``) or generalized ones.

    ``generalized`` is the data class's ``generalized.sum.type.support``.
    """

    def __init__(self, format_enum: str, format_union: str, generalized: bool):
        self.format_enum = format_enum
        self.format_union = format_union
        self.generalized = generalized
        #: The parameter that names an enum and prefixes its symbols.
        self.enum_parameter = enum_parameter(generalized, format_enum)

    def is_enum(self, parameters: Mapping[str, str]) -> bool:
        """Whether schema ``parameters`` mark an enum, in either naming."""
        return is_enum(parameters, self.format_enum)

    def enum_parameters(self, name: str, symbols: Iterable[str]) -> dict[str, str]:
        """An enum's schema parameters: its ``name``, then each symbol's index (generalized) or the symbol."""
        parameters = {self.enum_parameter: name}
        for index, symbol in enumerate(symbols):
            parameters[f"{self.enum_parameter}.{symbol}"] = str(index) if self.generalized else symbol
        return parameters

    def enum_symbols(self, parameters: Mapping[str, str]) -> dict[str, str]:
        """The symbols of an enum with these schema ``parameters``, in order, to their values."""
        return enum_symbols(parameters, self.enum_parameter)

    def union(self, index: int) -> tuple[str, dict[str, str]]:
        """The name and schema parameters of a schema's ``index``-th union struct."""
        if not self.generalized:
            return self.format_union, {}
        name = generalized_union_name(index)
        return name, {GENERALIZED_TYPE_UNION: name}

    def is_union(self, schema: Schema) -> bool:
        """Whether ``schema`` is a union struct, in either naming."""
        return is_union(schema, self.format_union)
