"""The Iceberg sink's settings (``IcebergSinkConfig`` and per-table ``TableSinkConfig``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from connector.api.errors import ConfigException
from connector.config.connect_config import prefixed
from connector.config.definitions import ConfigKey, ConfigType, at_least, parse_config, split_list

DEFAULT_COMMIT_INTERVAL_MS = 300_000

ICEBERG_KEYS: dict[str, ConfigKey] = {
    k.name: k
    for k in (
        ConfigKey("iceberg.tables", ConfigType.LIST, [], "Destination tables (ns.table, comma-separated)."),
        ConfigKey("iceberg.tables.dynamic-enabled", ConfigType.BOOLEAN, False,
                  "Route each record to the table named by the route field."),
        ConfigKey("iceberg.tables.route-field", ConfigType.STRING, None, "Field holding the routing value."),
        ConfigKey("iceberg.tables.default-commit-branch", ConfigType.STRING, None, "Branch to commit to."),
        ConfigKey("iceberg.tables.default-id-columns", ConfigType.STRING, None, "Identifier columns."),
        ConfigKey("iceberg.tables.default-partition-by", ConfigType.STRING, None,
                  "Partition spec for auto-created tables."),
        ConfigKey("iceberg.tables.auto-create-enabled", ConfigType.BOOLEAN, False, "Create missing tables."),
        ConfigKey("iceberg.tables.evolve-schema-enabled", ConfigType.BOOLEAN, False,
                  "Add columns, widen types, make columns optional."),
        ConfigKey("iceberg.tables.schema-force-optional", ConfigType.BOOLEAN, False,
                  "Make generated columns optional."),
        ConfigKey("iceberg.tables.schema-case-insensitive", ConfigType.BOOLEAN, False,
                  "Match record fields to columns ignoring case."),
        ConfigKey("iceberg.catalog", ConfigType.STRING, "iceberg", "Catalog name."),
        ConfigKey("iceberg.control.topic", ConfigType.STRING, "control-iceberg",
                  "Accepted for compatibility; icefloe coordinates through Spark, not a control topic."),
        ConfigKey("iceberg.control.group-id-prefix", ConfigType.STRING, "cg-control-",
                  "Accepted for compatibility."),
        ConfigKey("iceberg.control.commit.interval-ms", ConfigType.INT, DEFAULT_COMMIT_INTERVAL_MS,
                  "Commit interval in streaming mode.", at_least(1)),
        ConfigKey("iceberg.control.commit.timeout-ms", ConfigType.INT, 30_000,
                  "Accepted for compatibility."),
        ConfigKey("iceberg.control.commit.threads", ConfigType.INT, 0, "Accepted for compatibility."),
        ConfigKey("iceberg.connect.group-id", ConfigType.STRING, None,
                  "Consumer group whose offsets are committed; default connect-<name>."),
        ConfigKey("iceberg.hadoop-conf-dir", ConfigType.STRING, None, "Accepted for compatibility."),
        ConfigKey("iceberg.coordinator.transactional.prefix", ConfigType.STRING, "",
                  "Accepted for compatibility."),
    )
}

TABLE_KEY_PATTERN = re.compile(r"^iceberg\.table\.(?P<table>.+)\.(?P<key>route-regex|id-columns|partition-by|commit-branch)$")
PREFIX_KEYS = (
    "iceberg.catalog.", "iceberg.tables.auto-create-props.", "iceberg.tables.write-props.",
    "iceberg.table.write-props.", "iceberg.hadoop.", "iceberg.kafka.",
)


@dataclass(frozen=True)
class TableConfig:
    """Per-table settings (``iceberg.table.<name>.*`` with the defaults applied)."""

    name: str
    route_regex: re.Pattern[str] | None
    id_columns: tuple[str, ...]
    partition_by: tuple[str, ...]
    partition_by_key: str
    commit_branch: str | None


@dataclass(frozen=True)
class IcebergConfig:
    tables: tuple[str, ...]
    dynamic_enabled: bool
    route_field: str | None
    auto_create: bool
    evolve_schema: bool
    force_optional: bool
    case_insensitive: bool
    commit_interval_ms: int
    catalog_name: str
    catalog_properties: dict[str, str]
    auto_create_props: dict[str, str]
    write_props: dict[str, str]
    default_partition_by: tuple[str, ...]
    default_id_columns: tuple[str, ...]
    default_commit_branch: str | None
    connect_group_id: str | None
    table_overrides: Mapping[str, dict[str, str]] = field(default_factory=dict)

    def table_config(self, table: str) -> TableConfig:
        from connector.data.partition_spec import split_partition_by

        own = self.table_overrides.get(table, {})
        partition_key = (f"iceberg.table.{table}.partition-by" if "partition-by" in own
                         else "iceberg.tables.default-partition-by")
        regex = own.get("route-regex")
        return TableConfig(
            name=table,
            route_regex=re.compile(regex) if regex else None,
            id_columns=tuple(split_list(own["id-columns"])) if "id-columns" in own else self.default_id_columns,
            partition_by=tuple(split_partition_by(own["partition-by"])) if "partition-by" in own
            else self.default_partition_by,
            partition_by_key=partition_key,
            commit_branch=own.get("commit-branch", self.default_commit_branch),
        )


def parse_iceberg_config(props: Mapping[str, Any]) -> IcebergConfig:
    """Validate the ``iceberg.*`` keys as the Iceberg sink's ``validate()`` does."""
    from connector.data.partition_spec import split_partition_by

    values = parse_config(ICEBERG_KEYS, props)
    catalog_props = prefixed(props, "iceberg.catalog.")
    tables = tuple(values["iceberg.tables"])
    dynamic = values["iceberg.tables.dynamic-enabled"]
    route_field = values["iceberg.tables.route-field"]
    if not catalog_props:
        raise ConfigException("Must specify Iceberg catalog properties (iceberg.catalog.*)")
    if tables and dynamic:
        raise ConfigException("Cannot specify both static and dynamic table names "
                              "(iceberg.tables and iceberg.tables.dynamic-enabled)")
    if dynamic and not route_field:
        raise ConfigException("Must specify a route field if using dynamic table names "
                              "(iceberg.tables.route-field)")
    if not tables and not dynamic:
        raise ConfigException("Must specify table name(s) (iceberg.tables)")
    overrides = _table_overrides(props)
    for table, own in overrides.items():
        if "route-regex" in own:
            _check_regex(f"iceberg.table.{table}.route-regex", own["route-regex"])
    write_props = {**prefixed(props, "iceberg.table.write-props."), **prefixed(props, "iceberg.tables.write-props.")}
    return IcebergConfig(
        tables=tables,
        dynamic_enabled=dynamic,
        route_field=route_field,
        auto_create=values["iceberg.tables.auto-create-enabled"],
        evolve_schema=values["iceberg.tables.evolve-schema-enabled"],
        force_optional=values["iceberg.tables.schema-force-optional"],
        case_insensitive=values["iceberg.tables.schema-case-insensitive"],
        commit_interval_ms=values["iceberg.control.commit.interval-ms"],
        catalog_name=values["iceberg.catalog"],
        catalog_properties=catalog_props,
        auto_create_props=prefixed(props, "iceberg.tables.auto-create-props."),
        write_props=write_props,
        default_partition_by=tuple(split_partition_by(values["iceberg.tables.default-partition-by"] or "")),
        default_id_columns=tuple(split_list(values["iceberg.tables.default-id-columns"])),
        default_commit_branch=values["iceberg.tables.default-commit-branch"],
        connect_group_id=values["iceberg.connect.group-id"],
        table_overrides=overrides,
    )


def _table_overrides(props: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    overrides: dict[str, dict[str, str]] = {}
    for key, value in props.items():
        match = TABLE_KEY_PATTERN.match(key)
        if match and not key.startswith("iceberg.table.write-props."):
            overrides.setdefault(match["table"], {})[match["key"]] = str(value)
    return overrides


def _check_regex(key: str, value: str) -> None:
    try:
        re.compile(value)
    except re.error as exc:
        raise ConfigException(key, value, f"Invalid regex: {exc}") from None


def is_iceberg_key(key: str) -> bool:
    """Whether the Iceberg sink recognises ``key`` (for the unused-keys report)."""
    return key in ICEBERG_KEYS or key.startswith(PREFIX_KEYS) or bool(TABLE_KEY_PATTERN.match(key))
