"""icefloe's own connector keys (``icefloe.*``): what Kafka Connect and the Iceberg sink have no key for."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Mapping

from connector.api.config_def import ConfigDef, ConfigType, at_least, valid_string
from connector.config.key_fields import from_values, key_field

COMMIT_MAX_RECORDS = "icefloe.commit.max-records"
DEFAULT_COMMIT_MAX_RECORDS = 5_000_000
TRANSIENT_RETRY_TIMEOUT = "icefloe.transient.retry-timeout-ms"
KAFKA_CONNECT_TIMEOUT = "icefloe.kafka.connect-timeout-ms"
DRIVER_MAX_RECORDS = "icefloe.driver.max-records"
DRIVER_WHILE_SPARK_STARTS = "icefloe.driver.while-spark-starts"
TAKEOVER = "icefloe.takeover"

# Table maintenance (connector/maintenance/): on by default, between commit cycles.
MAINTENANCE_ENABLED = "icefloe.maintenance.enabled"
MAINTENANCE_INTERVAL_MS = "icefloe.maintenance.interval-ms"
MAINTENANCE_BUDGET_MS = "icefloe.maintenance.budget-ms"
COMPACTION_MIN_INPUT_FILES = "icefloe.maintenance.compaction.min-input-files"
COMPACTION_SMALL_FILE_RATIO = "icefloe.maintenance.compaction.small-file-ratio"
SNAPSHOT_MAX_AGE_MS = "icefloe.maintenance.snapshot.max-age-ms"
SNAPSHOT_MIN_TO_KEEP = "icefloe.maintenance.snapshot.min-to-keep"
METADATA_DELETE_OLD = "icefloe.maintenance.metadata.delete-old"
METADATA_DELETE_ON_REST = "icefloe.maintenance.metadata.delete-on-rest"
ORPHAN_MIN_AGE_MS = "icefloe.maintenance.orphan.min-age-ms"
MANIFESTS_MIN_COUNT = "icefloe.maintenance.manifests.min-count"
DELETES_MIN_FILES = "icefloe.maintenance.deletes.min-files"
DELETES_MIN_RATIO = "icefloe.maintenance.deletes.min-ratio"

ICEFLOE_CONFIG = (
    ConfigDef()
    .define(COMMIT_MAX_RECORDS, ConfigType.LONG, DEFAULT_COMMIT_MAX_RECORDS, at_least(0), "medium",
            "most source offsets one commit cycle covers, over all partitions; a backlog larger than this "
            "is read and committed in several cycles, one after another, so a crash loses at most one "
            "cycle's work and progress is visible as it goes. `0`: no bound (one cycle reads everything "
            "up to the end offsets seen at its start)")
    .define(TRANSIENT_RETRY_TIMEOUT, ConfigType.LONG, 300_000, at_least(-1), "medium",
            "how long a job rides out a transient fault (the broker, Schema Registry or the catalog "
            "unreachable, a retriable Kafka error) by running the failed cycle again, with backoff from "
            "300 ms up to `errors.retry.delay.max.ms`; past it without a success the job fails, naming "
            "the fault. `-1`: forever; `0`: fail at once. A re-run cycle resumes from the tables' "
            "offsets, so nothing is duplicated")
    .define(KAFKA_CONNECT_TIMEOUT, ConfigType.LONG, 15_000, at_least(0), "medium",
            "how long a job waits, when it starts, for a first answer from the Kafka cluster; without one it "
            "fails in one line naming `bootstrap.servers` and what each connection attempt met (refused, name "
            "not resolved, TLS or SASL failure), instead of retrying for `icefloe.transient.retry-timeout-ms`. "
            "A cluster lost after it answered is ridden out as a transient fault. `0`: no such check (a job "
            "started before its cluster waits for it as for a transient fault)")
    .define(DRIVER_MAX_RECORDS, ConfigType.LONG, 20_000, at_least(0), "medium",
            "a commit cycle of at most this many source offsets runs its tasks in the driver process "
            "instead of on Spark: a small backlog (`icefloe run` on a quiet topic) is committed without "
            "starting Spark at all, and a quiet stream's cycles skip a Spark job's scheduling. Larger "
            "cycles run on Spark; `icefloe run` starts its Spark session at the first of them. `0`: every "
            "cycle on Spark")
    .define(DRIVER_WHILE_SPARK_STARTS, ConfigType.BOOLEAN, None, None, "medium",
            "while the Spark session is still starting (its JVM, then a Python worker with a task's imports "
            "on every executor core), a larger cycle runs its tasks in the driver too, as one task, and stops "
            "reading at the first batch boundary after Spark is up: it commits what it read and the next "
            "cycle runs on Spark from there. A backlog then starts landing at once instead of after Spark's "
            "start-up. Unset: `true` on a `local` master, `false` on a cluster master (`spark://`, `yarn`, "
            "`k8s://`), whose driver host is sized to coordinate, not to read a backlog (docs/operations.md, "
            "Running on a Spark cluster). Off too when `icefloe.driver.max-records` is `0`")
    .define(TAKEOVER, ConfigType.STRING, "auto", valid_string("auto", "control-topic", "none"), "medium",
            "taking over from a Java Iceberg sink of the same connector (docs/migration.md). `auto`: when a "
            "table's newest offsets are a Java sink's control-topic key, or the tables hold no icefloe offsets "
            "yet, first commit the complete commits the Java coordinator left on `iceberg.control.topic` and "
            "resume from the source offsets they cover; `control-topic`: do that on every start; `none`: never "
            "read the control topic (resume from the tables, then the consumer groups)")
    .define(MAINTENANCE_ENABLED, ConfigType.BOOLEAN, True, None, "medium",
            "run table maintenance (compaction of small files, snapshot expiry with the deletion of the files "
            "only expired snapshots referenced, orphan files) on the tables the connector "
            "writes, between its commit cycles and once at the end of `--until-caught-up`. A table with the "
            "table property `icefloe.maintenance.enabled=false` is left alone")
    .define(MAINTENANCE_INTERVAL_MS, ConfigType.LONG, 60_000, at_least(0), "low",
            "in continuous mode, the least time between the starts of two maintenance rounds")
    .define(MAINTENANCE_BUDGET_MS, ConfigType.LONG, 10_000, at_least(1), "medium",
            "time one maintenance round may take: no new step (a compaction group, a table's expiry or orphan "
            "scan) starts once it is spent, and the next round resumes where this one stopped; a data commit "
            "is delayed by at most about this much")
    .define(COMPACTION_MIN_INPUT_FILES, ConfigType.INT, 5, at_least(2), "medium",
            "a partition is compacted once it has at least this many small data files; they are bin-packed "
            "into files near the table's `write.target-file-size-bytes` (512 MB when unset)")
    .define(COMPACTION_SMALL_FILE_RATIO, ConfigType.DOUBLE, 0.75, at_least(0.0), "low",
            "a data file is small when its size is below this fraction of the target file size")
    .define(SNAPSHOT_MAX_AGE_MS, ConfigType.LONG, 3_600_000, at_least(0), "medium",
            "snapshots older than this expire, for tables without the table property "
            "`history.expire.max-snapshot-age-ms` (which wins). Branch and tag heads, the last "
            "`min-to-keep` snapshots of each branch and the snapshots leading to the newest source offsets "
            "of every consumer group are kept")
    .define(SNAPSHOT_MIN_TO_KEEP, ConfigType.INT, 10, at_least(1), "medium",
            "the newest snapshots of each branch kept whatever their age, for tables without the table "
            "property `history.expire.min-snapshots-to-keep` (which wins)")
    .define(METADATA_DELETE_OLD, ConfigType.BOOLEAN, False, None, "low",
            "for tables without the table property `write.metadata.delete-after-commit.enabled` (which "
            "wins): after each commit, delete the metadata files the commit dropped from the table's metadata "
            "log (which keeps `write.metadata.previous-versions-max` versions, 100 when unset), as Iceberg does "
            "for tables with that property true. False is Iceberg's default. No other metadata file is ever "
            "deleted")
    .define(METADATA_DELETE_ON_REST, ConfigType.BOOLEAN, False, None, "low",
            "with a REST catalog, which writes and owns the metadata files, icefloe deletes none of them "
            "(neither does Iceberg's Java REST client); true applies the same rule as with other catalogs "
            "there too (the table property, else `icefloe.maintenance.metadata.delete-old`)")
    .define(ORPHAN_MIN_AGE_MS, ConfigType.LONG, 86_400_000, at_least(0), "medium",
            "files under the table's location that no snapshot references (written by cycles that crashed "
            "before committing) are deleted once older than this; younger ones are never touched, since "
            "another writer may still be about to commit them")
    .define(MANIFESTS_MIN_COUNT, ConfigType.INT, 50, at_least(2), "low",
            "once a branch head's data manifests (one more per commit) reach this many, they are merged into "
            "manifests of about `commit.manifest.target-size-bytes` (8 MB when unset) in one snapshot that "
            "adds no data")
    .define(DELETES_MIN_FILES, ConfigType.INT, 10, at_least(1), "medium",
            "upsert and CDC tables: a partition whose data files have at least this many position delete "
            "files gets those data files rewritten with the deletes applied, the delete files dropped, in one "
            "snapshot per group of about the target file size (small-file compaction of files with deletes "
            "applies them too)")
    .define(DELETES_MIN_RATIO, ConfigType.DOUBLE, 0.3, at_least(0.0), "medium",
            "upsert and CDC tables: a partition is rewritten with its deletes applied (as for "
            "`icefloe.maintenance.deletes.min-files`) also once the rows its delete files delete are at "
            "least this fraction of its data files' rows")
)


_icefloe_key = partial(key_field, ICEFLOE_CONFIG)


@dataclass(frozen=True)
class MaintenanceConfig:
    enabled: bool = _icefloe_key(MAINTENANCE_ENABLED)
    interval_ms: int = _icefloe_key(MAINTENANCE_INTERVAL_MS)
    budget_ms: int = _icefloe_key(MAINTENANCE_BUDGET_MS)
    min_input_files: int = _icefloe_key(COMPACTION_MIN_INPUT_FILES)
    small_file_ratio: float = _icefloe_key(COMPACTION_SMALL_FILE_RATIO)
    snapshot_max_age_ms: int = _icefloe_key(SNAPSHOT_MAX_AGE_MS)
    snapshot_min_to_keep: int = _icefloe_key(SNAPSHOT_MIN_TO_KEEP)
    metadata_delete_old: bool = _icefloe_key(METADATA_DELETE_OLD)
    metadata_delete_on_rest: bool = _icefloe_key(METADATA_DELETE_ON_REST)
    orphan_min_age_ms: int = _icefloe_key(ORPHAN_MIN_AGE_MS)
    manifests_min_count: int = _icefloe_key(MANIFESTS_MIN_COUNT)
    deletes_min_files: int = _icefloe_key(DELETES_MIN_FILES)
    deletes_min_ratio: float = _icefloe_key(DELETES_MIN_RATIO)


@dataclass(frozen=True)
class IcefloeConfig:
    commit_max_records: int = _icefloe_key(COMMIT_MAX_RECORDS)  # 0: unbounded
    transient_retry_timeout_ms: int = _icefloe_key(TRANSIENT_RETRY_TIMEOUT)  # -1: forever
    kafka_connect_timeout_ms: int = _icefloe_key(KAFKA_CONNECT_TIMEOUT)  # 0: no check at start
    driver_max_records: int = _icefloe_key(DRIVER_MAX_RECORDS)  # 0: always on Spark
    driver_while_spark_starts: bool | None = _icefloe_key(DRIVER_WHILE_SPARK_STARTS)  # None: on a local master only
    takeover: str = _icefloe_key(TAKEOVER)
    maintenance: MaintenanceConfig = MaintenanceConfig()


def is_icefloe_key(key: str) -> bool:
    return key in ICEFLOE_CONFIG.config_keys


def parse_icefloe_config(props: Mapping[str, Any]) -> IcefloeConfig:
    values = ICEFLOE_CONFIG.parse(props)
    return from_values(IcefloeConfig, values, maintenance=from_values(MaintenanceConfig, values))
