"""The Iceberg sink's settings (``IcebergSinkConfig`` and per-table ``TableSinkConfig``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Iterator, Mapping

from connector.api.config_def import ConfigDef, ConfigType, at_least, parse_type
from connector.api.errors import ConfigException
from connector.config.connect_config import prefixed
from connector.config.key_fields import from_values, key_field
from connector.config.table_names import table_name_problem

DEFAULT_COMMIT_INTERVAL_MS = 300_000

#: The Iceberg sink's own keys (``IcebergSinkConfig``); per-table and prefixed keys are matched below.
ICEBERG_CONFIG = (
    ConfigDef()
    .define("iceberg.tables", ConfigType.LIST, [], importance="high",
            doc="destination tables (`ns.table`, comma-separated). Without a route field every record "
                "goes to every table. A name needs a namespace (`db.events`, `a.b.events`), no empty part "
                "(`db..x`, `db.x.`) and holds letters, digits, `_` and `-` only (no spaces, `/` or other "
                "characters a catalog would turn into paths; with `hive` or Glue, no `-` either); "
                "`validate` and `run` refuse other names, naming the reason")
    .define("iceberg.tables.dynamic-enabled", ConfigType.BOOLEAN, False, importance="medium",
            doc="route each record to the table named by its `route-field` value (lower-cased). Without "
                "`auto-create-enabled`, a record routed to a table that does not exist is skipped, as the Java "
                "sink does, and counted in a warning (at most once a minute per table and task). A value "
                "that names no table by the rules of `iceberg.tables` is that record's failure (`TASK_PUT`: "
                "`errors.tolerance` and the DLQ apply)")
    .define("iceberg.tables.route-field", ConfigType.STRING, None, importance="medium",
            doc="field (dotted path into nested structs/maps) holding the routing value")
    .define("iceberg.tables.default-commit-branch", ConfigType.STRING, None, importance="medium",
            doc="branch the commits go to; unset: `main`. The first commit creates the branch, also on a "
                "table without snapshots (then `main` stays empty, as with the Java sink)")
    .define("iceberg.tables.default-id-columns", ConfigType.STRING, None, importance="medium",
            doc="id columns of every table (comma-separated; nested ones by dotted path): the keys of upsert "
                "and CDC tables, and the identifier fields of the upsert and CDC tables icefloe creates. An "
                "append-only connector's auto-created tables get no identifier fields, as with the Java sink")
    .define("iceberg.tables.default-partition-by", ConfigType.STRING, None, importance="medium",
            doc="partition spec of auto-created tables: `year(c)`/`years`, `month(c)`, `day(c)`, `hour(c)`, "
                "`bucket(c, N)`, `truncate(c, W)`, or a column name (identity); comma-separated, commas "
                "inside parentheses are kept. Unlike the Java sink, a bad spec fails the job instead of "
                "silently creating an unpartitioned table")
    .define("iceberg.tables.auto-create-enabled", ConfigType.BOOLEAN, False, importance="medium",
            doc="create missing tables from the first record's schema (Connect schema, or inferred from "
                "schemaless JSON)")
    .define("iceberg.tables.evolve-schema-enabled", ConfigType.BOOLEAN, False, importance="medium",
            doc="add missing columns (nested too), widen int→long and float→double, make required "
                "columns optional")
    .define("iceberg.tables.schema-force-optional", ConfigType.BOOLEAN, False, importance="medium",
            doc="generated columns are all optional")
    .define("iceberg.tables.schema-case-insensitive", ConfigType.BOOLEAN, False, importance="medium",
            doc="match record fields to columns ignoring case")
    .define("iceberg.catalog", ConfigType.STRING, "iceberg", importance="medium", doc="catalog name")
    .define("iceberg.control.topic", ConfigType.STRING, "control-iceberg", importance="medium",
            doc="icefloe coordinates through Spark, not a control topic; it reads this topic only to take "
                "over from a Java sink (docs/migration.md) and never moves the Java sinks' snapshot key "
                "for it backwards")
    .define("iceberg.control.group-id", ConfigType.STRING, None, importance="low",
            doc="Tabular's sink only: its consumer group of source offsets (unset: `cg-control-<name>`), "
                "where a takeover from the Tabular sink resumes, before `connect-<name>`")
    .define("iceberg.control.group-id-prefix", ConfigType.STRING, "cg-control-", importance="low",
            doc="Apache's sink only (its workers' transient control-topic consumer groups). No effect in icefloe, "
                "which joins no control-topic group: a value other than the default is reported at start and by "
                "`icefloe validate`")
    .define("iceberg.control.commit.interval-ms", ConfigType.INT, DEFAULT_COMMIT_INTERVAL_MS, at_least(1),
            "medium", "streaming mode: start a commit cycle this often")
    .define("iceberg.control.commit.timeout-ms", ConfigType.INT, 30_000, at_least(1), "medium",
            "how long a commit cycle reads before it commits (`icefloe run` and the REST worker): a task still "
            "reading this long after the cycle started finishes the batch in hand, reads at most one batch of "
            "each range it has not begun, and stops; the cycle commits what its tasks reached (a partial "
            "commit, as the Java coordinator commits what its workers finished) and the next cycle reads on "
            "from there. A backfill cycle that splits one partition's range over several tasks reads all of it "
            "(`icefloe.commit.max-records` bounds it). Not used by the `icefloe-iceberg` Spark format, whose "
            "micro-batches Spark's trigger decides")
    .define("iceberg.control.commit.threads", ConfigType.INT, None, importance="medium",
            doc="the Java coordinator's commit threads (unset there: 2 × the cores). No effect in icefloe, "
                "which commits a cycle's tables one after another: any value is reported at start and by "
                "`icefloe validate`")
    .define("iceberg.coordinator-executor-keep-alive-timeout-ms", ConfigType.LONG, 120_000, importance="low",
            doc="Apache's sink only (keep-alive of its commit threads). No effect in icefloe: a value other "
                "than the default is reported at start and by `icefloe validate`")
    .define("iceberg.connect.group-id", ConfigType.STRING, None, importance="low",
            doc="consumer group whose offsets mirror the table's, and the suffix of the snapshot offset "
                "keys; unset: `connect-<name>`")
    .define("iceberg.tables.cdc-field", ConfigType.STRING, None, importance="medium",
            doc="field holding each record's operation (a dotted path into nested structs/maps, e.g. `_cdc.op` "
                "as DebeziumTransform and DmsTransform write it); turns on upsert mode. Its first letter, "
                "trimmed and upper-cased: `I`, `R`, `C` insert, `U` update (both replace the key's row), `D` "
                "delete. Unlike Tabular's sink, any other value, null or empty fails the record (or sends it "
                "to the DLQ with `errors.tolerance=all`) instead of inserting it. See \"Upsert and CDC "
                "tables\" below")
    .define("iceberg.tables.upsert-mode-enabled", ConfigType.BOOLEAN, False, importance="medium",
            doc="every record replaces the table's row with the same id columns (one row per key after each "
                "commit, the latest in offset order). Also on when `cdc-field` is set. Id columns: "
                "`iceberg.table.<table>.id-columns`, else `default-id-columns`, else the table's identifier "
                "fields. See \"Upsert and CDC tables\" below")
    .define("iceberg.hadoop-conf-dir", ConfigType.STRING, None, importance="medium",
            doc="the Java sink's Hadoop configuration folder (`core-site.xml`, `hive-site.xml`, ...). No effect "
                "in icefloe, whose catalogs read no Hadoop configuration (set `iceberg.catalog.*` instead): a "
                "value is reported at start and by `icefloe validate`, as are `iceberg.hadoop.*` and "
                "`iceberg.kafka.*` keys")
    .define("iceberg.coordinator.transactional.prefix", ConfigType.STRING, "", importance="low",
            doc="Apache's sink only (prefix of its coordinator's `transactional.id`). No effect in icefloe, "
                "which writes no control-topic transactions: a value is reported at start and by "
                "`icefloe validate`")
)

TABLE_KEY_PATTERN = re.compile(
    r"^iceberg\.table\.(?P<table>.+)\.(?P<key>route-regex|id-columns|partition-by|commit-branch)$"
)
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


_iceberg_key = partial(key_field, ICEBERG_CONFIG)


@dataclass(frozen=True, kw_only=True)
class IcebergConfig:
    tables: tuple[str, ...]
    dynamic_enabled: bool = _iceberg_key("iceberg.tables.dynamic-enabled")
    route_field: str | None = _iceberg_key("iceberg.tables.route-field")
    auto_create: bool = _iceberg_key("iceberg.tables.auto-create-enabled")
    evolve_schema: bool = _iceberg_key("iceberg.tables.evolve-schema-enabled")
    force_optional: bool = _iceberg_key("iceberg.tables.schema-force-optional")
    case_insensitive: bool = _iceberg_key("iceberg.tables.schema-case-insensitive")
    commit_interval_ms: int = _iceberg_key("iceberg.control.commit.interval-ms")
    commit_timeout_ms: int = _iceberg_key("iceberg.control.commit.timeout-ms")
    catalog_name: str = _iceberg_key("iceberg.catalog")
    catalog_properties: dict[str, str]
    auto_create_props: dict[str, str]
    write_props: dict[str, str]
    default_partition_by: tuple[str, ...]
    default_id_columns: tuple[str, ...]
    default_commit_branch: str | None = _iceberg_key("iceberg.tables.default-commit-branch")
    connect_group_id: str | None = _iceberg_key("iceberg.connect.group-id")
    control_topic: str = _iceberg_key("iceberg.control.topic")
    control_group_id: str | None = _iceberg_key("iceberg.control.group-id")  # Tabular's
    table_overrides: Mapping[str, dict[str, str]] = field(default_factory=dict)
    upsert_mode: bool = _iceberg_key("iceberg.tables.upsert-mode-enabled")
    cdc_field: str | None = None  # iceberg.tables.cdc-field (a dotted path), None when unset or blank

    def upsert_table(self, table: str) -> bool:
        """Whether ``table`` is written in upsert mode: one row per key, replaced or deleted by each record.

        Connector-wide, as in Tabular's sink: either key turns it on for every table.
        """
        return self.upsert_mode or self.cdc_field is not None

    def table_config(self, table: str) -> TableConfig:
        own = self.table_overrides.get(table, {})
        partition_key = (f"iceberg.table.{table}.partition-by" if "partition-by" in own
                         else "iceberg.tables.default-partition-by")
        regex = own.get("route-regex")
        return TableConfig(
            name=table,
            route_regex=re.compile(regex) if regex else None,
            id_columns=_id_columns(f"iceberg.table.{table}.id-columns", own["id-columns"]) if "id-columns" in own
            else self.default_id_columns,
            partition_by=tuple(split_partition_by(own["partition-by"])) if "partition-by" in own
            else self.default_partition_by,
            partition_by_key=partition_key,
            commit_branch=own.get("commit-branch", self.default_commit_branch),
        )


def existing_tables(catalog: Any, config: IcebergConfig) -> Iterator[tuple[str, Any, str | None]]:
    """(name, table, the branch the connector commits to) of each static table (``iceberg.tables``) that
    ``catalog`` holds; one not created yet is passed over."""
    from pyiceberg.exceptions import NoSuchTableError

    for name in config.tables:
        try:
            table = catalog.load_table(name)
        except NoSuchTableError:
            continue
        yield name, table, config.table_config(name).commit_branch


_PARTITION_TERM_SEPARATOR = re.compile(r",(?![^()]*\))")  # a comma outside a transform's parentheses


def split_partition_by(text: str | None) -> list[str]:
    """Split a partition-by setting on commas outside parentheses; trimmed, empties dropped."""
    if not text:
        return []
    return [part.strip() for part in _PARTITION_TERM_SEPARATOR.split(text) if part.strip()]


def parse_iceberg_config(props: Mapping[str, Any]) -> IcebergConfig:
    """Validate the ``iceberg.*`` keys as the Iceberg sink's ``validate()`` does."""
    values = ICEBERG_CONFIG.parse(props)
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
    cdc_field = _cdc_field(values["iceberg.tables.cdc-field"])
    overrides = _table_overrides(props)
    _check_table_names(tables, overrides, catalog_props)
    for table, own in overrides.items():
        if "route-regex" in own:
            _check_regex(f"iceberg.table.{table}.route-regex", own["route-regex"])
    write_props = {**prefixed(props, "iceberg.table.write-props."), **prefixed(props, "iceberg.tables.write-props.")}
    file_format = write_props.get("write.format.default", "parquet")
    if file_format.strip().lower() != "parquet":
        raise ConfigException("iceberg.tables.write-props.write.format.default", file_format,
                              "icefloe writes Parquet data files only")
    return from_values(
        IcebergConfig, values,
        tables=tables,
        catalog_properties=catalog_props,
        auto_create_props=prefixed(props, "iceberg.tables.auto-create-props."),
        write_props=write_props,
        default_partition_by=tuple(split_partition_by(values["iceberg.tables.default-partition-by"] or "")),
        default_id_columns=_id_columns("iceberg.tables.default-id-columns",
                                       values["iceberg.tables.default-id-columns"] or ""),
        table_overrides=overrides,
        cdc_field=cdc_field,
    )


