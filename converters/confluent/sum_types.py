"""Unions and enums as Connect schemas, in a format's own names or Connect's generalized ones.

With ``generalized.sum.type.support`` a union is a struct named
``connect_union_<i>`` (parameter ``org.apache.kafka.connect.data.Union``) with
fields ``connect_union_field_<i>``, and an enum a string whose parameter
``org.apache.kafka.connect.data.Enum`` names it; without, each format uses its
own names (``io.confluent.connect.avro.Enum``, ...).
"""

from __future__ import annotations

from typing import Mapping

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
