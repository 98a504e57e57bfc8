"""Partition specs from the sink's ``partition-by`` settings.

``iceberg.tables.default-partition-by`` / ``iceberg.table.<name>.partition-by``
hold a comma-separated list in which commas inside parentheses do not split
(``bucket(id, 16), days(ts), region``). Each term is one of:

* ``year(col)``/``years``, ``month(col)``/``months``, ``day(col)``/``days``,
  ``hour(col)``/``hours``;
* ``bucket(col, N)`` and ``truncate(col, W)`` (column first, as in Java's API);
* a bare column name: identity.

Columns are looked up by their full dotted name (``payload.ts`` for a field of
a struct column). Partition fields are named as Java names them
(``ts_day``, ``id_bucket``, ``name_trunc``; identity keeps the column name).

Unlike the Java sink, which logs an invalid spec and creates the table
unpartitioned, :func:`partition_spec_for` raises :class:`ConfigException`: a
table silently created without the partitioning a user asked for cannot be
repartitioned cheaply later, and the error names the setting to fix.
"""

from __future__ import annotations

import re
from typing import Callable

from pyiceberg.partitioning import PARTITION_FIELD_ID_START, PartitionField, PartitionSpec
from pyiceberg.schema import Schema, build_position_accessors, index_by_name
from pyiceberg.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    Transform,
    TruncateTransform,
    YearTransform,
)
from pyiceberg.types import NestedField

from connector.api.errors import ConfigException

DEFAULT_PARTITION_BY_KEY = "iceberg.tables.default-partition-by"

# Java's ",(?![^()]*+\))"; the possessive quantifier changes nothing here, since
# [^()] cannot match the ")" it would give back, so the plain form is equivalent.
_TRANSFORM = re.compile(r"(\w+)\((.+)\)")

_TIME_TRANSFORMS: dict[str, tuple[Callable[[], Transform], str]] = {
    "year": (YearTransform, "year"),
    "years": (YearTransform, "year"),
    "month": (MonthTransform, "month"),
    "months": (MonthTransform, "month"),
    "day": (DayTransform, "day"),
    "days": (DayTransform, "day"),
    "hour": (HourTransform, "hour"),
    "hours": (HourTransform, "hour"),
}


def table_partition_by_key(table_name: str) -> str:
    """The per-table setting key, ``iceberg.table.<name>.partition-by``."""
    return f"iceberg.table.{table_name}.partition-by"


def partition_spec_for(
    schema: Schema, fields: list[str], *, config_key: str = DEFAULT_PARTITION_BY_KEY
) -> PartitionSpec:
    """The partition spec for ``fields`` over ``schema``; ConfigException if any term is invalid.

    ``config_key`` names the setting the terms came from, for error messages.
    """
    partition_fields: list[PartitionField] = []
    for term in fields:
        field = _partition_field(schema, term, config_key, PARTITION_FIELD_ID_START + len(partition_fields))
        if any(existing.name == field.name for existing in partition_fields):
            raise ConfigException(config_key, term, f"partition field name '{field.name}' is used more than once")
        partition_fields.append(field)
    return PartitionSpec(*partition_fields)


def _partition_field(schema: Schema, term: str, config_key: str, field_id: int) -> PartitionField:
    match = _TRANSFORM.fullmatch(term)
    transform: Transform
    suffix: str | None
    if match is None:
        column, transform, suffix = term, IdentityTransform(), None
    else:
        column, transform, suffix = _parse_transform(match.group(1), match.group(2), term, config_key)
    source = _source_field(schema, column, term, config_key)
    if not transform.can_transform(source.field_type):
        raise ConfigException(
            config_key,
            term,
            f"transform {transform} cannot be applied to column '{column}' of type {source.field_type}",
        )
    name = column if suffix is None else f"{column}_{suffix}"
    return PartitionField(source_id=source.field_id, field_id=field_id, transform=transform, name=name)


def _parse_transform(
    name: str, arguments: str, term: str, config_key: str
) -> tuple[str, Transform, str]:
    if name in _TIME_TRANSFORMS:
        transform_class, suffix = _TIME_TRANSFORMS[name]
        return arguments.strip(), transform_class(), suffix
    if name in ("bucket", "truncate"):
        column, width = _column_and_width(arguments, term, config_key)
        if name == "bucket":
            return column, BucketTransform(num_buckets=width), "bucket"
        return column, TruncateTransform(width=width), "trunc"
    raise ConfigException(
        config_key,
        term,
        f"unsupported transform '{name}' (use year, month, day, hour, bucket, truncate or a column name)",
    )


def _column_and_width(arguments: str, term: str, config_key: str) -> tuple[str, int]:
    parts = arguments.split(",")
    if len(parts) != 2:
        raise ConfigException(config_key, term, f"invalid argument {arguments}, should have 2 parts: (column, number)")
    column, width = parts[0].strip(), parts[1].strip()
    if not width.isdigit() or int(width) <= 0:
        raise ConfigException(config_key, term, f"'{width}' is not a positive integer")
    return column, int(width)


def _source_field(schema: Schema, column: str, term: str, config_key: str) -> NestedField:
    try:
        field = schema.find_field(column)
    except ValueError:
        columns = ", ".join(sorted(index_by_name(schema)))
        raise ConfigException(config_key, term, f"no column '{column}' in the table schema ({columns})") from None
    if not field.field_type.is_primitive:
        raise ConfigException(config_key, term, f"column '{column}' is a {field.field_type}, not a primitive")
    if field.field_id not in build_position_accessors(schema):
        raise ConfigException(config_key, term, f"column '{column}' is inside a list or map")
    return field