def _check_table_names(tables: tuple[str, ...], overrides: Mapping[str, dict[str, str]],
                       catalog_props: Mapping[str, str]) -> None:
    for table in tables:
        problem = table_name_problem(table, catalog_props)
        if problem:
            raise ConfigException("iceberg.tables", table, f"not a table name: {problem}")
    for table, own in overrides.items():
        problem = table_name_problem(table, catalog_props)
        if problem:
            key = f"iceberg.table.{table}.{next(iter(own))}"
            raise ConfigException(key, own[next(iter(own))], f"`{table}` is not a table name: {problem}")


def _table_overrides(props: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    overrides: dict[str, dict[str, str]] = {}
    for key, value in props.items():
        match = TABLE_KEY_PATTERN.match(key)
        if match and not key.startswith("iceberg.table.write-props."):
            overrides.setdefault(match["table"], {})[match["key"]] = str(value)
    return overrides


def _id_columns(key: str, text: str) -> tuple[str, ...]:
    # Declared as a STRING (as in the Java sink), read as a comma-separated list.
    return tuple(parse_type(key, text, ConfigType.LIST))


def _cdc_field(value: str | None) -> str | None:
    """The cdc-field path; blank means unset (as a blank route field does), empty path segments are refused."""
    if value is None or not value.strip():
        return None
    path = value.strip()
    if any(not part for part in path.split(".")):
        raise ConfigException("iceberg.tables.cdc-field", value,
                              "a field path such as `_cdc.op` or `op` (dots separate nested fields)")
    return path


def _check_regex(key: str, value: str) -> None:
    try:
        re.compile(value)
    except re.error as exc:
        raise ConfigException(key, value, f"Invalid regex: {exc}") from None


def is_iceberg_key(key: str) -> bool:
    """Whether the Iceberg sink recognises ``key`` (for the unused-keys report)."""
    return key in ICEBERG_CONFIG or key.startswith(PREFIX_KEYS) or bool(TABLE_KEY_PATTERN.match(key))
